package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
)

// derivedCLIModel is an F32 model (model.* and model_ema.*) of fixed values, its tensors rounded to
// F16 when half, without model_ema.* when pruned.
func derivedCLIModel(half, pruned bool) []byte {
	var f stfile.File
	for p, prefix := range []string{"model", "model_ema"} {
		if pruned && prefix == "model_ema" {
			continue
		}
		var data []byte
		for i := range 64 {
			v := math.Sin(float64(i*7+p*131)) / 3
			if half {
				c, _ := values.Encode(tensor.DType("F16"), float64(float32(v)))
				data = binary.LittleEndian.AppendUint16(data, uint16(c))
			} else {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
			}
		}
		dt := map[bool]string{true: "F16", false: "F32"}[half]
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: prefix + ".weight", DType: dt, Shape: []uint64{8, 8}, Data: data})
	}
	return f.Build()
}

// TestDupesDeleteDerived: `dupes --delete` deletes derived copies only with --level derived given by
// name, and then keeps the original though --keep newest would pick a copy; exit statuses exact.
func TestDupesDeleteDerived(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "dreamy_v3.safetensors")
	half := filepath.Join(dir, "dreamy_v3-fp16.safetensors")
	pruned := filepath.Join(dir, "dreamy_v3-pruned.safetensors")
	old := time.Now().Add(-time.Hour)
	for i, f := range []struct {
		path         string
		half, pruned bool
	}{{orig, false, false}, {half, true, false}, {pruned, false, true}} {
		if err := os.WriteFile(f.path, derivedCLIModel(f.half, f.pruned), 0o644); err != nil {
			t.Fatal(err)
		}
		at := old.Add(time.Duration(i) * time.Minute) // the copies are newer
		if err := os.Chtimes(f.path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	exists := func() []bool {
		var out []bool
		for _, p := range []string{orig, half, pruned} {
			_, err := os.Stat(p)
			out = append(out, err == nil)
		}
		return out
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		// Not asked for by name: nothing derived is found, nor deleted.
		{[]string{"dupes", "--no-cache", "--keep", "newest", "--delete", "--yes", dir}, exitOK, "nothing to do"},
		{[]string{"dupes", "--no-cache", "--level", "structure", "--keep", "newest", "--delete", "--yes", dir}, exitOK, "nothing to do"},
		// --link never acts on a derived group.
		{[]string{"dupes", "--no-cache", "--level", "derived", "--link", dir}, exitOK, "nothing to do"},
		// What --delete would delete: the two copies (exit 1: there is something to do).
		{[]string{"dupes", "--no-cache", "--level", "derived", "--keep", "newest", "--print-deletable", dir}, exitFound, half + "\n" + pruned + "\n"},
		{[]string{"dupes", "--no-cache", "--level", "derived", "--keep", "newest", "--delete", "--dry-run", dir}, exitFound, "would delete"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.want) || stderr.Len() > 0 {
			t.Errorf("%v: exit %d (want %d), stderr %q, stdout\n%s", c.args, code, c.code, stderr.String(), stdout.String())
		}
		if got := exists(); got[0] != true || got[1] != true || got[2] != true {
			t.Fatalf("%v: a file went: %v", c.args, got)
		}
	}
	var stdout, stderr bytes.Buffer
	args := []string{"dupes", "--no-cache", "--level", "derived", "--keep", "newest", "--delete", "--yes", dir}
	if code := run(args, &stdout, &stderr); code != exitOK || stderr.Len() > 0 {
		t.Errorf("%v: exit %d, stderr %q, stdout\n%s", args, code, stderr.String(), stdout.String())
	}
	for _, want := range []string{"deleted       " + half, "kept " + orig, "deleted       " + pruned, "2 copies deleted"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if got := exists(); got[0] != true || got[1] || got[2] {
		t.Errorf("after --level derived --delete: original, fp16, pruned exist %v; want only the original", got)
	}
}
