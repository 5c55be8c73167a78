// Package folder tells the model folders dupes treats as one member: a folder that holds, beside a
// model's weights, a file a loader reads (config.json, adapter_config.json, tokenizer files,
// model_index.json…), as save_pretrained, PEFT and the Hugging Face cache's snapshots lay them out.
// Such a model is its weights and every other regular file of its folder (its companions): a copy
// of it is a copy only when its companions are byte for byte the keeper's, and it is deleted whole.
package folder

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/zeebo/blake3"
)

// LoaderFiles are the files whose presence makes a folder a model folder: what transformers,
// diffusers, PEFT and tokenizers read beside the weights.
var LoaderFiles = []string{"config.json", "generation_config.json", "adapter_config.json", "model_index.json",
	"tokenizer_config.json", "tokenizer.json", "special_tokens_map.json", "preprocessor_config.json",
	"scheduler_config.json", "chat_template.jinja", "chat_template.json", "processor_config.json"}

// Lister lists folders once each: a collection of many files in one folder is listed once.
type Lister struct {
	mu    sync.Mutex
	lists map[string][]string // folder → its regular files (links followed), sorted; nil: not a model folder
}

// NewLister returns an empty Lister.
func NewLister() *Lister { return &Lister{lists: map[string][]string{}} }

// Companions are the regular files (links followed) of the folder of the model made of files own
// (its weights: a file, or a set's index and shards), other than own, when that folder is a model
// folder; nil otherwise. Files named as Act's temporary files (.stdiff-*) are not listed.
func (l *Lister) Companions(own []string) []string {
	if len(own) == 0 || source.IsRemote(own[0]) {
		return nil
	}
	dir := filepath.Dir(own[0])
	l.mu.Lock()
	files, ok := l.lists[dir]
	l.mu.Unlock()
	if !ok {
		files = list(dir)
		l.mu.Lock()
		l.lists[dir] = files
		l.mu.Unlock()
	}
	if files == nil {
		return nil
	}
	skip := map[string]bool{}
	for _, p := range own {
		skip[filepath.Clean(p)] = true
	}
	var out []string
	for _, p := range files {
		if !skip[p] {
			out = append(out, p)
		}
	}
	if out == nil {
		return nil
	}
	return out
}

// list is the regular files of dir when it holds a loader file, else nil: only a model folder's
// entries are looked at one by one.
func list(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	model := false
	for _, e := range entries {
		model = model || slices.Contains(LoaderFiles, e.Name())
	}
	if !model {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".stdiff-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, filepath.Clean(p))
		}
	}
	sort.Strings(out)
	return out
}

// Digest is the BLAKE3 of files (each named relative to dir, with its bytes), in name order: two
// folders whose files have the same names and bytes have the same digest.
func Digest(dir string, files []string) ([32]byte, error) {
	names := make([]string, 0, len(files))
	for _, p := range files {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return [32]byte{}, canon.PathError("read", p, err)
		}
		names = append(names, filepath.ToSlash(rel))
	}
	sort.Strings(names)
	h := blake3.New()
	for _, name := range names {
		src, err := source.OpenFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return [32]byte{}, err
		}
		h.Write([]byte(name + "\x00"))
		var n [8]byte
		for i, sz := 0, src.Size(); i < 8; i++ {
			n[i] = byte(sz >> (8 * i))
		}
		h.Write(n[:])
		_, err = io.Copy(h, io.NewSectionReader(src, 0, src.Size()))
		if err == nil {
			err = src.Unchanged()
		}
		src.Close()
		if err != nil {
			return [32]byte{}, canon.PathError("read", src.Name(), err)
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// Relative are files named relative to dir, slash-separated, sorted.
func Relative(dir string, files []string) []string {
	out := make([]string, 0, len(files))
	for _, p := range files {
		if rel, err := filepath.Rel(dir, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out
}
