//go:build unix

package act

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/hash/dupes"
)

// The classes of models TestDupesNeverDeleteTheLastCopy adds with addDerived (issue 37): an F32
// model with EMA weights and copies derived from it: rounded to F16, BF16 or F8_E4M3, EMA-pruned
// (model_ema.* left out), pruned and rounded. Each is a model of its own: after --delete and --link,
// each still has its bytes (they are in c.more), whatever the level of the scan.

// derivedModel is an F32 model of seed (model.* and model_ema.*), its tensors rounded to dtype
// ("F32": as they are), without model_ema.* when pruned.
func derivedModel(seed uint64, dtype string, pruned bool, meta ...stfile.KV) []byte {
	rng := rand.New(rand.NewPCG(seed, 37))
	f := stfile.File{Metadata: meta}
	for _, prefix := range []string{"model", "model_ema"} {
		for _, name := range []string{"a.weight", "b.weight"} {
			n := 32
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = float64(float32(rng.NormFloat64() / 8))
			}
			if pruned && prefix == "model_ema" {
				continue
			}
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: prefix + "." + name, DType: dtype, Shape: []uint64{4, 8}, Data: encode(dtype, vals)})
		}
	}
	return f.Build()
}

// encode writes vals as dtype's codes, little-endian.
func encode(dtype string, vals []float64) []byte {
	var out []byte
	for _, v := range vals {
		switch dtype {
		case "F32":
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(v)))
		default:
			c, _ := values.Encode(tensor.DType(dtype), v)
			if dtype == "F8_E4M3" {
				out = append(out, byte(c))
			} else {
				out = binary.LittleEndian.AppendUint16(out, uint16(c))
			}
		}
	}
	return out
}

// addDerived adds an original and one to three copies derived from it, sometimes in another folder.
func (c *collection) addDerived() {
	seed := uint64(1000 + c.n)
	add := func(p string, b []byte) {
		mustWrite(c.t, p, b)
		c.more = append(c.more, p)
		c.scanned = append(c.scanned, p)
	}
	orig := c.next("orig") + ".safetensors"
	add(orig, derivedModel(seed, "F32", false))
	for range 1 + c.rng.IntN(3) {
		dt := []string{"F32", "F16", "BF16", "F8_E4M3"}[c.rng.IntN(4)]
		pruned := dt == "F32" || c.rng.IntN(2) == 0
		dir := c.dir
		if c.rng.IntN(2) == 0 {
			dir = filepath.Join(c.dir, fmt.Sprint("sub", c.n))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				c.t.Fatal(err)
			}
		}
		c.n++
		p := filepath.Join(dir, fmt.Sprintf("derived%d-%s.safetensors", c.n, dt))
		add(p, derivedModel(seed, dt, pruned))
		c.derivations = append(c.derivations, [2]string{orig, p})
	}
}

// TestDerivedNeverActedOn: the groups of --level derived are a report: --delete and --link change no
// file of them, and nothing of them is reclaimable.
func TestDerivedNeverActedOn(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "dreamy_v3.safetensors")
	copies := map[string][]byte{orig: derivedModel(1, "F32", false),
		filepath.Join(dir, "dreamy_v3-fp16.safetensors"):    derivedModel(1, "F16", false),
		filepath.Join(dir, "dreamy_v3-pruned.safetensors"):  derivedModel(1, "F32", true),
		filepath.Join(dir, "dreamy_v3-pruned8.safetensors"): derivedModel(1, "F8_E4M3", true)}
	for p, b := range copies {
		mustWrite(t, p, b)
	}
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Level: dupes.LevelDerived})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Level != dupes.LevelDerived || len(rep.Groups[0].Members) != 4 || rep.Groups[0].Keeper != orig {
		t.Fatalf("want one derived group of 4 kept by %s, got %+v", orig, rep.Groups)
	}
	if rep.Reclaimable != 0 || rep.Groups[0].Reclaimable != 0 || rep.ActsOn(&rep.Groups[0], false) || rep.ActsOn(&rep.Groups[0], true) {
		t.Errorf("a derived group is acted on: reclaimable %d/%d", rep.Reclaimable, rep.Groups[0].Reclaimable)
	}
	for _, o := range []Options{{Delete: true}, {Link: true}} {
		r, err := Act(t.Context(), rep, o)
		if err != nil || r.Deleted+r.Linked+r.Moved != 0 || len(r.Actions) != 0 {
			t.Errorf("%+v: %v, %+v", o, err, r)
		}
	}
	for p, b := range copies {
		if got, err := os.ReadFile(p); err != nil || string(got) != string(b) {
			t.Errorf("%s changed: %v", p, err)
		}
	}
}

// checkDeleteDerived is --level derived --delete (Options.Derived) on the collection scanned at
// LevelDerived with the keep rule newest (addDerived's copies are newer than their originals): every
// deletion in a derived group is one of addDerived's copies, kept by its own original, which is
// still there byte for byte; every other model of c.more keeps a complete copy, every sidecar its
// bytes, as after --delete alone.
func checkDeleteDerived(t *testing.T, c *collection) {
	t.Helper()
	rep, err := dupes.Find(t.Context(), c.scanned, dupes.Options{Level: dupes.LevelDerived, Keep: dupes.KeepRule{Kind: dupes.KeepNewest}})
	if err != nil {
		t.Fatal(err)
	}
	before, folders, vals := c.contents(), c.folderStates(), c.valueKeys()
	kept := keptState(t, c)
	r, err := Act(t.Context(), rep, Options{Delete: true, Derived: true})
	if err != nil || r.Failed > 0 || r.Interrupted {
		t.Fatalf("act: %v, %+v", err, r)
	}
	kept.check(t, c, "--level derived --delete")
	origOf := map[string]string{}
	for _, d := range c.derivations {
		origOf[d[1]] = d[0]
	}
	for _, a := range r.Actions { // a copy derived twice the same (byte copies) goes by its bytes group, its twin after
		if a.Op != OpDelete || !a.Done {
			continue
		}
		o := origOf[a.Path]
		if a.Level == dupes.LevelDerived && (o == "" || a.Keeper != o) {
			t.Errorf("--level derived --delete deleted %s keeping %s: not a derived copy of it", a.Path, a.Keeper)
			continue
		}
		if o == "" {
			continue
		}
		if got, err := os.ReadFile(o); err != nil || string(got) != string(before[o][0]) {
			t.Errorf("%s went, and its original %s is not as it was: %v", a.Path, o, err)
		}
		delete(before, a.Path)
	}
	c.checkSurvivors(before, "--level derived --delete")
	c.checkFolders(folders, "--level derived --delete")
	c.checkValues(vals, "--level derived --delete")
}
