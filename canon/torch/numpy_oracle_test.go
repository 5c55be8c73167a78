package torch_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// npyWith is an .npy file of format version major whose header is dict padded with spaces to hlen
// bytes (newline included), then data.
func npyWith(major byte, dict string, hlen int, data []byte) []byte {
	header := dict + strings.Repeat(" ", max(hlen-len(dict)-1, 0)) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	}
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// zipOf is a zip of (name, bytes, deflate) entries in order; names may repeat.
func zipOf(entries ...any) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+2 < len(entries)+1; i += 3 {
		m := zip.Store
		if entries[i+2].(bool) {
			m = zip.Deflate
		}
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: entries[i].(string), Method: m})
		fw.Write(entries[i+1].([]byte))
	}
	w.Close()
	return buf.Bytes()
}

// numpyCases are the files whose numpy.load(allow_pickle=False) answers testdata/numpy-oracle.txt
// records: numpy's header limit, arrays that claim more than an entry holds, a name that repeats in an
// .npz (numpy takes the last), byte orders.
func numpyCases() map[string][]byte {
	f32 := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40} // 1 2 3 4 little-endian
	other := []byte{0, 0, 0xa0, 0x40, 0, 0, 0xc0, 0x40, 0, 0, 0xe0, 0x40, 0, 0, 0, 0x41}
	dict := func(descr, shape string) string {
		return fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	}
	w := torchw.NPY(torchw.Tensor{Name: "w", DType: "F32", Shape: []uint64{4}, Data: f32})
	w2 := torchw.NPY(torchw.Tensor{Name: "w", DType: "F32", Shape: []uint64{4}, Data: other})
	claim := npyWith(1, dict("<f4", "(1099511627776,)"), 118, f32) // 2^40 elements, 4 present
	return map[string][]byte{
		"plain.npy":             w,
		"big-endian.npy":        npyWith(1, dict(">f4", "(4,)"), 118, f32),
		"fortran.npy":           npyWith(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 118, f32),
		"trailing.npy":          append(append([]byte(nil), w...), 1, 2, 3),
		"truncated.npy":         w[:len(w)-1],
		"header-10000.npy":      npyWith(1, dict("<f4", "(4,)"), 10000, f32),
		"header-10001.npy":      npyWith(1, dict("<f4", "(4,)"), 10001, f32),
		"header-20k.npy":        npyWith(1, dict("<f4", "(4,)"), 20000, f32),
		"header-20k-v2.npy":     npyWith(2, dict("<f4", "(4,)"), 20000, f32),
		"object.npy":            npyWith(1, dict("|O", "(1,)"), 118, []byte("\x80\x02N.")),
		"claim-2e40.npy":        claim,
		"claim-2e40-stored.npz": zipOf("w.npy", claim, false),
		"claim-2e40.npz":        zipOf("w.npy", claim, true),
		"dup-last-wins.npz":     zipOf("w.npy", w, false, "w.npy", w2, false),
		"dup-last-wins-z.npz":   zipOf("w.npy", w, true, "w.npy", w2, true),
		"dup-last-bad.npz":      zipOf("w.npy", w, false, "w.npy", w2[:len(w2)-2], true),
		"big-endian.npz":        zipOf("w.npy", npyWith(1, dict(">f4", "(4,)"), 118, f32), true),
	}
}

// numpyAnswer is one line of the record: accept or reject, and for an accepted file its arrays.
type numpyAnswer struct {
	accept bool
	arrays []string // KEY=DTYPE:SHAPE:SHA256 (16 hex digits of the little-endian values)
}

// numpyDType is numpy's name (dtype.str less its byte order) of a safetensors dtype.
var numpyDType = map[string]string{"F32": "f4", "F64": "f8", "F16": "f2", "I64": "i8", "I32": "i4", "U8": "u1"}

// stdiffAnswer is what package torch makes of a file, in the record's terms: valid or not, and each
// tensor's dtype, shape and the digest of its bytes as Data gives them (row-major, little-endian).
func stdiffAnswer(t *testing.T, name string, b []byte) numpyAnswer {
	f := torch.Read(bytes.NewReader(b), int64(len(b)), name)
	a := numpyAnswer{accept: f.Valid()}
	if !a.accept {
		return a
	}
	d := f.Data(bytes.NewReader(b))
	defer d.Close()
	for i, tn := range f.Tensors {
		begin, end := d.DataRange(i)
		buf := make([]byte, end-begin)
		if _, err := d.ReadAt(buf, begin); err != nil && err != io.EOF {
			t.Errorf("%s: reading %s: %v", name, tn.Name, err)
		}
		dims := make([]string, len(tn.Shape))
		for j, s := range tn.Shape {
			dims[j] = fmt.Sprint(s)
		}
		sum := sha256.Sum256(buf)
		a.arrays = append(a.arrays, fmt.Sprintf("%s=%s:%s:%s", tn.Name, numpyDType[tn.DType], strings.Join(dims, "x"), hex.EncodeToString(sum[:8])))
	}
	return a
}

// pythonWithNumPy returns a Python interpreter that imports numpy, or "".
func pythonWithNumPy() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import numpy").Run() == nil {
			return path
		}
	}
	return ""
}

const numpyRecord = "testdata/numpy-oracle.txt"

// askNumPy runs testdata/numpy_oracle.py on the cases and returns its output.
func askNumPy(t *testing.T, py string, cases map[string][]byte) []byte {
	dir := t.TempDir()
	names := make([]string, 0, len(cases))
	for name, b := range cases {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	cmd := exec.Command(py, append([]string{"testdata/numpy_oracle.py", dir}, names...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	return out
}

// parseNumPy reads the oracle's lines: the numpy version, and per file its answer (with the file's
// digest when the line is from the record).
func parseNumPy(t *testing.T, out []byte) (string, map[string]numpyAnswer) {
	version, answers := "", map[string]numpyAnswer{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0 || strings.HasPrefix(fields[0], "#"):
		case fields[0] == "numpy" && len(fields) == 2:
			version = fields[1]
		case len(fields) >= 2 && (fields[1] == "accept" || fields[1] == "reject"):
			a := numpyAnswer{accept: fields[1] == "accept"}
			if a.accept {
				a.arrays = fields[2:]
			}
			answers[fields[0]] = a
		default:
			t.Fatalf("cannot read the oracle's line %q", sc.Text())
		}
	}
	return version, answers
}

// TestNumPyOracle: stdiff's verdict on each NumPy case, and the arrays it lists (dtype, shape, values
// in little-endian order), are numpy.load(allow_pickle=False)'s as testdata/numpy-oracle.txt records
// them, so CI checks them where numpy is absent; where numpy is installed its live answers must match
// the record too. -update re-records the answers and refuses to run without numpy.
func TestNumPyOracle(t *testing.T) {
	cases := numpyCases()
	py := pythonWithNumPy()
	if *update {
		if py == "" {
			t.Fatal("-update needs numpy's own answers: install python3-numpy")
		}
		out := askNumPy(t, py, cases)
		var rec bytes.Buffer
		rec.WriteString("# numpy.load(allow_pickle=False) on the files of numpyCases (numpy_oracle_test.go), written by\n# go test ./canon/torch -run TestNumPyOracle -update. Each digest is of the array's little-endian values.\n")
		rec.Write(out)
		if err := os.WriteFile(numpyRecord, rec.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(numpyRecord)
	if err != nil {
		t.Fatal(err)
	}
	version, want := parseNumPy(t, b)
	if len(want) != len(cases) {
		t.Errorf("the record answers %d files, numpyCases has %d: run with -update where numpy is installed", len(want), len(cases))
	}
	if py != "" && !*update {
		liveVersion, live := parseNumPy(t, askNumPy(t, py, cases))
		for name, a := range live {
			if r, ok := want[name]; !ok || r.accept != a.accept || strings.Join(r.arrays, " ") != strings.Join(a.arrays, " ") {
				t.Errorf("%s: numpy %s says %v, the record (numpy %s) %v: re-record with -update", name, liveVersion, a, version, r)
			}
		}
	} else if py == "" {
		t.Logf("numpy is not installed: checking against the record of numpy %s only", version)
	}
	for name, b := range cases {
		w, ok := want[name]
		if !ok {
			continue
		}
		got := stdiffAnswer(t, name, b)
		if got.accept != w.accept || strings.Join(got.arrays, " ") != strings.Join(w.arrays, " ") {
			t.Errorf("%s: numpy %s: accept=%v %v; stdiff: valid=%v %v", name, version, w.accept, w.arrays, got.accept, got.arrays)
		}
	}
}
