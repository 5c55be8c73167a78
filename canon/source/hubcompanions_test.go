package source_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/source/hubtest"
)

// TestHubCompanions: an hf:// repository named without a path is a folder model: its companion files
// are read from the Hub (the same files, with the same digests, as its clone's), through the same HTTP
// code as its tensors; a pipeline's components' files too.
func TestHubCompanions(t *testing.T) {
	_, root, opt := fakeHub(t)
	writeTree(t, filepath.Join(root, "org/llm/main"), map[string][]byte{
		"model.safetensors": modelOf(1, 4, "x"), "README.md": []byte("# not read"),
		"config.json":           []byte(`{"model_type": "llama", "rope_theta": 10000}`),
		"tokenizer_config.json": []byte(`{"chat_template": "{{ x }}"}`),
	})
	for _, repo := range []string{"llm", "sd"} {
		o, err := source.Open(t.Context(), "hf://org/"+repo, opt)
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
		local, err := companion.ReadDir(filepath.Join(root, "org", repo, "main"), companion.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Folder != "hf://org/"+repo || len(o.Companions) == 0 || companion.ID(o.Companions) != companion.ID(local) {
			t.Errorf("hf://org/%s: folder %q, companions %+v; its clone's %+v", repo, o.Folder, o.Companions, local)
		}
	}
	// a path names a file: no folder model
	o, err := source.Open(t.Context(), "hf://org/llm/model.safetensors", opt)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if o.Folder != "" || o.Companions != nil {
		t.Errorf("hf://org/llm/model.safetensors: folder %q, companions %+v", o.Folder, o.Companions)
	}
}

// TestHubCompanionLies: a companion file whose answer announces more bytes than it sends, or a size
// too large to download, makes opening the repository fail with an error naming it, at once and
// without memory for what was announced.
func TestHubCompanionLies(t *testing.T) {
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "org/llm/main"), map[string][]byte{
		"model.safetensors": modelOf(1, 4, "x"), "config.json": []byte(`{"model_type": "llama"}`), "tokenizer.json": []byte(`{}`)})
	for _, c := range []struct {
		name, file, want string
		serve            func(w http.ResponseWriter)
	}{
		{"short", "config.json", "config.json: the server sent 23 of the 1000 bytes it announced", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"model_type": "llama"}`))
		}},
		{"huge", "tokenizer.json", "tokenizer.json is 2199023255552 bytes, over the 1024 MiB stdiff reads of a file beside the tensors", func(w http.ResponseWriter) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-1/%d", int64(2<<40)))
			w.Header().Set("Content-Length", "2")
			w.WriteHeader(http.StatusPartialContent)
			w.Write([]byte(`{}`))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hub := &hubtest.Hub{Root: root}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/resolve/main/"+c.file) {
					c.serve(w)
					return
				}
				hub.ServeHTTP(w, r)
			}))
			defer srv.Close()
			o, err := source.Open(t.Context(), "hf://org/llm", source.Options{Endpoint: srv.URL, HTTP: source.HTTPOptions{Retries: -1}})
			if err == nil {
				o.Close()
				t.Fatalf("opened, companions %+v", o.Companions)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
		})
	}
}

// TestHubListsLinkedFiles: the fake Hub lists a file that is a link (a revision made of the Hugging
// Face cache's links into its blobs) at the size of the file it leads to, as the Hub lists its files,
// not the link's own: the listing's sizes are the files'.
func TestHubListsLinkedFiles(t *testing.T) {
	_, root, opt := fakeHub(t)
	blobs := filepath.Join(root, "blobs")
	writeTree(t, blobs, map[string][]byte{"m": modelOf(1, 4, "x"), "c": []byte(`{"model_type": "llama", "rope_theta": 10000, "padding": "` + strings.Repeat("x", 300) + `"}`)})
	rev := filepath.Join(root, "org/linked/main")
	writeTree(t, rev, map[string][]byte{"README.md": []byte("# a model")})
	for name, blob := range map[string]string{"model.safetensors": "m", "config.json": "c"} {
		if err := os.Symlink(filepath.Join(blobs, blob), filepath.Join(rev, name)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	files, err := source.ListHubFiles(t.Context(), "hf://org/linked", opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		st, err := os.Stat(filepath.Join(rev, f.Path))
		if err != nil || f.Size != st.Size() {
			t.Errorf("%s listed at %d bytes, the file is %v", f.Path, f.Size, st)
		}
	}
	o, err := source.Open(t.Context(), "hf://org/linked", opt)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	local, err := companion.ReadDir(rev, companion.Options{})
	if err != nil || companion.ID(o.Companions) != companion.ID(local) {
		t.Errorf("companions %+v, the folder's %+v (%v)", o.Companions, local, err)
	}
}
