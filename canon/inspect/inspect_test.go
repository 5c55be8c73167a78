package inspect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/textfmt"
)

func fixture(name string) string { return filepath.Join("..", "..", "testdata", name) }

// write builds f into dir/name.
func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cardJSON is the card's JSON, decoded.
func cardJSON(t *testing.T, c *inspect.Card) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := inspect.Write(&b, c, inspect.WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	return v
}

// TestDeclaredNumbers: the rank and alpha the metadata declares are JSON numbers (alpha may be
// fractional), or null when absent or not a number; the text shows them as written.
func TestDeclaredNumbers(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		dim, alpha  string // "" leaves the key out
		rank, alphy string // as JSON
	}{
		{"32", "16", "32", "16"},
		{"16.0", "0.5", "16", "0.5"},
		{"8.5", "1e-3", "null", "0.001"},
		{"abc", "NaN", "null", "null"},
		{"-4", "inf", "null", "null"},
		{"None", "None", "null", "null"},
		{"", "", "null", "null"},
		{" 4 ", "1", "4", "1"},
	} {
		f := stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{2}}}}
		if c.dim != "" {
			f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_network_dim", Value: c.dim})
		}
		if c.alpha != "" {
			f.Metadata = append(f.Metadata, stfile.KV{Key: "ss_network_alpha", Value: c.alpha})
		}
		card, err := inspect.Inspect(t.Context(), write(t, dir, "m.safetensors", f.Build()), inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		info := cardJSON(t, card)["info"].(map[string]any)
		got, _ := json.Marshal([]any{info["declared_rank"], info["declared_alpha"]})
		if want := "[" + c.rank + "," + c.alphy + "]"; string(got) != want {
			t.Errorf("dim %q alpha %q: declared_rank, declared_alpha = %s, want %s", c.dim, c.alpha, got, want)
		}
		var text bytes.Buffer
		if err := inspect.Write(&text, card, inspect.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if c.dim == "32" && !strings.Contains(text.String(), "  network     dim 32 alpha 16\n") {
			t.Errorf("text:\n%s", text.String())
		}
	}
}

// TestCardJSON: the contract's fields are there, with the types scripts rely on.
func TestCardJSON(t *testing.T) {
	card, err := inspect.Inspect(t.Context(), fixture("lora.safetensors"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := cardJSON(t, card)
	if v["schema"] != "stdiff.inspect/v1" || v["path"] != fixture("lora.safetensors") || v["header_len"] != 23208.0 || v["tensor_count"] != 6.0 {
		t.Errorf("card: schema %v path %v header_len %v tensor_count %v", v["schema"], v["path"], v["header_len"], v["tensor_count"])
	}
	if _, ok := v["params"].(map[string]any)["F16"].(float64); !ok {
		t.Errorf("params: %v", v["params"])
	}
	if v["metadata"].(map[string]any)["ss_output_name"] != "mychar_v1" {
		t.Errorf("metadata: %v", v["metadata"])
	}
	if _, ok := v["findings"].([]any); !ok {
		t.Errorf("findings: %v", v["findings"])
	}
	info := v["info"].(map[string]any)
	for key, want := range map[string]any{"name": "mychar_v1", "kind": "lora", "naming": "kohya", "family": "sd1", "rank": 4.0, "declared_rank": 4.0, "declared_alpha": 1.0} {
		if info[key] != want {
			t.Errorf("info.%s = %#v, want %#v", key, info[key], want)
		}
	}
	civitai := info["civitai"].(map[string]any)
	if _, ok := civitai["model_id"]; !ok {
		t.Errorf("info.civitai: %v", civitai)
	}
	if _, ok := info["triggers"].([]any); !ok {
		t.Errorf("info.triggers: %v", info["triggers"])
	}
	if card.Outcome() != canon.Clean {
		t.Errorf("outcome %v", card.Outcome())
	}
}

// TestInspectErrors: a model that cannot be read is an error that keeps its cause; an invalid one
// gets a card, whose outcome is Found.
func TestInspectErrors(t *testing.T) {
	if _, err := inspect.Inspect(t.Context(), fixture("missing.safetensors"), inspect.Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	card, err := inspect.Inspect(t.Context(), fixture("lfs-pointer.safetensors"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if card.Valid || card.HeaderParsed || card.ReferenceError == nil || card.Outcome() != canon.Found {
		t.Errorf("LFS pointer: %+v", card)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := inspect.Inspect(ctx, fixture("base.safetensors"), inspect.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestMaxTensorsAndFull: a card lists at most MaxTensors tensors and counts them all; the text folds
// to ten tensors and shortens long values unless Full.
func TestMaxTensorsAndFull(t *testing.T) {
	f := stfile.File{Metadata: []stfile.KV{{Key: "long", Value: strings.Repeat("word ", 40) + "END"},
		{Key: "sshs_model_hash", Value: strings.Repeat("ab", 32)}}}
	for i := range 14 {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: "t" + string(rune('a'+i)), DType: "F32", Shape: []uint64{1}})
	}
	path := write(t, t.TempDir(), "m.safetensors", f.Build())
	text := func(opt inspect.Options, full bool) (*inspect.Card, string) {
		card, err := inspect.Inspect(t.Context(), path, opt)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := inspect.Write(&b, card, inspect.WriteOptions{Full: full, Flags: func(option string) string { return map[string]string{"Full": "--full"}[option] }}); err != nil {
			t.Fatal(err)
		}
		return card, b.String()
	}
	card, folded := text(inspect.Options{MaxTensors: inspect.FoldedTensors}, false)
	if len(card.Tensors) != 10 || card.TensorCount != 14 {
		t.Errorf("MaxTensors 10: %d tensors listed, %d counted", len(card.Tensors), card.TensorCount)
	}
	card, all := text(inspect.Options{}, false)
	if len(card.Tensors) != 14 || all != folded {
		t.Errorf("a whole card folds in text as a card of 10 does: %d tensors\n%s\n---\n%s", len(card.Tensors), all, folded)
	}
	if !strings.Contains(folded, "    … 4 more (--full lists all)\n") || strings.Contains(folded, "END") || !strings.Contains(folded, "  hashes      sshs_model_hash abababababab…  (not") {
		t.Errorf("folded:\n%s", folded)
	}
	_, full := text(inspect.Options{}, true)
	if strings.Contains(full, "more (--full") || !strings.Contains(full, "    tn ") || !strings.Contains(full, strings.Repeat("word ", 40)+"END") ||
		!strings.Contains(full, "sshs_model_hash "+strings.Repeat("ab", 32)+"  (not verified") {
		t.Errorf("full:\n%s", full)
	}
}

// TestFullShowsBlobs: in full, a cover image is shown whole (escaped), not summarised.
func TestFullShowsBlobs(t *testing.T) {
	blob := strings.Repeat("iVBORw0KGgo", 2000) + "\x1b"
	f := stfile.File{Metadata: []stfile.KV{{Key: "ssmd_cover_images", Value: blob}}, Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: []uint64{1}}}}
	card, err := inspect.Inspect(t.Context(), write(t, t.TempDir(), "m.safetensors", f.Build()), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var folded, full bytes.Buffer
	inspect.Write(&folded, card, inspect.WriteOptions{})
	inspect.Write(&full, card, inspect.WriteOptions{Full: true})
	if !strings.Contains(folded.String(), "(21.5 KiB, not shown)") || strings.Contains(folded.String(), blob[:100]) {
		t.Errorf("folded:\n%s", folded.String())
	}
	if !strings.Contains(full.String(), blob[:len(blob)-1]+`\x1b`) {
		t.Error("full does not show the value whole, escaped")
	}
}

// TestInfoTyped: the kind, naming and family of a card and a row are lora's typed constants.
func TestInfoTyped(t *testing.T) {
	card, err := inspect.Inspect(t.Context(), fixture("lora.safetensors"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if card.Info.Kind != lora.KindLoRA || card.Info.Naming != lora.NamingKohya || card.Info.Family != lora.FamilySD1 {
		t.Errorf("info: %s %s %s", card.Info.Kind, card.Info.Naming, card.Info.Family)
	}
	r := inspect.Short(t.Context(), []string{fixture("lora.safetensors")}, inspect.Options{})
	if row := r.Files[0]; row.Kind != lora.KindLoRA || row.Family != lora.FamilySD1 {
		t.Errorf("row: %+v", row)
	}
}

// TestShort: a folder's models, a row each with every field a script indexes;
// a file that is not a model says so; one that cannot be read has a row with its error; a folder
// that cannot be read is an error of the report.
func TestShort(t *testing.T) {
	dir := t.TempDir()
	lb, _ := os.ReadFile(fixture("lora.safetensors"))
	pb, _ := os.ReadFile(fixture("lfs-pointer.safetensors"))
	write(t, dir, "a.safetensors", lb)
	write(t, dir, "sub/b.safetensors", pb)
	r := inspect.Short(t.Context(), []string{dir, filepath.Join(dir, "gone.safetensors")}, inspect.Options{Workers: 1})
	if r.Schema != "stdiff.inspect-short/v1" || len(r.Files) != 3 || len(r.Errors) != 0 {
		t.Fatalf("report: %+v", r)
	}
	rows := map[string]inspect.Row{}
	for _, row := range r.Files {
		rows[filepath.Base(row.Path)] = row
	}
	a, b, gone := rows["a.safetensors"], rows["b.safetensors"], rows["gone.safetensors"]
	if a.Name != "mychar_v1" || a.Kind != lora.KindLoRA || a.Rank != 4 || !a.Valid || !a.HeaderParsed || a.Size != int64(len(lb)) || len(a.Triggers) != 0 { // its words are all guessed
		t.Errorf("lora: %+v", a)
	}
	if b.Valid || b.HeaderParsed || b.Err != nil {
		t.Errorf("LFS pointer: %+v", b)
	}
	if !errors.Is(gone.Err, fs.ErrNotExist) || gone.Error != "no such file" {
		t.Errorf("gone: %+v", gone)
	}
	if r.Outcome() != canon.Trouble {
		t.Errorf("outcome %v", r.Outcome())
	}
	var text bytes.Buffer
	if err := inspect.WriteShort(&text, r, inspect.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"not a model ", " unreadable ", "no such file · " + filepath.Join(dir, "gone.safetensors")} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	var l bytes.Buffer
	if err := inspect.WriteShort(&l, r, inspect.WriteOptions{Format: textfmt.JSONL}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d JSONL lines:\n%s", len(lines), l.String())
	}
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"schema", "path", "size", "valid", "name", "kind", "family", "base_model", "rank", "triggers"} {
			if _, ok := rec[key]; !ok {
				t.Errorf("row lacks %q: %s", key, line)
			}
		}
	}

	if err := os.Chmod(filepath.Join(dir, "sub"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "sub"), 0o755)
	if os.Geteuid() != 0 {
		if r := inspect.Short(t.Context(), []string{dir}, inspect.Options{}); len(r.Errors) != 1 || r.Outcome() != canon.Trouble {
			t.Errorf("unreadable folder: errors %v, outcome %v", r.Errors, r.Outcome())
		}
	}
}

// TestShortCancelled: once ctx is done, the models not read have rows saying so and the report has
// the context's error; nothing is left blank.
func TestShortCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := inspect.Short(ctx, []string{fixture("base.safetensors"), fixture("lora.safetensors")}, inspect.Options{})
	if len(r.Errors) == 0 || !errors.Is(r.Errors[len(r.Errors)-1], context.Canceled) || r.Outcome() != canon.Trouble {
		t.Errorf("errors %v, outcome %v", r.Errors, r.Outcome())
	}
	for _, row := range r.Files {
		if row.Path == "" || row.Err == nil {
			t.Errorf("row %+v", row)
		}
	}
}

// TestCardJSONL: a card's JSONL record is its JSON, compact, on one line.
func TestCardJSONL(t *testing.T) {
	card, err := inspect.Inspect(t.Context(), fixture("lora.safetensors"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var j, l, compact bytes.Buffer
	if err := inspect.Write(&j, card, inspect.WriteOptions{Format: textfmt.JSON}); err != nil {
		t.Fatal(err)
	}
	if err := inspect.Write(&l, card, inspect.WriteOptions{Format: textfmt.JSONL}); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&compact, j.Bytes()); err != nil {
		t.Fatal(err)
	}
	if l.String() != compact.String()+"\n" {
		t.Errorf("JSONL\n%s\nis not the compact JSON\n%s", l.String(), compact.String())
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWritersReturnErrors: a writer that cannot write says so.
func TestWritersReturnErrors(t *testing.T) {
	card, err := inspect.Inspect(t.Context(), fixture("lora.safetensors"), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := inspect.Short(t.Context(), []string{fixture("lora.safetensors")}, inspect.Options{})
	for name, write := range map[string]func() error{
		"text":       func() error { return inspect.Write(failWriter{}, card, inspect.WriteOptions{}) },
		"markdown":   func() error { return inspect.Write(failWriter{}, card, inspect.WriteOptions{Format: textfmt.Markdown}) },
		"json":       func() error { return inspect.Write(failWriter{}, card, inspect.WriteOptions{Format: textfmt.JSON}) },
		"jsonl":      func() error { return inspect.Write(failWriter{}, card, inspect.WriteOptions{Format: textfmt.JSONL}) },
		"short text": func() error { return inspect.WriteShort(failWriter{}, r, inspect.WriteOptions{}) },
		"short markdown": func() error {
			return inspect.WriteShort(failWriter{}, r, inspect.WriteOptions{Format: textfmt.Markdown})
		},
		"short json":  func() error { return inspect.WriteShort(failWriter{}, r, inspect.WriteOptions{Format: textfmt.JSON}) },
		"short jsonl": func() error { return inspect.WriteShort(failWriter{}, r, inspect.WriteOptions{Format: textfmt.JSONL}) },
	} {
		if err := write(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
