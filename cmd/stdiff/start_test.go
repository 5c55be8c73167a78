package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInitIsLazy: the packages whose tables only some commands use (page templates, regular
// expressions, the pickle allowlist) build them at their first use, not at every start: each makes at
// most a few allocations at init (GODEBUG=inittrace=1 of this test binary, which links what stdiff
// links). Parsing the page templates alone took hundreds.
func TestInitIsLazy(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",inittrace=1", ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @.* (\d+) allocs$`)
	allocs := map[string]int{}
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		allocs[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, pkg := range []string{"diff", "canon/check", "canon/inspect", "canon/htmlpage", "canon/markdown", "canon/textfmt", "canon/pickle"} {
		n, ok := allocs["github.com/stdiff/stdiff/"+pkg]
		if !ok {
			t.Errorf("no init trace of %s in:\n%s", pkg, out)
		} else if n > 20 {
			t.Errorf("%s makes %d allocations at init, want at most 20", pkg, n)
		}
	}
}
