package hash

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestVerifySnapshot: hash --check of a snapshot checks the model it names, next to it or outside its
// folder (as sha256sum -c checks any path), and names the tensors that changed, were added or removed.
func TestVerifySnapshot(t *testing.T) {
	dir := t.TempDir()
	model, out := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "sub", "m.snap")
	os.Mkdir(filepath.Dir(out), 0o755)
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "a", DType: "F32", Shape: []uint64{2}}, {Name: "b", DType: "F16", Shape: []uint64{4}}, {Name: "c", DType: "U8", Shape: []uint64{3}}}}
	os.WriteFile(model, f.Build(), 0o644)
	here := filepath.Join(dir, "here.snap")
	for path, want := range map[string]string{here: "m.safetensors", out: "../m.safetensors"} {
		s, files, err := Snapshot(t.Context(), model, path, Options{})
		if err != nil || s.Of != want || !slices.Equal(files, []string{model, model}) {
			t.Fatalf("Snapshot: %v, names %q, files %q", err, s.Of, files)
		}
		if err := snapshot.WriteFile(t.Context(), path, s); err != nil {
			t.Fatal(err)
		}
	}
	r, err := VerifyManifest(t.Context(), here, Options{})
	if err != nil || len(r.Files) != 1 || !r.Files[0].OK || r.Files[0].Path != model || !slices.Equal(r.Files[0].Checked, []string{"st1", "ct1"}) {
		t.Fatalf("the model itself: %v %+v", err, r)
	}
	if r, err := VerifyManifest(t.Context(), out, Options{}); err != nil || len(r.Files) != 1 || !r.Files[0].OK || r.Files[0].Path != model {
		t.Fatalf("a snapshot naming ../m.safetensors: %v %+v", err, r)
	}

	f.Tensors[0].Data = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	f.Tensors[1].Name = "d"
	os.WriteFile(model, f.Build(), 0o644)
	r, err = VerifyManifest(t.Context(), here, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := r.Files[0]
	if v.OK || v.Code != ChangeStructure || !slices.Equal(v.Tensors, []string{"a", "b", "d"}) || r.Outcome() != 1 {
		t.Fatalf("changed: %+v", v)
	}
}

// TestVerifySnapshotVerdict: the reference's verdict the snapshot recorded is checked too: a byte
// appended to the model leaves its IDs as they were but the reference rejects it, and the check fails,
// saying the verdict changed; with the IDs changed too, their code stays and the reason says both.
func TestVerifySnapshotVerdict(t *testing.T) {
	dir := t.TempDir()
	model, snap := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "m.snap")
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "a", DType: "F32", Shape: []uint64{2}}}}
	os.WriteFile(model, f.Build(), 0o644)
	s, _, err := Snapshot(t.Context(), model, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.WriteFile(t.Context(), snap, s); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(model, append(f.Build(), 0), 0o644)
	r, err := VerifyManifest(t.Context(), snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const why = "the reference reader's verdict changed: valid → rejected (MetadataIncompleteBuffer)"
	if v := r.Files[0]; v.OK || v.Code != ChangeVerdict || v.Reason != why || r.Outcome() != canon.Found {
		t.Errorf("a byte appended: %+v", v)
	}
	f.Tensors[0].Data = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	os.WriteFile(model, append(f.Build(), 0), 0o644)
	if r, err = VerifyManifest(t.Context(), snap, Options{}); err != nil {
		t.Fatal(err)
	}
	if v := r.Files[0]; v.OK || v.Code != ChangeContent || !strings.HasSuffix(v.Reason, ": a; "+why) {
		t.Errorf("bytes changed and a byte appended: %+v", v)
	}
}

// TestSnapshotKeepsIndex: the files a snapshot must not replace are all the model's local files: a
// shard set's index too, whichever shard was named.
func TestSnapshotKeepsIndex(t *testing.T) {
	dir := t.TempDir()
	shards := []string{"m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors"}
	for i, name := range shards {
		f := stfile.File{Tensors: []stfile.Tensor{{Name: string(rune('a' + i)), DType: "F32", Shape: []uint64{2}}}}
		os.WriteFile(filepath.Join(dir, name), f.Build(), 0o644)
	}
	index := filepath.Join(dir, "m.safetensors.index.json")
	os.WriteFile(index, []byte(`{"metadata":{},"weight_map":{"a":"`+shards[0]+`","b":"`+shards[1]+`"}}`), 0o644)
	for _, spec := range []string{filepath.Join(dir, shards[0]), index} {
		_, files, err := Snapshot(t.Context(), spec, filepath.Join(dir, "m.snap"), Options{})
		if err != nil || !slices.Contains(files, index) || !slices.Contains(files, filepath.Join(dir, shards[1])) {
			t.Errorf("%s: %v, files %q", spec, err, files)
		}
	}
}

// TestSnapshotKeepsPipelineFile: nor a local diffusers pipeline's model_index.json.
func TestSnapshotKeepsPipelineFile(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "unet"), 0o755)
	f := stfile.File{Tensors: []stfile.Tensor{{Name: "a", DType: "F32", Shape: []uint64{2}}}}
	os.WriteFile(filepath.Join(dir, "unet", "diffusion_pytorch_model.safetensors"), f.Build(), 0o644)
	pipeline := filepath.Join(dir, "model_index.json")
	os.WriteFile(pipeline, []byte(`{"_class_name":"StableDiffusionPipeline","unet":["diffusers","UNet2DConditionModel"]}`), 0o644)
	_, files, err := Snapshot(t.Context(), dir, filepath.Join(dir, "m.snap"), Options{})
	if err != nil || !slices.Contains(files, pipeline) {
		t.Errorf("%v, files %q", err, files)
	}
}

// TestSnapshotOfNotUTF8: GGUF names and strings are any bytes, and a snapshot is JSON, whose strings
// are UTF-8: a model with a name, key or value that is not UTF-8 has no snapshot (an error naming the
// model and what cannot be recorded), rather than one that reads back as edited.
func TestSnapshotOfNotUTF8(t *testing.T) {
	dir := t.TempDir()
	for name, f := range map[string]ggufw.File{
		"tensor": {Tensors: []ggufw.Tensor{{Name: "t\xffname", Type: gguf.TypeF32, Dims: []int64{2}}}},
		"key":    {KVs: []ggufw.KV{{Key: "general.name\xff", Val: ggufw.Str("n")}}, Tensors: []ggufw.Tensor{{Name: "t", Type: gguf.TypeF32, Dims: []int64{2}}}},
		"value":  {KVs: []ggufw.KV{{Key: "general.name", Val: ggufw.Str("n\xff")}}, Tensors: []ggufw.Tensor{{Name: "t", Type: gguf.TypeF32, Dims: []int64{2}}}},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".gguf")
			os.WriteFile(path, f.Build(), 0o644)
			s, _, err := Snapshot(t.Context(), path, "", Options{})
			var re *canon.ReadError
			if !errors.As(err, &re) || re.Name != path || !strings.Contains(err.Error(), "not valid UTF-8") {
				var buf bytes.Buffer
				if s != nil {
					snapshot.Write(&buf, s)
				}
				_, rerr := snapshot.Read(&buf)
				t.Fatalf("err = %v; the snapshot reads back: %v", err, rerr)
			}
		})
	}
	path := filepath.Join(dir, "m\xff.safetensors") // a file name too
	os.WriteFile(path, stfile.File{Tensors: []stfile.Tensor{{Name: "t", DType: "F32", Shape: []uint64{2}}}}.Build(), 0o644)
	if _, _, err := Snapshot(t.Context(), path, filepath.Join(dir, "m.snap"), Options{}); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("a file name that is not UTF-8: %v", err)
	}
}
