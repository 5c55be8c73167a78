package inspect

import (
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// ddufRows are the text rows of a DDUF card: the pipeline, then one row per component.
func ddufRows(d *card.DDUF) [][2]string {
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
