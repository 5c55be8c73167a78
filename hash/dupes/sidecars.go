package dupes

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
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
			if same, err := sameBytes(ctx, ks.Path, ms.Path); err != nil || !same {
				out = append(out, SidecarDifference{Kind: e, Change: SidecarChanged, Path: ms.Path})
			}
		}
	}
	return out
}

// sameBytes reports whether the files a and b hold the same bytes (the same file does). It reads them
// side by side and stops at the first difference. Only regular files are opened, never blocking (a
// FIFO put at either path is an error, not a wait: canon.OpenRegular).
func sameBytes(ctx context.Context, a, b string) (bool, error) {
	fa, sa, err := canon.OpenRegular(a, os.O_RDONLY)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, sb, err := canon.OpenRegular(b, os.O_RDONLY)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	if os.SameFile(sa, sb) {
		return true, nil
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ba, bb := make([]byte, compareChunk), make([]byte, compareChunk)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}
