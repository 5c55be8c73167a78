package textfmt

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain name.weight": "plain name.weight",
		"evil\x1b[31mred\n": `evil\x1b[31mred\n`,
		"title\u202e":       `title\u202e`,
		"bad\xffutf8":       `bad\xffutf8`,
		"ünïcödé 模型":        "ünïcödé 模型",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNumbers(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if Plural(1, "file") != "1 file" || Plural(0, "file") != "0 files" || Plural(2, "shard") != "2 shards" {
		t.Error("Plural")
	}
}

func TestShorten(t *testing.T) {
	if got := Shorten("a  b\n\tc", 10); got != "a b c" {
		t.Errorf("white space: %q", got)
	}
	if got := Shorten(strings.Repeat("x", 2000), 5); got != "xxxxx… (2.0 KiB)" {
		t.Errorf("cut: %q", got)
	}
	if got := Shorten("\x1b[2J", 10); got != `\x1b[2J` {
		t.Errorf("escaped: %q", got)
	}
}

func TestIsBlob(t *testing.T) {
	line := strings.Repeat("A", MaxLine)
	for s, want := range map[string]bool{
		line:                     false,
		line + "A":               true,
		line + "\n" + line:       false,
		"short\n" + line + "AAA": true,
		"":                       false,
	} {
		if IsBlob(s) != want {
			t.Errorf("IsBlob(%d bytes) = %v, want %v", len(s), !want, want)
		}
	}
}

func TestPalette(t *testing.T) {
	on, off := Palette{On: true}, Palette{}
	if got := on.Red("x"); got != "\x1b[31mx\x1b[0m" {
		t.Errorf("on: %q", got)
	}
	if off.Red("x") != "x" || off.Bold("y") != "y" {
		t.Error("off paints")
	}
	if on.Green("") != "" {
		t.Error("an empty string is painted")
	}
}

// TestSyncWriter: concurrent writes arrive whole and in full; nothing reaches the writer before Flush.
func TestSyncWriter(t *testing.T) {
	var b strings.Builder
	w := NewSyncWriter(&b)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(w, "line %d\n", i)
			}
		}()
	}
	wg.Wait()
	if b.Len() != 0 {
		t.Fatalf("%d bytes written before Flush", b.Len())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "line ") || len(l) != 6 {
			t.Fatalf("torn line %q", l)
		}
	}
	if len(lines) != 800 {
		t.Errorf("%d lines, want 800", len(lines))
	}
}
