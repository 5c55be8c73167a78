package hash

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// writeFiles writes files into a new folder and returns their paths, in the order given.
func writeFiles(t *testing.T, files ...[]byte) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, b := range files {
		p := filepath.Join(dir, string(rune('a'+i))+".safetensors")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// manifestOf is what `stdiff hash` prints for path with the options given, as a manifest to verify.
func manifestOf(t *testing.T, path string, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	r := Run(t.Context(), []string{path}, opt)
	if r.Files[0].Err != nil {
		t.Fatal(r.Files[0].Err)
	}
	if err := Write(&b, r, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// keep returns the lines of a manifest of the kinds given.
func keep(manifest string, kinds ...string) string {
	var out []string
	for _, l := range strings.SplitAfter(manifest, "\n") {
		if k, _, ok := strings.Cut(l, ":"); ok && slices.Contains(kinds, k) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestVerifyCodes: a manifest's check says what changed with a code, most telling first, and a hash
// the file cannot have with an unavailable.* code; the message is made from the code.
func TestVerifyCodes(t *testing.T) {
	base := sample()
	retitled := sample()
	retitled.Metadata = []stfile.KV{{Key: "format", Value: "pt"}, {Key: "note", Value: "b"}}
	reordered := sample()
	reordered.DataOrder = []int{3, 2, 1, 0}
	retrained := sample()
	retrained.Seed = 8
	reshaped := sample()
	reshaped.Tensors = slices.Clone(reshaped.Tensors)
	reshaped.Tensors[1] = stfile.Tensor{Name: "a.bias", DType: "F32", Shape: []uint64{4}}
	valid := base.Build()
	truncated := valid[:len(valid)-4]
	lfs := []byte("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 4831838208\n")

	path := writeFiles(t, valid)[0]
	full := manifestOf(t, path, Options{Content: true, All: true})
	cases := []struct {
		name     string
		file     []byte
		manifest string
		code     Code
		reason   string
		bad      []string
	}{
		{"same", valid, full, "", "", nil},
		{"metadata edited", retitled.Build(), full, ChangeHeader, "header changed (metadata or formatting); the data section is the same", []string{"sha256", "autov2", "blake3", "crc32", "xet"}},
		{"data re-ordered", reordered.Build(), full, ChangeLayout, "data layout changed (tensor order or gaps); every tensor is the same", []string{"sha256", "autov2", "autov3", "blake3", "crc32", "xet"}},
		{"tensor bytes", retrained.Build(), full, ChangeContent, "tensor bytes changed; names, dtypes and shapes are the same", []string{"ct1", "sha256", "autov2", "autov3", "blake3", "crc32", "xet"}},
		{"shape", reshaped.Build(), full, ChangeStructure, "structure changed: tensor names, dtypes, shapes or count differ", []string{"st1", "ct1", "sha256", "autov2", "autov3", "blake3", "crc32", "xet"}},
		{"file hashes and content ID", retitled.Build(), keep(full, "ct1", "sha256"), ChangeFile, "file bytes changed; every tensor is the same (metadata or layout edited)", []string{"sha256"}},
		{"file hashes only", retitled.Build(), keep(full, "sha256", "crc32"), ChangeFile, "file bytes changed (sha256, crc32 differ)", []string{"sha256", "crc32"}},
		{"autov1 of a small file", valid, "autov1:e3b0c442  " + path + "\n", UnavailableAutoV1, "no AutoV1: it hashes file bytes 0x100000 to 0x110000, and the file has fewer than 1,114,112 bytes", nil},
		{"structure of an LFS pointer", lfs, keep(full, "st1"), UnavailableStructure, "no structure ID: not a readable safetensors file: this is a Git LFS pointer file", nil},
		{"content of a truncated file", truncated, keep(full, "ct1"), UnavailableContent, "no content ID: tensor ", nil},
		{"autov3 of 4 bytes", []byte("\x10\x00\x00\x00"), keep(full, "autov3"), UnavailableAutoV3, "no AutoV3: not a readable safetensors file", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Verify(t.Context(), strings.NewReader(c.manifest), Options{})
			if err != nil {
				t.Fatal(err)
			}
			v := r.Files[0]
			if v.OK != (c.code == "") || v.Code != c.code || !strings.HasPrefix(v.Reason, c.reason) || !slices.Equal(v.Mismatched, c.bad) {
				t.Errorf("got ok %v, code %q, reason %q, mismatched %v\nwant code %q, reason %q…, mismatched %v", v.OK, v.Code, v.Reason, v.Mismatched, c.code, c.reason, c.bad)
			}
			if want := map[bool]canon.Outcome{true: canon.Clean, false: canon.Found}[c.code == ""]; r.Outcome() != want {
				t.Errorf("outcome %v, want %v", r.Outcome(), want)
			}
			var j bytes.Buffer
			if err := WriteVerify(&j, r, WriteOptions{Format: textfmt.JSON}); err != nil {
				t.Fatal(err)
			}
			if c.code != "" && !strings.Contains(j.String(), `"code": "`+string(c.code)+`"`) {
				t.Errorf("JSON has no code %s:\n%s", c.code, j.String())
			}
		})
	}
}

// TestVerifyUnreadable: a file the manifest names that cannot be opened fails with its error, and
// the check comes to Trouble; a manifest without hashes, or with a line that is none, is an error
// naming the line.
func TestVerifyUnreadable(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone.safetensors")
	r, err := Verify(t.Context(), strings.NewReader("st1:00  "+gone+"\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Files[0]; f.OK || !errors.Is(f.Err, fs.ErrNotExist) || f.Code != "" || r.Outcome() != canon.Trouble || r.Failed() != 0 {
		t.Errorf("missing file: %+v, outcome %v", f, r.Outcome())
	}
	for manifest, want := range map[string]string{"# nothing\n\n": "no hashes in the manifest", "st1:00  a\nnot a line\n": "line 2: expected"} {
		_, err := Verify(t.Context(), strings.NewReader(manifest), Options{})
		var me *ManifestError
		if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), want) || me.Hint == "" {
			t.Errorf("%q: error %v, want %q… with a hint", manifest, err, want)
		}
	}
	_, err = VerifyManifest(t.Context(), gone, Options{})
	var re *canon.ReadError
	if !errors.As(err, &re) || re.Name != gone || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("VerifyManifest of a missing manifest: %v", err)
	}
}

// TestRecords: every record, in JSON and in JSONL, carries what finding duplicates across many runs
// needs: path, size and mtime (null for a URL), the verdict, the structure ID and the content ID;
// a JSONL line has exactly the fields of the file's JSON record, and "schema".
func TestRecords(t *testing.T) {
	valid := sample().Build()
	paths := writeFiles(t, valid, []byte("\x10\x00\x00\x00"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "m.safetensors", time.Time{}, bytes.NewReader(valid))
	}))
	defer srv.Close()
	specs := append(paths, srv.URL+"/m.safetensors", filepath.Join(t.TempDir(), "gone.safetensors"))
	r := Run(t.Context(), specs, Options{Content: true})
	if r.Outcome() != canon.Trouble {
		t.Errorf("outcome %v, want trouble", r.Outcome())
	}
	var js, jl bytes.Buffer
	if err := Write(&js, r, WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&jl, r, WriteOptions{Format: textfmt.JSONL}); err != nil {
		t.Fatal(err)
	}
	var whole struct {
		Schema string
		Files  []map[string]any
	}
	if err := json.Unmarshal(js.Bytes(), &whole); err != nil || whole.Schema != Schema || len(whole.Files) != len(specs) {
		t.Fatalf("JSON: %v, schema %q, %d files\n%s", err, whole.Schema, len(whole.Files), js.String())
	}
	sc := bufio.NewScanner(&jl)
	for i := 0; sc.Scan(); i++ {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if rec["schema"] != Schema {
			t.Errorf("line %d: schema %v", i+1, rec["schema"])
		}
		delete(rec, "schema")
		if want, _ := json.Marshal(whole.Files[i]); !bytes.Equal(mustJSON(t, rec), want) {
			t.Errorf("line %d: %s\nJSON record: %s", i+1, sc.Bytes(), want)
		}
		if rec["path"] != specs[i] {
			t.Errorf("line %d: path %v, want %s", i+1, rec["path"], specs[i])
		}
		if i == 3 { // the file that is gone: its error
			if rec["error"] == nil || len(rec) != 2 {
				t.Errorf("missing file's record: %s", sc.Bytes())
			}
			continue
		}
		for _, k := range []string{"size", "mtime", "valid", "reference_error", "structure_id", "content_id"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("line %d has no %s: %s", i+1, k, sc.Bytes())
			}
		}
		if i == 2 { // the URL
			if rec["size"] != nil || rec["mtime"] != nil {
				t.Errorf("a URL has size %v and mtime %v, want null", rec["size"], rec["mtime"])
			}
			continue
		}
		st, err := os.Stat(specs[i])
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := rec["mtime"].(string)
		mtime, err := time.Parse(time.RFC3339Nano, ts)
		if rec["size"] != float64(st.Size()) || err != nil || !mtime.Equal(st.ModTime()) {
			t.Errorf("line %d: size %v, mtime %v (%v), want %d, %v", i+1, rec["size"], rec["mtime"], err, st.Size(), st.ModTime())
		}
	}
	if rec := whole.Files[1]; rec["valid"] != false || !strings.Contains(mustString(t, rec["reference_error"]), `"kind":"HeaderTooSmall"`) || rec["structure_id"] != nil || rec["content_id"] != nil {
		t.Errorf("an unreadable header's record: %v", rec)
	}
	if whole.Files[0]["content_id"] != whole.Files[2]["content_id"] || whole.Files[0]["content_id"] == nil {
		t.Errorf("the same bytes, local and remote, have content IDs %v and %v", whole.Files[0]["content_id"], whole.Files[2]["content_id"])
	}
}

func mustString(t *testing.T, v any) string { return string(mustJSON(t, v)) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDuplicatesAcrossShards does in Go what the DuckDB query of cmd/stdiff/docs/at-scale.md does: runs over
// separate lists of files, their JSONL records concatenated, grouped by content_id, give the groups of
// files with the same tensors, whichever run saw them; records without a content ID (unreadable, or
// tensors past the end) are in no group.
func TestDuplicatesAcrossShards(t *testing.T) {
	a, b := sample(), sample()
	b.Metadata = []stfile.KV{{Key: "note", Value: "edited"}}
	other := sample()
	other.Seed = 9
	valid := a.Build()
	paths := writeFiles(t, valid, b.Build(), other.Build(), valid[:len(valid)-4], valid)
	var records bytes.Buffer
	for _, shard := range [][]string{paths[:2], paths[2:]} { // two machines, each its own list
		if err := Write(&records, Run(t.Context(), shard, Options{Content: true}), WriteOptions{Format: textfmt.JSONL}); err != nil {
			t.Fatal(err)
		}
	}
	groups := map[string][]string{}
	sc := bufio.NewScanner(&records)
	for sc.Scan() {
		var rec struct {
			Path      string
			ContentID *string `json:"content_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ContentID != nil {
			groups[*rec.ContentID] = append(groups[*rec.ContentID], rec.Path)
		}
	}
	var dupes [][]string
	for _, g := range groups {
		if len(g) > 1 {
			dupes = append(dupes, g)
		}
	}
	if want := [][]string{{paths[0], paths[1], paths[4]}}; len(dupes) != 1 || !slices.Equal(dupes[0], want[0]) {
		t.Errorf("groups %v, want %v", dupes, want)
	}
}

// TestMarkdownShowsEcosystemHashes: with All, the Markdown table has a column per ecosystem hash and
// the Xet hash, "—" where the file has none (AutoV1 of a small file).
func TestMarkdownShowsEcosystemHashes(t *testing.T) {
	paths := writeFiles(t, sample().Build())
	r := Run(t.Context(), paths, Options{Content: true, All: true})
	var b bytes.Buffer
	if err := Write(&b, r, WriteOptions{Format: textfmt.Markdown}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	e := r.Files[0].Ecosystem
	if lines[0] != "| file | structure ID | content ID | SHA256 | AutoV1 | AutoV2 | AutoV3 | BLAKE3 | CRC32 | Xet hash |" ||
		!strings.Contains(lines[2], "| `"+e.SHA256+"` | — | `"+e.AutoV2+"` | `"+string(e.AutoV3)+"` | `"+e.BLAKE3+"` | `"+e.CRC32+"` | `"+r.Files[0].Xet.Hash+"` |") {
		t.Errorf("Markdown:\n%s", b.String())
	}
}
