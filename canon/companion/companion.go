// Package companion reads the files a loader reads beside a model's tensors, which are part of the
// model as much as its tensors are: in a save_pretrained, PEFT or diffusers folder (or the Hugging Face
// cache's snapshot of one), config.json, generation_config.json, the tokenizer's files and its chat
// templates, adapter_config.json, model_index.json, scheduler and preprocessor configs. It says which
// files these are (Is), reads them with size limits (ReadDir), identifies each by a digest (of its
// canonical JSON form for a JSON file: key order, whitespace and escapes do not count) and parses what
// a comparison needs: a JSON file whole (small ones), a tokenizer.json as a summary (its vocabulary,
// merges and added tokens by count and digest, the rest whole) and, for a file read now, its whole
// vocabulary and merges, so that a diff can name the tokens that changed.
//
// It reads local files only and never prints. What changed between two sets of files is package
// diff/companion's job; snapshots record File values as they are.
package companion

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeebo/blake3"
)

// Limits of ReadDir.
const (
	// WholeSize is the largest file recorded whole (File.Text): every config and template of popular
	// models is far smaller.
	WholeSize = 1 << 20
	// MaxSize is the largest file parsed (a tokenizer.json of a 256k-token vocabulary is about 35 MB);
	// a larger one is hashed as its bytes and not parsed (File.Problem says so).
	MaxSize = 128 << 20
	// MaxFiles is the most companion files read from one model folder (additional chat templates
	// included); past it ReadDir fails.
	MaxFiles = 1024
)

// Kind is how a companion file is read and compared.
type Kind string

// The kinds of companion file.
const (
	// KindJSON is a JSON file (config.json…): compared by key path.
	KindJSON Kind = "json"
	// KindText is a text file (a chat template, merges.txt…): compared as a line diff.
	KindText Kind = "text"
	// KindTokenizer is a tokenizer.json: compared by what changed in its vocabulary, merges and added
	// tokens, the rest by key path.
	KindTokenizer Kind = "tokenizer"
	// KindBinary is a binary file (a SentencePiece tokenizer.model): compared by its digest.
	KindBinary Kind = "binary"
)

// names are the files a loader reads beside the tensors, by name (lower case), in any folder of the
// model; kinds says how each is read.
var names = map[string]Kind{
	"config.json":                       KindJSON,
	"generation_config.json":            KindJSON,
	"tokenizer_config.json":             KindJSON,
	"special_tokens_map.json":           KindJSON,
	"added_tokens.json":                 KindJSON,
	"tokenizer.json":                    KindTokenizer,
	"vocab.json":                        KindJSON,
	"vocab.txt":                         KindText,
	"merges.txt":                        KindText,
	"tokenizer.model":                   KindBinary,
	"sentencepiece.bpe.model":           KindBinary,
	"spiece.model":                      KindBinary,
	"adapter_config.json":               KindJSON,
	"model_index.json":                  KindJSON,
	"scheduler_config.json":             KindJSON,
	"preprocessor_config.json":          KindJSON,
	"video_preprocessor_config.json":    KindJSON,
	"processor_config.json":             KindJSON,
	"feature_extractor_config.json":     KindJSON,
	"image_processor_config.json":       KindJSON,
	"chat_template.jinja":               KindText,
	"chat_template.json":                KindJSON,
	"sentence_bert_config.json":         KindJSON,
	"config_sentence_transformers.json": KindJSON,
}

// TemplateDir is the folder of a tokenizer's additional chat templates (*.jinja), as transformers
// saves them.
const TemplateDir = "additional_chat_templates"

// KindOf says whether rel, a slash-separated path relative to a model's folder, is a companion file,
// and how it is read. A pipeline's component folder's files count as the top's do
// ("unet/config.json"); so do additional chat templates ("additional_chat_templates/tool_use.jinja").
func KindOf(rel string) (Kind, bool) {
	dir, base := path.Split(rel)
	base = strings.ToLower(base)
	if strings.HasSuffix(strings.TrimSuffix(dir, "/"), TemplateDir) && strings.HasSuffix(base, ".jinja") {
		return KindText, true
	}
	k, ok := names[base]
	return k, ok
}

// Is reports whether rel (see KindOf) is a companion file.
func Is(rel string) bool { _, ok := KindOf(rel); return ok }

// File is one companion file as read: what identifies it and what a comparison needs. It is recorded
// in snapshots as it is (but Full).
type File struct {
	// Path is the file's path relative to the model's folder, slash-separated ("config.json",
	// "unet/config.json").
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Digest identifies the file: "b3:" and the BLAKE3 of its canonical JSON form (see Canonical) for
	// a JSON file that parses, else of its bytes.
	Digest string `json:"digest"`
	// Text is the whole file (its canonical JSON form for a JSON file) when it is at most WholeSize
	// bytes and valid UTF-8; "" for a tokenizer.json (see Tokenizer) and a binary file.
	Text string `json:"text,omitempty"`
	// Tokenizer summarises a tokenizer.json.
	Tokenizer *Tokenizer `json:"tokenizer,omitempty"`
	// Problem says why the file was not read as its kind ("not valid JSON: …", "a link out of the
	// model's folder, not followed"); it is then compared by its digest.
	Problem string `json:"problem,omitempty"`
	// Full is what a tokenizer.json read now holds, whole (nil in a snapshot).
	Full *Vocabulary `json:"-"`
}

// Options tune ReadDir.
type Options struct {
	// Within, when not "", is the folder that links may point into (the Hugging Face cache): a
	// companion file that is a link to a file outside it is not followed (File.Problem).
	Within string
}

// ReadDir reads the companion files of the model in the folder dir: those directly in it, in its
// additional_chat_templates folder, and when it is a diffusers pipeline (it holds model_index.json) in
// each folder directly under it. Files are in path order. A folder without any gives none. Errors are
// those of reading the folder or a file (not of parsing one: see File.Problem).
func ReadDir(dir string, opt Options) ([]File, error) {
	var rels []string
	add := func(sub string) error {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(sub)))
		if err != nil {
			if sub != "" && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, e := range entries {
			rel := path.Join(sub, e.Name())
			if strings.HasPrefix(e.Name(), ".") || e.IsDir() || !Is(rel) {
				continue
			}
			rels = append(rels, rel)
		}
		return nil
	}
	if err := add(""); err != nil {
		return nil, err
	}
	if err := add(TemplateDir); err != nil {
		return nil, err
	}
	if slices.Contains(rels, "model_index.json") {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != TemplateDir {
				if err := add(e.Name()); err != nil {
					return nil, err
				}
				if err := add(e.Name() + "/" + TemplateDir); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(rels) > MaxFiles {
		return nil, fmt.Errorf("%s holds %d companion files, over the %d stdiff reads", dir, len(rels), MaxFiles)
	}
	slices.Sort(rels)
	out := make([]File, 0, len(rels))
	for _, rel := range rels {
		f, err := ReadFile(filepath.Join(dir, filepath.FromSlash(rel)), rel, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ReadFile reads the companion file at name, recorded as rel (see File.Path).
func ReadFile(name, rel string, opt Options) (File, error) {
	kind, _ := KindOf(rel)
	f := File{Path: rel, Kind: kind}
	if opt.Within != "" {
		if target, ok := linkOut(name, opt.Within); !ok {
			f.Problem = "a link to " + target + ", out of " + filepath.Base(opt.Within) + ": not followed"
			f.Digest = digest([]byte("link:" + target))
			return f, nil
		}
	}
	fh, err := os.Open(name)
	if err != nil {
		return f, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return f, err
	}
	if !st.Mode().IsRegular() {
		return f, fmt.Errorf("%s is not a regular file", name)
	}
	f.Size = st.Size()
	if f.Size > MaxSize {
		h := blake3.New()
		n, err := io.Copy(h, io.LimitReader(fh, f.Size))
		if err != nil {
			return f, err
		}
		f.Size, f.Digest = n, "b3:"+hex.EncodeToString(h.Sum(nil))
		f.Problem = fmt.Sprintf("%d bytes, over the %d MiB stdiff parses: compared by its digest", n, MaxSize>>20)
		return f, nil
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxSize+1))
	if err != nil {
		return f, err
	}
	if int64(len(b)) > MaxSize { // it grew while read
		return f, fmt.Errorf("%s changed while it was read", name)
	}
	f.Size = int64(len(b))
	Parse(&f, b)
	return f, nil
}

// Parse fills f (its Path and Kind set) from the file's bytes b: Digest, and Text, Tokenizer, Full or
// Problem as its kind says. It never fails: what does not parse is compared by its digest.
func Parse(f *File, b []byte) {
	f.Size = int64(len(b))
	f.Digest = digest(b)
	switch f.Kind {
	case KindJSON:
		v, err := decode(b)
		if err != nil {
			f.Problem = "not valid JSON: " + err.Error()
			break
		}
		c := Canonical(v)
		f.Digest = digest(c)
		if len(c) <= WholeSize {
			f.Text = string(c)
		}
	case KindText:
		if len(b) <= WholeSize && isText(b) {
			f.Text = string(b)
		} else if !isText(b) {
			f.Problem = "not UTF-8 text: compared by its digest"
		}
	case KindTokenizer:
		t, full, c, err := parseTokenizer(b)
		if err != nil {
			f.Problem = "not a tokenizer.json: " + err.Error()
			break
		}
		f.Digest, f.Tokenizer, f.Full = digest(c), t, full
	}
}

// digest is "b3:" and the BLAKE3 of b in hex.
func digest(b []byte) string {
	sum := blake3.Sum256(b)
	return "b3:" + hex.EncodeToString(sum[:])
}

// linkOut follows name's links and reports whether the file they lead to lies under within; target
// is where they lead (escaped for display).
func linkOut(name, within string) (target string, ok bool) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		t, _ := os.Readlink(name)
		return t, true // opening it says what is wrong
	}
	root, err := filepath.EvalSymlinks(within)
	if err != nil {
		root = within
	}
	rel, err := filepath.Rel(root, real)
	return real, err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// IDPrefix starts every companion files ID (see ID).
const IDPrefix = "cf1:"

// ID identifies a folder model's companion files together: "cf1:" and the BLAKE3 of
// "stdiff-companions/1\x00", then for each file, in path order, its path, a NUL, its Digest and a
// newline. A folder without any has an ID too (that of no file), so that adding one changes it. Two
// folders with the same ID hold the same companion files, up to the formatting of their JSON.
func ID(files []File) string {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	h := blake3.New()
	h.Write([]byte("stdiff-companions/1\x00"))
	for _, f := range files {
		h.Write([]byte(f.Path + "\x00" + f.Digest + "\n"))
	}
	return IDPrefix + hex.EncodeToString(h.Sum(nil))
}
