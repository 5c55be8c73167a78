// Package dupetest makes the small models, sets and stores that the tests of dupes and of its acting
// build their collections from. Only tests import it.
package dupetest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/stfile"
)

// The files of the set ShardSet builds, as WriteSet names them.
const (
	SetShard1 = "model-00001-of-00002.safetensors"
	SetShard2 = "model-00002-of-00002.safetensors"
	SetIndex  = "model.safetensors.index.json"
)

// LoraFile is a small LoRA-shaped file; seed varies its weights, tag its metadata.
func LoraFile(seed int64, tag string) stfile.File {
	f := stfile.File{Seed: seed, Metadata: []stfile.KV{{Key: "ss_output_name", Value: tag}, {Key: "ss_session_id", Value: tag + "-session"}}}
	for i := 0; i < 20; i++ {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("lora_unet_block_%d.lora_down.weight", i), DType: "F16", Shape: []uint64{8, 64}})
	}
	return f
}

// PlantedCollection writes a collection with one duplicate of every kind and returns its folder and
// the expected groups (level → sorted base names).
func PlantedCollection(t *testing.T) (string, map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	orig := LoraFile(1, "orig").Build()
	write("a/orig.safetensors", orig)
	write("b/copy of orig.safetensors", orig) // byte copy
	write("c/renamed-meta.safetensors", LoraFile(1, "edited name").Build())
	re := LoraFile(1, "orig")
	for i, j := 0, len(re.Tensors)-1; i < j; i, j = i+1, j-1 {
		re.Tensors[i], re.Tensors[j] = re.Tensors[j], re.Tensors[i]
	}
	re.NoPad = true
	write("d/resaved.safetensors", re.Build()) // re-serialised: other order, no padding
	write("e/other-weights.safetensors", LoraFile(2, "orig").Build())
	flipped := append([]byte(nil), orig...)
	flipped[len(flipped)-1000] ^= 1 // near miss: one flipped byte (not in a sampled range)
	write("f/near-miss.safetensors", flipped)
	for i := 0; i < 10; i++ { // unrelated files of other structures
		f := LoraFile(int64(100+i), "x")
		f.Tensors = f.Tensors[:5+i]
		write(fmt.Sprintf("g/unrelated-%d.safetensors", i), f.Build())
	}
	write("h/broken.safetensors", orig[:len(orig)-7])
	want := map[string][]string{
		"bytes":   {"copy of orig.safetensors", "orig.safetensors"},
		"content": {"copy of orig.safetensors", "orig.safetensors", "renamed-meta.safetensors", "resaved.safetensors"},
		// orig's session saved other weights too (its near miss and other-weights): one training run
		"run":       {"near-miss.safetensors", "orig.safetensors", "other-weights.safetensors"},
		"structure": {"copy of orig.safetensors", "near-miss.safetensors", "orig.safetensors", "other-weights.safetensors", "renamed-meta.safetensors", "resaved.safetensors"},
	}
	return dir, want
}

// GGUFFile is a small GGUF model; name goes into general.name.
func GGUFFile(name string) []byte {
	f := ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str(name)}}}
	for i := range 4 {
		f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.attn_q.weight", i), Type: gguf.TypeQ4_K, Dims: []int64{256, 2}})
	}
	return f.Build()
}

// VocabOnly is a GGUF file without tensors (as llama.cpp's vocab-only files are): a tokenizer and a
// chat template.
func VocabOnly(name, template string) []byte {
	return ggufw.File{KVs: []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str(name)},
		{Key: "tokenizer.ggml.model", Val: ggufw.Str("gpt2")}, {Key: "tokenizer.ggml.tokens", Val: ggufw.Strs("a", "b", "ab")},
		{Key: "tokenizer.chat_template", Val: ggufw.Str(template)}}}.Build()
}

// MetadataOnly is a safetensors file without tensors: its metadata is all it holds.
func MetadataOnly(kv ...string) []byte {
	var f stfile.File
	for i := 0; i+1 < len(kv); i += 2 {
		f.Metadata = append(f.Metadata, stfile.KV{Key: kv[i], Value: kv[i+1]})
	}
	return f.Build()
}

// GGUFWith is GGUFFile("tiny") with more key-value pairs.
func GGUFWith(kvs ...ggufw.KV) []byte {
	f := ggufw.File{KVs: append([]ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str("tiny")}}, kvs...)}
	for i := range 4 {
		f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.attn_q.weight", i), Type: gguf.TypeQ4_K, Dims: []int64{256, 2}})
	}
	return f.Build()
}

// SplitGGUF is a GGUF model split in n files as llama.cpp's gguf-split writes them (two tensors each):
// name goes into general.name, seed varies the weights.
func SplitGGUF(n int, name string, seed byte) [][]byte {
	var out [][]byte
	for k := range n {
		kvs := []ggufw.KV{{Key: "general.architecture", Val: ggufw.Str("llama")}, {Key: "general.name", Val: ggufw.Str(name)},
			{Key: gguf.SplitNoKey, Val: ggufw.U16(uint16(k))}, {Key: gguf.SplitCountKey, Val: ggufw.U16(uint16(n))},
			{Key: gguf.SplitTensorsKey, Val: ggufw.I32(int32(2 * n))}}
		f := ggufw.File{KVs: kvs}
		for i := range 2 {
			data := make([]byte, 256*4)
			for j := range data {
				data[j] = byte(j) ^ seed ^ byte(k*2+i)
			}
			f.Tensors = append(f.Tensors, ggufw.Tensor{Name: fmt.Sprintf("blk.%d.ffn.weight", k*2+i), Type: gguf.TypeF32, Dims: []int64{256}, Data: data})
		}
		out = append(out, f.Build())
	}
	return out
}

// SplitSafetensors is a set of n shards without an index (two tensors each); seed varies the weights.
func SplitSafetensors(n int, seed int64) [][]byte {
	var out [][]byte
	for k := range n {
		f := stfile.File{Seed: seed + int64(k)}
		for i := range 2 {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: fmt.Sprintf("layers.%d.weight", k*2+i), DType: "F16", Shape: []uint64{8, 16}})
		}
		out = append(out, f.Build())
	}
	return out
}

// WriteSplit writes files as prefix-0000K-of-0000N.ext in dir and returns their paths.
func WriteSplit(t *testing.T, dir, prefix, ext string, files [][]byte) []string {
	t.Helper()
	var paths []string
	for k, b := range files {
		p := filepath.Join(dir, fmt.Sprintf("%s-%05d-of-%05d.%s", prefix, k+1, len(files), ext))
		MustWrite(t, p, b)
		paths = append(paths, p)
	}
	return paths
}

// HFRepo lays out a model in a Hugging Face cache repository folder under hub, as the cache does:
// blobs/<sha256>, snapshots/<rev>/<name> a link to it, refs/main. It returns the snapshot's path.
func HFRepo(t *testing.T, hub, repo, name string, b []byte) string {
	t.Helper()
	dir := filepath.Join(hub, "models--"+strings.ReplaceAll(repo, "/", "--"))
	blob := fmt.Sprintf("%x", sha256.Sum256(b))
	MustWrite(t, filepath.Join(dir, "blobs", blob), b)
	rev := fmt.Sprintf("%040x", sha256.Sum256([]byte(repo)))[:40]
	MustWrite(t, filepath.Join(dir, "refs", "main"), []byte(rev))
	snap := filepath.Join(dir, "snapshots", rev, name)
	MustSymlink(t, filepath.Join("..", "..", "blobs", blob), snap)
	return snap
}

// OllamaBlob puts b in an ollama models folder as its blob, named in a manifest; it returns the blob.
func OllamaBlob(t *testing.T, models string, b []byte) string {
	t.Helper()
	digest := fmt.Sprintf("sha256-%x", sha256.Sum256(b))
	MustWrite(t, filepath.Join(models, "manifests", "registry.ollama.ai", "library", "m", "latest"),
		[]byte(`{"layers": [{"digest": "`+strings.Replace(digest, "-", ":", 1)+`"}]}`))
	p := filepath.Join(models, "blobs", digest)
	MustWrite(t, p, b)
	return p
}

// MustWrite writes b to path, making its folders, or fails the test.
func MustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// MustSymlink makes link point at target, making its folders (an existing link is kept), or fails the test.
func MustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
}

// ShardSet builds a two-shard set: a and b vary the weights of its shards, note (if any) goes into the
// index's metadata, so that two indexes of the same shards can differ.
func ShardSet(a, b int64, note string) (shard1, shard2, index []byte) {
	s1, s2 := stfile.File{Seed: a}, stfile.File{Seed: b}
	weights := map[string]string{}
	total := 0
	for i := 0; i < 4; i++ {
		for _, s := range []struct {
			f    *stfile.File
			name string
			file string
		}{{&s1, "enc", SetShard1}, {&s2, "dec", SetShard2}} {
			name := fmt.Sprintf("%s.%d.weight", s.name, i)
			s.f.Tensors = append(s.f.Tensors, stfile.Tensor{Name: name, DType: "F16", Shape: []uint64{8, 32}})
			weights[name] = s.file
			total += 8 * 32 * 2
		}
	}
	meta := map[string]any{"total_size": total}
	if note != "" {
		meta["note"] = note
	}
	index, _ = json.Marshal(map[string]any{"metadata": meta, "weight_map": weights})
	return s1.Build(), s2.Build(), index
}

// WriteSet writes ShardSet(a, b, note) into dir and returns the path of its index.
func WriteSet(t *testing.T, dir string, a, b int64, note string) string {
	s1, s2, idx := ShardSet(a, b, note)
	MustWrite(t, filepath.Join(dir, SetShard1), s1)
	MustWrite(t, filepath.Join(dir, SetShard2), s2)
	MustWrite(t, filepath.Join(dir, SetIndex), idx)
	return filepath.Join(dir, SetIndex)
}

// Complete reports whether every file of paths exists.
func Complete(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}
