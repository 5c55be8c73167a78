package inspect_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/store"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// The names the cache fixture's blobs go by.
const (
	stOID  = "1111111111111111111111111111111111111111111111111111111111111111"
	ggOID  = "2222222222222222222222222222222222222222222222222222222222222222"
	xetHex = "ab00112233445566778899aabbccddeeff00112233445566778899aabbccddee"
)

// hfCache lays out a Hugging Face cache under a temporary folder: models--org--name with a
// safetensors and a GGUF blob, both linked from two snapshots (refs/main names rev2), and the shared
// blob store holding a safetensors file (blobs/ab/<Xet hash>, marker and .refs), linked by
// models--org--other (refs/main) and models--org--third (no ref); models--org--set has a shard set in
// three revisions, two of them the same files (refs/main names r4); beside it, mine/ holds a file of the
// user's and the user's own link to it.
func hfCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gguf, err := os.ReadFile(filepath.Join("..", "..", "testdata", "weights.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	file := func(p string, b []byte) {
		t.Helper()
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(p, target string) {
		t.Helper()
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.FromSlash(target), p); err != nil {
			t.Fatal(err)
		}
	}
	file("models--org--name/blobs/"+stOID, stfile.KohyaSDXL(1).Build())
	file("models--org--name/blobs/"+ggOID, gguf)
	file("models--org--name/refs/main", []byte("rev2"))
	for _, rev := range []string{"rev1", "rev2"} {
		link("models--org--name/snapshots/"+rev+"/m.safetensors", "../../blobs/"+stOID)
		link("models--org--name/snapshots/"+rev+"/m.gguf", "../../blobs/"+ggOID)
	}
	file("blobs/.huggingface-shared-blobs", []byte("1\n"))
	file("blobs/ab/"+xetHex, stfile.KohyaSDXL(2).Build())
	file("blobs/ab/"+xetHex+".refs", []byte("models--org--other/blobs/e1\nmodels--org--third/blobs/e2\n"))
	file("models--org--other/refs/main", []byte("r3\n"))
	link("models--org--other/blobs/e1", "../../blobs/ab/"+xetHex)
	link("models--org--other/snapshots/r3/w.safetensors", "../../blobs/e1")
	link("models--org--third/blobs/e2", "../../blobs/ab/"+xetHex)
	link("models--org--third/snapshots/r4/w.safetensors", "../../blobs/e2")
	// a shard set whose revisions r1, r3 and r4 share the index blob: r3 with another second shard
	shard := func(name string, v byte) []byte {
		return stfile.File{Tensors: []stfile.Tensor{{Name: name, DType: "F32", Shape: []uint64{1}, Data: []byte{v, 0, 0, 0}}}}.Build()
	}
	file("models--org--set/blobs/i", []byte(`{"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`))
	file("models--org--set/blobs/x", shard("a", 1))
	file("models--org--set/blobs/y1", shard("b", 2))
	file("models--org--set/blobs/y2", shard("b", 3))
	file("models--org--set/refs/main", []byte("r4"))
	for rev, second := range map[string]string{"r1": "y1", "r3": "y2", "r4": "y1"} {
		link("models--org--set/snapshots/"+rev+"/model.safetensors.index.json", "../../blobs/i")
		link("models--org--set/snapshots/"+rev+"/model-00001-of-00002.safetensors", "../../blobs/x")
		link("models--org--set/snapshots/"+rev+"/model-00002-of-00002.safetensors", "../../blobs/"+second)
	}
	file("mine/a.safetensors", stfile.KohyaSDXL(3).Build())
	link("mine/b.safetensors", "a.safetensors")
	return dir
}

// TestShortCacheOncePerModel: `inspect --short` of a Hugging Face cache lists each model once, by the
// snapshot file refs/main names: not its blob too (a GGUF blob is found by its magic) nor once per
// snapshot or per repository linking one shared blob. Two names of the user's own for one file are
// both kept. A shard set is one model where its index and every shard are the same files: revisions
// sharing an index but not a shard are two. (It listed the GGUF blob, both revisions and both
// repositories, and each revision of the set: 12 rows for 7.)
func TestShortCacheOncePerModel(t *testing.T) {
	dir := hfCache(t)
	r := inspect.Short(t.Context(), []string{dir}, inspect.Options{})
	var got []string
	for _, row := range r.Files {
		rel, _ := filepath.Rel(dir, row.Path)
		got = append(got, filepath.ToSlash(rel))
		if row.Err != nil || !row.Valid {
			t.Errorf("%s: valid %v, %v", rel, row.Valid, row.Err)
		}
	}
	want := []string{"mine/a.safetensors", "mine/b.safetensors", "models--org--name/snapshots/rev2/m.gguf",
		"models--org--name/snapshots/rev2/m.safetensors", "models--org--other/snapshots/r3/w.safetensors",
		"models--org--set/snapshots/r3/model.safetensors.index.json", "models--org--set/snapshots/r4/model.safetensors.index.json"}
	if !reflect.DeepEqual(got, want) || len(r.Errors) != 0 {
		t.Errorf("rows %q (errors %v), want %q", got, r.Errors, want)
	}
}

// TestInspectStoreBlob: the card of a blob of the cache says where it lies (store, layout, the hash
// its name claims, the snapshot files that refer to it), in JSON as its store object and in the
// text; a file in no store has no store object.
func TestInspectStoreBlob(t *testing.T) {
	dir := hfCache(t)
	main := []string{"main"}
	for _, tc := range []struct {
		path string
		want *store.Blob
		text []string
	}{
		{"models--org--name/blobs/" + ggOID, &store.Blob{Store: store.HuggingFace, Layout: store.LayoutRepoBlobs, Hash: ggOID, HashKind: store.HashSHA256, Refs: []store.Ref{
			{Repo: "org/name", RepoType: "model", Revision: "rev1", Names: []string{}, Path: "m.gguf"},
			{Repo: "org/name", RepoType: "model", Revision: "rev2", Names: main, Path: "m.gguf"}}},
			[]string{"  store       the Hugging Face cache, a repository's blob · sha256 222222222222… (by its name)\n",
				"  used by     model org/name @ rev1: m.gguf\n              model org/name @ rev2 (main): m.gguf\n"}},
		{"blobs/ab/" + xetHex, &store.Blob{Store: store.HuggingFace, Layout: store.LayoutSharedBlobs, Hash: xetHex, HashKind: store.HashXet, Refs: []store.Ref{
			{Repo: "org/other", RepoType: "model", Revision: "r3", Names: main, Path: "w.safetensors"},
			{Repo: "org/third", RepoType: "model", Revision: "r4", Names: []string{}, Path: "w.safetensors"}}},
			[]string{"  store       the Hugging Face cache, shared blob store · Xet hash ab0011223344… (by its name)\n",
				"  used by     model org/other @ r3 (main): w.safetensors\n              model org/third @ r4: w.safetensors\n"}},
		{"models--org--other/blobs/e1", &store.Blob{Store: store.HuggingFace, Layout: store.LayoutRepoBlobs, Shared: filepath.Join(dir, "blobs", "ab", xetHex), Refs: []store.Ref{
			{Repo: "org/other", RepoType: "model", Revision: "r3", Names: main, Path: "w.safetensors"}}},
			[]string{"  store       the Hugging Face cache, a repository's blob\n", "links to the shared blob store: "}},
		{"mine/a.safetensors", nil, nil},
	} {
		card, err := inspect.Inspect(t.Context(), filepath.Join(dir, filepath.FromSlash(tc.path)), inspect.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if card.Store != nil {
			for i := range card.Store.Refs {
				card.Store.Refs[i].Local = ""
			}
		}
		if !card.Valid || !reflect.DeepEqual(card.Store, tc.want) {
			t.Errorf("%s: valid %v, store\n got %+v\nwant %+v", tc.path, card.Valid, card.Store, tc.want)
		}
		var text, js bytes.Buffer
		if err := inspect.Write(&text, card, inspect.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.text {
			if !strings.Contains(text.String(), s) {
				t.Errorf("%s: no %q in\n%s", tc.path, s, text.String())
			}
		}
		if err := inspect.Write(&js, card, inspect.WriteOptions{Format: textfmt.JSON}); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Store *store.Blob `json:"store"`
		}
		if err := json.Unmarshal(js.Bytes(), &v); err != nil || !reflect.DeepEqual(v.Store, tc.want) {
			t.Errorf("%s: JSON store %+v (%v), want %+v", tc.path, v.Store, err, tc.want)
		}
		if tc.want == nil && bytes.Contains(js.Bytes(), []byte(`"store"`)) {
			t.Errorf("%s: a store object for a file in no store", tc.path)
		}
	}
}
