package inspect

import (
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon/card"
)

// torchRows are the rows of the card's PyTorch facts: label and text (not yet escaped).
func torchRows(t *card.PyTorch) [][2]string {
	rows := [][2]string{{"pytorch", t.Container + " · " + t.Kind}}
	var unsafe, unknown, allowed int
	for _, g := range t.Globals {
		switch g.Class {
		case card.ClassUnsafe:
			unsafe++
		case card.ClassUnknown:
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
