//go:build ignore

// derived_copies writes, for testdata/bench/derived.sh, the collection: N kohya SDXL LoRAs
// (stfile.KohyaSDXL, as collection.sh's, but each with weights of its own: File.Seed); then N copies
// derived from the first N safetensors files of a folder: every even one rounded from F16 to F8_E4M3
// (values.Encode, PyTorch's rounding), every odd one a subset (the lora_unet_input_blocks_8 modules,
// 180 of 600 tensors, left out), each with the original's metadata.
// Usage: go run testdata/bench/derived_copies.go collection DIR N
//
//	go run testdata/bench/derived_copies.go copies DIR N OUTDIR
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

func main() {
	dir := os.Args[2]
	n, _ := strconv.Atoi(os.Args[3])
	if os.Args[1] == "collection" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			panic(err)
		}
		for i := range n {
			f := stfile.KohyaSDXL(i)
			f.Seed = int64(i + 1)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("char%04d.safetensors", i)), f.Build(), 0o644); err != nil {
				panic(err)
			}
		}
		return
	}
	out := os.Args[4]
	names, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	sort.Strings(names)
	if err := os.MkdirAll(out, 0o755); err != nil {
		panic(err)
	}
	for i, p := range names[:min(n, len(names))] {
		b, err := os.ReadFile(p)
		if err != nil {
			panic(err)
		}
		hl := binary.LittleEndian.Uint64(b)
		data := b[8+hl:]
		var h map[string]json.RawMessage
		if err := json.Unmarshal(b[8:8+hl], &h); err != nil {
			panic(err)
		}
		var f stfile.File
		var keys []string
		for k := range h {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		rounded := i%2 == 0
		for _, k := range keys {
			if k == "__metadata__" {
				var m map[string]string
				json.Unmarshal(h[k], &m)
				for mk, mv := range m {
					f.Metadata = append(f.Metadata, stfile.KV{Key: mk, Value: mv})
				}
				sort.Slice(f.Metadata, func(a, b int) bool { return f.Metadata[a].Key < f.Metadata[b].Key })
				continue
			}
			var t struct {
				DType   string    `json:"dtype"`
				Shape   []uint64  `json:"shape"`
				Offsets [2]uint64 `json:"data_offsets"`
			}
			if err := json.Unmarshal(h[k], &t); err != nil {
				panic(err)
			}
			raw := data[t.Offsets[0]:t.Offsets[1]]
			if !rounded && strings.HasPrefix(k, "lora_unet_input_blocks_8_") {
				continue
			}
			if rounded && t.DType == "F16" {
				vals := make([]float64, len(raw)/2)
				values.Decode("F16", vals, raw)
				raw = make([]byte, len(vals))
				for j, v := range vals {
					c, _ := values.Encode(tensor.DType("F8_E4M3"), v)
					raw[j] = byte(c)
				}
				t.DType = "F8_E4M3"
			}
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: k, DType: t.DType, Shape: t.Shape, Data: raw})
		}
		kind := map[bool]string{true: "fp8", false: "pruned"}[rounded]
		name := strings.TrimSuffix(filepath.Base(p), ".safetensors") + "-" + kind + ".safetensors"
		if err := os.WriteFile(filepath.Join(out, name), f.Build(), 0o644); err != nil {
			panic(err)
		}
	}
	fmt.Printf("%d derived copies written\n", min(n, len(names)))
}
