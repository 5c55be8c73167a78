package canon_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"github.com/stdiff/stdiff/canon/torch"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// torchZip is a torch.save archive whose data.pkl is pkl, with storage "0" of 6 floats.
func torchZip(t *testing.T, pkl string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range [][2]string{{"m/data.pkl", pkl}, {"m/data/0", strings.Repeat("\x00", 24)}, {"m/version", "3\n"}} {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(e[1]))
	}
	w.Close()
	return buf.Bytes()
}

// TestReadTorch: Read recognises a torch.save archive by content, lists its tensors, and a hostile global is the verdict, with the global named in the finding and in check's JSON.
func TestReadTorch(t *testing.T) {
	x := func(s string) string { return "X" + string([]byte{byte(len(s)), 0, 0, 0}) + s }
	benign := "\x80\x02}(" + x("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" + x("storage") + "ctorch\nFloatStorage\n" +
		x("0") + x("cpu") + "K\x06tQK\x00K\x02K\x03\x86K\x03K\x01\x86\x89ccollections\nOrderedDict\n)RtR" + x("epoch") + "K\x02u."
	data := torchZip(t, benign)
	m := canon.ReadBytes("model.bin", data)
	if !m.Valid() || m.Format != canon.FormatPyTorch || len(m.Tensors) != 1 || m.Detail == nil {
		t.Fatalf("%+v", m)
	}
	tn := m.Tensors[0] // its bytes in the space of torch.Data, which reads them from the archive
	if tn.Name != "w" || tn.DType != "F32" || tn.Begin != 0 || tn.End != 24 || m.Detail.(*torch.File).Data(bytes.NewReader(data)).Size() != 24 {
		t.Errorf("%+v", tn)
	}
	if len(m.Metadata) != 1 || m.Metadata[0].Key != "epoch" || m.DataOffset() != 0 {
		t.Errorf("%+v", m.Metadata)
	}

	m = canon.ReadBytes("evil.pt", torchZip(t, "\x80\x02cos\nsystem\n"+x("id")+"\x85R."))
	if m.Valid() || m.RefErr.Kind != "pickle-unsafe-global" {
		t.Fatalf("%+v", m.RefErr)
	}
	b, _ := json.Marshal(m.Findings)
	if !strings.Contains(string(b), `"global":"os.system"`) {
		t.Errorf("%s", b)
	}
}
