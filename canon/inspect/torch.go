package inspect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/pickle"
	"github.com/stdiff/stdiff/canon/torch"
)

// PyTorch is what a PyTorch checkpoint or NumPy file says besides its tensors: its container, what kind
// of checkpoint it is, the pickles in it and the globals they name, tied weights.
type PyTorch struct {
	// Container is the file's format: pytorch-zip, pytorch-legacy, pickle, npy, npz…
	Container string `json:"container"`
	// Kind is what the checkpoint is, from its top-level keys: lightning (a PyTorch Lightning
	// checkpoint), a1111-embedding (a textual inversion), a1111-hypernetwork, or state-dict.
	Kind string `json:"kind"`
	// Pickles counts the pickles read; Globals are the globals they name (module.name, each once, with
	// its class: allowed, unknown or unsafe).
	Pickles int      `json:"pickles"`
	Globals []Global `json:"globals"`
	// Aliases are the groups of tensors that share a storage (tied weights).
	Aliases [][]string `json:"aliases"`
	// Strided counts the tensors that are not row-major views of their storage.
	Strided int `json:"strided"`
}

// Global is one global a pickle names.
type Global struct {
	Name  string `json:"global"`
	Class string `json:"class"`
}

// torchCard is the PyTorch facts of a model, nil for other formats.
func torchCard(m *canon.Model) *PyTorch {
	f := m.Torch
	if f == nil {
		return nil
	}
	t := &PyTorch{Container: string(f.Format), Kind: "state-dict", Pickles: len(f.Pickles), Globals: []Global{}, Aliases: [][]string{}}
	seen := map[string]bool{}
	for _, p := range f.Pickles {
		for _, g := range p.Globals {
			if n := g.FullName(); !seen[n] {
				seen[n] = true
				t.Globals = append(t.Globals, Global{Name: n, Class: g.Class.String()})
			}
		}
	}
	slices.SortFunc(t.Globals, func(a, b Global) int { return strings.Compare(a.Name, b.Name) })
	grouped := map[string]bool{}
	for _, tn := range f.Tensors {
		if !tn.Contiguous {
			t.Strided++
		}
		if len(tn.Aliases) > 0 && !grouped[tn.Name] {
			g := append([]string{tn.Name}, tn.Aliases...)
			for _, n := range g {
				grouped[n] = true
			}
			t.Aliases = append(t.Aliases, g)
		}
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			for _, e := range f.Metadata {
				if e.Key == k || strings.HasPrefix(e.Key, k+".") {
					return true
				}
			}
		}
		return false
	}
	tensorPrefix := func(p string) bool {
		return slices.ContainsFunc(f.Tensors, func(tn torch.Tensor) bool { return strings.HasPrefix(tn.Name, p) })
	}
	switch {
	case has("pytorch-lightning_version") || has("epoch") && has("global_step") && has("optimizer_states"):
		t.Kind = "lightning"
	case tensorPrefix("string_to_param.") || has("string_to_token"):
		t.Kind = "a1111-embedding"
	case has("layer_structure") || has("activation_func"):
		t.Kind = "a1111-hypernetwork"
	}
	return t
}

// torchRows are the rows of the card's PyTorch facts: label and text (not yet escaped).
func torchRows(t *PyTorch) [][2]string {
	rows := [][2]string{{"pytorch", t.Container + " · " + t.Kind}}
	var unsafe, unknown, allowed int
	for _, g := range t.Globals {
		switch g.Class {
		case pickle.Unsafe.String():
			unsafe++
		case pickle.Unknown.String():
			unknown++
		default:
			allowed++
		}
	}
	pk := fmt.Sprintf("%d read, %d globals (%d allowed", t.Pickles, len(t.Globals), allowed)
	if unknown > 0 {
		pk += fmt.Sprintf(", %d outside the weights-only allowlist", unknown)
	}
	if unsafe > 0 {
		pk += fmt.Sprintf(", %d that run code", unsafe)
	}
	rows = append(rows, [2]string{"pickles", pk + ")"})
	if len(t.Aliases) > 0 {
		var gs []string
		for _, g := range t.Aliases[:min(len(t.Aliases), 3)] {
			gs = append(gs, strings.Join(g, " = "))
		}
		if len(t.Aliases) > 3 {
			gs = append(gs, fmt.Sprintf("… %d more", len(t.Aliases)-3))
		}
		rows = append(rows, [2]string{"tied", strings.Join(gs, "; ")})
	}
	if t.Strided > 0 {
		rows = append(rows, [2]string{"strided", fmt.Sprintf("%d tensors are views, not row-major", t.Strided)})
	}
	return rows
}
