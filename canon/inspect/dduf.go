package inspect

import (
	"fmt"
	"path"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// DDUF is what a DDUF file (a diffusers pipeline in one file) says besides its tensors: the
// pipeline's class and its components as model_index.json lists them.
type DDUF struct {
	// Class is model_index.json's _class_name.
	Class string `json:"class"`
	// Members counts the archive's members read in place.
	Members    int             `json:"members"`
	Components []DDUFComponent `json:"components"`
}

// DDUFComponent is one component of a DDUF pipeline: its folder, the library and class
// model_index.json names, its tensors and parameters (0 for one without weights: a scheduler, a
// tokenizer) and the files of its folder.
type DDUFComponent struct {
	Name    string   `json:"name"`
	Library string   `json:"library"`
	Class   string   `json:"class"`
	Tensors int      `json:"tensors"`
	Params  uint64   `json:"params"`
	Files   []string `json:"files"`
}

// ddufCard is the DDUF facts of a model, nil for other formats.
func ddufCard(m *canon.Model) *DDUF {
	if m.DDUF == nil {
		return nil
	}
	d := &DDUF{Class: m.DDUF.Class, Members: len(m.DDUF.Members), Components: []DDUFComponent{}}
	for _, c := range m.DDUF.Components {
		dc := DDUFComponent{Name: c.Name, Library: c.Library, Class: c.Class, Files: []string{}}
		for _, t := range m.Tensors {
			if strings.HasPrefix(t.Name, c.Name+"/") {
				n := uint64(1)
				for _, s := range t.Shape {
					n *= s
				}
				dc.Tensors++
				dc.Params += n
			}
		}
		for _, mem := range m.DDUF.Members {
			if dir, file := path.Split(mem.Name); dir == c.Name+"/" {
				dc.Files = append(dc.Files, file)
			}
		}
		d.Components = append(d.Components, dc)
	}
	return d
}

// ddufRows are the text rows of a DDUF card: the pipeline, then one row per component.
func ddufRows(d *DDUF) [][2]string {
	class := d.Class
	if class == "" {
		class = "no _class_name"
	}
	rows := [][2]string{{"pipeline", fmt.Sprintf("%s (DDUF, %s)", class, textfmt.Plural(d.Members, "member"))}}
	for _, c := range d.Components {
		what := c.Name + ": " + c.Class
		if c.Tensors > 0 {
			what += fmt.Sprintf(" · %s, %s params", textfmt.Plural(c.Tensors, "tensor"), textfmt.Thousands(c.Params))
		}
		what += " · " + strings.Join(c.Files, ", ")
		rows = append(rows, [2]string{"component", what})
	}
	return rows
}
