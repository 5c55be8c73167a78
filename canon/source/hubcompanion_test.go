package source_test

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/source/hubtest"
)

// sameCompanions fails unless a and b are the same companion files: paths, kinds, sizes, digests and
// what was read of them.
func sameCompanions(t *testing.T, what string, a, b []companion.File) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d companion files, want %d: %+v", what, len(a), len(b), a)
		return
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Path != y.Path || x.Kind != y.Kind || x.Size != y.Size || x.Digest != y.Digest || x.Text != y.Text || x.Problem != y.Problem ||
			(x.Tokenizer == nil) != (y.Tokenizer == nil) || (x.Full == nil) != (y.Full == nil) {
			t.Errorf("%s: %s is %+v, want %+v", what, y.Path, x, y)
		}
	}
}

// TestHubCompanions: a repository on the Hub named without a path is a folder model (issue 33): the
// files a loader reads beside its tensors are those its download holds, read the same way (config.json
// by its canonical JSON, tokenizer.json summarised, a chat template whole, a pipeline's components'
// configs), whether its model was found at model.safetensors or through the listing; its companions
// ID is the folder's. An endpoint without the tree API lists nothing: the model is then not a folder
// model, as a file named by its path is not.
func TestHubCompanions(t *testing.T) {
	hub, root, opt := fakeHub(t)
	writeTree(t, filepath.Join(root, "org/llama/main"), map[string][]byte{
		"model.safetensors":                        modelOf(8, 4, "lm_head.weight"),
		"config.json":                              []byte(`{"architectures": ["LlamaForCausalLM"], "rope_theta": 10000.0, "model_type": "llama"}`),
		"generation_config.json":                   []byte(`{}`),
		"tokenizer.json":                           []byte(`{"version":"1.0","added_tokens":[{"id":3,"content":"<s>","special":true}],"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}}`),
		"chat_template.jinja":                      []byte("{{ messages }}\n"),
		"additional_chat_templates/tool_use.jinja": []byte("{{ tools }}\n"),
		"empty.json":                               nil,
		"README.md":                                []byte("# not a companion"),
		"sub/config.json":                          []byte(`{"not": "read"}`),
	})
	for _, spec := range []string{"hf://org/llama", "hf://org/sd", "hf://org/sd@v2", "hf://org/lora"} {
		o, err := source.Open(t.Context(), spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
		org, rest, _ := strings.Cut(strings.TrimPrefix(spec, "hf://"), "/")
		repo, rev, ok := strings.Cut(rest, "@")
		if !ok {
			rev = "main"
		}
		dir := filepath.Join(root, org, repo, rev)
		local, err := companion.ReadDir(dir, companion.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Folder != spec {
			t.Errorf("%s: Folder %q", spec, o.Folder)
		}
		sameCompanions(t, spec, o.Companions, local)
		if companion.ID(o.Companions) != companion.ID(local) {
			t.Errorf("%s: companions ID differs from its folder's", spec)
		}
	}
	o, _ := source.Open(t.Context(), "hf://org/llama", opt)
	o.Close()
	var paths []string
	for _, f := range o.Companions {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "additional_chat_templates/tool_use.jinja chat_template.jinja config.json generation_config.json tokenizer.json" {
		t.Errorf("hf://org/llama companions %s", got)
	}
	if o.Companions[2].Text != `{"architectures":["LlamaForCausalLM"],"model_type":"llama","rope_theta":10000.0}` || o.Companions[4].Tokenizer == nil || o.Companions[4].Full == nil {
		t.Errorf("config.json %+v, tokenizer.json %+v", o.Companions[2], o.Companions[4])
	}

	// A file named by its path is not a folder model.
	f, err := source.Open(t.Context(), "hf://org/llama/model.safetensors", opt)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f.Folder != "" || f.Companions != nil {
		t.Errorf("a file named by its path has Folder %q and %d companions", f.Folder, len(f.Companions))
	}
	hub.NoAPI = true
	n, err := source.Open(t.Context(), "hf://org/llama", opt)
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	if n.Folder != "" || n.Companions != nil {
		t.Errorf("without the tree API: Folder %q and %d companions", n.Folder, len(n.Companions))
	}
}

// TestHubCompanionLies: a companion file the server serves at another size than the listing gives,
// or that the listing says is over companion.MaxSize, is an error of the open (exit 2 in the CLI), and
// nothing is allocated or downloaded for a size nobody checked: the huge one is never asked for.
func TestHubCompanionLies(t *testing.T) {
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "org/m/main"), map[string][]byte{
		"model.safetensors": modelOf(8, 4, "w"),
		"config.json":       []byte(`{"model_type": "llama"}`),
	})
	writeTree(t, filepath.Join(root, "org/huge/main"), map[string][]byte{
		"model.safetensors": modelOf(8, 4, "w"),
		"tokenizer.json":    []byte(`{}`),
	})
	tree := func(repo, name string, size int64) {
		b := []byte(`[{"type":"file","path":"model.safetensors","size":` + strconv.FormatInt(int64(len(modelOf(8, 4, "w"))), 10) + `},` +
			`{"type":"file","path":"` + name + `","size":` + strconv.FormatInt(size, 10) + `}]`)
		if err := os.WriteFile(filepath.Join(root, "org", repo, "main.tree.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree("m", "config.json", 5)
	tree("huge", "tokenizer.json", 1<<40)
	hub := &hubtest.Hub{Root: root}
	srv := httptest.NewServer(hub)
	t.Cleanup(srv.Close)
	opt := source.Options{Endpoint: srv.URL}
	for spec, want := range map[string]string{
		"hf://org/m":    "the server serves 23 bytes, the repository's listing says 5",
		"hf://org/huge": "the repository lists it at 1.0 TiB, over the 128 MiB stdiff downloads of a file beside the tensors",
	} {
		o, err := source.Open(t.Context(), spec, opt)
		var re *canon.ReadError
		if !errors.As(err, &re) || !strings.Contains(re.Reason(), want) || re.Hint == "" {
			t.Errorf("%s: %v, want a read error saying %q with a hint", spec, err, want)
		}
		if err == nil {
			o.Close()
		}
	}
	for _, a := range hub.Asked() {
		if strings.Contains(a, "/org/huge/resolve/main/tokenizer.json") {
			t.Errorf("the huge file was asked for: %s", a)
		}
	}
}
