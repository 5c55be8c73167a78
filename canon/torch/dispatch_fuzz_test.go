package torch_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/torch"
)

// zipNames are the names FuzzDispatch draws zip entries from: torch's records, their case variants,
// exact duplicates (a name drawn twice), other pickles and entries outside the folder.
var zipNames = []string{"archive/data.pkl", "archive/DATA.PKL", "archive/Data.Pkl", "archive/data/0", "archive/DATA/0",
	"archive/version", "archive/byteorder", "archive/x.PKL", "archive/constants.pkl", "other/data.pkl", "data.pkl"}

var tarNames = []string{"\x80\x02}.", "pickle", "storages", "tensors", "sys_info", "x.pkl", "data"}

// FuzzDispatch draws zip archives (with colliding names), tar archives, legacy files and bare
// pickles of protocols 0 to 5 around pickles from the corpus, and checks that reading never panics
// and that every pickle the dispatch hands torch, or another loader could read, is scanned: each
// .pkl entry archive/zip lists (whatever its case) is a scanned pickle or named in a finding, a tar
// is refused, and a valid bare or legacy file had its first pickle scanned.
func FuzzDispatch(f *testing.F) {
	for _, p := range []string{evil, stateDict(), "\x80\x02}.", "cos\nsystem\n(S'x'\ntR.", "(dp0\nVa\np1\nI1\ns.",
		"\x80\x01}q\x00.", "\x80\x03}q\x00.", "\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94.", "\x80\x05N.", "N.", "I7\n.",
		"Vos\nVsystem\n\x93(Vx\ntR."} {
		for kind := byte(0); kind < 4; kind++ {
			f.Add(kind, []byte{0, 1, 3}, []byte(p))
		}
	}
	f.Add(byte(0), []byte{0, 1, 1, 3, 4}, []byte(evil))
	f.Fuzz(func(t *testing.T, kind byte, pick []byte, payload []byte) {
		if len(pick) > 16 || len(payload) > 1<<16 {
			return
		}
		var data []byte
		switch kind % 4 {
		case 0:
			var buf bytes.Buffer
			w := zip.NewWriter(&buf)
			for i, c := range pick {
				fw, err := w.CreateHeader(&zip.FileHeader{Name: zipNames[int(c)%len(zipNames)], Method: zip.Store})
				if err != nil {
					return
				}
				if i%2 == 0 {
					fw.Write(payload)
				} else {
					fw.Write([]byte(evil))
				}
			}
			w.Close()
			data = buf.Bytes()
		case 1:
			var buf bytes.Buffer
			w := tar.NewWriter(&buf)
			for _, c := range pick {
				n := tarNames[int(c)%len(tarNames)]
				if w.WriteHeader(&tar.Header{Name: n, Size: int64(len(payload)), Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatGNU}) != nil {
					return
				}
				w.Write(payload)
			}
			w.Close()
			data = buf.Bytes()
		case 2:
			data = legacyFile(string(payload))
		default:
			data = payload
		}
		file := torch.Read(bytes.NewReader(data), int64(len(data)), "fuzz")
		scanned := map[string]bool{}
		for _, p := range file.Pickles {
			scanned[p.Entry] = true
		}
		for _, x := range file.Findings {
			scanned[x.Entry] = true
		}
		switch {
		case bytes.HasPrefix(data, []byte("PK\x03\x04")):
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				return
			}
			for _, e := range zr.File {
				if strings.HasSuffix(strings.ToLower(e.Name), ".pkl") && !scanned[e.Name] && file.Valid() {
					t.Fatalf("%s is neither scanned nor named, and the file is valid: %+v", e.Name, file.Findings)
				}
			}
		case kind%4 == 1 && len(pick) > 0:
			if file.Format != torch.FormatTar || file.Valid() {
				t.Fatalf("a tar is %s, valid %v", file.Format, file.Valid())
			}
		case file.Valid() && file.Format != torch.FormatNPY && file.Format != torch.FormatTar:
			if len(file.Pickles) == 0 || file.Pickles[0].Offset != 0 || !file.Pickles[0].WeightsOnly {
				t.Fatalf("valid, but the first pickle was not scanned: %+v", file.Pickles)
			}
		}
		for _, p := range file.Pickles {
			for _, g := range p.Globals {
				if g.Class != 0 && file.Valid() {
					t.Fatalf("valid with %s named", g.FullName())
				}
			}
		}
	})
}
