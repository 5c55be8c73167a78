//go:build unix

package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/onnx/onnxw"
)

// TestONNXExternalRefused: external data that onnx refuses (a link out of the model's folder, a FIFO,
// a device) is refused by every command, at once, and never read: check says INVALID (1), the
// commands that need its bytes exit 2, and nothing of the linked file reaches the output.
func TestONNXExternalRefused(t *testing.T) {
	const secret = "HF_TOKEN=hf_secretsecretsecretsecretsecretsecret0123"
	outside := filepath.Join(t.TempDir(), "environ")
	if err := os.WriteFile(outside, []byte(secret+secret), 0o644); err != nil {
		t.Fatal(err)
	}
	model := onnxw.Model(onnxw.Tensor("w", 1, []int64{4, 4}, onnxw.External("w.bin", 0, 64)))
	for _, c := range []struct {
		name string
		make func(path string) error
	}{
		{"link out", func(p string) error { return os.Symlink(outside, p) }},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"/dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		dir := t.TempDir()
		for _, name := range []string{"a.onnx", "b.onnx"} {
			if err := os.WriteFile(filepath.Join(dir, name), model, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.make(filepath.Join(dir, "w.bin")); err != nil {
			t.Fatal(err)
		}
		a, b := filepath.Join(dir, "a.onnx"), filepath.Join(dir, "b.onnx")
		for _, cmd := range []struct {
			args []string
			code int
		}{
			{[]string{"check", a}, exitFound},
			{[]string{"check", "--values", a}, exitFound},
			{[]string{"hash", "--content", a}, exitTrouble},
			{[]string{"diff", "--json", a, b}, exitTrouble},
			{[]string{"inspect", "--json", a}, exitFound},
		} {
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- run(cmd.args, &stdout, &stderr) }()
			select {
			case code := <-done:
				if code != cmd.code {
					t.Errorf("%s: stdiff %s: exit %d, want %d\n%s%s", c.name, strings.Join(cmd.args, " "), code, cmd.code, stdout.String(), stderr.String())
				}
				if strings.Contains(stdout.String()+stderr.String(), "secret") {
					t.Errorf("%s: stdiff %s printed the linked file", c.name, strings.Join(cmd.args, " "))
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: stdiff %s did not end in 20 s", c.name, strings.Join(cmd.args, " "))
			}
		}
	}
}

// TestSIGTERMEndsHash: the first SIGTERM ends a long `hash --content` (a 64 GiB sparse file) within
// a few seconds, exit 2, "interrupted"; a process of its own, as a user's.
func TestSIGTERMEndsHash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process and hashes for a while")
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.safetensors")
	const size = 64 << 30
	header := []byte(`{"big":{"dtype":"U8","shape":[` + strconv.FormatInt(size-8-128, 10) + `],"data_offsets":[0,` + strconv.FormatInt(size-8-128, 10) + `]}}`)
	header = append(header, bytes.Repeat([]byte(" "), 128-len(header))...)
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], 128)
	if _, err := f.Write(append(n[:], header...)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse file of %d bytes here: %v", size, err)
	}
	f.Close()
	// testscript.Main (TestMain) runs stdiff when the test binary is called by that name.
	exe := filepath.Join(dir, "stdiff")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "hash", "--content", big)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // well into the hashing (a start takes milliseconds)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		took := time.Since(sent)
		if cmd.ProcessState.ExitCode() != exitTrouble || !strings.Contains(stderr.String(), "stdiff: interrupted") {
			t.Errorf("after SIGTERM: %v, exit %d, stderr %q; want 2, interrupted", err, cmd.ProcessState.ExitCode(), stderr.String())
		}
		if took > 5*time.Second {
			t.Errorf("SIGTERM took %s to end the hash", took)
		}
		t.Logf("ended %s after SIGTERM", took.Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the first SIGTERM did not end stdiff hash --content in 30 s")
	}
}
