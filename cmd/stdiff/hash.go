package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

type hashCmd struct {
	Content   bool     `help:"Also compute the content ID (reads every tensor byte, in parallel)."`
	All       bool     `help:"Also compute the ecosystem hashes (SHA256, AutoV1/V2/V3, BLAKE3, CRC32) in one pass, and verify hashes embedded in the metadata."`
	Canonical bool     `help:"Print the exact canonical bytes the structure ID hashes (with --content, the content form)."`
	Check     string   `help:"Verify the hashes in MANIFEST (as written by stdiff hash) against the files it names." placeholder:"MANIFEST" type:"existingfile"`
	Files     []string `arg:"" optional:"" name:"FILE" help:"Model files." type:"string"`
}

// hashFileJSON is one file's record: the reference's verdict, then each ID asked for, null where the file
// has none (the header-based ones of a file whose header cannot be read, AutoV1 of a file under
// 0x110000 bytes).
type hashFileJSON struct {
	Path           string      `json:"path"`
	Valid          bool        `json:"valid"`
	ReferenceError *refErrJSON `json:"reference_error"`
	StructureID    hash.Hex    `json:"structure_id"`
	ContentID      *hash.Hex   `json:"content_id,omitempty"`
	*hash.Ecosystem
	Findings []findingJSON `json:"findings,omitempty"`
}

// hashErrorJSON is the record of a file that could not be read.
type hashErrorJSON struct {
	Path  string `json:"path"`
	Error string `json:"error"`
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
	// headerErr says why the header-based IDs (structure and content ID, AutoV3) are missing: the
	// header cannot be read. contentErr says why the content ID is missing (the header, or tensors
	// beyond the end of the file).
	headerErr, contentErr error
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
	var files []any
	markdownRows := 0
	for _, path := range c.Files {
		ids, err := computeIDs(o, path, c.Content, c.All)
		if err != nil {
			o.readFailed(err)
			status = exitTrouble
			files = append(files, hashErrorJSON{Path: path, Error: err.Error()})
			continue
		}
		if !ids.model.Valid() || ids.contentErr != nil {
			status = max(status, exitFound)
			c.explainMissing(o, path, ids)
		}
		if c.Canonical {
			switch {
			case c.Content && ids.content != "":
				_, _ = o.w.Write(canon.CanonicalContent(ids.model, ids.digestList))
			case !c.Content && ids.structure != "":
				_, _ = o.w.Write(canon.Canonical(ids.model))
			}
			continue
		}
		fj := hashFileJSON{Path: path, Valid: ids.model.Valid(), ReferenceError: refErrorJSON(ids.model.RefErr),
			StructureID: hash.Hex(ids.structure), Ecosystem: ids.eco, Findings: findingsJSON(ids.findings)}
		if c.Content {
			id := hash.Hex(ids.content)
			fj.ContentID = &id
		}
		files = append(files, fj)
		switch o.format {
		case "json":
			continue
		case "markdown":
			code := func(id string) string {
				if id == "" {
					return "—"
				}
				return markdown.Code(id)
			}
			row, head := []string{markdown.Text(path), code(ids.structure)}, "| file | structure ID |"
			if c.Content {
				row, head = append(row, code(ids.content)), head+" content ID |"
			}
			if markdownRows == 0 {
				o.printf("%s\n|%s\n", head, strings.Repeat("---|", len(row)))
			}
			markdownRows++
			o.printf("| %s |\n", strings.Join(row, " | "))
			continue
		}
		for _, line := range manifestLines(path, ids) {
			o.printf("%s", line)
		}
		for _, f := range ids.findings {
			if f.Severity != canon.SevInfo {
				o.errorf(f.Hint, "%s: %s: %s", textfmt.Escape(path), f.Code, textfmt.Escape(f.Message))
			}
		}
	}
	if o.format == "json" && !c.Canonical {
		o.writeJSON(filesJSON{Schema: "stdiff.hash/v1", Files: files})
	}
	return status
}

// explainMissing says, in one line on stderr, why an invalid file's IDs are missing or what they describe.
func (c *hashCmd) explainMissing(o *out, path string, ids *fileIDs) {
	hint := func(err error) string {
		var re *canon.ReadError
		if errors.As(err, &re) && re.Hint != "" {
			return re.Hint
		}
		return "`stdiff check " + textfmt.Escape(path) + "` says what is wrong"
	}
	switch {
	case ids.headerErr != nil:
		missing := []string{"structure ID"}
		if c.Content {
			missing = append(missing, "content ID")
		}
		if ids.eco != nil && ids.eco.AutoV3 == "" {
			missing = append(missing, "AutoV3")
		}
		list := strings.Join(missing, ", ")
		if k := len(missing); k > 1 {
			list = strings.Join(missing[:k-1], ", ") + " or " + missing[k-1]
		}
		o.errorf(hint(ids.headerErr), "%s: %s; no %s", textfmt.Escape(path), textfmt.Escape(errorText(ids.headerErr)), list)
	case ids.contentErr != nil:
		o.errorf(hint(ids.contentErr), "%s: %s; no content ID", textfmt.Escape(path), textfmt.Escape(errorText(ids.contentErr)))
	default:
		o.errorf(hint(nil), "%s: warning: the reference reader rejects this file (%s); the IDs describe what could be read", textfmt.Escape(path), ids.model.RefErr.Kind)
	}
}

// id returns a file's hash of one manifest kind, or "" and why the file has none.
func (ids *fileIDs) id(kind string) (string, error) {
	var v string
	switch kind {
	case "st1":
		if ids.structure == "" {
			return "", ids.headerErr
		}
		v = strings.TrimPrefix(ids.structure, hash.StructurePrefix)
	case "ct1":
		if ids.content == "" {
			return "", ids.contentErr
		}
		v = strings.TrimPrefix(ids.content, hash.ContentPrefix)
	default:
		e := ids.eco
		if e == nil {
			return "", nil
		}
		switch kind {
		case "sha256":
			v = e.SHA256
		case "autov1":
			if e.AutoV1 == "" {
				return "", errNoAutoV1
			}
			v = string(e.AutoV1)
		case "autov2":
			v = e.AutoV2
		case "autov3":
			if e.AutoV3 == "" {
				return "", ids.headerErr
			}
			v = string(e.AutoV3)
		case "blake3":
			v = e.BLAKE3
		case "crc32":
			v = e.CRC32
		}
	}
	return v, nil
}

// errNoAutoV1 is why a file under hash.AutoV1MinSize bytes has no AutoV1.
var errNoAutoV1 = fmt.Errorf("it hashes file bytes 0x100000 to 0x110000, and the file has fewer than %s bytes", textfmt.Thousands(hash.AutoV1MinSize))

// manifestLines are the lines `stdiff hash` prints for a file: a manifest --check reads back. A hash the
// file does not have is left out.
func manifestLines(path string, ids *fileIDs) []string {
	var lines []string
	for _, kind := range hash.Kinds {
		if v, _ := ids.id(kind); v != "" {
			lines = append(lines, hash.FormatLine(kind, v, path))
		}
	}
	return lines
}

// computeIDs reads a file's header and, as asked, its bytes: content digests in parallel, or everything
// in one pass when ecosystem hashes are wanted too. A file whose header cannot be read still has its
// whole-file hashes; the IDs it cannot have are left empty, with the reason in headerErr and contentErr.
func computeIDs(o *out, path string, content, all bool) (*fileIDs, error) {
	opened, err := o.open(path)
	if err != nil {
		return nil, err
	}
	defer opened.Close()
	m := opened.Model
	if all && m.Shards != nil {
		return nil, &canon.ReadError{Name: path, Err: errors.New("ecosystem hashes (--all) are hashes of files, and this is a set of shards"),
			Hint: "hash the shard files one by one, or drop --all"}
	}
	ids := &fileIDs{model: m}
	if m.HeaderParsed {
		ids.structure = hash.StructureID(m)
		if content {
			ids.contentErr = hash.CheckRanges(opened.Source, m)
		}
	} else {
		ids.headerErr = headerError(m)
		ids.contentErr = ids.headerErr
	}
	digests := content && ids.contentErr == nil
	switch {
	case all:
		prog := o.progress("hashing "+path, opened.Source.Size())
		e, d, err := hash.FileHashes(o.ctx, opened.Source, m, digests, hash.Options{Progress: prog.add})
		prog.stop()
		if err != nil {
			return nil, err
		}
		ids.eco = &e
		ids.findings = hash.VerifyEmbedded(m, e.AutoV3)
		ids.digestList = d
	case digests:
		if ids.digestList, err = contentDigests(o, opened, path); err != nil {
			return nil, err
		}
	}
	if err := opened.Unchanged(); err != nil {
		return nil, err
	}
	if digests {
		ids.content = hash.ContentID(m, ids.digestList)
	}
	return ids, nil
}

// contentDigests reads a model's tensors: in parallel from local files, front to back from remote ones
// (never stored), with progress on a terminal.
func contentDigests(o *out, opened *source.Opened, name string) ([][32]byte, error) {
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
		o.errorf("", "%s: %v", textfmt.Escape(c.Check), err)
		return exitTrouble
	}
	entries, err := hash.ParseManifest(f)
	f.Close()
	if err != nil {
		o.errorf("the manifest's lines look like `st1:<hex>  model.safetensors`, as `stdiff hash` prints them", "%s: %v", textfmt.Escape(c.Check), err)
		return exitTrouble
	}
	if len(entries) == 0 {
		o.errorf("write one with `stdiff hash FILE… > MANIFEST`", "%s: no hashes in the manifest", textfmt.Escape(c.Check))
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
			if o.format == "markdown" {
				mdCheckRow(o, len(results) == 1, path, "**FAILED** open or read")
			} else if o.format != "json" {
				o.printf("%s: FAILED open or read\n", textfmt.Escape(path))
			}
			status = exitTrouble
			continue
		}
		r.OK, r.Reason = compareIDs(w, ids)
		if !r.OK {
			status = max(status, exitFound)
		}
		results = append(results, r)
		if o.format == "markdown" {
			verdict := "OK"
			if !r.OK {
				verdict = "**FAILED** (" + markdown.Text(r.Reason) + ")"
			}
			mdCheckRow(o, len(results) == 1, path, verdict)
		} else if o.format != "json" {
			if r.OK {
				o.printf("%s: %s\n", textfmt.Escape(path), o.pal.Green("OK"))
			} else {
				o.printf("%s: %s (%s)\n", textfmt.Escape(path), o.pal.Red("FAILED"), r.Reason)
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

// mdCheckRow prints one verified file as a Markdown table row, after the table's head for the first.
func mdCheckRow(o *out, first bool, path, verdict string) {
	if first {
		o.printf("| file | result |\n|---|---|\n")
	}
	o.printf("| %s | %s |\n", markdown.Text(path), verdict)
}

// compareIDs says whether every expected hash matches and, if not, what changed, most telling first. A
// hash the file cannot have fails, with the reason.
func compareIDs(want map[string]string, ids *fileIDs) (bool, string) {
	got := map[string]string{}
	for _, k := range hash.Kinds {
		if _, ok := want[k]; !ok {
			continue
		}
		v, why := ids.id(k)
		if v == "" && why != nil {
			return false, "no " + hash.KindName(k) + ": " + errorText(why)
		}
		got[k] = strings.ToLower(v)
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
