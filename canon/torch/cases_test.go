package torch_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"github.com/stdiff/stdiff/canon/finding"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
	"github.com/stdiff/stdiff/canon/zipdir"
)

func u32(n uint32) string {
	var x [4]byte
	binary.LittleEndian.PutUint32(x[:], n)
	return string(x[:])
}

func uni(s string) string { return "X" + u32(uint32(len(s))) + s }

// tensorPickle is a _rebuild_tensor_v2 call for an F32 tensor of shape (2, 3) on storage key.
func tensorPickle(key string) string {
	return "ctorch._utils\n_rebuild_tensor_v2\n((" + uni("storage") + "ctorch\nFloatStorage\n" + uni(key) + uni("cpu") +
		"K\x06tQK\x00K\x02K\x03\x86K\x03K\x01\x86\x89ccollections\nOrderedDict\n)RtR"
}

// stateDict is data.pkl of a state dict {"w": tensor on "0", "tied": the same tensor's storage, "epoch": 7}.
func stateDict() string {
	return "\x80\x02ccollections\nOrderedDict\n)R(" + uni("w") + tensorPickle("0") + uni("tied") + tensorPickle("0") +
		uni("epoch") + "K\x07u."
}

// evil is a pickle that would run os.system("touch pwned").
const evil = "\x80\x02cos\nsystem\nX\x0b\x00\x00\x00touch pwned\x85R."

// zipFile builds a torch.save-like archive from entries (name, content) under prefix "archive",
// with a version record after them unless one is given (PyTorch refuses an archive without).
func zipFile(t testing.TB, entries ...string) []byte {
	versioned := false
	for i := 0; i < len(entries); i += 2 {
		versioned = versioned || strings.EqualFold(entries[i], "version") || entries[i] == "-version"
	}
	if !versioned {
		entries = append(entries, "version", "3\n")
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i < len(entries); i += 2 {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: "archive/" + entries[i], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(entries[i+1]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func benignZip(t testing.TB) []byte {
	return zipFile(t, "data.pkl", stateDict(), "byteorder", "little", "data/0", strings.Repeat("\x00", 24), "version", "3\n")
}

// legacyFile builds torch.save's legacy format around an object pickle, with storage "0" of 6 floats.
func legacyFile(object string) []byte {
	var b strings.Builder
	b.WriteString("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")
	b.WriteString("\x80\x02M\xe9\x03.")
	b.WriteString("\x80\x02}(" + uni("protocol_version") + "M\xe9\x03" + uni("little_endian") + "\x88" + uni("type_sizes") + "}u.")
	b.WriteString(object)
	b.WriteString("\x80\x02]" + uni("0") + "a.")
	b.WriteString("\x06\x00\x00\x00\x00\x00\x00\x00" + strings.Repeat("\x00", 24))
	return []byte(b.String())
}

func read(b []byte) *torch.File { return torch.Read(bytes.NewReader(b), int64(len(b)), "test") }

func codes(f *torch.File) map[string]int {
	m := map[string]int{}
	for _, x := range f.Findings {
		m[x.Code]++
	}
	return m
}

func TestBenignZip(t *testing.T) {
	data := benignZip(t)
	f := read(data)
	if !f.Valid() || f.Format != torch.FormatZip || f.Prefix != "archive" || f.ByteOrder != "little" {
		t.Fatalf("%+v", f)
	}
	if len(f.Tensors) != 2 || f.Tensors[0].Name != "w" || f.Tensors[0].DType != "F32" || f.Tensors[0].Size != 24 {
		t.Fatalf("tensors %+v", f.Tensors)
	}
	off := bytes.Index(data, []byte("archive/data/0")) + len("archive/data/0")
	if f.Tensors[0].Offset != int64(off) {
		t.Errorf("offset %d, want %d", f.Tensors[0].Offset, off)
	}
	if len(f.Tensors[0].Aliases) != 1 || f.Tensors[0].Aliases[0] != "tied" || codes(f)[finding.CodeSharedStorage] != 1 {
		t.Errorf("aliases %v", f.Tensors[0].Aliases)
	}
	if len(f.Metadata) != 1 || f.Metadata[0] != (torch.Meta{Key: "epoch", Value: "7"}) {
		t.Errorf("metadata %+v", f.Metadata)
	}
}

func TestBenignLegacy(t *testing.T) {
	data := legacyFile(stateDict())
	f := read(data)
	if !f.Valid() || f.Format != torch.FormatLegacy || len(f.Tensors) != 2 {
		t.Fatalf("%+v", f)
	}
	if want := int64(len(data) - 24); f.Tensors[0].Offset != want || len(f.Storages) != 1 || f.Storages[0].Numel != 6 {
		t.Errorf("offset %d, want %d; storages %+v", f.Tensors[0].Offset, want, f.Storages)
	}
}

// TestStateDictUnwrapped: a single top-level state_dict is unwrapped; the other keys are metadata.
func TestStateDictUnwrapped(t *testing.T) {
	p := "\x80\x02}(" + uni("state_dict") + "}(" + uni("layer.w") + tensorPickle("0") + "u" + uni("global_step") + "M\x10\x27" + uni("name") + uni("run") + "u."
	f := read(zipFile(t, "data.pkl", p, "data/0", strings.Repeat("\x00", 24)))
	if !f.Valid() || len(f.Tensors) != 1 || f.Tensors[0].Name != "layer.w" {
		t.Fatalf("%+v", f)
	}
	if len(f.Metadata) != 2 || f.Metadata[0].Key != "global_step" || f.Metadata[0].Value != "10000" {
		t.Errorf("metadata %+v", f.Metadata)
	}
}

// TestHostile: a hostile global is found wherever it hides, named in the finding's Global, and
// makes the file invalid.
func TestHostile(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		code   string
		global string
		entry  string
	}{
		{"zip data.pkl", zipFile(t, "data.pkl", evil), finding.CodeUnsafeGlobal, "os.system", "archive/data.pkl"},
		{"zip second pickle", zipFile(t, "data.pkl", stateDict(), "data/0", strings.Repeat("\x00", 24), "extra.pkl", evil),
			finding.CodeUnsafeGlobal, "os.system", "archive/extra.pkl"},
		{"zip memo indirection", zipFile(t, "data.pkl", "\x80\x02cbuiltins\neval\nq\x010}h\x01"+uni("1")+"\x85R."),
			finding.CodeUnsafeGlobal, "builtins.eval", "archive/data.pkl"},
		{"legacy object", legacyFile(evil), finding.CodeUnsafeGlobal, "os.system", "object"},
		{"legacy sys info", func() []byte {
			b := legacyFile(stateDict())
			return bytes.Replace(b, []byte("\x80\x02}("), []byte("\x80\x02csubprocess\nPopen\n("), 1)
		}(), finding.CodeUnsafeGlobal, "subprocess.Popen", "system info"},
		{"bare pickle", []byte(evil), finding.CodeUnsafeGlobal, "os.system", ""},
		{"unknown class", zipFile(t, "data.pkl", "\x80\x02c__main__\nNet\n)\x81."), finding.CodeUnknownGlobal, "__main__.Net", "archive/data.pkl"},
		{"npy object array", []byte("\x93NUMPY\x01\x00\x76\x00{'descr': '|O', 'fortran_order': False, 'shape': (1,), }" +
			strings.Repeat(" ", 117-len("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }")) + "\n" + evil),
			finding.CodeUnsafeGlobal, "os.system", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := read(c.data)
			if f.Valid() {
				t.Fatalf("valid: %+v", f.Findings)
			}
			found := false
			for _, x := range f.Findings {
				if x.Code == c.code && x.Global == c.global {
					found = true
					if x.Entry != c.entry || x.Offset < 0 || x.Offset >= int64(len(c.data)) {
						t.Errorf("entry %q offset %d", x.Entry, x.Offset)
					}
				}
			}
			if !found {
				t.Errorf("no %s for %s in %+v", c.code, c.global, f.Findings)
			}
		})
	}
}

// TestZipDefects: a wrong CRC or unusual flag bits are warnings (PyTorch checks neither), and the
// scan goes on; a missing storage, a truncated archive or an entry outside the folder are errors.
func TestZipDefects(t *testing.T) {
	data := benignZip(t)
	// the central directory entry of data.pkl: flip its CRC and set flag bit 4
	cd := bytes.Index(data, []byte("PK\x01\x02"))
	bad := bytes.Clone(data)
	binary.LittleEndian.PutUint32(bad[cd+16:], crc32.ChecksumIEEE([]byte("x")))
	bad[cd+8] |= 1 << 4
	f := read(bad)
	c := codes(f)
	if c[finding.CodeZipBadCRC] != 1 || c[zipdir.CodeFlags] != 1 || len(f.Tensors) != 2 || !f.Valid() {
		t.Fatalf("%v %+v", c, f.Tensors)
	}
	// a missing storage and a truncated archive
	f = read(zipFile(t, "data.pkl", stateDict()))
	if codes(f)[finding.CodeStorageMissing] != 1 || f.Valid() {
		t.Errorf("%+v", f.Findings)
	}
	f = read(data[:len(data)-10])
	if codes(f)[zipdir.CodeMalformed] != 1 || f.Valid() {
		t.Errorf("%+v", f.Findings)
	}
	// an entry outside the folder
	f = read(func() []byte {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for _, n := range []string{"archive/data.pkl", "other/x"} {
			fw, _ := w.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
			fw.Write([]byte("\x80\x02}."))
		}
		w.Close()
		return buf.Bytes()
	}())
	if codes(f)[finding.CodeZipPrefix] != 1 {
		t.Errorf("%+v", f.Findings)
	}
}

// TestMalformedPickleOffset: a malformed pickle is an error at its byte offset in the file, naming
// the entry.
func TestMalformedPickleOffset(t *testing.T) {
	data := zipFile(t, "data.pkl", "\x80\x02K\x01R.")
	f := read(data)
	start := bytes.Index(data, []byte("\x80\x02K\x01R."))
	v := f.Verdict()
	if v == nil || v.Code != finding.CodeMalformedPickle || v.Offset != int64(start+4) || v.Entry != "archive/data.pkl" {
		t.Fatalf("%+v (pickle at %d)", v, start)
	}
}

func TestTorchScriptNamed(t *testing.T) {
	f := read(zipFile(t, "data.pkl", "\x80\x02}.", "constants.pkl", "\x80\x02).", "code/__torch__.py", "x"))
	if f.Format != torch.FormatTorchScript || codes(f)[finding.CodeTorchScript] != 1 {
		t.Fatalf("%+v", f)
	}
}

func TestLegacyStorageBounds(t *testing.T) {
	data := legacyFile(stateDict())
	// claim 2^61 elements for the storage
	bad := bytes.Clone(data)
	copy(bad[len(bad)-32:], "\x00\x00\x00\x00\x00\x00\x00\x20")
	if f := read(bad); codes(f)[finding.CodeTruncatedData] != 1 || f.Valid() {
		t.Fatalf("%+v", f.Findings)
	}
	// a tensor reaching past its storage: the storage holds 6 elements, the view needs them at offset 1
	bad = bytes.Replace(data, []byte("tQK\x00"), []byte("tQK\x01"), 1)
	if f := read(bad); codes(f)[finding.CodeTensorBounds] != 1 {
		t.Fatalf("%+v", f.Findings)
	}
}

func TestNPY(t *testing.T) {
	hdr := "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }"
	hdr += strings.Repeat(" ", 117-len(hdr)) + "\n"
	data := []byte("\x93NUMPY\x01\x00\x76\x00" + hdr + strings.Repeat("\x00", 12))
	f := read(data)
	if !f.Valid() || f.Format != torch.FormatNPY || len(f.Tensors) != 1 || f.ByteOrder != "big" {
		t.Fatalf("%+v", f)
	}
	tn := f.Tensors[0]
	if tn.DType != "I16" || tn.Offset != 128 || tn.Size != 12 || tn.Contiguous || tn.Stride[0] != 1 || tn.Stride[1] != 2 {
		t.Errorf("%+v", tn)
	}
	if f := read(data[:130]); codes(f)[finding.CodeTruncatedData] != 1 {
		t.Errorf("%+v", f.Findings)
	}
}

func allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

func allocLimit(n int) uint64 { return 1<<20 + 200*uint64(n) }

// seeds are small files of every format for the fuzz targets.
func seeds(t testing.TB) [][]byte {
	return [][]byte{benignZip(t), legacyFile(stateDict()), legacyFile(evil), zipFile(t, "data.pkl", evil, "x.pkl", evil), []byte(evil),
		[]byte("\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + strings.Repeat(" ", 60) + "\n\x00\x00\x00\x00\x00\x00\x00\x00")}
}

func fuzz(t *testing.T, b []byte) {
	var f *torch.File
	if a := allocated(func() { f = read(b) }); a > allocLimit(len(b)) {
		t.Fatalf("%d bytes allocated for a %d-byte file", a, len(b))
	}
	for _, x := range f.Findings {
		if x.Offset < -1 || x.Offset > int64(len(b)) {
			t.Fatalf("finding %+v outside the file", x)
		}
	}
	for _, tn := range f.Tensors {
		if tn.Offset >= 0 && (tn.Offset+tn.Size > int64(len(b)) || tn.Size < 0) {
			t.Fatalf("tensor %+v outside the file", tn)
		}
	}
	// the tensors' bytes can be read (the first 64 KiB of them) without a panic
	d := f.Data(bytes.NewReader(b))
	defer d.Close()
	p := make([]byte, min(d.Size(), 1<<16))
	if _, err := d.ReadAt(p, 0); err != nil && len(f.Tensors) > 0 && f.Valid() && !strings.Contains(err.Error(), "inflating") {
		t.Fatalf("reading the tensors of a valid file: %v", err)
	}
}

// FuzzZip feeds archives to Read: never a panic, allocation within allocLimit, every offset within the file.
func FuzzZip(f *testing.F) {
	for _, s := range seeds(f)[:1] {
		f.Add(s)
	}
	f.Add(zipFile(f, "data.pkl", evil, "x.pkl", evil))
	f.Fuzz(fuzz)
}

// FuzzLegacy feeds legacy checkpoints, bare pickles and .npy files to Read.
func FuzzLegacy(f *testing.F) {
	for _, s := range seeds(f)[1:] {
		f.Add(s)
	}
	f.Fuzz(fuzz)
}

// TestWalkBounded: a pickle whose memo makes a list of 20,000 references to a list of 20,000
// values (4·10^8 paths) is listed within a bounded number of visits, and says so.
func TestWalkBounded(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("\x80\x02]q\x00(")
	for i := 0; i < 20000; i++ {
		sb.WriteString("K\x01")
	}
	sb.WriteString("e0](")
	for i := 0; i < 20000; i++ {
		sb.WriteString("h\x00")
	}
	sb.WriteString("e.")
	f := read([]byte(sb.String()))
	if codes(f)[finding.CodeTreeTooLarge] != 1 {
		t.Fatalf("%v", codes(f))
	}
}

// TestDeepNesting: 10,000 nested lists are read (the machine keeps no recursion) and listed to MaxDepth.
func TestDeepNesting(t *testing.T) {
	data := []byte("\x80\x02" + strings.Repeat("]", 10000) + strings.Repeat("a", 9999) + ".")
	f := read(data)
	if codes(f)[finding.CodeTooDeep] != 1 || codes(f)[finding.CodeMalformedPickle] != 0 {
		t.Fatalf("%+v", f.Findings)
	}
}

func readAll(t *testing.T, f *torch.File, data []byte, i int) []byte {
	d := f.Data(bytes.NewReader(data))
	b, e := d.DataRange(i)
	out := make([]byte, e-b)
	// read in odd-sized pieces, backwards first, to exercise every path
	for off := int64(len(out)); off > 0; off -= 3 {
		lo := max(off-3, 0)
		if _, err := d.ReadAt(out[lo:off], b+lo); err != nil {
			t.Fatalf("read at %d: %v", b+lo, err)
		}
	}
	return out
}

// TestDataGathers: Data gives a strided tensor's bytes in row-major order (a Fortran-order array
// here), and a contiguous one's as they are in the file.
func TestDataGathers(t *testing.T) {
	hdr := "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }"
	hdr += strings.Repeat(" ", 117-len(hdr)) + "\n"
	data := []byte("\x93NUMPY\x01\x00\x76\x00" + hdr + "\x00\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00")
	f := read(data)
	if got, want := readAll(t, f, data, 0), []byte{0, 0, 2, 0, 4, 0, 1, 0, 3, 0, 5, 0}; !bytes.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	z := benignZip(t)
	f = read(z)
	if d := f.Data(bytes.NewReader(z)); d.Size() != 48 {
		t.Fatalf("size %d", d.Size())
	}
}

// TestDataInflates: a deflated .npz entry's array is inflated as it is read, in any order.
func TestDataInflates(t *testing.T) {
	hdr := "{'descr': '<u1', 'fortran_order': False, 'shape': (300,), }"
	hdr += strings.Repeat(" ", 117-len(hdr)) + "\n"
	arr := make([]byte, 300)
	for i := range arr {
		arr[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, _ := w.CreateHeader(&zip.FileHeader{Name: "x.npy", Method: zip.Deflate})
	fw.Write(append([]byte("\x93NUMPY\x01\x00\x76\x00"+hdr), arr...))
	w.Close()
	data := buf.Bytes()
	f := read(data)
	if f.Format != torch.FormatNPZ || len(f.Tensors) != 1 || !f.Valid() {
		t.Fatalf("%+v", f)
	}
	if got := readAll(t, f, data, 0); !bytes.Equal(got, arr) {
		t.Fatalf("%v", got)
	}
}

// TestProtocol0: pickles of protocol 0 and 1, which have no PROTO opcode, are recognised by reading
// them: a legacy checkpoint written with pickle_protocol=0 and a bare hostile pickle.
// (canon.Read asks SniffReader for files whose first bytes Candidate accepts.)
func TestProtocol0(t *testing.T) {
	legacy0 := "L119547037146038801333356L\n.I1001\n.(dp0\nVlittle_endian\np1\nI01\ns.(dp0\nVepoch\np1\nI3\ns.(lp0\n."
	evil0 := "cos\nsystem\np0\n(Vtouch pwned\np1\ntp2\nRp3\n."
	for _, c := range []struct {
		data   string
		format torch.Format
	}{{legacy0, torch.FormatLegacy}, {evil0, torch.FormatPickle}, {"(not a pickle)", ""}} {
		got, ok := torch.SniffReader(strings.NewReader(c.data), int64(len(c.data)))
		if got != c.format || ok != (c.format != "") {
			t.Errorf("%q: %q %v, want %q", c.data, got, ok, c.format)
		}
	}
	// read, but refused: the weights-only unpickler has none of protocol 0's text opcodes
	if f := read([]byte(legacy0)); f.Valid() || f.Format != torch.FormatLegacy || len(f.Metadata) != 1 || codes(f)[finding.CodeUnsupportedOpcode] == 0 {
		t.Errorf("%+v", f)
	}
	if f := read([]byte(evil0)); f.Valid() || codes(f)[finding.CodeUnsafeGlobal] != 1 {
		t.Errorf("%+v", f.Findings)
	}
}
