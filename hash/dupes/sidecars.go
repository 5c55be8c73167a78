package dupes

import (
	"context"

	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
)

// SidecarChange says how a member's sidecar file of one kind differs from the keeper's.
type SidecarChange string

// Sidecar changes. Codes are stable and safe to match in scripts.
const (
	// SidecarAdded: the member has a sidecar of a kind the keeper has none of (`--delete` moves it
	// next to the keeper).
	SidecarAdded SidecarChange = "added"
	// SidecarRemoved: the keeper has a sidecar of a kind the member has none of.
	SidecarRemoved SidecarChange = "removed"
	// SidecarChanged: both have one of the kind, with other bytes.
	SidecarChanged SidecarChange = "changed"
)

// SidecarDifference is a sidecar file of one kind that a member and the keeper do not share.
type SidecarDifference struct {
	// Kind is the sidecar's ending (lora.SidecarEndings).
	Kind   string        `json:"kind"`
	Change SidecarChange `json:"change"`
	// Path is the member's sidecar (the keeper's for SidecarRemoved).
	Path string `json:"path"`
}

// sidecarDifferences says how the member's sidecars differ from the keeper's, in the order of
// lora.SidecarEndings. Sidecars of one kind whose bytes cannot be compared count as changed.
func sidecarDifferences(ctx context.Context, keeper, member []lora.SidecarFile) []SidecarDifference {
	out := []SidecarDifference{}
	k := map[string]lora.SidecarFile{}
	for _, s := range keeper {
		k[s.Ending] = s
	}
	m := map[string]lora.SidecarFile{}
	for _, s := range member {
		m[s.Ending] = s
	}
	for _, e := range lora.SidecarEndings {
		ks, inK := k[e]
		ms, inM := m[e]
		switch {
		case inM && !inK:
			out = append(out, SidecarDifference{Kind: e, Change: SidecarAdded, Path: ms.Path})
		case inK && !inM:
			out = append(out, SidecarDifference{Kind: e, Change: SidecarRemoved, Path: ks.Path})
		case inK && inM:
			if same, err := diskfile.SameBytes(ctx, ks.Path, ms.Path); err != nil || !same {
				out = append(out, SidecarDifference{Kind: e, Change: SidecarChanged, Path: ms.Path})
			}
		}
	}
	return out
}
