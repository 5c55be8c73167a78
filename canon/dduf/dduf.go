// Package dduf reads DDUF files, Hugging Face's one-file form of a diffusers pipeline: an
// uncompressed zip archive with model_index.json at its root and each component (unet, vae, text
// encoders, scheduler, tokenizer) in the folder of its name. It reads the central directory and the
// members' local headers only (package zipdir, the hardening every zip format of stdiff shares),
// and model_index.json; each member is a byte range of the file, so a component's safetensors
// weights are read in place, never extracted.
//
// The verdict is that of the DDUF rules (huggingface_hub's read_dduf_file and
// export_folder_as_dduf, huggingface.js's checkDDUF), and where those readers disagree, the strict
// one's: a file is valid when no finding is an error. The rules:
//   - every member is stored (compression method 0), not encrypted, its data within the file;
//   - no two members share a name (Python's zipfile would read the last, others the first);
//   - a member's name is a file at the root or in one folder below it ("unet/config.json"): not
//     absolute, no "..", no backslash, no empty part, no directory entry, and the same to every zip
//     reader (no NUL byte, which Python's zipfile cuts the name at, no Unicode Path extra field
//     that renames it, which CPython 3.12 on reads): huggingface_hub keeps the last member of a name;
//   - its extension is .json, .safetensors, .txt or .model (sentencepiece), exactly so cased;
//   - model_index.json is at the root and holds a JSON object; each folder is a key of it and
//     holds a config file (config.json, tokenizer_config.json, preprocessor_config.json or
//     scheduler_config.json); each component it lists ([library, class]) is a plain folder name
//     and its folder is in the archive.
//
// An archive without zip64 records is valid (huggingface_hub writes them, the Hub accepts both).
package dduf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/zipdir"
)

// IndexFile is the member that makes an archive a DDUF file.
const IndexFile = "model_index.json"

// MaxIndexSize is the largest model_index.json read.
const MaxIndexSize = 16 << 20

// MaxDirectory is the memory the central directory's names may take (about 256 bytes an entry
// besides its name): a pipeline has tens of members.
const MaxDirectory = 64 << 20

// Finding codes. They are part of stdiff's contract with scripts: add, never rename. Zip defects
// (encryption, a malformed directory, data past the end) are package zipdir's codes.
const (
	CodeCompressed       = "dduf-compressed"        // error: a member is not stored
	CodeDuplicate        = "dduf-duplicate-name"    // error: two members share a name
	CodeEntryName        = "dduf-entry-name"        // error: absolute, "..", a backslash, more than one folder deep, a directory entry, a NUL, another name to Python's zipfile
	CodeFileType         = "dduf-file-type"         // error: an extension the DDUF rules do not allow
	CodeNoIndex          = "dduf-no-model-index"    // error: no model_index.json at the root
	CodeBadIndex         = "dduf-bad-model-index"   // error: model_index.json is not a JSON object
	CodeUnlistedFolder   = "dduf-unlisted-folder"   // error: a folder model_index.json does not name
	CodeNoConfig         = "dduf-folder-no-config"  // error: a folder without a config file
	CodeMissingComponent = "dduf-missing-component" // error: a component model_index.json lists has no folder
	CodeComponentPath    = "dduf-component-path"    // error: a component named as no plain folder ("..", "/")
)

// allowedExt are the extensions a member may have: huggingface_hub's DDUF_ALLOWED_ENTRIES.
var allowedExt = []string{".json", ".model", ".safetensors", ".txt"}

// configFiles are the files one of which each folder holds: DDUF_FOLDER_REQUIRED_ENTRIES.
var configFiles = []string{"config.json", "tokenizer_config.json", "preprocessor_config.json", "scheduler_config.json"}

// Member is a file in the archive, readable in place: its data is Size bytes at Offset.
type Member struct {
	Name   string
	Offset int64
	Size   int64
	// Header is the offset of its local header (where findings about it point).
	Header int64
}

// Component is one entry of model_index.json that names a [library, class] pair.
type Component struct {
	Name    string
	Library string
	Class   string
}

// File is a DDUF file as Read reads it.
type File struct {
	Size int64
	// Members are the members readable in place (stored, not encrypted, within the file), in
	// central directory order; of several members of one name, the first.
	Members []Member
	// Class is model_index.json's _class_name; Components its [library, class] entries, by name.
	Class      string
	Components []Component
	Findings   []finding.Finding
}

// Valid reports whether the DDUF rules accept the file: no finding is an error.
func (f *File) Valid() bool {
	for _, x := range f.Findings {
		if x.Severity == finding.SevError {
			return false
		}
	}
	return true
}

// Member returns the member named name, or nil.
func (f *File) Member(name string) *Member {
	for i := range f.Members {
		if f.Members[i].Name == name {
			return &f.Members[i]
		}
	}
	return nil
}

func (f *File) add(code string, sev finding.Severity, off int64, entry, format string, args ...any) *finding.Finding {
	f.Findings = append(f.Findings, finding.Finding{Code: code, Severity: sev, Offset: off, Entry: entry, Message: fmt.Sprintf(format, args...)})
	return &f.Findings[len(f.Findings)-1]
}

// Sniff reports whether r, a file of size bytes shown as name, is a DDUF file: a zip archive named
// *.dduf (an empty one too), or whose central directory names model_index.json at the root (for those it reads the
// end of the file and the directory, none of the local headers: a PyTorch checkpoint's thousands
// of entries cost one pass over its directory).
func Sniff(r io.ReaderAt, size int64, name string) bool {
	head, ok := zipdir.ReadAt(r, 0, 4)
	if !ok || (string(head) != "PK\x03\x04" && string(head) != "PK\x05\x06") {
		return false
	}
	if strings.EqualFold(path.Ext(name), ".dduf") {
		return true // an empty archive (its end record first) too: a DDUF file without model_index.json
	}
	if string(head) != "PK\x03\x04" {
		return false
	}
	d := zipdir.Reader{Size: size, NamesOnly: true, Budget: &zipdir.Budget{Left: MaxDirectory}, Add: func(string, finding.Severity, int64, string, string, ...any) *finding.Finding {
		return &finding.Finding{}
	}}
	entries, _ := d.Entries(r)
	for _, e := range entries {
		if e.Name == IndexFile {
			return true
		}
	}
	return false
}

// Read reads the DDUF file r of size bytes: its central directory, its members' local headers and
// model_index.json. Every defect is a finding; Valid is the verdict.
func Read(r io.ReaderAt, size int64) *File {
	f := &File{Size: size}
	d := zipdir.Reader{Size: size, Add: f.add, Reads: "DDUF members are stored, never compressed", Budget: &zipdir.Budget{Left: MaxDirectory}}
	entries, _ := d.Entries(r)
	if d.Python != "" {
		f.add(zipdir.CodeMalformed, finding.SevError, size, "", "%s", d.Python).Hint = "the file means different things to different loaders; export it again"
	}
	if d.Rest != 0 {
		f.add(zipdir.CodeMalformed, finding.SevError, size, "", "the central directory holds %d bytes after the %d entries its end record counts; Python's zipfile reads the directory to its size, other readers to the count", d.Rest, len(entries)).Hint =
			"the file means different things to different loaders; export it again"
	}
	seen := map[string]int{}
	folders := map[string]int64{} // folder → the first member's local header
	names := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		// The name Python's zipfile gives the member (huggingface_hub reads it so, the last of a
		// name winning): cut at a NUL, or a Unicode Path extra field's. Another than the name
		// every other reader sees makes the file mean two things.
		key := e.Name
		switch {
		case e.UnicodeName != "":
			key = e.UnicodeName
		case e.Flags&0x800 == 0:
			key = cp437(e.Name)
		}
		key, _, _ = strings.Cut(key, "\x00")
		if key != e.Name {
			f.add(CodeEntryName, finding.SevError, e.Central, e.Name, "member name %q is %q to Python's zipfile (a NUL byte, a Unicode Path extra field, bytes past ASCII without the UTF-8 flag); zip readers differ on which member it is", e.Name, key).Hint =
				"the file means different things to different loaders; export it again"
		}
		if j, dup := seen[key]; dup {
			f.add(CodeDuplicate, finding.SevError, e.Central, e.Name, "%q is in the archive twice (entries %d and %d); zip readers differ on which one they load", e.Name, j, i).Hint =
				"the file means different things to different loaders; export it again"
			continue
		}
		seen[key] = i
		if key != e.Name {
			continue
		}
		if e.Method != 0 {
			f.add(CodeCompressed, finding.SevError, e.Header, e.Name, "%s is compressed (method %d); DDUF members are stored so that they can be read in place", e.Name, e.Method).Hint =
				"export it again with huggingface_hub's export_folder_as_dduf"
		}
		if !f.checkName(e) {
			continue
		}
		names[e.Name] = true
		if dir, _, ok := strings.Cut(e.Name, "/"); ok {
			if _, ok := folders[dir]; !ok {
				folders[dir] = e.Central
			}
		}
		if e.DataOffset >= 0 && e.Method == 0 {
			f.Members = append(f.Members, Member{Name: e.Name, Offset: e.DataOffset, Size: int64(e.Size), Header: e.Header})
		}
	}
	if len(entries) == 0 && !f.Valid() {
		return f // the archive cannot be listed: said already
	}
	f.index(r, entries, seen, folders, names)
	return f
}

// cp437Upper are the characters of code page 437's bytes 0x80–0xFF, as Python's cp437 codec decodes
// them: Python's zipfile decodes a name without the UTF-8 flag so.
const cp437Upper = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0"

// cp437 is name as Python's zipfile reads a name without the UTF-8 flag.
func cp437(name string) string {
	var b strings.Builder
	up := []rune(cp437Upper)
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x80 {
			b.WriteByte(c)
		} else {
			b.WriteRune(up[c-0x80])
		}
	}
	return b.String()
}

// checkName applies the DDUF rules to a member's name and reports whether it passes them.
func (f *File) checkName(e *zipdir.Entry) bool {
	n := e.Name
	bad := func(why string) bool {
		f.add(CodeEntryName, finding.SevError, e.Central, n, "member name %q %s; DDUF members are files at the root or one folder below it", n, why)
		return false
	}
	parts := strings.Split(n, "/")
	switch {
	case strings.Contains(n, "\\"):
		return bad("has a backslash")
	case strings.HasPrefix(n, "/"):
		return bad("is absolute")
	case strings.HasSuffix(n, "/"):
		return bad("is a directory entry")
	case len(parts) > 2:
		return bad("is more than one folder deep")
	}
	for _, p := range parts {
		switch p {
		case "":
			return bad("has an empty part")
		case ".", "..":
			return bad("has a " + p + " part")
		}
	}
	ext := path.Ext(n)
	for _, a := range allowedExt {
		if ext == a {
			return true
		}
	}
	f.add(CodeFileType, finding.SevError, e.Central, n, "%s is a %q file; DDUF members are .json, .safetensors, .txt or .model files", n, ext).Hint =
		"export the folder again: export_folder_as_dduf leaves other files out"
	return false
}

// index reads model_index.json and checks the folders against it.
func (f *File) index(r io.ReaderAt, entries []zipdir.Entry, seen map[string]int, folders map[string]int64, names map[string]bool) {
	i, ok := seen[IndexFile]
	if !ok {
		f.add(CodeNoIndex, finding.SevError, -1, "", "no %s at the root of the archive: not a diffusers pipeline", IndexFile)
		return
	}
	e := &entries[i]
	if e.DataOffset < 0 || e.Method != 0 {
		return // said already
	}
	if e.Size > MaxIndexSize {
		f.add(CodeBadIndex, finding.SevError, e.Header, e.Name, "%s is %d bytes, over the %d stdiff reads", IndexFile, e.Size, MaxIndexSize)
		return
	}
	b, ok := zipdir.ReadAt(r, e.DataOffset, int(e.Size))
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if !ok || dec.Decode(&raw) != nil || raw == nil || dec.More() {
		f.add(CodeBadIndex, finding.SevError, e.DataOffset, e.Name, "%s is not a JSON object", IndexFile).Hint = "export the pipeline again"
		return
	}
	_ = json.Unmarshal(raw["_class_name"], &f.Class)
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var pair []*string
		if strings.HasPrefix(k, "_") || json.Unmarshal(raw[k], &pair) != nil || len(pair) != 2 || pair[0] == nil || pair[1] == nil {
			continue
		}
		if k == "" || k == "." || k == ".." || strings.ContainsAny(k, "/\\") {
			f.add(CodeComponentPath, finding.SevError, e.DataOffset, e.Name, "%s lists component %q, which is no folder name", IndexFile, k).Hint =
				"a component is a folder at the root of the archive; this file may be hostile"
			continue
		}
		f.Components = append(f.Components, Component{Name: k, Library: *pair[0], Class: *pair[1]})
		if _, ok := folders[k]; !ok {
			f.add(CodeMissingComponent, finding.SevError, e.DataOffset, e.Name, "%s lists component %s (%s), which has no folder in the archive", IndexFile, k, *pair[1])
		}
	}
	dirs := make([]string, 0, len(folders))
	for d := range folders {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if _, ok := raw[d]; !ok {
			f.add(CodeUnlistedFolder, finding.SevError, folders[d], d+"/", "folder %s is not a key of %s", d, IndexFile)
		}
		has := false
		for _, c := range configFiles {
			has = has || names[d+"/"+c]
		}
		if !has {
			f.add(CodeNoConfig, finding.SevError, folders[d], d+"/", "folder %s holds none of %s", d, strings.Join(configFiles, ", "))
		}
	}
}
