package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/hash"
)

type hashCmd struct {
	Content   bool     `help:"Also compute the content ID (reads every tensor byte, in parallel)."`
	All       bool     `help:"Also compute the ecosystem hashes (SHA256, AutoV1/V2/V3, BLAKE3, CRC32) in one pass, and verify hashes embedded in the metadata."`
	Canonical bool     `help:"Print the exact canonical bytes the structure ID hashes (with --content, the content form)."`
	Check     string   `help:"Verify the hashes in MANIFEST (as written by stdiff hash) against the files it names." placeholder:"MANIFEST" type:"existingfile"`
	Files     []string `arg:"" optional:"" name:"FILE" help:"Model files." type:"string"`
}

type hashFileJSON struct {
	Path        string `json:"path"`
	StructureID string `json:"structure_id,omitempty"`
	ContentID   string `json:"content_id,omitempty"`
	*hash.Ecosystem
	Findings []findingJSON `json:"findings,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// fileIDs is everything computed for one file.
type fileIDs struct {
	model     *canon.Model
	structure string
	content   string
	eco       *hash.Ecosystem
	findings  []canon.Finding
	// digestList holds the per-tensor digests when the content was hashed.
	digestList [][32]byte
}

func (c *hashCmd) run(o *out) int {
	if c.Check != "" {
		if len(c.Files) > 0 {
			o.errorf("name the files in the manifest, not on the command line", "--check takes a manifest and no FILE arguments")
			return exitTrouble
		}
		return c.check(o)
	}
	if len(c.Files) == 0 {
		o.errorf("try `stdiff hash model.safetensors`", "hash needs at least one FILE (or --check MANIFEST)")
		return exitTrouble
	}
	status := exitOK
	var files []hashFileJSON
	for _, path := range c.Files {
		ids, err := computeIDs(o, path, c.Content, c.All)
		if err != nil {
			o.readFailed(err)
			status = exitTrouble
			files = append(files, hashFileJSON{Path: path, Error: err.Error()})
			continue
		}
		if !ids.model.Valid() {
			o.errorf("`stdiff check "+esc(path)+"` says what is wrong", "%s: warning: the reference reader rejects this file (%s); the IDs describe what could be read", esc(path), ids.model.RefErr.Kind)
			status = max(status, exitFound)
		}
		if c.Canonical {
			if c.Content {
				_, _ = o.w.Write(canon.CanonicalContent(ids.model, ids.digestList))
			} else {
				_, _ = o.w.Write(canon.Canonical(ids.model))
			}
			continue
		}
		fj := hashFileJSON{Path: path, StructureID: ids.structure, ContentID: ids.content, Ecosystem: ids.eco, Findings: findingsJSON(ids.findings)}
		files = append(files, fj)
		switch o.format {
		case "json":
			continue
		case "markdown":
			if len(files) == 1 {
				o.printf("| file | structure ID | content ID |\n|---|---|---|\n")
			}
			o.printf("| %s | `%s` | `%s` |\n", mdEsc(path), ids.structure, ids.content)
			continue
		}
		for _, line := range manifestLines(path, ids) {
			o.printf("%s", line)
		}
		for _, f := range ids.findings {
			if f.Severity != canon.SevInfo {
				o.errorf(f.Hint, "%s: %s: %s", esc(path), f.Code, esc(f.Message))
			}
		}
	}
	if o.format == "json" && !c.Canonical {
		o.writeJSON(filesJSON{Schema: "stdiff.hash/v1", Files: files})
	}
	return status
}

// manifestLines are the lines `stdiff hash` prints for a file: a manifest --check reads back.
func manifestLines(path string, ids *fileIDs) []string {
	lines := []string{hash.FormatLine("st1", strings.TrimPrefix(ids.structure, hash.StructurePrefix), path)}
	if ids.content != "" {
		lines = append(lines, hash.FormatLine("ct1", strings.TrimPrefix(ids.content, hash.ContentPrefix), path))
	}
	if e := ids.eco; e != nil {
		for _, kv := range [][2]string{{"sha256", e.SHA256}, {"autov1", e.AutoV1}, {"autov2", e.AutoV2},
			{"autov3", e.AutoV3}, {"blake3", e.BLAKE3}, {"crc32", e.CRC32}} {
			lines = append(lines, hash.FormatLine(kv[0], kv[1], path))
		}
	}
	return lines
}

// computeIDs reads a file's header and, as asked, its bytes: content digests in parallel, or everything
// in one pass when ecosystem hashes are wanted too.
func computeIDs(o *out, path string, content, all bool) (*fileIDs, error) {
	opened, err := openModel(o.ctx, path)
	if err != nil {
		return nil, err
	}
	defer opened.Close()
	m := opened.Model
	if !m.HeaderParsed {
		return nil, headerError(m)
	}
	ids := &fileIDs{model: m, structure: hash.StructureID(m)}
	if all && m.Shards != nil {
		return nil, &canon.ReadError{Name: path, Err: errors.New("ecosystem hashes (--all) are hashes of files, and this is a set of shards"),
			Hint: "hash the shard files one by one, or drop --all"}
	}
	switch {
	case all:
		prog := o.progress("hashing "+path, opened.Source.Size())
		e, digests, err := hash.FileHashes(o.ctx, opened.Source, m, content, hash.Options{Progress: prog.add})
		prog.stop()
		if err != nil {
			return nil, err
		}
		ids.eco = &e
		ids.findings = hash.VerifyEmbedded(m, e.AutoV3)
		ids.digestList = digests
	case content:
		if ids.digestList, err = contentDigests(o, opened, path); err != nil {
			return nil, err
		}
	}
	if err := opened.Unchanged(); err != nil {
		return nil, err
	}
	if content {
		ids.content = hash.ContentID(m, ids.digestList)
	}
	return ids, nil
}

// contentDigests reads a model's tensors: in parallel from local files, front to back from remote ones
// (never stored), with progress on a terminal.
func contentDigests(o *out, opened *canon.Opened, name string) ([][32]byte, error) {
	m := opened.Model
	prog := o.progress("reading "+name, m.DataLen())
	defer prog.stop()
	opt := hash.Options{Progress: prog.add}
	if opened.Remote {
		return hash.StreamDigests(o.ctx, opened.Source, m, opt)
	}
	d, err := hash.TensorDigests(o.ctx, opened.Source, m, opt)
	if err != nil {
		return nil, err
	}
	return d, opened.Unchanged()
}

// headerError explains why a file's header could not be read at all, from its first error finding.
func headerError(m *canon.Model) error {
	for _, f := range m.Findings {
		if f.Severity == canon.SevError {
			return &canon.ReadError{Name: m.Name, Err: fmt.Errorf("not a readable safetensors file: %s", f.Message), Hint: f.Hint}
		}
	}
	return &canon.ReadError{Name: m.Name, Err: fmt.Errorf("not a readable safetensors file: %v", m.RefErr)}
}

type checkResult struct {
	Path    string   `json:"path"`
	OK      bool     `json:"ok"`
	Reason  string   `json:"reason,omitempty"`
	Checked []string `json:"checked"`
	Error   string   `json:"error,omitempty"`
}

// check verifies a manifest: each file once, computing only what its lines need.
func (c *hashCmd) check(o *out) int {
	f, err := os.Open(c.Check)
	if err != nil {
		o.errorf("", "%s: %v", esc(c.Check), err)
		return exitTrouble
	}
	entries, err := hash.ParseManifest(f)
	f.Close()
	if err != nil {
		o.errorf("the manifest's lines look like `st1:<hex>  model.safetensors`, as `stdiff hash` prints them", "%s: %v", esc(c.Check), err)
		return exitTrouble
	}
	if len(entries) == 0 {
		o.errorf("write one with `stdiff hash FILE… > MANIFEST`", "%s: no hashes in the manifest", esc(c.Check))
		return exitTrouble
	}
	var order []string
	want := map[string]map[string]string{}
	for _, e := range entries {
		if want[e.Path] == nil {
			want[e.Path] = map[string]string{}
			order = append(order, e.Path)
		}
		want[e.Path][e.Kind] = e.Value
	}
	status := exitOK
	var results []checkResult
	for _, path := range order {
		w := want[path]
		_, needContent := w["ct1"]
		needAll := false
		for k := range w {
			if k != "st1" && k != "ct1" {
				needAll = true
			}
		}
		r := checkResult{Path: path, Checked: []string{}}
		for _, k := range hash.Kinds {
			if _, ok := w[k]; ok {
				r.Checked = append(r.Checked, k)
			}
		}
		ids, err := computeIDs(o, path, needContent, needAll)
		if err != nil {
			o.readFailed(err)
			r.Error = err.Error()
			results = append(results, r)
			if o.format != "json" {
				o.printf("%s: FAILED open or read\n", esc(path))
			}
			status = exitTrouble
			continue
		}
		r.OK, r.Reason = compareIDs(w, ids)
		if !r.OK {
			status = max(status, exitFound)
		}
		results = append(results, r)
		if o.format != "json" {
			if r.OK {
				o.printf("%s: %s\n", esc(path), o.paint(green, "OK"))
			} else {
				o.printf("%s: %s (%s)\n", esc(path), o.paint(red, "FAILED"), r.Reason)
			}
		}
	}
	if o.format == "json" {
		o.writeJSON(filesJSON{Schema: "stdiff.hash-check/v1", Files: results})
	} else if status == exitFound {
		failed := 0
		for _, r := range results {
			if !r.OK && r.Error == "" {
				failed++
			}
		}
		o.errorf("", "%d of %d files did not match", failed, len(results))
	}
	return status
}

// compareIDs says whether every expected hash matches and, if not, what changed, most telling first.
func compareIDs(want map[string]string, ids *fileIDs) (bool, string) {
	got := map[string]string{
		"st1": strings.TrimPrefix(ids.structure, hash.StructurePrefix),
		"ct1": strings.TrimPrefix(ids.content, hash.ContentPrefix),
	}
	if e := ids.eco; e != nil {
		got["sha256"], got["autov1"], got["autov2"], got["autov3"], got["blake3"], got["crc32"] =
			e.SHA256, e.AutoV1, e.AutoV2, e.AutoV3, e.BLAKE3, strings.ToLower(e.CRC32)
	}
	bad := map[string]bool{}
	for k, v := range want {
		if got[k] != v {
			bad[k] = true
		}
	}
	if len(bad) == 0 {
		return true, ""
	}
	_, haveCT := want["ct1"]
	_, haveV3 := want["autov3"]
	switch {
	case bad["st1"]:
		return false, "structure changed: tensor names, dtypes, shapes or count differ"
	case bad["ct1"]:
		return false, "tensor bytes changed; names, dtypes and shapes are the same"
	case bad["autov3"] && haveCT:
		return false, "data layout changed (tensor order or gaps); every tensor is the same"
	case haveV3 && !bad["autov3"]:
		return false, "header changed (metadata or formatting); the data section is the same"
	case haveCT:
		return false, "file bytes changed; every tensor is the same (metadata or layout edited)"
	default:
		names := make([]string, 0, len(bad))
		for _, k := range hash.Kinds {
			if bad[k] {
				names = append(names, k)
			}
		}
		return false, "file bytes changed (" + strings.Join(names, ", ") + " differ)"
	}
}
