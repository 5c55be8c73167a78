package torchw

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"strings"
)

// The files below claim far more than they hold: readers that trust a size, count or shape from a file
// before checking it against the bytes present (and a budget) take gigabytes or minutes on them.

// ZipWith is a torch.save-like archive under prefix "archive" holding data.pkl (deflated when
// deflate is set) and the named storages, stored.
func ZipWith(dataPkl string, deflate bool, storages ...string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	m := zip.Store
	if deflate {
		m = zip.Deflate
	}
	fw, _ := w.CreateHeader(&zip.FileHeader{Name: "archive/data.pkl", Method: m})
	fw.Write([]byte(dataPkl))
	for i := 0; i+1 < len(storages); i += 2 {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: "archive/data/" + storages[i], Method: zip.Store})
		fw.Write([]byte(storages[i+1]))
	}
	fw, _ = w.CreateHeader(&zip.FileHeader{Name: "archive/version", Method: zip.Store})
	fw.Write([]byte("3\n"))
	w.Close()
	return buf.Bytes()
}

func longGet(i int) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(i))
	return string(b[:])
}

// Fanout is a pickle whose memo shares each level of a tree of depth levels with both keys of the
// level above (keys of keyLen bytes): 2^depth paths to leaf, each a name of depth·keyLen bytes, in a
// pickle of about 2·depth·keyLen bytes.
func Fanout(leaf string, depth, keyLen int) string {
	var sb strings.Builder
	sb.WriteString("\x80\x02" + leaf + "r" + longGet(0))
	a, b := Str(strings.Repeat("a", keyLen)), Str(strings.Repeat("b", keyLen))
	for i := 1; i <= depth; i++ {
		sb.WriteString("}(" + a + "j" + longGet(i-1) + b + "j" + longGet(i-1) + "u" + "r" + longGet(i))
	}
	sb.WriteString(".")
	return sb.String()
}

// TensorCall is the pickle of one F32 tensor of 4 elements on storage "0" (16 bytes).
const TensorCall = "ctorch._utils\n_rebuild_tensor_v2\n((" + "X\x07\x00\x00\x00storage" + "ctorch\nFloatStorage\n" +
	"X\x01\x00\x00\x000" + "X\x03\x00\x00\x00cpu" + "K\x04tQ" + "K\x00" + "K\x04\x85" + "K\x01\x85" + "\x89" +
	"ccollections\nOrderedDict\n)R" + "tR"

// MemoBomb is a pickle (protocol 4) of n empty lists, each kept in the memo by MEMOIZE: n objects
// from 2n bytes, which deflate makes a few kilobytes.
func MemoBomb(n int) string {
	return "\x80\x04" + strings.Repeat("]\x94", n) + "N."
}

// AppendBomb is a pickle of lists lists of n items each (one None, DUP'd), kept in the memo: 8·n·lists
// bytes of items from about n·lists bytes of pickle, which deflate makes a few kilobytes.
func AppendBomb(lists, n int) string {
	var sb strings.Builder
	sb.WriteString("\x80\x02")
	for i := range lists {
		sb.WriteString("]r" + longGet(i) + "(N" + strings.Repeat("2", n) + "e0")
	}
	sb.WriteString("N.")
	return sb.String()
}

// BigString is a pickle holding one BINBYTES8 that claims n bytes, of which the pickle holds none.
func BigString(n uint64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], n)
	return "\x80\x04\x8e" + string(b[:]) + "."
}
