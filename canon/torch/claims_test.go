package torch_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// claimSeeds are small files whose claimed sizes differ from the bytes they hold: a memo that shares
// long keys along many paths, a deflated pickle of memo'd lists or DUP'd items, a string claiming a
// terabyte, a central directory claiming more entries and bytes than the file has, .npy headers and
// shapes claiming more than is there.
func claimSeeds(t testing.TB) [][]byte {
	claimDir := torchw.ZipWith(torchw.StateDict(nil), false)
	eocd := bytes.LastIndex(claimDir, []byte("PK\x05\x06"))
	claimDir = append([]byte(nil), claimDir...)
	binary.LittleEndian.PutUint16(claimDir[eocd+10:], 0xFFFE)
	binary.LittleEndian.PutUint32(claimDir[eocd+12:], 0xF0000000)
	npy := func(dict string, hlen int) []byte {
		return npyWith(1, dict, hlen, make([]byte, 16))
	}
	return [][]byte{
		torchw.ZipWith(torchw.Fanout(torchw.TensorCall, 16, 64), false, "0", strings.Repeat("\x00", 16)),
		torchw.ZipWith(torchw.Fanout("N", 16, 64), true),
		torchw.ZipWith(torchw.MemoBomb(1<<16), true),
		torchw.ZipWith(torchw.AppendBomb(4, 1<<14), true),
		torchw.ZipWith(torchw.BigString(1<<40), false),
		legacyFile(torchw.BigString(1 << 40)),
		claimDir,
		npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 118),
		npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 20000),
		zipOf("w.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 118), true),
		zipOf("w.npy", npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", 118), true, "w.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 118), false),
	}
}

// claimAllocLimit is what reading a file of n bytes may allocate at most: its budget (what it keeps)
// twice over, for what is dropped as it goes, and the walk's paths.
func claimAllocLimit(n int) uint64 { return 2*(40<<20+16*uint64(n)) + 32<<20 + 8*uint64(n) }

// FuzzClaimedSizes feeds Read files whose sizes, counts and shapes claim more than the bytes present:
// never a panic, allocation within the file's budget (never a claimed size), every offset within the
// file, and the tensors' bytes readable.
func FuzzClaimedSizes(f *testing.F) {
	for _, s := range claimSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tf *torch.File
		if a := allocated(func() { tf = read(b) }); a > claimAllocLimit(len(b)) {
			t.Fatalf("%d bytes allocated for a %d-byte file", a, len(b))
		}
		d := tf.Data(bytes.NewReader(b))
		defer d.Close()
		p := make([]byte, min(d.Size(), 1<<16))
		d.ReadAt(p, 0)
	})
}

// TestClaimedSizes: each claim seed is read within its budget, and the hostile ones are refused or
// say they were not listed in full.
func TestClaimedSizes(t *testing.T) {
	for i, b := range claimSeeds(t) {
		var f *torch.File
		a := allocated(func() { f = read(b) })
		t.Logf("seed %d: %d bytes, %d allocated, valid %v, %d tensors", i, len(b), a, f.Valid(), len(f.Tensors))
		if a > claimAllocLimit(len(b)) {
			t.Errorf("seed %d: %d bytes allocated for a %d-byte file", i, a, len(b))
		}
		if i >= 2 && i <= 9 && f.Valid() {
			t.Errorf("seed %d: valid: %+v", i, f.Findings)
		}
	}
}
