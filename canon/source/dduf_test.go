package source_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/dduf/ddufw"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/source/hubtest"
	"github.com/stdiff/stdiff/canon/stfile"
)

// tensorBytes reads every tensor's bytes of an opened model, by name.
func tensorBytes(t *testing.T, o *source.Opened) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, x := range o.Model.Tensors {
		b := make([]byte, x.End-x.Begin)
		if _, err := o.Source.ReadAt(b, int64(x.Begin)); err != nil && err != io.EOF {
			t.Fatalf("%s: %v", x.Name, err)
		}
		out[x.Name] = b
	}
	return out
}

// TestDDUFIsItsFolder: a DDUF file opens as the pipeline it holds, exactly as the same pipeline in a
// folder does: the same tensors (names, dtypes, shapes, bytes), the same files beside them, valid;
// each component's weights read in place from the archive.
func TestDDUFIsItsFolder(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.dduf")
	if err := os.WriteFile(p, ddufw.Write(ddufw.Pipeline()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ddufw.WriteFolder(filepath.Join(dir, "p"), ddufw.Pipeline()); err != nil {
		t.Fatal(err)
	}
	a, err := source.Open(t.Context(), p, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := source.Open(t.Context(), filepath.Join(dir, "p"), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Model.Archive == nil || !a.Model.Valid() || a.Folder != p {
		t.Fatalf("DDUF %v, valid %v (%v), folder %q", a.Model.Archive != nil, a.Model.Valid(), a.Model.RefErr, a.Folder)
	}
	if len(a.Model.Tensors) != 10 || len(a.Model.Tensors) != len(b.Model.Tensors) {
		t.Fatalf("%d tensors from the DDUF, %d from the folder", len(a.Model.Tensors), len(b.Model.Tensors))
	}
	for i := range a.Model.Tensors {
		x, y := a.Model.Tensors[i], b.Model.Tensors[i]
		if x.Name != y.Name || x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) || x.End-x.Begin != y.End-y.Begin {
			t.Errorf("tensor %d: %+v from the DDUF, %+v from the folder", i, x, y)
		}
	}
	ab, bb := tensorBytes(t, a), tensorBytes(t, b)
	for k, v := range bb {
		if !bytes.Equal(ab[k], v) {
			t.Errorf("%s: other bytes from the DDUF", k)
		}
	}
	if len(a.Companions) == 0 || len(a.Companions) != len(b.Companions) {
		t.Fatalf("%d files beside the tensors from the DDUF, %d from the folder", len(a.Companions), len(b.Companions))
	}
	for i := range a.Companions {
		if x, y := a.Companions[i], b.Companions[i]; x.Path != y.Path || x.Digest != y.Digest {
			t.Errorf("companion %d: %s %s from the DDUF, %s %s from the folder", i, x.Path, x.Digest, y.Path, y.Digest)
		}
	}
}

// TestDDUFInvalid: a DDUF file that breaks the rules opens with the rules' findings and verdict;
// one without model_index.json opens as what it is, with no tensors.
func TestDDUFInvalid(t *testing.T) {
	dir := t.TempDir()
	ms := ddufw.Pipeline()
	ms[len(ms)-1].Deflate = true // vae's weights
	bad := filepath.Join(dir, "bad.dduf")
	os.WriteFile(bad, ddufw.Write(ms), 0o644)
	o, err := source.Open(t.Context(), bad, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Model.Valid() || o.Model.RefErr.Kind != "dduf-compressed" || o.Model.Findings[0].Code != "dduf-compressed" {
		t.Errorf("verdict %v, findings %+v", o.Model.RefErr, o.Model.Findings)
	}
	none := filepath.Join(dir, "none.dduf")
	os.WriteFile(none, ddufw.Write(ddufw.Pipeline()[1:]), 0o644)
	o2, err := source.Open(t.Context(), none, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	// valid, but no component has weights: the archive alone, with a note saying so
	sched := filepath.Join(dir, "sched.dduf")
	os.WriteFile(sched, ddufw.Write([]ddufw.Member{{Name: "model_index.json", Data: []byte(`{"_class_name": "X", "scheduler": ["diffusers", "PNDMScheduler"]}`)},
		{Name: "scheduler/scheduler_config.json", Data: []byte(`{}`)}}), 0o644)
	o3, err := source.Open(t.Context(), sched, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o3.Close()
	if !o3.Model.Valid() || len(o3.Model.Tensors) != 0 || len(o3.Model.Findings) != 1 || !strings.Contains(o3.Model.Findings[0].Message, "without .safetensors weights") {
		t.Errorf("valid %v, %d tensors, findings %+v", o3.Model.Valid(), len(o3.Model.Tensors), o3.Model.Findings)
	}
	if o2.Model.Valid() || o2.Model.Format != canon.FormatDDUF || len(o2.Model.Tensors) != 0 || o2.Model.RefErr.Kind != "dduf-no-model-index" {
		t.Errorf("format %s, %d tensors, verdict %v", o2.Model.Format, len(o2.Model.Tensors), o2.Model.RefErr)
	}
}

// countingWriter counts the body bytes a handler sends.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

// TestDDUFRemote: hf://…/x.dduf reads the end of the file, the central directory, the members'
// headers, model_index.json and the components' safetensors headers, never their tensor data: a
// 4 MiB archive costs its last 64 KiB and a few kilobytes more.
func TestDDUFRemote(t *testing.T) {
	ms := ddufw.Pipeline()
	big := stfile.File{Seed: 3, Tensors: []stfile.Tensor{{Name: "conv_in.weight", DType: "F32", Shape: []uint64{1024, 1024}}}}.Build()
	for i := range ms {
		if ms[i].Name == "unet/diffusion_pytorch_model.safetensors" {
			ms[i].Data = big
		}
	}
	file := ddufw.Write(ms)
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "org/sd/main"), map[string][]byte{"sd.dduf": file})
	var served atomic.Int64
	hub := &hubtest.Hub{Root: root}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hub.ServeHTTP(countingWriter{w, &served}, r)
	}))
	defer srv.Close()
	opt := source.Options{Endpoint: srv.URL}
	opt.HTTP.Prefetch = 4 << 10 // the first request of every remote model, kept small to show the rest
	o, err := source.Open(t.Context(), "hf://org/sd/sd.dduf", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !o.Remote || o.Model.Archive == nil || !o.Model.Valid() || len(o.Model.Tensors) != 8 {
		t.Fatalf("remote %v, DDUF %v, valid %v, %d tensors", o.Remote, o.Model.Archive != nil, o.Model.Valid(), len(o.Model.Tensors))
	}
	n := served.Load()
	t.Logf("read %d of the archive's %d bytes in %d requests", n, len(file), len(hub.Asked()))
	// the first request, the last 64 KiB + 22 bytes (where the end record may be, past a comment),
	// and a few kilobytes of local headers, model_index.json and safetensors headers
	if n > 4<<10+65557+8<<10 {
		t.Errorf("read %d bytes of a %d-byte archive: more than its directory and headers", n, len(file))
	}
	// a repository whose one model is the DDUF file, named without a path
	whole, err := source.Open(t.Context(), "hf://org/sd", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	if whole.Model.Archive == nil || len(whole.Model.Tensors) != 8 {
		t.Errorf("hf://org/sd: DDUF %v, %d tensors", whole.Model.Archive != nil, len(whole.Model.Tensors))
	}
	// The tensor bytes read on demand are the archive's.
	got := tensorBytes(t, o)
	if w := big[len(big)-4<<20:]; !bytes.Equal(got["unet/conv_in.weight"], w) {
		t.Error("unet/conv_in.weight: not the member's bytes")
	}
}

// TestDDUFShardedComponent: a component saved as a shard set (its index and shards, as FLUX's
// transformer is) reads from the archive as from the folder.
func TestDDUFShardedComponent(t *testing.T) {
	ms := slices.DeleteFunc(ddufw.Pipeline(), func(m ddufw.Member) bool { return m.Name == "unet/diffusion_pytorch_model.safetensors" })
	for name, b := range stfile.ShardedWeights(3) {
		name = strings.Replace(name, "model", "diffusion_pytorch_model", 1)
		if strings.HasSuffix(name, ".json") {
			b = bytes.ReplaceAll(b, []byte(`"model-`), []byte(`"diffusion_pytorch_model-`))
		}
		ms = append(ms, ddufw.Member{Name: "unet/" + name, Data: b})
	}
	slices.SortFunc(ms, func(a, b ddufw.Member) int { return strings.Compare(a.Name, b.Name) })
	dir := t.TempDir()
	p := filepath.Join(dir, "p.dduf")
	os.WriteFile(p, ddufw.Write(ms), 0o644)
	ddufw.WriteFolder(filepath.Join(dir, "p"), ms)
	a, err := source.Open(t.Context(), p, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := source.Open(t.Context(), filepath.Join(dir, "p"), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !a.Model.Valid() || len(a.Model.Tensors) != len(b.Model.Tensors) || len(a.Model.Tensors) < 10 {
		t.Fatalf("valid %v (%v); %d tensors from the DDUF, %d from the folder", a.Model.Valid(), a.Model.RefErr, len(a.Model.Tensors), len(b.Model.Tensors))
	}
	ab, bb := tensorBytes(t, a), tensorBytes(t, b)
	for k, v := range bb {
		if !bytes.Equal(ab[k], v) {
			t.Errorf("%s: other bytes from the DDUF", k)
		}
	}
}
