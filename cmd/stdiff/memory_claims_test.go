package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// claimsONNX is a model (86 bytes) whose initializers claim 2^26 floats and 2^25 int64s in typed
// fields holding 4 each (written by onnx.helper).
const claimsONNX = "08083a4e0a0e0a01770a017712017922034164641201672a1c0880808020100122100000803f0000803f0000803f0000803f4201772a10088080801010073a040101010142017662090a017912040a02080142021011"

// claimsChild runs this test binary as stdiff when TestClaimedSizesMemory starts it so, and reports
// the process's own peak resident memory (VmHWM, which exec resets; rusage's maxrss keeps the parent's
// from before the exec) as the last line of stderr.
func init() {
	if os.Getenv("STDIFF_CLAIMS_CHILD") != "1" {
		return
	}
	code := run(os.Args[1:], io.Discard, os.Stderr)
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Fprintf(os.Stderr, "\n%s\n", line)
		}
	}
	os.Exit(code)
}

// TestClaimedSizesMemory: memory and time follow the bytes a file holds, not the sizes it claims. Each
// file here is a few kilobytes (or a sparse file of 3.75 GiB with 8 KiB on disk) that claims gigabytes:
// a pickle whose memo shares long keys along 2^24 paths (to a tensor, or to a value), a deflated
// pickle of a million memo'd lists or of DUP'd items, a zip whose end record claims a central
// directory of 3.75 GiB, an ONNX model whose dims claim 256 MiB in a typed field of 16 bytes. Every
// command answers within 10 s in at most 256 MiB of resident memory (the bar of issue #32): before the
// budgets they took 4 GB and more (killed), 538 MB, and 3.8 GB with 14 s. Each command runs in a
// process of its own (this test binary as stdiff, see claimsChild) under a 2 GiB address-space limit,
// so the machine survives a regression.
func TestClaimedSizesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs stdiff on files that claim gigabytes")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is not stdiff's: run without -race to measure")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the process's peak memory from Linux's /proc and limits it with sh's ulimit")
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tensorFanout := write("tensor-fanout.pt", torchw.ZipWith(torchw.Fanout(torchw.TensorCall, 24, 350), false, "0", strings.Repeat("\x00", 16)))
	metaFanout := write("meta-fanout.pt", torchw.ZipWith(torchw.Fanout("N", 24, 350), false))
	memoBomb := write("memo-bomb.pt", torchw.ZipWith(torchw.MemoBomb(1<<20-1), true))
	appendBomb := write("append-bomb.pt", torchw.ZipWith(torchw.AppendBomb(64, 1<<19), true))
	model, _ := hex.DecodeString(claimsONNX)
	onnxClaim := write("typed-claim.onnx", model)

	// A sparse file: a local header, 3.75 GiB of nothing, and an end record that says the central
	// directory fills them.
	sparse := filepath.Join(dir, "sparse-directory.pt")
	const hole = 0xF0000000
	fh, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	var eocd bytes.Buffer
	eocd.WriteString("PK\x05\x06")
	binary.Write(&eocd, binary.LittleEndian, struct {
		Disk, CDDisk, Count, Total uint16
		Size, Off                  uint32
		Comment                    uint16
	}{0, 0, 0xFFFE, 0xFFFE, hole - 30, 30, 0})
	_, err1 := fh.WriteString("PK\x03\x04" + strings.Repeat("\x00", 26))
	_, err2 := fh.WriteAt(eocd.Bytes(), hole)
	if err := fh.Close(); err1 != nil || err2 != nil || err != nil {
		t.Skipf("cannot write a sparse file here: %v %v %v", err1, err2, err)
	}
	for _, p := range []string{tensorFanout, metaFanout, memoBomb, appendBomb} {
		st, _ := os.Stat(p)
		if st.Size() > 256<<10 {
			t.Fatalf("%s is %d bytes: the hostile files are meant to be small", p, st.Size())
		}
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args string
		code int // -1: 0 or 1
	}{
		{"inspect " + tensorFanout, -1},
		{"check " + tensorFanout, -1},
		{"hash --content " + tensorFanout, -1},
		{"inspect " + metaFanout, -1},
		{"check " + memoBomb, 1},
		{"inspect " + memoBomb, -1},
		{"check " + appendBomb, 1},
		{"inspect " + sparse, -1},
		{"check " + sparse, 1},
		{"hash " + sparse, 1},
		{"check --values " + onnxClaim, 1}, // a defect check reports (exit 1); hash cannot read the bytes (exit 2)
		{"hash --content " + onnxClaim, 2},
	}
	for _, c := range cases {
		name := strings.ReplaceAll(c.args, dir+string(filepath.Separator), "")
		cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v 2097152 && exec "$0" "$@"`, exe}, strings.Fields(c.args)...)...)
		cmd.Env = append(os.Environ(), "STDIFF_CLAIMS_CHILD=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
		err := cmd.Run()
		timer.Stop()
		took := time.Since(start)
		code := cmd.ProcessState.ExitCode()
		rss := int64(-1)
		if i := strings.LastIndex(stderr.String(), "VmHWM:"); i >= 0 {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(stderr.String()[i+len("VmHWM:"):]), "%d", &kb)
			rss = kb << 10
		}
		t.Logf("%-40s exit %d, %5.2f s, %4d MiB", name, code, took.Seconds(), rss>>20)
		if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "out of memory") || (err != nil && code < 0) {
			t.Errorf("%s: %v\n%s", name, err, tail(stderr.String()))
			continue
		}
		if c.code >= 0 && code != c.code || c.code < 0 && code > 1 {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, c.code, tail(stderr.String()))
		}
		if took > 10*time.Second {
			t.Errorf("%s: took %v, over 10 s", name, took)
		}
		if rss < 0 {
			t.Errorf("%s: no VmHWM reported (the process did not finish)", name)
		}
		if rss > 256<<20 {
			t.Errorf("%s: %d MiB resident, over 256 MiB", name, rss>>20)
		}
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
