package dequant

import (
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// codebooksTxt is ggml's IQ codebooks taken as data from its src/ggml-common.h by gen/main.go (the
// commit and ggml's license are its first lines).
//
//go:embed codebooks.txt
var codebooksTxt string

// codebooks are the tables the IQ2, IQ3 and IQ1 types index: grids of 8 (4 for IQ3) byte values per
// entry, little-endian in each word as ggml reads them, and the sign tables.
type codebooks struct {
	kmask                     []uint64 // kmask_iq2xs: bit j of a sign byte
	ksigns                    []uint64 // ksigns_iq2xs: 7 stored sign bits and their parity as the 8th
	iq2xxs, iq2xs, iq2s, iq1s []uint64
	iq3xxs, iq3s              []uint64
}

// tableSizes are the tables' names in codebooks.txt and how many values each must hold.
var tableSizes = map[string]int{
	"kmask_iq2xs": 8, "ksigns_iq2xs": 128,
	"iq2xxs_grid": 256, "iq2xs_grid": 512, "iq2s_grid": 1024,
	"iq3xxs_grid": 256, "iq3s_grid": 512, "iq1s_grid": 2048,
}

// books parses codebooks.txt once, when an IQ type is first dequantised.
var books = sync.OnceValue(func() *codebooks {
	t, err := parseCodebooks(codebooksTxt)
	if err != nil {
		panic("dequant: codebooks.txt: " + err.Error()) // embedded and tested: never happens
	}
	return &codebooks{
		kmask: t["kmask_iq2xs"], ksigns: t["ksigns_iq2xs"],
		iq2xxs: t["iq2xxs_grid"], iq2xs: t["iq2xs_grid"], iq2s: t["iq2s_grid"],
		iq3xxs: t["iq3xxs_grid"], iq3s: t["iq3s_grid"], iq1s: t["iq1s_grid"],
	}
})

// parseCodebooks reads codebooks.txt: '#' lines, then per table "NAME TYPE COUNT" and COUNT hexadecimal
// values; every table of tableSizes must be there with its size.
func parseCodebooks(s string) (map[string][]uint64, error) {
	out := map[string][]uint64{}
	var name string
	var want, bits int
	for i, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(line, "#"):
			continue
		case len(out[name]) == want:
			if len(f) != 3 {
				return nil, lineErr(i, "not a table header")
			}
			var err error
			name = f[0]
			if want, err = strconv.Atoi(f[2]); err != nil || want != tableSizes[name] || out[name] != nil {
				return nil, lineErr(i, "unexpected table "+line)
			}
			if bits = map[string]int{"uint8": 8, "uint32": 32, "uint64": 64}[f[1]]; bits == 0 {
				return nil, lineErr(i, "unknown type "+f[1])
			}
			out[name] = make([]uint64, 0, want)
			continue
		}
		for _, h := range f {
			v, err := strconv.ParseUint(h, 16, bits)
			if err != nil || len(out[name]) == want {
				return nil, lineErr(i, "bad value "+h)
			}
			out[name] = append(out[name], v)
		}
	}
	for n, size := range tableSizes {
		if len(out[n]) != size {
			return nil, lineErr(-1, "table "+n+" missing or short")
		}
	}
	return out, nil
}

func lineErr(i int, msg string) error {
	if i < 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("line %d: %s", i+1, msg)
}
