package diff

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/linediff"
	"github.com/stdiff/stdiff/diff/pattern"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// side reads a generated model, which must be valid.
func side(t *testing.T, name string, b []byte, content bool) Side {
	t.Helper()
	s := load(t, name, b, content)
	if !s.Model.Valid() {
		t.Fatalf("%s: %v", name, s.Model.RefErr)
	}
	return s
}

// load reads a model, valid or not, and with content its tensor digests.
func load(t *testing.T, name string, b []byte, content bool) Side {
	t.Helper()
	src := canon.SourceOf(bytes.NewReader(b), int64(len(b)), name)
	m, err := canon.Read(src, src.Size(), src.Name())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s := Side{Model: m}
	if content {
		if s.Digests, err = hash.TensorDigests(context.Background(), src, m, hash.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func fixture(t *testing.T, name string, content bool) Side {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return load(t, name, b, content)
}

// TestGolden renders the fixtures' diff every way; the golden files are reviewed by eye.
func TestGolden(t *testing.T) {
	for _, content := range []bool{false, true} {
		a, b := fixture(t, "base.safetensors", content), fixture(t, "changed.safetensors", content)
		r := Compare(a, b, Options{})
		suffix := ""
		if content {
			suffix = "-content"
		}
		golden(t, "base-changed"+suffix+".txt", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{}) }))
		golden(t, "base-changed"+suffix+"-full.txt", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Full: true}) }))
		golden(t, "base-changed"+suffix+".md", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.Markdown}) }))
		golden(t, "base-changed"+suffix+".json", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSON}) }))
	}
	r := Compare(fixture(t, "base.safetensors", true), fixture(t, "reordered.safetensors", true), Options{})
	golden(t, "base-reordered-content.txt", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{}) }))

	// Only the reference reader's verdict differs.
	r = Compare(fixture(t, "base.safetensors", false), fixture(t, "nul-padded.safetensors", false), Options{})
	golden(t, "base-nul-padded.txt", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{}) }))
	golden(t, "base-nul-padded.md", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.Markdown}) }))
	golden(t, "base-nul-padded.json", written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Format: textfmt.JSON}) }))
}

// written is what write writes.
func written(t *testing.T, write func(w io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestVerdictIsADifference: a file the reference reader rejects is not identical to one it loads, even
// with the same tensors and metadata; a different error kind is a difference too, the same one is not.
func TestVerdictIsADifference(t *testing.T) {
	good, padded := fixture(t, "base.safetensors", false), fixture(t, "nul-padded.safetensors", false)
	r := Compare(good, padded, Options{})
	if r.Identical || !r.Verdict.Changed || !r.Verdict.A.Valid || r.Verdict.B.Valid || r.Verdict.B.Kind == nil ||
		*r.Verdict.B.Kind != finding.InvalidHeaderDeserialization || !reflect.DeepEqual(r.Categories, []Category{"verdict"}) {
		t.Fatalf("valid → NUL-padded: identical %v, verdict %+v, categories %v", r.Identical, r.Verdict, r.Categories)
	}
	if s := Summary(r, nil); !strings.Contains(s, "verdict: valid → invalid (InvalidHeaderDeserialization)") {
		t.Errorf("summary %q does not name the verdict", s)
	}
	// Whatever the scope: a broken file is not what was shipped.
	for _, opt := range []Options{{IgnoreMetadata: true}, {MetadataOnly: true}, {Tensors: []string{"norm.*"}}} {
		if r := Compare(padded, good, opt); r.Identical || !r.Verdict.Changed {
			t.Errorf("NUL-padded → valid with %+v: identical", opt)
		}
	}
	if r := Compare(padded, padded, Options{}); !r.Identical || r.Verdict.Changed || len(r.Categories) != 0 {
		t.Errorf("same verdict on both sides: identical %v, verdict %+v", r.Identical, r.Verdict)
	}
	other := *padded.Model
	other.RefErr = &canon.RefError{Kind: finding.MetadataIncompleteBuffer}
	if r := Compare(padded, Side{Model: &other}, Options{}); r.Identical || !r.Verdict.Changed {
		t.Errorf("another error kind: identical %v, verdict %+v", r.Identical, r.Verdict)
	}
}

// TestCheckPatterns: a filter that matches nothing, or cannot match anything, is refused with the pattern
// named; one that matches on either side is fine.
func TestCheckPatterns(t *testing.T) {
	a, b := fixture(t, "base.safetensors", false).Model, fixture(t, "changed.safetensors", false).Model
	for _, c := range []struct {
		opt     Options
		pattern string // "" when fine
		err     error
	}{
		{Options{}, "", nil},
		{Options{Tensors: []string{"layers.2.*", "lm_head.*"}}, "", nil}, // lm_head only in b
		{Options{Tensors: []string{"norm.weight"}}, "", nil},             // only in a
		{Options{IgnoreKeys: []string{"ss_epoch", "modelspec.*"}}, "", nil},
		{Options{Tensors: []string{"layers.2.*", "layrs.*"}}, "layrs.*", pattern.ErrNoMatch},
		{Options{IgnoreKeys: []string{"ss_sesion_id"}}, "ss_sesion_id", pattern.ErrNoMatch},
		{Options{Tensors: []string{"layers.["}}, "layers.[", path.ErrBadPattern},
		{Options{IgnoreKeys: []string{`ss_\`}}, `ss_\`, path.ErrBadPattern},
		// a part left out: syntax only
		{Options{MetadataOnly: true, Tensors: []string{"nothing"}}, "", nil},
		{Options{IgnoreMetadata: true, IgnoreKeys: []string{"nothing"}}, "", nil},
		{Options{IgnoreMetadata: true, IgnoreKeys: []string{"["}}, "[", path.ErrBadPattern},
	} {
		err := c.opt.CheckPatterns(a, b)
		var pe *pattern.Error
		switch {
		case c.err == nil && err != nil:
			t.Errorf("%+v: %v", c.opt, err)
		case c.err != nil && (!errors.As(err, &pe) || pe.Pattern != c.pattern || !errors.Is(err, c.err)):
			t.Errorf("%+v: error %v, want %v for %q", c.opt, err, c.err, c.pattern)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./diff -update and review the files)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestIdenticalAndMirror(t *testing.T) {
	for _, content := range []bool{false, true} {
		a, b := fixture(t, "base.safetensors", content), fixture(t, "changed.safetensors", content)
		if r := Compare(a, a, Options{}); !r.Identical || r.Tensors.Unchanged != len(a.Model.Tensors) {
			t.Errorf("diff(a, a) is not identical: %+v", r)
		}
		ab, ba := Compare(a, b, Options{}), Compare(b, a, Options{})
		if ab.Identical || ba.Identical {
			t.Fatal("different models reported identical")
		}
		names := func(ts []Tensor) []string {
			var out []string
			for _, x := range ts {
				out = append(out, x.Name)
			}
			return out
		}
		if !reflect.DeepEqual(names(ab.Tensors.Added), names(ba.Tensors.Removed)) || !reflect.DeepEqual(names(ab.Tensors.Removed), names(ba.Tensors.Added)) {
			t.Error("added and removed do not mirror")
		}
		if len(ab.Tensors.Changed) != len(ba.Tensors.Changed) {
			t.Fatal("changed counts differ")
		}
		for i := range ab.Tensors.Changed {
			x, y := ab.Tensors.Changed[i], ba.Tensors.Changed[i]
			if x.Name != y.Name || !reflect.DeepEqual(x.Fields, y.Fields) || !reflect.DeepEqual(x.Old, y.New) || !reflect.DeepEqual(x.New, y.Old) {
				t.Errorf("change of %s does not mirror: %+v vs %+v", x.Name, x, y)
			}
		}
		for i := range ab.Tensors.Renamed {
			if ab.Tensors.Renamed[i].From != ba.Tensors.Renamed[i].To || ab.Tensors.Renamed[i].To != ba.Tensors.Renamed[i].From {
				t.Error("renames do not mirror")
			}
		}
		mk := func(es []MetaEntry) []string {
			var out []string
			for _, e := range es {
				out = append(out, e.Key)
			}
			return out
		}
		if !reflect.DeepEqual(mk(ab.Metadata.Added), mk(ba.Metadata.Removed)) || len(ab.Metadata.Changed) != len(ba.Metadata.Changed) {
			t.Error("metadata does not mirror")
		}
		for i := range ab.Metadata.Changed {
			if ab.Metadata.Changed[i].Old != ba.Metadata.Changed[i].New {
				t.Error("metadata change does not mirror")
			}
		}
	}
}

// TestMutations applies random known changes to generated models and checks that the report lists
// exactly those changes and nothing else.
func TestMutations(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	dtypes := []string{"F32", "F16", "BF16", "I8", "U8", "F64"}
	for round := 0; round < 200; round++ {
		var base stfile.File
		base.Seed = int64(round)
		n := 3 + rng.Intn(12)
		for i := 0; i < n; i++ {
			base.Tensors = append(base.Tensors, stfile.Tensor{Name: fmt.Sprintf("blk.%d.w%d", i, rng.Intn(1000)),
				DType: dtypes[rng.Intn(len(dtypes))], Shape: []uint64{uint64(1 + rng.Intn(4)), uint64(1 + i)}})
		}
		for i := 0; i < 1+rng.Intn(4); i++ {
			base.Metadata = append(base.Metadata, stfile.KV{Key: fmt.Sprintf("k%d", i), Value: fmt.Sprint(rng.Int())})
		}
		for i := range base.Tensors {
			base.Tensors[i].Data = stfile.Fill(base.Seed, base.Tensors[i].Name, stfile.ByteLen(base.Tensors[i].DType, base.Tensors[i].Shape))
		}
		next := base
		next.Tensors = append([]stfile.Tensor(nil), base.Tensors...)
		next.Metadata = append([]stfile.KV(nil), base.Metadata...)
		want := map[string][]string{}
		touched := map[int]bool{}
		pick := func() (int, bool) {
			for tries := 0; tries < 10; tries++ {
				if i := rng.Intn(len(next.Tensors)); !touched[i] {
					touched[i] = true
					return i, true
				}
			}
			return 0, false
		}
		for k := 0; k < 1+rng.Intn(4); k++ {
			i, ok := pick()
			if !ok {
				break
			}
			tn := &next.Tensors[i]
			switch rng.Intn(5) {
			case 0: // dtype
				old := tn.DType
				for tn.DType == old || stfile.ByteLen(tn.DType, tn.Shape) == stfile.ByteLen(old, tn.Shape) {
					tn.DType = dtypes[rng.Intn(len(dtypes))]
				}
				tn.Data = nil
				want["changed"] = append(want["changed"], tn.Name+":dtype,bytes")
			case 1: // shape
				tn.Shape = []uint64{tn.Shape[0] + 7, tn.Shape[1]}
				tn.Data = nil
				want["changed"] = append(want["changed"], tn.Name+":shape,bytes")
			case 2: // flipped byte
				if len(tn.Data) == 0 {
					continue
				}
				tn.Data = append([]byte(nil), tn.Data...)
				tn.Data[rng.Intn(len(tn.Data))] ^= 0x10
				want["changed"] = append(want["changed"], tn.Name+":data")
			case 3: // rename, same bytes
				old := tn.Name
				tn.Name = "renamed." + old
				want["renamed"] = append(want["renamed"], old+">"+tn.Name)
			case 4: // removed
				want["removed"] = append(want["removed"], tn.Name)
				tn.Name = "" // dropped below
			}
		}
		if rng.Intn(2) == 0 {
			extra := stfile.Tensor{Name: fmt.Sprintf("added.%d", round), DType: "F32", Shape: []uint64{99, 3}}
			next.Tensors = append(next.Tensors, extra)
			want["added"] = append(want["added"], extra.Name)
		}
		kept := next.Tensors[:0]
		for _, tn := range next.Tensors {
			if tn.Name != "" {
				kept = append(kept, tn)
			}
		}
		next.Tensors = kept
		switch rng.Intn(4) {
		case 0:
			next.Metadata[0].Value += "!"
			want["meta-changed"] = append(want["meta-changed"], next.Metadata[0].Key)
		case 1:
			next.Metadata = append(next.Metadata, stfile.KV{Key: "new", Value: "v"})
			want["meta-added"] = append(want["meta-added"], "new")
		case 2:
			want["meta-removed"] = append(want["meta-removed"], next.Metadata[len(next.Metadata)-1].Key)
			next.Metadata = next.Metadata[:len(next.Metadata)-1]
		}
		rng.Shuffle(len(next.Tensors), func(i, j int) { next.Tensors[i], next.Tensors[j] = next.Tensors[j], next.Tensors[i] })

		r := Compare(side(t, "a", base.Build(), true), side(t, "b", next.Build(), true), Options{})
		got := map[string][]string{}
		for _, x := range r.Tensors.Added {
			got["added"] = append(got["added"], x.Name)
		}
		for _, x := range r.Tensors.Removed {
			got["removed"] = append(got["removed"], x.Name)
		}
		for _, c := range r.Tensors.Changed {
			got["changed"] = append(got["changed"], c.Name+":"+strings.Join(c.Fields, ","))
		}
		for _, rn := range r.Tensors.Renamed {
			got["renamed"] = append(got["renamed"], rn.From+">"+rn.To)
			if !rn.Confirmed {
				t.Errorf("round %d: rename with content compared is not confirmed", round)
			}
		}
		for _, e := range r.Metadata.Added {
			got["meta-added"] = append(got["meta-added"], e.Key)
		}
		for _, e := range r.Metadata.Removed {
			got["meta-removed"] = append(got["meta-removed"], e.Key)
		}
		for _, c := range r.Metadata.Changed {
			got["meta-changed"] = append(got["meta-changed"], c.Key)
		}
		for _, v := range want {
			sort.Strings(v)
		}
		for _, v := range got {
			sort.Strings(v)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got  %v\n want %v", round, got, want)
		}
		if r.Identical != (len(want) == 0) {
			t.Fatalf("round %d: identical = %v with changes %v", round, r.Identical, want)
		}
		cats := map[string]bool{}
		for k, v := range want {
			switch k {
			case "changed":
				for _, c := range v {
					for _, f := range strings.Split(c[strings.LastIndexByte(c, ':')+1:], ",") {
						cats[f] = f != "bytes"
					}
				}
			case "meta-added", "meta-removed", "meta-changed":
				cats["metadata"] = true
			default:
				cats[k] = true
			}
		}
		// Bytes compared by digest only (Compare reads no values): changed bytes count as moved values.
		cats["values"] = cats["data"]
		var wantCats []Category
		for _, k := range []string{"added", "removed", "renamed", "dtype", "shape", "data", "values", "metadata"} {
			if cats[k] {
				wantCats = append(wantCats, Category(k))
			}
		}
		if !slices.Equal(r.Categories, wantCats) {
			t.Fatalf("round %d: categories %v, want %v", round, r.Categories, wantCats)
		}
	}
}

func TestFiltersAndVolatile(t *testing.T) {
	a, b := fixture(t, "base.safetensors", false), fixture(t, "changed.safetensors", false)
	r := Compare(a, b, Options{IgnoreVolatile: true})
	for _, c := range r.Metadata.Changed {
		if c.Key == "ss_session_id" || c.Key == "ss_training_started_at" {
			t.Errorf("volatile key %s compared", c.Key)
		}
	}
	r = Compare(a, b, Options{MetadataOnly: true, IgnoreKeys: []string{"ss_*"}})
	if len(r.Tensors.Changed)+len(r.Tensors.Added) != 0 || len(r.Metadata.Changed) != 0 || len(r.Metadata.Removed) != 1 {
		t.Errorf("metadata-only with ss_* ignored: %+v", r.Metadata)
	}
	r = Compare(a, b, Options{Tensors: []string{"layers.2.*"}, IgnoreMetadata: true})
	if len(r.Tensors.Changed) != 2 || r.Tensors.Unchanged != 1 || len(r.Tensors.Added)+len(r.Tensors.Removed) != 0 {
		t.Errorf("tensor filter layers.2.*: %+v", r.Tensors)
	}
	r = Compare(a, fixture(t, "retitled.safetensors", false), Options{IgnoreKeys: []string{"modelspec.title"}})
	if !r.Identical {
		t.Error("ignoring the only changed key still reports a difference")
	}
}

func TestLineDiffFolds(t *testing.T) {
	var a, b []string
	for i := 0; i < 50; i++ {
		a = append(a, fmt.Sprintf("line %d", i))
	}
	b = append([]string(nil), a...)
	b[25] = "changed"
	c := changeOf("k", strings.Join(a, "\n"), strings.Join(b, "\n"))
	if c.Kind != "text" {
		t.Fatalf("kind %s", c.Kind)
	}
	f := linediff.Fold(c.Lines, 2)
	var ops []string
	for _, l := range f {
		ops = append(ops, l.Op)
	}
	if got := strings.Join(ops, ""); got != "…  -+  …" {
		t.Errorf("folded ops %q: %+v", got, f)
	}
	if f[0].Text != "23 unchanged lines" || f[len(f)-1].Text != "22 unchanged lines" {
		t.Errorf("fold counts: %q %q", f[0].Text, f[len(f)-1].Text)
	}
	big := `["` + strings.Repeat("A", textfmt.MaxLine+1) + `"]` // a base64 cover image
	if c := changeOf("img", big, big[:len(big)-2]+`B"]`); c.Kind != "large" || c.Lines != nil {
		t.Errorf("large value not summarised: %s", c.Kind)
	}
	// A long JSON value of short lines (ss_tag_frequency of a big dataset) is still diffed.
	tags := func(extra string) string {
		var b strings.Builder
		b.WriteString(`{"img": {`)
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&b, `"tag%d": %d, `, i, i)
		}
		b.WriteString(extra + `}}`)
		return b.String()
	}
	if c := changeOf("ss_tag_frequency", tags(`"new": 1`), tags(`"new": 2`)); c.Kind != "json" || len(linediff.Fold(c.Lines, 2)) > 12 {
		t.Errorf("long JSON value: kind %s, %d folded lines", c.Kind, len(linediff.Fold(c.Lines, 2)))
	}
	// Too many lines to diff quickly: summarised.
	many := strings.Repeat("line\n", maxDiffLines)
	if c := changeOf("log", many+"a", many+"b"); c.Kind != "large" {
		t.Errorf("huge text: %s", c.Kind)
	}
	if c := changeOf("j", `{"b":1,"a":[2,3]}`, `{"a":[2,4],"b":1}`); c.Kind != "json" {
		t.Errorf("json change: %+v", c)
	} else {
		var changed []string
		for _, l := range c.Lines {
			if l.Op != " " {
				changed = append(changed, l.Op+strings.TrimSpace(l.Text))
			}
		}
		if strings.Join(changed, " ") != "-3 +4" {
			t.Errorf("json line diff: %+v", c.Lines)
		}
	}
	if !delta.SameJSON(`{"b":1,"a":2}`, `{ "a": 2, "b": 1 }`) || delta.SameJSON(`{"a":1}`, `{"a":2}`) {
		t.Error("SameJSON")
	}
}

// BenchmarkCheckPatterns50k checks, against two 50,000-tensor headers, a tensor pattern that matches
// nothing (every name on both sides is tried) and one that matches the first name.
func BenchmarkCheckPatterns50k(b *testing.B) {
	m := canon.ReadBytes("a", stfile.ManyTensors(50000).Build())
	opt := Options{Tensors: []string{"*.q_proj.*", "layrs.*.weight"}}
	b.ReportAllocs()
	for b.Loop() {
		if err := opt.CheckPatterns(m, m); !errors.Is(err, pattern.ErrNoMatch) {
			b.Fatal(err)
		}
	}
}

// TestGroupsWithBraces: a name that holds "{}" itself is not a template. It used to share a group with
// names whose numbers stand there, and folding that group indexed numbers the name does not have (a
// panic on a legal file).
func TestGroupsWithBraces(t *testing.T) {
	var f stfile.File
	for _, name := range []string{"a.{}.b", "a.1.b", "x.{}.1", "x.{}.2", "y.{{.3", "y.{{.4"} {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: name, DType: "U8", Shape: []uint64{1}})
	}
	empty := side(t, "empty", stfile.File{}.Build(), false)
	r := Compare(empty, side(t, "braces", f.Build(), false), Options{})
	var got []string
	for _, g := range r.Tensors.Groups {
		got = append(got, fmt.Sprintf("%s %s ×%d", g.Kind, g.Pattern, g.Count))
	}
	want := []string{"added a.1.b ×1", "added a.{}.b ×1", "added x.{}.{1,2} ×2", "added y.{{.{3,4} ×2"}
	if !slices.Equal(got, want) {
		t.Errorf("groups:\n%q\nwant\n%q", got, want)
	}
}

// TestDataChangeDigests: a group of one tensor whose bytes changed shows that tensor's digests (all
// such changes share one group key, and the digests of the last one used to be shown for every one).
func TestDataChangeDigests(t *testing.T) {
	old := stfile.File{Tensors: []stfile.Tensor{{Name: "alpha", DType: "U8", Shape: []uint64{4}}, {Name: "beta", DType: "U8", Shape: []uint64{4}}}}
	next := stfile.File{Seed: 1, Tensors: old.Tensors}
	r := Compare(side(t, "old", old.Build(), true), side(t, "new", next.Build(), true), Options{})
	if len(r.Tensors.Groups) != 2 {
		t.Fatalf("groups: %+v", r.Tensors.Groups)
	}
	for i, g := range r.Tensors.Groups {
		c := r.Tensors.Changed[i]
		if g.Pattern != c.Name || len(g.Changes) != 1 || g.Changes[0].Old != c.Old.Digest || g.Changes[0].New != c.New.Digest {
			t.Errorf("group %s shows %+v, want the digests of %s", g.Pattern, g.Changes, c.Name)
		}
	}
}

// TestNoteCodes: a re-saved model differs only in layout, and the report says how in codes (which dupes
// and scripts read), each note with its message made from the code.
func TestNoteCodes(t *testing.T) {
	r := Compare(fixture(t, "base.safetensors", true), fixture(t, "reordered.safetensors", true), Options{})
	want := []NoteCode{NoteHeaderSize, NoteTensorOrder, NoteOffsets, NoteKeyOrder}
	if got := r.LayoutCodes(); !slices.Equal(got, want) {
		t.Errorf("layout codes %v, want %v", got, want)
	}
	for _, code := range []NoteCode{NoteBothInvalid, NoteMetadataOnly, NoteIgnoreMetadata, NoteKeysIgnored,
		NoteContentNotCompared, NoteBookkeeping, NoteReformatted, NoteSharding, NoteHeaderSize, NoteTensorOrder,
		NoteOffsets, NoteKeyOrder, NoteShardMoves, NoteNameOnly} {
		n := Note{Code: code, Key: "k", Old: "a", New: "b", Count: 2}
		if msg := worded(n, nil); msg == "" || strings.Contains(msg, "%!") {
			t.Errorf("%s: message %q", code, msg)
		}
	}
}

// TestTextEscapesDTypes: a dtype is a header's string, as a name is: the text report escapes it
// (added, removed and changed tensors alike), so that a terminal escape in one is shown, not obeyed.
func TestTextEscapesDTypes(t *testing.T) {
	model := func(name, dtype string) Side {
		f := stfile.File{Tensors: []stfile.Tensor{{Name: name, DType: dtype, Shape: []uint64{2}, Data: make([]byte, 8)}}}
		return load(t, name+".safetensors", f.Build(), false)
	}
	const hostile = "F32\x1b[2J"
	for _, c := range [][2]Side{
		{model("a", "F32"), model("b", hostile)}, // added and removed
		{model("a", "F32"), model("a", hostile)}, // dtype changed
		{model("a", hostile), model("a", "I32")}, // and back
	} {
		r := Compare(c[0], c[1], Options{})
		for _, full := range []bool{false, true} {
			out := written(t, func(w io.Writer) error { return Write(w, r, WriteOptions{Full: full}) })
			if bytes.ContainsRune(out, 0x1b) || !bytes.Contains(out, []byte(`F32\x1b[2J`)) {
				t.Errorf("%s → %s (full %v):\n%s", c[0].Model.Name, c[1].Model.Name, full, out)
			}
		}
	}
}
