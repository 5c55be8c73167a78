package canon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// FixResult says what FixNulPadding did.
type FixResult struct {
	// Changed is the number of NUL bytes turned into spaces (0 when the file was already valid).
	Changed int
	// Start and End delimit the rewritten file range [Start, End).
	Start, End int64
}

// ErrNotFixable is wrapped when a file has defects FixNulPadding must not touch.
var ErrNotFixable = errors.New("not fixable in place")

// FixNulPadding repairs a header padded with NUL bytes instead of spaces, in place: only the padding
// bytes after the JSON object change (to spaces); the length N and every tensor byte stay as they are.
//
// It refuses (wrapping ErrNotFixable, file untouched) unless the repaired file passes the reference's
// checks; it re-reads the header just before writing and refuses if the file changed since it was read,
// and verifies the file again afterwards.
func FixNulPadding(path string) (FixResult, error) {
	src, err := OpenFile(path)
	if err != nil {
		return FixResult{}, err
	}
	m, err := Read(src)
	src.Close()
	if err != nil {
		return FixResult{}, err
	}
	if m.Valid() {
		return FixResult{}, nil
	}
	if !m.hasCode(CodeNulPadding) {
		return FixResult{}, notFixable(path, m)
	}
	f, err := os.OpenFile(path, os.O_RDWR|openNonblock, 0)
	if err != nil {
		return FixResult{}, fileError(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return FixResult{}, fileError(path, err)
	}
	if err := checkRegular(path, st); err != nil {
		return FixResult{}, err
	}
	if st.Size() != m.FileSize {
		return FixResult{}, &ReadError{Name: path, Err: ErrChanged}
	}
	hb := make([]byte, m.HeaderLen)
	if _, err := f.ReadAt(hb, 8); err != nil {
		return FixResult{}, &ReadError{Name: path, Err: ErrChanged}
	}
	h := parseHeader(hb)
	if h.end < 0 {
		return FixResult{}, notFixable(path, m)
	}
	patched := bytes.Clone(hb)
	first, last := -1, -1
	for i := h.end; i < len(patched); i++ {
		if patched[i] == 0 {
			patched[i] = ' '
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return FixResult{}, notFixable(path, m)
	}
	// Verify the repaired file as a whole before touching it.
	check := &Model{Name: path, FileSize: m.FileSize, HeaderLen: m.HeaderLen}
	check.readHeader(patched)
	if !check.Valid() {
		return FixResult{}, notFixable(path, check)
	}
	res := FixResult{Changed: bytes.Count(hb[first:last+1], []byte{0}), Start: 8 + int64(first), End: 8 + int64(last) + 1}
	if _, err := f.WriteAt(patched[first:last+1], res.Start); err != nil {
		// Put back what was there; the range is small, so this normally succeeds.
		_, _ = f.WriteAt(hb[first:last+1], res.Start)
		return FixResult{}, &ReadError{Name: path, Err: fmt.Errorf("writing the repaired padding: %w", err)}
	}
	if err := f.Sync(); err != nil {
		return FixResult{}, &ReadError{Name: path, Err: fmt.Errorf("flushing the repair: %w", err)}
	}
	again, err := OpenFile(path)
	if err != nil {
		return FixResult{}, err
	}
	defer again.Close()
	after, err := Read(again)
	if err != nil {
		return FixResult{}, err
	}
	if !after.Valid() {
		return FixResult{}, &ReadError{Name: path, Err: fmt.Errorf("still invalid after the repair (%v); the file changed meanwhile?", after.RefErr)}
	}
	return res, nil
}

func notFixable(path string, m *Model) error {
	for _, f := range m.Findings {
		if f.Severity == SevError && f.Code != CodeNulPadding {
			return fmt.Errorf("%s: %w: %s (%s)", path, ErrNotFixable, f.Message, f.Code)
		}
	}
	return fmt.Errorf("%s: %w: %v", path, ErrNotFixable, m.RefErr)
}
