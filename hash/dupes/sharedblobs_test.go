package dupes

import (
	"github.com/stdiff/stdiff/canon/store"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManagedBySharedBlobs: the Hugging Face cache's shared blob store (CACHE/blobs/<2 hex>/<Xet hash>,
// with its marker or the blob's .refs) is the cache's; a look-alike folder without either is not.
func TestManagedBySharedBlobs(t *testing.T) {
	dir := t.TempDir()
	h := "26bcb87aa2953ba3b5c282d9581ac5572a4c7481399a64c03cdff89242a9b3f2"
	marked := filepath.Join(dir, "hub", "blobs", h[:2], h)
	mustWrite(t, marked, []byte("x"))
	mustWrite(t, filepath.Join(dir, "hub", "blobs", ".huggingface-shared-blobs"), []byte("1"))
	refs := filepath.Join(dir, "refs", "blobs", h[:2], h)
	mustWrite(t, refs, []byte("x"))
	mustWrite(t, refs+".refs", []byte("models--org--repo\n"))
	loose := filepath.Join(dir, "loose", "blobs", h[:2], h)
	mustWrite(t, loose, []byte("x"))
	wrongPrefix := filepath.Join(dir, "hub", "blobs", "00", h)
	mustWrite(t, wrongPrefix, []byte("x"))
	upper := filepath.Join(dir, "hub", "blobs", "26", strings.ToUpper(h))
	if err := os.WriteFile(upper, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]store.Store{marked: store.HuggingFace, refs: store.HuggingFace, loose: "", wrongPrefix: "", upper: ""} {
		if got := store.ManagedBy(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
