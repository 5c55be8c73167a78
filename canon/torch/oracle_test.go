package torch_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
)

// pythonWithTorch returns a Python interpreter that imports torch, or "" (Debian's python3-torch
// installs into /usr/bin/python3, which a pyenv shim may hide).
func pythonWithTorch() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import torch").Run() == nil {
			return path
		}
	}
	return ""
}

// TestOracle writes benign and hostile files with torch.save (testdata/oracle.py) and compares
// torch.load(weights_only=True)'s accept or reject with Valid, file by file. Nothing in the files
// runs: the test fails if the payloads' marker file appears.
func TestOracle(t *testing.T) {
	py := pythonWithTorch()
	if py == "" {
		t.Skip("no Python with torch (apt-get install python3-torch)")
	}
	dir := t.TempDir()
	cmd := exec.Command(py, "testdata/oracle.py", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	version := ""
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "torch" {
			version = fields[1]
			continue
		}
		if len(fields) < 2 {
			t.Fatalf("oracle says %q", sc.Text())
		}
		name, accept := fields[0], fields[1] == "accept"
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f := torch.Read(bytes.NewReader(b), int64(len(b)), name)
		want := accept
		switch {
		case name == "second-pickle-zip.pt":
			// torch.load reads only data.pkl; stdiff scans every pickle in the archive.
			want = false
		case name == "float-zip.pt" && strings.HasPrefix(version, "1."):
			// PyTorch 1.x's weights-only unpickler lacks BINFLOAT; stdiff follows PyTorch 2.x.
			want = true
		}
		if f.Valid() != want {
			t.Errorf("%s: torch %s says %s, stdiff valid=%v: %+v", name, version, fields[1], f.Valid(), f.Findings)
		}
		if !f.Valid() && !strings.Contains(name, "protocol4") && !strings.Contains(name, "second") && strings.HasPrefix(name, "system") {
			found := false
			for _, x := range f.Findings {
				found = found || (x.Code == torch.CodeUnsafeGlobal && (x.Global == "posix.system" || x.Global == "os.system"))
			}
			if !found {
				t.Errorf("%s: no pickle-unsafe-global for os.system: %+v", name, f.Findings)
			}
		}
		if strings.HasPrefix(name, "benign") && (len(f.Tensors) == 0 && !strings.HasSuffix(name, ".pkl")) {
			t.Errorf("%s: no tensors", name)
		}
		n++
	}
	if n < 15 {
		t.Fatalf("only %d files judged:\n%s", n, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatal("a payload ran")
	}
	t.Logf("torch %s: %d files, verdicts agree", version, n)
}

// TestOracleTensors: the tensors listed from real torch.save files in both formats have the names,
// dtypes, shapes, aliases and byte offsets torch gives them (the bytes at Offset are the values).
func TestOracleTensors(t *testing.T) {
	py := pythonWithTorch()
	if py == "" {
		t.Skip("no Python with torch (apt-get install python3-torch)")
	}
	dir := t.TempDir()
	script := `
import sys, collections, torch
d = collections.OrderedDict()
d["w"] = torch.arange(6, dtype=torch.float32).reshape(2, 3)
d["h"] = torch.arange(4, dtype=torch.float16)
d["tied"] = d["w"]
d["view"] = d["w"][1]
d["t"] = torch.arange(6, dtype=torch.int64).reshape(2, 3).t()
torch.save(d, sys.argv[1] + "/z.pt")
torch.save({"state_dict": d, "epoch": 5}, sys.argv[1] + "/l.pt", _use_new_zipfile_serialization=False)
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, name := range []string{"z.pt", "l.pt"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		f := torch.Read(bytes.NewReader(b), int64(len(b)), name)
		if !f.Valid() || len(f.Tensors) != 5 {
			t.Fatalf("%s: %+v", name, f)
		}
		got := map[string]torch.Tensor{}
		for _, tn := range f.Tensors {
			got[tn.Name] = tn
		}
		w, v, h, tt := got["w"], got["view"], got["h"], got["t"]
		if w.DType != "F32" || len(w.Shape) != 2 || w.Shape[1] != 3 || h.DType != "F16" || tt.DType != "I64" || tt.Contiguous {
			t.Errorf("%s: %+v", name, f.Tensors)
		}
		if len(w.Aliases) != 2 || v.StorageOffset != 3 || v.Offset != w.Offset+12 {
			t.Errorf("%s: w %+v view %+v", name, w, v)
		}
		// the bytes at w.Offset are 0.0 1.0 … 5.0 as little-endian float32
		if w.Offset < 0 || !bytes.Equal(b[w.Offset+4:w.Offset+8], []byte{0, 0, 0x80, 0x3f}) {
			t.Errorf("%s: bytes at %d are not w's", name, w.Offset)
		}
		if name == "l.pt" && (len(f.Metadata) != 1 || f.Metadata[0].Key != "epoch") {
			t.Errorf("%s: metadata %+v", name, f.Metadata)
		}
	}
}
