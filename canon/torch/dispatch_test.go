package torch_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"errors"
	"github.com/stdiff/stdiff/canon/finding"
	"io"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
)

func globalsNamed(f *torch.File, code string) []string {
	var out []string
	for _, x := range f.Findings {
		if x.Code == code {
			out = append(out, x.Global)
		}
	}
	return out
}

// TestZipCaseVariantDataPkl: miniz finds records case-insensitively, so torch may load an upper-case
// DATA.PKL beside a harmless data.pkl; an archive whose names collide is invalid, and every pickle
// that could be read is scanned.
func TestZipCaseVariantDataPkl(t *testing.T) {
	f := read(zipFile(t, "data.pkl", stateDict(), "DATA.PKL", evil, "data/0", strings.Repeat("\x00", 24), "version", "3\n"))
	if f.Valid() || codes(f)[finding.CodeZipDuplicate] != 1 || len(globalsNamed(f, finding.CodeUnsafeGlobal)) == 0 {
		t.Fatalf("%+v", f.Findings)
	}
	// miniz's heap sort puts the second of two names equal but for case first: torch reads DATA.PKL
	if f.Pickles[0].Entry != "archive/DATA.PKL" {
		t.Errorf("torch reads %s first; want archive/DATA.PKL", f.Pickles[0].Entry)
	}
	// only DATA.PKL: torch finds it as data.pkl
	f = read(zipFile(t, "DATA.PKL", evil, "version", "3\n"))
	if f.Format != torch.FormatZip || len(globalsNamed(f, finding.CodeUnsafeGlobal)) != 1 {
		t.Fatalf("%s %+v", f.Format, f.Findings)
	}
	// a benign archive in upper case loads in torch: valid, tensors listed from DATA/0
	f = read(zipFile(t, "DATA.PKL", stateDict(), "DATA/0", strings.Repeat("\x00", 24), "VERSION", "3\n"))
	if !f.Valid() || len(f.Tensors) != 2 || len(f.Storages) != 1 || f.Storages[0].Offset < 0 {
		t.Fatalf("%+v %+v", f.Findings, f.Storages)
	}
	// a pickle named in another case anywhere is scanned too
	f = read(zipFile(t, "data.pkl", stateDict(), "data/0", strings.Repeat("\x00", 24), "extra.PKL", evil))
	if f.Valid() || len(globalsNamed(f, finding.CodeUnsafeGlobal)) != 1 {
		t.Fatalf("%+v", f.Findings)
	}
}

// TestZipDuplicateNames: exact duplicates and case variants of a storage are invalid (issue 31 item 5).
func TestZipDuplicateNames(t *testing.T) {
	for _, second := range []string{"data/0", "DATA/0", "Data/0"} {
		f := read(zipFile(t, "data.pkl", stateDict(), "data/0", strings.Repeat("\x00", 24), second, strings.Repeat("\x01", 24)))
		if f.Valid() || codes(f)[finding.CodeZipDuplicate] != 1 {
			t.Errorf("%s: %+v", second, f.Findings)
		}
	}
	if f := read(benignZip(t)); codes(f)[finding.CodeZipDuplicate] != 0 {
		t.Errorf("%+v", f.Findings)
	}
}

// TestZipNoFolder: torch refuses an archive whose first entry is in no folder.
func TestZipNoFolder(t *testing.T) {
	f := read(zipFileRaw(t, "data.pkl", "\x80\x02}."))
	if f.Valid() || codes(f)[finding.CodeZipPrefix] == 0 {
		t.Fatalf("%+v", f.Findings)
	}
}

// TestTorchScriptExactName: torch takes an archive for TorchScript when it has constants.pkl under
// its folder, and for nothing else (a code/ folder alone is a checkpoint to torch.load).
func TestTorchScriptExactName(t *testing.T) {
	if f := read(zipFile(t, "data.pkl", "\x80\x02}.", "code/x.py", "x")); f.Format != torch.FormatZip || !f.Valid() {
		t.Errorf("%s %+v", f.Format, f.Findings)
	}
	if f := read(zipFile(t, "data.pkl", "\x80\x02}.", "constants.pkl", "\x80\x02).")); f.Format != torch.FormatTorchScript || f.Valid() {
		t.Errorf("%s %+v", f.Format, f.Findings)
	}
}

// TestStorageRecordSize: torch ≥ 2.10 refuses a storage record larger or smaller than the pickle
// declares (CVE-2026-24747), in the zip format; the legacy reader always refused a count that
// differs from the pickle's.
func TestStorageRecordSize(t *testing.T) {
	for _, n := range []int{20, 28, 48} {
		f := read(zipFile(t, "data.pkl", stateDict(), "data/0", strings.Repeat("\x00", n), "version", "3\n"))
		if f.Valid() || codes(f)[finding.CodeStorageSize] != 1 {
			t.Errorf("%d bytes: %+v", n, f.Findings)
		}
	}
	data := legacyFile(stateDict())
	bad := bytes.Clone(data)
	bad = append(bad[:len(bad)-32], "\x07\x00\x00\x00\x00\x00\x00\x00"+strings.Repeat("\x00", 28)...)
	if f := read(bad); f.Valid() || codes(f)[finding.CodeStorageSize] != 1 {
		t.Errorf("legacy: %+v", f.Findings)
	}
}

// tarOf is a tar archive of (name, content) pairs.
func tarOf(t testing.TB, format tar.Format, entries ...string) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		if err := w.WriteHeader(&tar.Header{Name: entries[i], Size: int64(len(entries[i+1])), Mode: 0o644, Typeflag: tar.TypeReg, Format: format}); err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(entries[i+1]))
	}
	w.Close()
	return buf.Bytes()
}

// TestTarBeforePickle: torch.load tries tar before the legacy pickle format, so a tar whose first
// header starts as a harmless pickle is a tar (refused under weights_only), and its pickles are
// scanned.
func TestTarBeforePickle(t *testing.T) {
	data := tarOf(t, tar.FormatGNU, "\x80\x02}.", "", "pickle", evil, "storages", "\x80\x02K\x00.")
	f := read(data)
	if f.Format != torch.FormatTar || f.Valid() || codes(f)[finding.CodeTarFormat] != 1 || len(globalsNamed(f, finding.CodeUnsafeGlobal)) != 1 {
		t.Fatalf("%s %+v", f.Format, f.Findings)
	}
	if got, ok := torch.Sniff(data[:512]); !ok || got != torch.FormatTar {
		t.Errorf("Sniff: %s %v", got, ok)
	}
	// a block of NULs: tarfile opens an archive with no member
	if f := read(make([]byte, 1024)); f.Format != torch.FormatTar || f.Valid() {
		t.Errorf("%s %+v", f.Format, f.Findings)
	}
	// a bad checksum is no tar: the pickle is read
	bad := bytes.Clone(data)
	bad[148] ^= 1
	if f := read(bad); f.Format == torch.FormatTar {
		t.Errorf("bad checksum read as tar")
	}
}

// TestLegacyFirstPickleNotMagic: a file whose first pickle is not torch's magic number is a bare
// pickle, and the pickles after it are scanned (a legacy checkpoint whose magic number was replaced
// by N or I7).
func TestLegacyFirstPickleNotMagic(t *testing.T) {
	for _, first := range []string{"N.", "I7\n.", "\x80\x02N."} {
		data := []byte(first + "\x80\x02M\xe9\x03." + evil)
		f := read(data)
		if f.Valid() || len(globalsNamed(f, finding.CodeUnsafeGlobal)) != 1 {
			t.Errorf("%q: %s %+v", first, f.Format, f.Findings)
		}
	}
}

// TestLongProtocol0Pickle: a pickle of protocol 0 longer than the sniffing window is recognised.
func TestLongProtocol0Pickle(t *testing.T) {
	data := "(lp0\n" + strings.Repeat("V"+strings.Repeat("a", 1000)+"\na", 70) + "cos\nsystem\np4\n(Vtouch pwned\ntRa."
	if got, ok := torch.SniffReader(strings.NewReader(data), int64(len(data))); !ok || got != torch.FormatPickle {
		t.Fatalf("%s %v", got, ok)
	}
	if f := read([]byte(data)); f.Valid() || len(globalsNamed(f, finding.CodeUnsafeGlobal)) != 1 {
		t.Fatalf("%+v", f.Findings)
	}
	for _, start := range []string{"Vos\nVsystem\n\x93(Vls\ntR.", "N.", "I7\n.", "K\x07."} {
		if !torch.Candidate([]byte(start)) {
			t.Errorf("%q is no candidate", start)
		}
	}
}

// failingReader fails every read that reaches past byte at.
type failingReader struct {
	b  []byte
	at int64
}

var errDisk = errors.New("input/output error")

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.at {
		n := 0
		if off < r.at {
			n = copy(p, r.b[off:r.at])
		}
		return n, errDisk
	}
	return copy(p, r.b[off:]), nil
}

// TestReadErrorKept: a file that cannot be read is a read error (exit 2), never a file found
// invalid: in the zip directory, in a pickle, in the legacy storages.
func TestReadErrorKept(t *testing.T) {
	for name, data := range map[string][]byte{"zip": benignZip(t), "legacy": legacyFile(stateDict())} {
		for _, at := range []int64{0, 10, int64(len(data) / 2), int64(len(data) - 10)} {
			f := torch.Read(failingReader{data, at}, int64(len(data)), name)
			if !errors.Is(f.ReadErr, errDisk) {
				t.Errorf("%s, failing at %d: ReadErr %v, findings %+v", name, at, f.ReadErr, f.Findings)
			}
		}
		if f := torch.Read(bytes.NewReader(data), int64(len(data)), name); f.ReadErr != nil {
			t.Errorf("%s: %v", name, f.ReadErr)
		}
	}
	var _ io.ReaderAt = failingReader{}
}

// zipFileRaw is zipFile with the names as given, in no folder.
func zipFileRaw(t testing.TB, entries ...string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: entries[i], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(entries[i+1]))
	}
	w.Close()
	return buf.Bytes()
}

// TestZipVersion: PyTorch refuses an archive without a version record it can read (found as miniz
// finds it: VERSION will do).
func TestZipVersion(t *testing.T) {
	for entries, valid := range map[[2]string]bool{{"version", "3\n"}: true, {"VERSION", "3\n"}: true, {".data/version", "3"}: true,
		{"version", "x3"}: false, {"-version", ""}: false} {
		f := read(zipFile(t, "data.pkl", "\x80\x02}.", entries[0], entries[1]))
		if f.Valid() != valid || (!valid && codes(f)[finding.CodeZipVersion] != 1) {
			t.Errorf("%q: %+v", entries, f.Findings)
		}
	}
}
