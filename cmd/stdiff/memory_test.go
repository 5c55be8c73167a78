package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// hostileHeader writes a safetensors file whose header is n entries made by entry, and no data.
func hostileHeader(t testing.TB, dir, name string, n int, entry func(i int) string) (path string, headerLen int) {
	var h strings.Builder
	h.WriteByte('{')
	for i := range n {
		if i > 0 {
			h.WriteByte(',')
		}
		h.WriteString(entry(i))
	}
	h.WriteByte('}')
	b := binary.LittleEndian.AppendUint64(nil, uint64(h.Len()))
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, append(b, h.String()...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, h.Len()
}

// TestHeaderOnlyMemory: every command that reads headers only allocates at most a small multiple of
// the header bytes, on headers made to be expensive: hundreds of thousands of entries of one name
// (each a finding), of distinct empty tensors (each a rename in a diff), in the terse array form, or
// invalid. stdiff collects no garbage until its heap nears 512 MiB (see main), so up to there what
// it allocates is what it holds: bytes allocated per header byte bound its peak memory.
//
// The multiples measured: 3.5 for check, inspect and hash of standard entries (the header itself, an
// 80-byte record per tensor, a name table), 5 for inspect --json and hash (every tensor listed; the
// canonical form), 6.5 for 27-byte entries in the array form, 14 for 11-byte invalid entries (each
// still costs a tensor record while it is read), and 11 for a diff --header-only in which every tensor
// is renamed (the report holds a rename and a group per tensor). A diff by value (the default) reads
// these empty tensors' bytes too: 4 when every tensor pairs by name, 12.5 when every tensor is a
// rename whose bytes confirm it (the digest in every rename key). The limits leave some room.
func TestHeaderOnlyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads headers of 100,000 entries")
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: run without -race to measure")
	}
	const n = 100_000
	dir := t.TempDir()
	zero := `{"dtype":"U8","shape":[0],"data_offsets":[0,0]}`
	same, sameLen := hostileHeader(t, dir, "same", n, func(int) string { return `"a":` + zero })
	distinct, distinctLen := hostileHeader(t, dir, "distinct", n, func(i int) string { return fmt.Sprintf(`"t%d":%s`, i, zero) })
	other, otherLen := hostileHeader(t, dir, "other", n, func(i int) string { return fmt.Sprintf(`"u%d":%s`, i, zero) })
	array, arrayLen := hostileHeader(t, dir, "array", n, func(i int) string { return fmt.Sprintf(`"t%d":["U8",[0],[0,0]]`, i) })
	invalid, invalidLen := hostileHeader(t, dir, "invalid", n, func(i int) string { return fmt.Sprintf(`"t%d":0`, i) })

	cases := []struct {
		args   string
		header int // bytes of the headers read
		limit  float64
	}{
		{"check " + same, sameLen, 4.5},
		{"check --json " + same, sameLen, 4.5},
		{"inspect " + same, sameLen, 4.5},
		{"inspect --json " + same, sameLen, 4.5},
		{"hash " + same, sameLen, 4.5},
		{"check " + distinct, distinctLen, 4.5},
		{"check --json " + distinct, distinctLen, 4.5},
		{"inspect " + distinct, distinctLen, 4.5},
		{"inspect --json " + distinct, distinctLen, 6},
		{"hash " + distinct, distinctLen, 5.5},
		{"check " + array, arrayLen, 8},
		{"inspect --json " + array, arrayLen, 12},
		{"check " + invalid, invalidLen, 16},
		{"check --json " + invalid, invalidLen, 16},
		{"diff --header-only " + distinct + " " + distinct, 2 * distinctLen, 4.5},
		{"diff --header-only " + distinct + " " + other, distinctLen + otherLen, 13},
		{"diff --header-only --json " + distinct + " " + other, distinctLen + otherLen, 13},
		{"diff --header-only " + same + " " + distinct, sameLen + distinctLen, 13},
		{"diff " + distinct + " " + distinct, 2 * distinctLen, 4.5},
		{"diff " + distinct + " " + other, distinctLen + otherLen, 13},
		{"diff " + same + " " + distinct, sameLen + distinctLen, 13},
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // as the command runs: allocated is held
	for _, c := range cases {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if code := run(strings.Fields(c.args), io.Discard, io.Discard); code == exitTrouble {
			t.Fatalf("%s: exit %d", c.args, code)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(c.header)
		name := strings.ReplaceAll(c.args, dir+string(filepath.Separator), "")
		t.Logf("%-40s %5.1f bytes allocated per header byte", name, per)
		if per > c.limit {
			t.Errorf("%s: %.1f bytes allocated per header byte, over %g", name, per, c.limit)
		}
	}
}
