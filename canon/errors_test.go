package canon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestErrorsKeepCause: a missing or refused file is an error that still says so to errors.Is, and
// reads as stdiff has always written it; the failed operation is named.
func TestErrorsKeepCause(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.safetensors")
	_, _, err := OpenRegular(missing, os.O_RDONLY)
	var re *ReadError
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrUnreadable) || !errors.As(err, &re) || re.Op != "stat" {
		t.Fatalf("missing file: %#v", err)
	}
	if err.Error() != missing+": no such file" || re.Reason() != "no such file" {
		t.Errorf("missing file reads %q", err)
	}

	if os.Geteuid() != 0 { // root opens anything
		locked := filepath.Join(dir, "locked.safetensors")
		if err := os.WriteFile(locked, []byte("x"), 0o000); err != nil {
			t.Fatal(err)
		}
		_, _, err = OpenRegular(locked, os.O_RDONLY)
		if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &re) || re.Op != "open" || err.Error() != locked+": permission denied" {
			t.Errorf("unreadable file: %v (%#v)", err, err)
		}
	}

	_, _, err = OpenRegular(dir, os.O_RDONLY)
	if !errors.As(err, &re) || re.Op != "open" || re.Hint == "" || err.Error() != dir+": is a directory, not a file" {
		t.Errorf("folder: %v", err)
	}

	// A failed write is no read error: the file was read.
	w := &ReadError{Name: "m", Op: "write", Err: errors.New("no space left on device")}
	if errors.Is(w, ErrUnreadable) || w.Error() != "m: no space left on device" {
		t.Errorf("write failure: %v, unreadable %v", w, errors.Is(w, ErrUnreadable))
	}
}
