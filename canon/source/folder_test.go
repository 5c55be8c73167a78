package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestOpenFolder: a folder is the one model it holds (an index, one weights file, the files of one
// split GGUF model or shard set); a folder of several models or of none is an error naming them.
func TestOpenFolder(t *testing.T) {
	st := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}, Data: make([]byte, 8)}}}.Build()
	write := func(t *testing.T, dir string, files map[string][]byte) {
		t.Helper()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("one weights file beside its config", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string][]byte{"adapter_model.safetensors": st, "adapter_config.json": []byte("{}"), ".hidden.safetensors": st, "README.md": nil})
		if err := os.Mkdir(filepath.Join(dir, "checkpoint-100.safetensors"), 0o755); err != nil { // a folder is not a file
			t.Fatal(err)
		}
		o, err := Open(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if o.Model.Name != filepath.Join(dir, "adapter_model.safetensors") || len(o.Model.Tensors) != 1 {
			t.Errorf("opened %s with %d tensors", o.Model.Name, len(o.Model.Tensors))
		}
	})
	t.Run("the files of one split GGUF model", func(t *testing.T) {
		dir := t.TempDir()
		writeSplit(t, dir, ggufSplit(ggufWhole(), []int{0, 1}, []int{2, 3}, []int{4}))
		o, err := Open(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if len(o.Model.Tensors) != 5 || len(o.Model.Shards) != 3 {
			t.Errorf("%d tensors in %d files, want the whole model: 5 in 3", len(o.Model.Tensors), len(o.Model.Shards))
		}
	})
	t.Run("a PyTorch checkpoint beside a Trainer's state", func(t *testing.T) {
		pt, err := os.ReadFile("../../testdata/weights.bin")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			files map[string][]byte
			want  string
		}{
			{map[string][]byte{"pytorch_model.bin": pt, "training_args.bin": pt, "optimizer.pt": pt, "rng_state.pth": pt, "zzz.bin": pt}, "pytorch_model.bin"},
			{map[string][]byte{"last.ckpt": pt, "scheduler.pt": pt}, "last.ckpt"},
			{map[string][]byte{"model.safetensors": st, "pytorch_model.bin": pt}, "model.safetensors"},
		} {
			dir := t.TempDir()
			write(t, dir, c.files)
			o, err := Open(t.Context(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if o.Model.Name != filepath.Join(dir, c.want) || len(o.Model.Tensors) == 0 {
				t.Errorf("opened %s with %d tensors, want %s", o.Model.Name, len(o.Model.Tensors), c.want)
			}
			o.Close()
		}
	})
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"two models", map[string][]byte{"a.safetensors": st, "b.gguf": ggufWhole().Build()}, "holds 2 models (a.safetensors, b.gguf), not one"},
		{"a shard set and a stray file", map[string][]byte{"model-00001-of-00002.safetensors": st, "model-00002-of-00002.safetensors": st, "x.safetensors": st}, "holds 3 models"},
		{"none", map[string][]byte{"config.json": []byte("{}")}, "is a folder without a model in it"},
		{"two checkpoints", map[string][]byte{"a.pt": nil, "b.pth": nil, "optimizer.pt": nil}, "holds 2 PyTorch checkpoints (a.pt, b.pth), not one"},
		{"two sharded checkpoints", map[string][]byte{"pytorch_model.bin.index.json": nil, "adapter_model.bin.index.json": nil}, "holds 2 indexes of sharded PyTorch checkpoints"},
		{"only a Trainer's state", map[string][]byte{"optimizer.pt": nil, "training_args.bin": nil}, "is a folder without a model in it"},
		{"two indexes", map[string][]byte{"a.safetensors.index.json": nil, "b.safetensors.index.json": nil}, "holds 2 indexes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			o, err := Open(t.Context(), dir, Options{})
			var re *canon.ReadError
			if err == nil {
				o.Close()
				t.Fatalf("opened %s; want an error", o.Model.Name)
			}
			if !errors.As(err, &re) {
				t.Fatalf("error %T %q, want a *canon.ReadError", err, err)
			}
			if !strings.Contains(err.Error(), c.want) || re.Hint == "" {
				t.Errorf("error %q (hint %q), want one saying %q with a hint", err, re.Hint, c.want)
			}
		})
	}
}

// TestFolderOfModelsErrors: a folder of several models, or of none at its top, is an error a program
// can tell apart (errors.Is: ErrSeveralModels, ErrNoModel) to point to what reads folders of models;
// the library's own hint names no program's command or flag.
func TestFolderOfModelsErrors(t *testing.T) {
	st := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}, Data: make([]byte, 8)}}}.Build()
	several, none := t.TempDir(), t.TempDir()
	for _, name := range []string{"a.safetensors", "b.safetensors"} {
		if err := os.WriteFile(filepath.Join(several, name), st, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]error{several: ErrSeveralModels, none: ErrNoModel} {
		_, err := Open(t.Context(), dir, Options{})
		var re *canon.ReadError
		if !errors.Is(err, want) || !errors.As(err, &re) || strings.Contains(re.Hint, "stdiff") || strings.Contains(re.Hint, "--") {
			t.Errorf("%s: %v (hint %q), want %v and a hint that names no command", dir, err, re.Hint, want)
		}
		if other := map[error]error{ErrSeveralModels: ErrNoModel, ErrNoModel: ErrSeveralModels}[want]; errors.Is(err, other) {
			t.Errorf("%s: %v is %v too", dir, err, other)
		}
	}
}
