// Command gen writes codebooks.txt: the codebooks ggml's IQ types index (the grids of IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M, and the sign tables), read as data from ggml's
// src/ggml-common.h, so that package dequant holds ggml's tables and no code of ggml's.
//
//	go run ./canon/gguf/dequant/gen [-commit OWNER/REPO@COMMIT] GGML_CHECKOUT > canon/gguf/dequant/codebooks.txt
//
// GGML_CHECKOUT is a ggml (or llama.cpp) source tree: src/ggml-common.h is read from it (ggml/src/ in
// llama.cpp's) and its LICENSE's first lines are named. -commit names where it came from when it is
// not a git work tree (an export of a bare mirror).
//
// The output: '#' lines (what, whence, the license), then each table as a line "NAME TYPE COUNT"
// followed by its COUNT values in hexadecimal, as ggml writes them (a grid's bytes are its values'
// little-endian bytes).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// tables are the tables package dequant needs, in the order written.
var tables = []string{
	"kmask_iq2xs", "ksigns_iq2xs",
	"iq2xxs_grid", "iq2xs_grid", "iq2s_grid",
	"iq3xxs_grid", "iq3s_grid",
	"iq1s_grid",
}

var (
	beginRE   = regexp.MustCompile(`GGML_TABLE_BEGIN\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)`)
	defineRE  = regexp.MustCompile(`(?m)^#define\s+(\w+)\s+(\d+)\s*$`)
	commentRE = regexp.MustCompile(`//[^\n]*`)
)

type table struct {
	ctype  string
	values []uint64
}

func main() {
	commit := flag.String("commit", "", "where the checkout came from (OWNER/REPO@COMMIT), when it is not a git work tree")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gen [-commit OWNER/REPO@COMMIT] GGML_CHECKOUT")
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *commit); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, dir, commit string) error {
	src := filepath.Join(dir, "src", "ggml-common.h")
	if _, err := os.Stat(src); err != nil {
		src = filepath.Join(dir, "ggml", "src", "ggml-common.h")
	}
	header, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if commit == "" {
		out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		if err != nil {
			return fmt.Errorf("%s is not a git work tree: name its commit with -commit", dir)
		}
		commit = "ggml-org/ggml@" + strings.TrimSpace(string(out))
	}
	license, err := licenseLine(dir)
	if err != nil {
		return err
	}
	parsed, err := parse(header)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "# ggml's IQ codebooks (src/ggml-common.h) as data, for package dequant; written by gen/main.go, do not edit.")
	fmt.Fprintln(w, "#", commit)
	fmt.Fprintln(w, "# ggml:", license)
	for _, name := range tables {
		t, ok := parsed[name]
		if !ok {
			return fmt.Errorf("%s: no table %s", src, name)
		}
		width, perLine := 2, 16
		switch t.ctype {
		case "uint32_t":
			width, perLine = 8, 8
		case "uint64_t":
			width, perLine = 16, 4
		}
		fmt.Fprintf(w, "%s %s %d\n", name, strings.TrimSuffix(t.ctype, "_t"), len(t.values))
		for i, v := range t.values {
			sep := " "
			if i%perLine == perLine-1 || i == len(t.values)-1 {
				sep = "\n"
			}
			fmt.Fprintf(w, "%0*x%s", width, v, sep)
		}
	}
	return w.Flush()
}

// licenseLine is the checkout's LICENSE's first two non-empty lines, joined ("MIT License, Copyright …").
func licenseLine(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
	if err != nil {
		return "", err
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(lines) < 2 {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, ", "), nil
}

// parse reads every GGML_TABLE_BEGIN(type, name, size) … GGML_TABLE_END() of the header whose type is
// an unsigned integer, checking that it holds size values (size a number or a #define of one).
func parse(src []byte) (map[string]table, error) {
	defines := map[string]int{}
	for _, m := range defineRE.FindAllSubmatch(src, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		defines[string(m[1])] = n
	}
	out := map[string]table{}
	for _, loc := range beginRE.FindAllSubmatchIndex(src, -1) {
		ctype, name, size := string(src[loc[2]:loc[3]]), string(src[loc[4]:loc[5]]), string(src[loc[6]:loc[7]])
		bits := map[string]int{"uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64}[ctype]
		if bits == 0 {
			continue
		}
		body := src[loc[1]:]
		end := bytes.Index(body, []byte("GGML_TABLE_END()"))
		if end < 0 {
			return nil, fmt.Errorf("%s: no GGML_TABLE_END", name)
		}
		n, err := strconv.Atoi(size)
		if err != nil {
			var ok bool
			if n, ok = defines[size]; !ok {
				return nil, fmt.Errorf("%s: size %s is not a number", name, size)
			}
		}
		var t table
		t.ctype = ctype
		for _, f := range strings.Split(string(commentRE.ReplaceAll(body[:end], nil)), ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			v, err := strconv.ParseUint(f, 0, bits)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			t.values = append(t.values, v)
		}
		if len(t.values) != n {
			return nil, fmt.Errorf("%s: %d values, declared %d", name, len(t.values), n)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: defined twice", name)
		}
		out[name] = t
	}
	return out, nil
}
