package dduf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stdiff/stdiff/canon/dduf/ddufw"
)

// evilIndex is a model_index.json that names a component the benign one does not.
const evilIndex = `{"_class_name": "EvilPipeline", "unet": ["diffusers", "UNet2DConditionModel"]}`

// hostile are archives built to make readers disagree, each with the codes Read must find.
var hostile = []struct {
	name  string
	file  func() []byte
	codes []string
}{
	// Python's zipfile cuts a member's name at its first NUL (ZipInfo.__init__), so that
	// huggingface_hub's read_dduf_file, whose dict of entries keeps the last of a name, reads the
	// second model_index.json; stdiff read the first and called the file valid.
	{"nul-name", func() []byte {
		return edit(func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "model_index.json\x00.txt", Data: []byte(evilIndex)})
		})
	}, []string{CodeDuplicate, CodeEntryName}},
	{"nul-weights", func() []byte {
		return edit(func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "unet/diffusion_pytorch_model.safetensors\x00.json", Data: ddufw.Weights("unet", 2)})
		})
	}, []string{CodeDuplicate, CodeEntryName}},
	{"nul-alone", func() []byte {
		return edit(func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "unet/notes.txt\x00.json", Data: []byte("x")})
		})
	}, []string{CodeEntryName}},
	// CPython's zipfile (3.12 on) names a member by its Info-ZIP Unicode Path extra field (0x7075)
	// when the field's CRC is that of the raw name: the member "x.txt" is "model_index.json" to it.
	{"unicode-path-index", func() []byte {
		return edit(func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "x.txt", Extra: unicodePath("x.txt", "model_index.json"), Data: []byte(evilIndex)})
		})
	}, []string{CodeDuplicate, CodeEntryName}},
	{"unicode-path-same", func() []byte { // a field that names the member as its raw name does: nothing to say
		return edit(func(ms []ddufw.Member) []ddufw.Member {
			named(ms, "unet/config.json").Extra = unicodePath("unet/config.json", "unet/config.json")
			return ms
		})
	}, nil},
	{"unicode-path-other-crc", func() []byte { // a field whose CRC is not the raw name's: CPython ignores it
		return edit(func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "x.txt", Extra: unicodePath("y.txt", "model_index.json"), Data: []byte(evilIndex)})
		})
	}, nil},
}

// unicodePath is an Info-ZIP Unicode Path extra field (0x7075, version 1) naming a member name,
// with the CRC-32 of raw.
func unicodePath(raw, name string) []byte {
	b := binary.LittleEndian.AppendUint16(nil, 0x7075)
	b = binary.LittleEndian.AppendUint16(b, uint16(5+len(name)))
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE([]byte(raw)))
	return append(b, name...)
}

// TestReviewHostile: each hostile archive gives its codes and is invalid.
func TestReviewHostile(t *testing.T) {
	dump := os.Getenv("REVIEW_DUMP")
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			b := c.file()
			if dump != "" {
				os.WriteFile(filepath.Join(dump, c.name+".dduf"), b, 0o644)
			}
			f := Read(bytes.NewReader(b), int64(len(b)))
			if got := codesOf(f); !slices.Equal(got, c.codes) || f.Valid() != (len(c.codes) == 0) {
				t.Errorf("codes %v, want %v; valid %v; findings %+v", got, c.codes, f.Valid(), f.Findings)
			}
		})
	}
}

// eocdOf is the offset of the end of central directory record of a zip archive without a comment.
func eocdOf(b []byte) int { return len(b) - 22 }

// TestReviewDirectory: the central directory read as Python's zipfile reads it (huggingface_hub's
// read_dduf_file lists members with it): by the directory's size, not the count alone; a count of
// 0xFFFF without zip64 records is the count (Python writes one so for exactly 65,535 members); an
// empty archive named .dduf is a DDUF file without model_index.json.
func TestReviewDirectory(t *testing.T) {
	// The end record counts one entry fewer than the directory holds: Python's zipfile lists the
	// twelfth (vae's weights) as well, stdiff did not and called the pipeline valid without them.
	b := ddufw.Write(ddufw.Pipeline())
	e := eocdOf(b)
	n := binary.LittleEndian.Uint16(b[e+10:])
	binary.LittleEndian.PutUint16(b[e+8:], n-1)
	binary.LittleEndian.PutUint16(b[e+10:], n-1)
	if f := Read(bytes.NewReader(b), int64(len(b))); f.Valid() || !slices.Equal(codesOf(f), []string{"zip-malformed"}) {
		t.Errorf("count one short: valid %v, findings %+v", f.Valid(), f.Findings)
	}

	// 65,535 members, no zip64 records (as Python's zipfile writes them): valid, every member listed.
	ms := []ddufw.Member{{Name: IndexFile, Data: []byte(`{"_class_name": "Many"}`)}}
	for i := range 0xFFFF - 1 {
		ms = append(ms, ddufw.Member{Name: fmt.Sprintf("n%05d.txt", i)})
	}
	b = plainZip(ms)
	if f := Read(bytes.NewReader(b), int64(len(b))); !f.Valid() || len(f.Members) != 0xFFFF {
		t.Errorf("65,535 members without zip64: valid %v, %d members, findings %+v", f.Valid(), len(f.Members), f.Findings[:min(3, len(f.Findings))])
	}
	if dump := os.Getenv("REVIEW_DUMP"); dump != "" {
		os.WriteFile(filepath.Join(dump, "count-65535.dduf"), b, 0o644)
	}

	// An empty archive (its end record alone, 22 bytes) named .dduf: a DDUF file huggingface_hub
	// rejects (no model_index.json).
	empty := append([]byte("PK\x05\x06"), make([]byte, 18)...)
	if !Sniff(bytes.NewReader(empty), 22, "x.dduf") {
		t.Error("Sniff says no to an empty zip archive named .dduf")
	}
	if f := Read(bytes.NewReader(empty), 22); f.Valid() || !slices.Equal(codesOf(f), []string{CodeNoIndex}) {
		t.Errorf("empty archive: valid %v, findings %+v", f.Valid(), f.Findings)
	}
}

// plainZip is a stored zip archive of ms as Python's zipfile writes one: no zip64 records unless
// more than 65,535 entries (it writes none here), CRCs, no data descriptors.
func plainZip(ms []ddufw.Member) []byte {
	var b, cd []byte
	le16 := binary.LittleEndian.AppendUint16
	le32 := binary.LittleEndian.AppendUint32
	for _, m := range ms {
		off := len(b)
		crc := crc32.ChecksumIEEE(m.Data)
		b = le32(b, 0x04034b50)
		b = le16(le16(le16(le16(le16(b, 20), 0), 0), 0), 0)
		b = le32(le32(le32(b, crc), uint32(len(m.Data))), uint32(len(m.Data)))
		b = le16(le16(b, uint16(len(m.Name))), 0)
		b = append(append(b, m.Name...), m.Data...)
		cd = le32(cd, 0x02014b50)
		cd = le16(le16(le16(le16(le16(le16(cd, 20), 20), 0), 0), 0), 0)
		cd = le32(le32(le32(cd, crc), uint32(len(m.Data))), uint32(len(m.Data)))
		cd = le16(le16(le16(le16(le16(cd, uint16(len(m.Name))), 0), 0), 0), 0)
		cd = le32(le32(cd, 0), uint32(off))
		cd = append(cd, m.Name...)
	}
	cdOff := len(b)
	b = append(b, cd...)
	b = le32(b, 0x06054b50)
	b = le16(le16(le16(le16(b, 0), 0), uint16(len(ms))), uint16(len(ms)))
	b = le32(le32(b, uint32(len(cd))), uint32(cdOff))
	return le16(b, 0)
}

// TestReviewLikePython: archives whose end records Python's zipfile reads otherwise than stdiff
// (huggingface_hub lists DDUF members with it) are zip-malformed errors, not valid files whose
// pipeline is another one to Python. concat: a benign archive's entries and directory where the end
// record says, then a whole evil archive: Python shifts every offset by the bytes before the evil
// archive ("concat", data before a self-extracting zip) and reads EvilPipeline (checked with Python
// 3.11 and 3.13); stdiff read the benign directory and called the file valid.
func TestReviewLikePython(t *testing.T) {
	mk := func(index string, pad int) []byte {
		return ddufw.Write([]ddufw.Member{{Name: IndexFile, Data: []byte(index)}, {Name: "unet/config.json", Data: []byte("{}")},
			{Name: "unet/pad.txt", Data: bytes.Repeat([]byte("x"), pad)}})
	}
	benign := mk(`{"_class_name": "Benign", "unet": ["diffusers", "UNet2DConditionModel"]}`, 10)
	evil := mk(`{"_class_name": "EvilPipeline", "unet": ["diffusers", "UNet2DConditionModel"]}`, 5000)
	dir := func(b []byte) (int, int) {
		e := eocdOf(b)
		return int(binary.LittleEndian.Uint32(b[e+16:])), int(binary.LittleEndian.Uint32(b[e+12:]))
	}
	bo, bs := dir(benign)
	eo, es := dir(evil)
	if bs != es {
		t.Fatalf("directories of %d and %d bytes", bs, es)
	}
	concat := append(append(append(slices.Clip(benign[:bo]), make([]byte, eo-bo)...), benign[bo:bo+bs]...), evil...)
	if f := Read(bytes.NewReader(concat), int64(len(concat))); f.Valid() || f.Class != "Benign" || !slices.Contains(codesOf(f), "zip-malformed") {
		t.Errorf("concat: valid %v, class %q, findings %+v", f.Valid(), f.Class, f.Findings)
	}
	if dump := os.Getenv("REVIEW_DUMP"); dump != "" {
		os.WriteFile(filepath.Join(dump, "concat-go.dduf"), concat, 0o644)
	}

	// zip64 records before a plain end record (Python reads them whenever a locator sits before the
	// end record), naming another directory: here none (0 entries), which Python lists.
	b := slices.Clone(benign)
	e := eocdOf(b)
	rec := append([]byte("PK\x06\x06"), make([]byte, 52)...)
	binary.LittleEndian.PutUint64(rec[48:], uint64(bo)) // the directory's offset; 0 entries, 0 bytes
	loc := append([]byte("PK\x06\x07"), make([]byte, 16)...)
	binary.LittleEndian.PutUint64(loc[8:], uint64(e))
	binary.LittleEndian.PutUint32(loc[16:], 1)
	z := append(append(append(slices.Clip(b[:e]), rec...), loc...), b[e:]...)
	if f := Read(bytes.NewReader(z), int64(len(z))); f.Valid() || !slices.Contains(codesOf(f), "zip-malformed") {
		t.Errorf("zip64 records before a plain end record: valid %v, findings %+v", f.Valid(), f.Findings)
	}
	if dump := os.Getenv("REVIEW_DUMP"); dump != "" {
		os.WriteFile(filepath.Join(dump, "zip64-ignored.dduf"), z, 0o644)
	}
}

// TestReviewNonUTF8Name: a member name with bytes past ASCII and no UTF-8 flag is another name to
// Python's zipfile (it decodes such names as code page 437: "unet/café.txt" is "unet/caf├⌐.txt",
// checked with Python 3.11): dduf-entry-name, as a NUL is. With the flag (as Python's zipfile and
// archive/zip's CreateHeader write such names), valid.
func TestReviewNonUTF8Name(t *testing.T) {
	b := edit(func(ms []ddufw.Member) []ddufw.Member {
		return append(ms, ddufw.Member{Name: "unet/café.txt", Data: []byte("x")})
	})
	utf8Flag := func(set bool) { // in every local and central header
		for _, h := range []struct {
			sig string
			at  int
		}{{"PK\x03\x04", 7}, {"PK\x01\x02", 9}} {
			for i := 0; ; {
				j := bytes.Index(b[i:], []byte(h.sig))
				if j < 0 {
					break
				}
				if set {
					b[i+j+h.at] |= 0x08
				} else {
					b[i+j+h.at] &^= 0x08
				}
				i += j + 4
			}
		}
	}
	utf8Flag(true)
	if f := Read(bytes.NewReader(b), int64(len(b))); !f.Valid() {
		t.Fatalf("flagged UTF-8 name: %+v", f.Findings)
	}
	utf8Flag(false)
	if dump := os.Getenv("REVIEW_DUMP"); dump != "" {
		os.WriteFile(filepath.Join(dump, "cp437.dduf"), b, 0o644)
	}
	if f := Read(bytes.NewReader(b), int64(len(b))); f.Valid() || !slices.Equal(codesOf(f), []string{CodeEntryName}) {
		t.Errorf("unflagged name: valid %v, findings %+v", f.Valid(), f.Findings)
	}
}
