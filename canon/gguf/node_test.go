package gguf_test

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// nodeEnv names a folder where `npm install @huggingface/gguf` was run; the comparison with that
// reader runs only when it is set (and node is on PATH).
const nodeEnv = "STDIFF_GGUF_NODE"

// nodeScript reads each file named on stdin with @huggingface/gguf and prints one JSON line per file.
const nodeScript = `
import { gguf } from "@huggingface/gguf";
import * as readline from "node:readline";
const show = (v) => typeof v === "bigint" ? v.toString() : (typeof v === "number" ? v : String(v));
for await (const path of readline.createInterface({ input: process.stdin })) {
  try {
    const r = await gguf(path, { allowLocalFile: true, typedMetadata: true });
    const kvs = [];
    for (const [k, e] of Object.entries(r.typedMetadata)) {
      if (k === "version" || k === "tensor_count" || k === "kv_count") continue;
      if (Array.isArray(e.value)) kvs.push([k, e.type, e.subType ?? -1, e.value.length, e.value.length ? show(e.value[0]) : null, e.value.length ? show(e.value[e.value.length - 1]) : null]);
      else kvs.push([k, e.type, -1, 0, show(e.value), null]);
    }
    const tensors = r.tensorInfos.map((t) => [t.name, t.shape.map(String), t.dtype, t.offset.toString()]);
    console.log(JSON.stringify({ kvs, tensors, data: r.tensorDataOffset.toString() }));
  } catch (e) {
    console.log(JSON.stringify({ error: String(e) }));
  }
}
`

type nodeResult struct {
	Error   string
	KVs     [][]any `json:"kvs"`
	Tensors [][]any `json:"tensors"`
	Data    string
}

// TestAgainstHuggingFace compares the pairs and tensor infos of valid files with @huggingface/gguf's.
func TestAgainstHuggingFace(t *testing.T) {
	dir := os.Getenv(nodeEnv)
	if dir == "" {
		t.Skipf("%s not set: the comparison needs node and @huggingface/gguf", nodeEnv)
	}
	tmp := t.TempDir()
	var paths []string
	add := func(name string, b []byte) {
		p := filepath.Join(tmp, name+".gguf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, c := range edgeCases() {
		// Skipped: keys a JS object reorders or merges, invalid UTF-8 (JS decodes it to U+FFFD) and
		// dimensions over 2^32 (which @huggingface/gguf refuses).
		if strings.HasPrefix(c.name, "ok-") && !strings.Contains(c.name, "key") && !strings.Contains(c.name, "utf8") && !strings.Contains(c.name, "huge") {
			add(c.name, c.b)
		}
	}
	add("synthetic", ggufw.Synthetic(900, 5000).Build())
	for name, f := range map[string]ggufw.File{"big-endian-values": allValueTypes(), "big-endian-arrays": allArrayTypes()} {
		f.BigEndian = true
		add(name, f.Build())
	}
	if real, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus", "real", "llama-2-tiny-random.gguf")); err == nil && fileExists(real) {
		paths = append(paths, real)
	}
	cmd := exec.Command("node", "--input-type=module", "-e", nodeScript)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<26)
	i := 0
	for ; sc.Scan(); i++ {
		var r nodeResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		compareNode(t, paths[i], &r)
	}
	if i != len(paths) {
		t.Fatalf("node answered for %d of %d files", i, len(paths))
	}
	t.Logf("%d files agree with @huggingface/gguf", i)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func compareNode(t *testing.T, path string, r *nodeResult) {
	name := filepath.Base(path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := read(name, b)
	if r.Error != "" {
		t.Errorf("%s: @huggingface/gguf fails: %s", name, r.Error)
		return
	}
	if strconv.FormatInt(f.DataOffset, 10) != r.Data && len(f.Tensors) > 0 {
		t.Errorf("%s: data at %d, @huggingface/gguf says %s", name, f.DataOffset, r.Data)
	}
	if len(r.KVs) != len(f.KVs) || len(r.Tensors) != len(f.Tensors) {
		t.Errorf("%s: %d pairs, %d tensors; @huggingface/gguf %d, %d", name, len(f.KVs), len(f.Tensors), len(r.KVs), len(r.Tensors))
		return
	}
	for i, kv := range f.KVs {
		n := r.KVs[i]
		v := kv.Value
		if n[0] != kv.Key || int(n[1].(float64)) != int(v.Type) {
			t.Errorf("%s: pair %d is %q (%v), @huggingface/gguf %q (%v)", name, i, kv.Key, v.Type, n[0], n[1])
			continue
		}
		if a := v.Array; a != nil {
			if int(n[2].(float64)) != int(a.ElemType) || uint64(n[3].(float64)) != a.Len {
				t.Errorf("%s: %s is %v × %d, @huggingface/gguf %v × %v", name, kv.Key, a.ElemType, a.Len, n[2], n[3])
			}
			if a.Len > 0 {
				last, err := a.At(a.Len - 1)
				if err != nil {
					t.Fatal(err)
				}
				sameValue(t, name+": "+kv.Key+"[0]", a.Head[0], n[4])
				sameValue(t, name+": "+kv.Key+"[last]", last, n[5])
			}
			continue
		}
		sameValue(t, name+": "+kv.Key, v, n[4])
	}
	for i, ti := range f.Tensors {
		n := r.Tensors[i]
		dims := make([]string, len(ti.Dims))
		for j, d := range ti.Dims {
			dims[j] = strconv.FormatUint(d, 10)
		}
		var theirs []string
		for _, d := range n[1].([]any) {
			theirs = append(theirs, d.(string))
		}
		if n[0] != ti.Name || strings.Join(dims, ",") != strings.Join(theirs, ",") || int(n[2].(float64)) != int(ti.Type) || n[3] != strconv.FormatUint(ti.Offset, 10) {
			t.Errorf("%s: tensor %d is %q %v %v @%d; @huggingface/gguf %v", name, i, ti.Name, ti.Dims, ti.Type, ti.Offset, n)
		}
	}
}

// sameValue compares a value with @huggingface/gguf's rendering of it (numbers as JSON numbers,
// 64-bit integers and everything else as strings).
func sameValue(t *testing.T, what string, v gguf.Value, theirs any) {
	switch x := theirs.(type) {
	case float64:
		if f, ok := v.Float(); ok {
			if f != x && !(math.IsNaN(f) && math.IsNaN(x)) {
				t.Errorf("%s = %v, @huggingface/gguf %v", what, f, x)
			}
			return
		}
		if i, ok := v.Int(); !ok || float64(i) != x {
			t.Errorf("%s = %v, @huggingface/gguf %v", what, v, x)
		}
	case string:
		if v.String() != x {
			t.Errorf("%s = %q, @huggingface/gguf %q", what, v.String(), x)
		}
	default:
		t.Errorf("%s: @huggingface/gguf gives %T %v", what, theirs, theirs)
	}
}
