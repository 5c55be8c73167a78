package torch_test

import (
	"bytes"
	"encoding/binary"
	"flag"
	"github.com/stdiff/stdiff/canon/finding"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

var update = flag.Bool("update", false, "re-record testdata/oracle-verdicts.txt and the files in testdata/oracle with Debian's python3-torch (testdata/oracle.py), and testdata/numpy-oracle.txt with python3-numpy")

const (
	oracleDir      = "testdata/oracle"
	oracleVerdicts = "testdata/oracle-verdicts.txt"
)

// divergences are the files on which stdiff's verdict is knowingly not that of the recorded torch,
// with the reason: the recorded torch is Debian's (1.13), and stdiff follows torch ≥ 2.10's rules,
// read in its source (torch/serialization.py, torch/_weights_only_unpickler.py, torch/csrc).
var divergences = map[string]struct {
	valid bool
	why   string
}{
	"second-pickle-zip.pt":    {false, "torch.load reads only data.pkl; stdiff scans every pickle in the archive"},
	"float-zip.pt":            {true, "PyTorch 1.x's weights-only unpickler lacks BINFLOAT; 2.x has it"},
	"builtin-set.pkl":         {true, "builtins.set is in the allowlist since 2.x, __builtin__ renamed by IMPORT_MAPPING"},
	"setitem-tensor-zip.pt":   {false, "2.10 refuses SETITEM on anything but dict, OrderedDict, Counter (_check_set_item_target, pytorch#170085)"},
	"size-larger-zip.pt":      {false, "2.10 refuses a storage record of another size than declared (CVE-2026-24747, pytorch#165553)"},
	"size-smaller-zip.pt":     {false, "2.10 refuses a storage record of another size than declared (CVE-2026-24747, pytorch#165553)"},
	"torchscript.pt":          {false, "2.6 refuses TorchScript under weights_only (CVE-2025-32434); 1.13 ran torch.jit.load"},
	"case-lower-upper-zip.pt": {false, "names equal but for case: loaders disagree on which member they read (zip-duplicate-name)"},
	"case-upper-lower-zip.pt": {false, "names equal but for case (zip-duplicate-name)"},
	"case-three-zip.pt":       {false, "names equal but for case (zip-duplicate-name)"},
	"case-evil-upper-zip.pt":  {false, "names equal but for case, one of them hostile (zip-duplicate-name, pickle-unsafe-global)"},
	"case-storage-zip.pt":     {false, "storage names equal but for case (zip-duplicate-name)"},
	"dup-exact-zip.pt":        {false, "two entries of one name (zip-duplicate-name)"},
}

// TestOracle compares Valid with torch.load(weights_only=True)'s accept or reject (numpy.load's
// for NumPy files, the weights-only unpickler's for bare pickles), as recorded in
// testdata/oracle-verdicts.txt for the files in testdata/oracle, file by file, and the member torch
// read where two names collide (which data.pkl, which storage) with the one stdiff lists first.
// -update re-records both with Debian's python3-torch and refuses to run without it.
func TestOracle(t *testing.T) {
	if *update {
		recordOracle(t)
	}
	b, err := os.ReadFile(oracleVerdicts)
	if err != nil {
		t.Fatal(err)
	}
	version, n := "", 0
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if v, ok := strings.CutPrefix(line, "torch "); ok {
			version = v
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 2 {
			t.Fatalf("oracle says %q", line)
		}
		name, accept, detail := fields[0], fields[1] == "accept", ""
		if len(fields) > 2 {
			detail = fields[2]
		}
		data, err := os.ReadFile(filepath.Join(oracleDir, name))
		if err != nil {
			t.Fatal(err)
		}
		f := torch.Read(bytes.NewReader(data), int64(len(data)), name)
		want := accept
		if d, ok := divergences[name]; ok {
			want = d.valid
		}
		if f.Valid() != want {
			t.Errorf("%s: torch %s says %s, stdiff valid=%v: %+v", name, version, fields[1], f.Valid(), f.Findings)
		}
		if entry, ok := strings.CutPrefix(detail, "which="); ok && strings.Contains(entry, "/") && (len(f.Pickles) == 0 || f.Pickles[0].Entry != entry) {
			t.Errorf("%s: torch read %s, stdiff %+v", name, entry, f.Pickles)
		}
		if w0, ok := strings.CutPrefix(detail, "w0="); ok && strings.HasSuffix(name, "-zip.pt") && len(f.Storages) > 0 && f.Storages[0].Offset >= 0 {
			got := math.Float32frombits(binary.LittleEndian.Uint32(data[f.Storages[0].Offset:]))
			if want, _ := strconv.ParseFloat(w0, 32); float64(got) != want && !strings.Contains(name, "setitem") {
				t.Errorf("%s: torch read w[0] = %s, stdiff's storage holds %v", name, w0, got)
			}
		}
		if !f.Valid() && strings.HasPrefix(name, "system") && !strings.Contains(name, "protocol4") {
			found := false
			for _, x := range f.Findings {
				found = found || (x.Code == finding.CodeUnsafeGlobal && (x.Global == "posix.system" || x.Global == "os.system"))
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
	if n < 40 {
		t.Fatalf("only %d files judged", n)
	}
	t.Logf("torch %s: %d files, verdicts agree (%d known divergences)", version, n, len(divergences))
}

// recordOracle runs testdata/oracle.py with Debian's torch into testdata/oracle and writes its
// verdicts; nothing in the files runs (the test fails if the payloads' marker file appears).
func recordOracle(t *testing.T) {
	py := pythonWithTorch()
	if py == "" {
		t.Fatal("-update needs Python with torch (apt-get install python3-torch): the recorded verdicts are the oracle's, never written by hand")
	}
	os.RemoveAll(oracleDir)
	if err := os.MkdirAll(oracleDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/oracle.py", oracleDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	if _, err := os.Stat(filepath.Join(oracleDir, "PWNED")); err == nil {
		t.Fatal("a payload ran")
	}
	head := "# torch.load(weights_only=True)'s verdicts on the files in testdata/oracle (numpy.load's for NumPy, the\n" +
		"# weights-only unpickler's for bare pickles), as testdata/oracle.py writes and judges them with Debian's\n" +
		"# python3-torch. name<TAB>accept|reject<TAB>what torch read or the exception's type.\n" +
		"# Re-record: go test ./canon/torch -run TestOracle -update\n"
	if err := os.WriteFile(oracleVerdicts, append([]byte(head), out...), 0o644); err != nil {
		t.Fatal(err)
	}
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
