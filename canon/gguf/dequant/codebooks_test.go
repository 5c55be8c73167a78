package dequant

import (
	"math/bits"
	"strings"
	"testing"
)

// TestCodebooks: the embedded codebooks parse, every table at its size, and the tables whose rule is
// known follow it: kmask is bit j, ksigns is 7 sign bits with their parity as the 8th, every IQ2 grid
// byte is one of 8, 25, 43 (ggml's magnitudes), IQ1_S's are −1, 0 or 1.
func TestCodebooks(t *testing.T) {
	c := books()
	for j, m := range c.kmask {
		if m != 1<<j {
			t.Errorf("kmask[%d] = %d", j, m)
		}
	}
	for i, s := range c.ksigns {
		if want := uint64(i) | uint64(bits.OnesCount(uint(i))&1)<<7; s != want {
			t.Errorf("ksigns[%d] = %#x, want %#x", i, s, want)
		}
	}
	for name, grid := range map[string][]uint64{"iq2xxs": c.iq2xxs, "iq2xs": c.iq2xs, "iq2s": c.iq2s} {
		for i, g := range grid {
			for j := range 8 {
				if b := uint8(g >> (8 * j)); b != 8 && b != 25 && b != 43 {
					t.Fatalf("%s[%d] byte %d is %d", name, i, j, b)
				}
			}
		}
	}
	for i, g := range c.iq1s {
		for j := range 8 {
			if v := int8(g >> (8 * j)); v < -1 || v > 1 {
				t.Fatalf("iq1s[%d] byte %d is %d", i, j, v)
			}
		}
	}
	for name, grid := range map[string][]uint64{"iq3xxs": c.iq3xxs, "iq3s": c.iq3s} {
		for i, g := range grid {
			if g>>32 != 0 {
				t.Fatalf("%s[%d] = %#x: more than 4 bytes", name, i, g)
			}
		}
	}
}

// TestParseCodebooksErrors: a table missing, short, too long, unknown, of an unknown type or with a
// value that is not hexadecimal is an error, never a table of another size.
func TestParseCodebooksErrors(t *testing.T) {
	good, err := parseCodebooks(codebooksTxt)
	if err != nil || len(good) != len(tableSizes) {
		t.Fatalf("embedded: %d tables, %v", len(good), err)
	}
	kmask := "kmask_iq2xs uint8 8\n01 02 04 08 10 20 40 80\n"
	for name, edit := range map[string]func(string) string{
		"missing": func(s string) string { return strings.Replace(s, kmask, "", 1) },
		"short": func(s string) string {
			return strings.Replace(s, kmask, "kmask_iq2xs uint8 8\n01 02 04 08 10 20 40\n", 1)
		},
		"long":    func(s string) string { return strings.Replace(s, kmask, kmask+"ff\n", 1) },
		"unknown": func(s string) string { return strings.Replace(s, kmask, kmask+"other uint8 1\n00\n", 1) },
		"type":    func(s string) string { return strings.Replace(s, "kmask_iq2xs uint8", "kmask_iq2xs int8", 1) },
		"value": func(s string) string {
			return strings.Replace(s, kmask, "kmask_iq2xs uint8 8\n01 02 04 08 10 20 40 x0\n", 1)
		},
		"too wide": func(s string) string {
			return strings.Replace(s, kmask, "kmask_iq2xs uint8 8\n01 02 04 08 10 20 40 180\n", 1)
		},
		"truncated": func(s string) string { return s[:len(s)/2] },
	} {
		s := edit(codebooksTxt)
		if s == codebooksTxt {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, err := parseCodebooks(s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
