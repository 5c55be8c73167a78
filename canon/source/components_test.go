package source

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/stfile"
)

// TestJoinComponents: components joined are one model whose tensors, metadata, shards and findings
// are named after their component, whose bytes are each component's, and whose verdict is the first
// rejected component's.
func TestJoinComponents(t *testing.T) {
	unet := stfile.File{Seed: 1, Metadata: []stfile.KV{{Key: "format", Value: "pt"}},
		Tensors: []stfile.Tensor{{Name: "conv_in.weight", DType: "F32", Shape: []uint64{2, 2}}}}
	vae := stfile.File{Seed: 2, Tensors: []stfile.Tensor{{Name: "dec.weight", DType: "F16", Shape: []uint64{3}}}}
	var parts []Component
	var raw [][]byte
	for _, c := range []struct {
		name string
		b    []byte
	}{{"unet", unet.Build()}, {"vae", vae.NulPadded()}} {
		m, err := canon.Read(bytes.NewReader(c.b), int64(len(c.b)), c.name+".safetensors")
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, Component{Name: c.name, File: "diffusion_pytorch_model.safetensors", Model: m, Source: memSource{bytes.NewReader(c.b), c.name}})
		raw = append(raw, c.b[m.DataOffset():])
	}
	m, set := JoinComponents("pipe", parts)
	if m.Tensors[0].Name != "unet/conv_in.weight" || m.Tensors[1].Name != "vae/dec.weight" {
		t.Errorf("tensors %+v", m.Tensors)
	}
	if v, _ := m.Meta("unet/format"); v != "pt" {
		t.Errorf("metadata %+v", m.Metadata)
	}
	if got := m.TensorShards(); !slices.Equal(got, []string{"unet/diffusion_pytorch_model.safetensors", "vae/diffusion_pytorch_model.safetensors"}) {
		t.Errorf("shards %q", got)
	}
	if m.Valid() || !strings.HasPrefix(m.RefErr.Message, "vae/") || len(m.Findings) == 0 || !strings.HasPrefix(m.Findings[0].Message, "vae: ") {
		t.Errorf("verdict %+v, findings %+v", m.RefErr, m.Findings)
	}
	for i, tn := range m.Tensors {
		got := make([]byte, tn.Len())
		if _, err := set.ReadAt(got, int64(tn.Begin)); err != nil {
			t.Fatal(err)
		}
		if want := raw[i][:tn.Len()]; !bytes.Equal(got, want) {
			t.Errorf("%s reads %x, want %x", tn.Name, got, want)
		}
	}
}

// TestJoinMissingComponent: a missing component, first or not, is a shard with Missing set where it
// would be and an error naming its file; the format and bytes are the components' that were read.
func TestJoinMissingComponent(t *testing.T) {
	b := stfile.File{Tensors: []stfile.Tensor{{Name: "dec.weight", DType: "F16", Shape: []uint64{3}}}}.Build()
	vm, err := canon.Read(bytes.NewReader(b), int64(len(b)), "vae.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	m, set := JoinComponents("pipe", []Component{{Name: "unet", File: "diffusion_pytorch_model.safetensors", Missing: "a link to ../b0, which is not there"},
		{Name: "vae", File: "diffusion_pytorch_model.safetensors", Model: vm, Source: memSource{bytes.NewReader(b), "vae"}}})
	if !slices.Equal(m.MissingShards(), []string{"unet/diffusion_pytorch_model.safetensors"}) || len(m.Shards) != 2 || m.Format != canon.FormatSafetensors ||
		len(m.Tensors) != 1 || set.Size() != vm.DataLen() || !m.Valid() || !m.HasErrors() {
		t.Fatalf("shards %+v, format %q, tensors %+v", m.Shards, m.Format, m.Tensors)
	}
	if f := m.Findings[0]; f.Code != canon.CodeMissingComponent || f.Severity != finding.SevError || f.Offset != -1 ||
		f.Message != "unet/diffusion_pytorch_model.safetensors is missing (a link to ../b0, which is not there): the tensors of component unet are unknown" {
		t.Errorf("finding %+v", f)
	}
}

// memSource is bytes in memory as a Source.
type memSource struct {
	*bytes.Reader
	name string
}

func (s memSource) Name() string { return s.name }
