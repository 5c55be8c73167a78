//go:build unix

package act

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// The classes of files TestDupesNeverDeleteTheLastCopy adds with addValues: files whose information is
// their values read right, beside files that hold the same bytes or the same values (issue 31):
//   - byte orders: a big-endian .npy ('>f4') or a .pt whose archive/byteorder is "big", beside a
//     little-endian .npy or safetensors file of the same bytes (other values) and one of the same values
//     (a true content copy);
//   - colliding zip names: a torch.save archive with two entries of one name, or of names equal but for
//     case (archive/data/0 and archive/DATA/0), beside a safetensors file of the tensor one of the
//     entries holds; the reader marks it invalid (zip-duplicate-name), so its information is its bytes;
//   - deflated strided views: .pt files whose tensor is a transposed view (a storage offset, column-major
//     strides) of a deflated storage, of values that differ by one element, and a contiguous
//     safetensors file of the same values as one of them;
//
// and byte copies of each. Each file's information is a key: its values in their byte order (dtype,
// shape and the values' little-endian bytes), or its bytes for an archive no loader agrees on. After
// --delete and --link every key still has a file under the collection's folder whose bytes hold it
// (checkValues): a file that is not a true copy of another is never deleted nor linked away.

// f32Bytes is vs as float32 in byte order o.
func f32Bytes(o binary.ByteOrder, vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		o.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// swap4 is b with every 4-byte word reversed: float32 bytes in the other byte order.
func swap4(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+3 < len(b); i += 4 {
		out[i], out[i+1], out[i+2], out[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return out
}

// valueKey is the information of a float32 tensor of shape whose values, little-endian, are le.
func valueKey(shape []uint64, le []byte) string { return fmt.Sprintf("F32 %v %x", shape, le) }

// npyF32 is an .npy file of one float32 tensor of shape holding data, in byte order '<' or '>'.
func npyF32(order byte, shape []uint64, data []byte) []byte {
	b := torchw.NPY(torchw.Tensor{DType: "F32", Shape: shape, Data: data})
	return bytes.Replace(b, []byte("'<f4'"), []byte{'\'', order, 'f', '4', '\''}, 1)
}

// stF32 is a safetensors file of one float32 tensor "w" of shape holding le.
func stF32(shape []uint64, le []byte) []byte {
	return stfile.File{Tensors: []stfile.Tensor{{Name: "w", DType: "F32", Shape: shape, Data: le}}}.Build()
}

// ptEntry is a zip entry of ptArchive: its name under archive/, content and whether it is deflated.
type ptEntry struct {
	name, content string
	deflate       bool
}

// ptArchive is a torch.save archive of the tensor t ("w", F32, its storage "0") whose entries after
// data.pkl are byteorder, then entries (the storages), then version.
func ptArchive(byteorder string, t torchw.Tensor, entries ...ptEntry) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	add := func(e ptEntry) {
		m := zip.Store
		if e.deflate {
			m = zip.Deflate
		}
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: "archive/" + e.name, Method: m})
		fw.Write([]byte(e.content))
	}
	add(ptEntry{name: "data.pkl", content: torchw.StateDict([]torchw.Tensor{t})})
	add(ptEntry{name: "byteorder", content: byteorder})
	for _, e := range entries {
		add(e)
	}
	add(ptEntry{name: "version", content: "3\n"})
	w.Close()
	return buf.Bytes()
}

// valueFile writes b at path and records the information it holds.
func (c *collection) valueFile(path string, b []byte, key string) {
	mustWrite(c.t, path, b)
	if c.values == nil {
		c.values = map[[32]byte]string{}
	}
	c.values[sha256.Sum256(b)] = key
	c.valuePaths = append(c.valuePaths, path)
	c.scanned = append(c.scanned, path)
}

// addValues makes one random addition of the classes above.
func (c *collection) addValues() {
	n := float32(c.n)
	switch op := c.rng.IntN(4); {
	case op == 0: // byte orders
		shape := []uint64{4}
		le := f32Bytes(binary.LittleEndian, 1, -2.5, 3e7, n+0.125)
		be := swap4(le)
		if c.rng.IntN(2) == 0 {
			c.valueFile(c.next("be")+".npy", npyF32('>', shape, be), valueKey(shape, le))
		} else {
			c.valueFile(c.next("be")+".pt", ptArchive("big", torchw.Tensor{Name: "w", DType: "F32", Shape: shape, Data: be}, ptEntry{name: "data/0", content: string(be)}), valueKey(shape, le))
		}
		if c.rng.IntN(2) == 0 { // the same bytes, little-endian: other values
			c.valueFile(c.next("samebytes")+".npy", npyF32('<', shape, be), valueKey(shape, be))
		} else {
			c.valueFile(c.next("samebytes")+".safetensors", stF32(shape, be), valueKey(shape, be))
		}
		switch c.rng.IntN(3) { // the same values, little-endian (a true content copy), or big-endian
		case 0:
			c.valueFile(c.next("samevalues")+".npy", npyF32('<', shape, le), valueKey(shape, le))
		case 1:
			c.valueFile(c.next("samevalues")+".safetensors", stF32(shape, le), valueKey(shape, le))
		}
	case op == 1: // a checkpoint whose entries collide, beside a safetensors file of one entry's tensor
		shape := []uint64{6}
		a := f32Bytes(binary.LittleEndian, 1, 2, 3, 4, 5, n)
		b := f32Bytes(binary.LittleEndian, 6, 5, 4, 3, 2, n)
		second := []string{"data/0", "DATA/0", "Data/0"}[c.rng.IntN(3)]
		pt := ptArchive("little", torchw.Tensor{Name: "w", DType: "F32", Shape: shape, Data: a},
			ptEntry{name: "data/0", content: string(a)}, ptEntry{name: second, content: string(b)})
		c.valueFile(c.next("collide")+".pt", pt, fmt.Sprintf("bytes %x", sha256.Sum256(pt)))
		twin := [][]byte{a, b}[c.rng.IntN(2)]
		c.valueFile(c.next("entry")+".safetensors", stF32(shape, twin), valueKey(shape, twin))
	case op == 2: // deflated strided views of values that differ in one element, and a contiguous file
		shape := []uint64{2, 3}
		view := func(last float32) []byte {
			le := f32Bytes(binary.LittleEndian, 1, 2, 3, 4, n, last)
			t := torchw.Strided(torchw.Tensor{Name: "w", DType: "F32", Shape: shape, Data: le}, 2)
			pt := ptArchive("little", t, ptEntry{name: "data/0", content: string(t.Data), deflate: true})
			c.valueFile(c.next("view")+".pt", pt, valueKey(shape, le))
			return le
		}
		le := view(6)
		view(7)
		if c.rng.IntN(2) == 0 {
			c.valueFile(c.next("contiguous")+".safetensors", stF32(shape, le), valueKey(shape, le))
		}
	default: // a byte copy of one of them
		if len(c.valuePaths) == 0 {
			return
		}
		from := c.pick(c.valuePaths)
		b, _ := os.ReadFile(from)
		p := c.next("valuecopy") + from[strings.LastIndex(from, "."):]
		c.valueFile(p, b, c.values[sha256.Sum256(b)])
		c.copies = append(c.copies, [2]string{from, p})
	}
}

// valueKeys is the information of every file of addValues that exists.
func (c *collection) valueKeys() map[string]string {
	out := map[string]string{}
	for sum, p := range contentsUnder(c.t, c.dir) {
		if k, ok := c.values[sum]; ok {
			out[k] = p
		}
	}
	return out
}

// checkValues checks that every piece of information of before is still held whole by some file
// after act.
func (c *collection) checkValues(before map[string]string, act string) {
	c.t.Helper()
	now := c.valueKeys()
	for k, p := range before {
		if _, ok := now[k]; !ok {
			c.t.Errorf("after %s no file holds the information of %s (%s)", act, p, k)
		}
	}
}
