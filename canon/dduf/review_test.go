package dduf

import (
	"bytes"
	"encoding/binary"
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
