package lora

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

// kohyaValue is the value of key in the metadata of the i-th kohya LoRA of stfile.
func kohyaValue(i int, key string) string {
	for _, kv := range stfile.KohyaSDXL(i).Metadata {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// FuzzObjectKeys: objectKeys (and its fast path, scanObjectKeys) gives the keys json.Unmarshal into a
// map gives, or none where it fails.
func FuzzObjectKeys(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"10_a b": {"n_repeats": 10, "img_count": 47}}`, `{"a": {}, "b": {"x": 1}}`,
		`{"a": {"x": 1}, "a": {"y": 2}}`, `{"a": 1}`, `{"a": {"x": 1.5}}`, `{"a": {"x": -1}}`, `{"a": {"x": 01}}`,
		`{"\u00e9\ud83d\ude00 \"q\" \\ \/": {}}`, `{"\ud800": {}}`, "{\"\xff\": {}}", `{"a": {}} x`, `{"a": {}}}`,
		` { "a" : { "x" : 1 , "y" : 2 } } `, `{"a": {"x": 1,}}`, `{"a": {"x" 1}}`, `[]`, ``, `{"a": {"x": 1}`,
		kohyaValue(3, "ss_dataset_dirs")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var obj map[string]json.RawMessage
		var want []string
		if json.Unmarshal([]byte(s), &obj) == nil {
			for k := range obj {
				want = append(want, k)
			}
		}
		got := objectKeys(s)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("objectKeys(%q) = %q, want %q", s, got, want)
		}
		if fast, ok := scanObjectKeys(s); ok {
			slices.Sort(fast)
			if !slices.Equal(fast, want) {
				t.Fatalf("scanObjectKeys(%q) = %q, want %q", s, fast, want)
			}
		}
	})
}

// FuzzRepeatsDir: repeatsDir matches as ^\d+_(.+)$ does.
func FuzzRepeatsDir(f *testing.F) {
	for _, s := range []string{"10_a b", "10_", "_a", "a_b", "1_a\nb", "1_\n", "12_34_x", "1__", "١_a", "1_\xff", "0010_x\r", ""} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^\d+_(.+)$`)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := repeatsDir(s)
		g := re.FindStringSubmatch(s)
		if ok != (g != nil) || ok && got != g[1] {
			t.Fatalf("repeatsDir(%q) = %q, %v; the expression gives %q", s, got, ok, g)
		}
	})
}

// BenchmarkTagSummary: the folders and the five most frequent tags of a kohya LoRA's ss_tag_frequency
// (about a thousand tags in 24 KB), what Derive reads of it.
func BenchmarkTagSummary(b *testing.B) {
	s := kohyaValue(3, "ss_tag_frequency")
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, _, ok := tagSummary(s, 5); !ok {
			b.Fatal("not read")
		}
	}
}

// BenchmarkObjectKeys: the folders of a kohya LoRA's ss_dataset_dirs.
func BenchmarkObjectKeys(b *testing.B) {
	s := kohyaValue(3, "ss_dataset_dirs")
	for b.Loop() {
		if len(objectKeys(s)) != 1 {
			b.Fatal("not read")
		}
	}
}
