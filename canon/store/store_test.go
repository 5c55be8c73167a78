package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Hashes the fixture's blobs are named by (their bytes are not these: nothing is verified).
const (
	lfsOID = "5d41402abc4b2a76b9719d911017c592aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	gitOID = "0123456789abcdef0123456789abcdef01234567"
	xet    = "ab00112233445566778899aabbccddeeff00112233445566778899aabbccddee"
)

// Cache is a Hugging Face cache as huggingface_hub lays it out, with a classic repository
// (models--org--name: two snapshots linking one LFS blob, a Git blob linked from a subfolder; refs/main
// and refs/pr/1) and the shared blob store (blobs/ab/<Xet hash> with its marker and .refs, linked
// from models--org--other and models--org--third, with a stale and a malformed entry).
func Cache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	file := func(p, s string) {
		t.Helper()
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
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
	r := "models--org--name/"
	file(r+"blobs/"+lfsOID, "weights")
	file(r+"blobs/"+gitOID, "{}")
	file(r+"refs/main", "rev2\n")
	file(r+"refs/pr/1", "rev1")
	link(r+"snapshots/rev1/model.safetensors", "../../blobs/"+lfsOID)
	link(r+"snapshots/rev2/model.safetensors", "../../blobs/"+lfsOID)
	link(r+"snapshots/rev2/sub/config.json", "../../../blobs/"+gitOID)
	file("blobs/.huggingface-shared-blobs", "1\n")
	file("blobs/ab/"+xet, "shared")
	file("blobs/ab/"+xet+".refs", "models--org--other/blobs/e1\nmodels--org--gone/blobs/e9\n../escape/blobs/e1\nmodels--org--third/blobs/e2\nmodels--org--other/blobs/e1\n")
	for _, o := range []string{"models--org--other/", "datasets--org--third/"} {
		file(o+"refs/main", "r3")
		link(o+"snapshots/r3/w.safetensors", "../../blobs/e1")
	}
	link("models--org--other/blobs/e1", "../../blobs/ab/"+xet)
	link("models--org--third/blobs/e2", "../../blobs/ab/"+xet)
	link("models--org--third/snapshots/r4/x/w.safetensors", "../../../blobs/e2")
	os.MkdirAll(filepath.Join(dir, "models--org--third", "refs"), 0o755)
	os.MkdirAll(filepath.Join(dir, "datasets--org--third", "blobs"), 0o755)
	return dir
}

// TestLocate: each blob of the cache says its store, layout, the hash its name claims and the
// snapshot files that refer to it, as the cache's links, refs/ and .refs lists say.
func TestLocate(t *testing.T) {
	dir := Cache(t)
	at := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	main, pr := []string{"main"}, []string{"pr/1"}
	for _, tc := range []struct {
		path string
		want *Blob
	}{
		{"models--org--name/blobs/" + lfsOID, &Blob{Store: HuggingFace, Layout: LayoutRepoBlobs, Hash: lfsOID, HashKind: HashSHA256, Refs: []Ref{
			{Repo: "org/name", RepoType: "model", Revision: "rev1", Names: pr, Path: "model.safetensors"},
			{Repo: "org/name", RepoType: "model", Revision: "rev2", Names: main, Path: "model.safetensors"}}}},
		{"models--org--name/blobs/" + gitOID, &Blob{Store: HuggingFace, Layout: LayoutRepoBlobs, Hash: gitOID, HashKind: HashGitSHA1, Refs: []Ref{
			{Repo: "org/name", RepoType: "model", Revision: "rev2", Names: main, Path: "sub/config.json"}}}},
		{"blobs/ab/" + xet, &Blob{Store: HuggingFace, Layout: LayoutSharedBlobs, Hash: xet, HashKind: HashXet, StaleRefs: 2, Refs: []Ref{
			{Repo: "org/other", RepoType: "model", Revision: "r3", Names: main, Path: "w.safetensors"},
			{Repo: "org/third", RepoType: "model", Revision: "r4", Names: []string{}, Path: "x/w.safetensors"}}}},
		{"models--org--other/blobs/e1", &Blob{Store: HuggingFace, Layout: LayoutRepoBlobs, Shared: at("blobs/ab/" + xet), Refs: []Ref{
			{Repo: "org/other", RepoType: "model", Revision: "r3", Names: main, Path: "w.safetensors"}}}},
		{"models--org--name/snapshots/rev1/model.safetensors", nil},
		{"models--org--name/refs/main", nil},
		{"blobs/ab/" + xet + ".refs", nil},
		{"blobs/.huggingface-shared-blobs", nil},
		{"hf://org/name/model.safetensors", nil},
	} {
		got := Locate(at(tc.path))
		if strings.HasPrefix(tc.path, "hf://") {
			got = Locate(tc.path)
		}
		unlocal(t, got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.path, got, tc.want)
		}
	}
}

// TestLocateOllama: ollama's blobs are sha256-named, with no refs.
func TestLocateOllama(t *testing.T) {
	dir := t.TempDir()
	h := strings.Repeat("0f", 32)
	os.MkdirAll(filepath.Join(dir, "blobs"), 0o755)
	os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
	p := filepath.Join(dir, "blobs", "sha256-"+h)
	os.WriteFile(p, []byte("GGUF"), 0o644)
	want := &Blob{Store: Ollama, Layout: LayoutOllamaBlobs, Hash: h, HashKind: HashSHA256, Refs: []Ref{}}
	if got := Locate(p); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := Locate(filepath.Join(dir, "loose.gguf")); got != nil {
		t.Errorf("a file outside a store: %+v", got)
	}
}

// FuzzRefsEntry: whatever a .refs line holds, an entry it accepts names a file two folders below the
// cache, in a repository folder's blobs: never elsewhere.
func FuzzRefsEntry(f *testing.F) {
	for _, s := range []string{"models--org--name/blobs/e1", "../x/blobs/e1", "models--a/blobs/..", "models--a/../blobs/e", "/abs/blobs/e", "models--a/blobs/e\x00", "models--a\\..\\b/blobs/e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		repo, etag, ok := refsEntry(line)
		if !ok {
			return
		}
		p := filepath.Join("cache", repo, "blobs", etag)
		if rel, err := filepath.Rel("cache", p); err != nil || strings.Count(filepath.ToSlash(rel), "/") != 2 || !isRepoName(repo) || filepath.Base(filepath.Dir(p)) != "blobs" {
			t.Fatalf("%q accepted as %q, %q: %s", line, repo, etag, p)
		}
	})
}

// unlocal checks that each of b's refs has its snapshot file's path on disk as Local, and clears it
// (for comparing).
func unlocal(t *testing.T, b *Blob) {
	t.Helper()
	if b == nil {
		return
	}
	for i, r := range b.Refs {
		if want := filepath.FromSlash("/snapshots/" + r.Revision + "/" + r.Path); !strings.HasSuffix(r.Local, want) {
			t.Errorf("ref %+v: Local is not its snapshot file", r)
		}
		b.Refs[i].Local = ""
	}
}

// TestSnapshot: a blob stands for the snapshot file of refs/main's revision, else of a named one,
// else the first; none for no blob or no refs.
func TestSnapshot(t *testing.T) {
	b := &Blob{Refs: []Ref{{Local: "a"}, {Local: "b", Names: []string{"pr/1"}}, {Local: "c", Names: []string{"v1", "main"}}, {Local: "d", Names: []string{"main"}}}}
	if got := b.Snapshot(); got != "c" {
		t.Errorf("got %q, want c", got)
	}
	if b.Refs = b.Refs[:2]; b.Snapshot() != "b" {
		t.Errorf("got %q, want b", b.Snapshot())
	}
	if b.Refs = b.Refs[:1]; b.Snapshot() != "a" {
		t.Errorf("got %q, want a", b.Snapshot())
	}
	if (&Blob{}).Snapshot() != "" || (*Blob)(nil).Snapshot() != "" {
		t.Error("a blob with no refs stands for a snapshot file")
	}
}
