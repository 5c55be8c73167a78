package canon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/safetensors"
)

// FixResult says what FixNulPadding did.
type FixResult struct {
	// Changed is the number of NUL bytes turned into spaces (0 when the file was already valid).
	Changed int
	// Start and End delimit the rewritten file range [Start, End).
	Start, End int64
	// Format is the file's format as read. It is set also when the repair is refused (ErrNotFixable),
	// so that a caller can say what to do instead: what helps a safetensors file does not help a GGUF
	// file.
	Format Format
}

// ErrNotFixable is wrapped when a file has defects FixNulPadding must not touch.
var ErrNotFixable = errors.New("not fixable in place")

// ErrLocked is wrapped when another process holds the lock on a file FixNulPadding was to repair
// (another repair, or another program): the caller says to try again once it is done.
var ErrLocked = errors.New("locked by another process")

// FixLockWait is how long FixNulPadding waits for another process's lock on the file to go.
const FixLockWait = 10 * time.Second

// Test hooks: lockWait replaces FixLockWait, and fixHook, when set, runs at a named stage of
// FixNulPadding: "write" just before the bytes are compared and written, "verify" after the write and
// before the final check.
var (
	lockWait = FixLockWait
	fixHook  func(stage string)
)

// FixNulPadding repairs a header padded with NUL bytes instead of spaces, in place: only the padding
// bytes after the JSON object change (to spaces); the length N and every tensor byte stay as they are.
//
// It refuses (wrapping ErrNotFixable, file untouched) unless the repaired file passes the reference's
// checks; it refuses every GGUF file, which has no such padding. For the whole repair it holds an
// exclusive advisory lock on the file where the system has one (flock: Linux, macOS, the BSDs), waiting
// at most FixLockWait for another holder (then it fails, wrapping ErrLocked). A lock does not stop programs that do not ask for it, so just before writing it
// compares the file's size and the bytes it is about to replace with what it checked, and writes only
// bytes that are NUL at that moment; if the file is not valid afterwards, it puts back the NUL bytes
// where its spaces still are and fails. When it returns an error, the file holds no byte of its.
// Errors are *ReadError values whose Op says what failed ("write" for the repair itself, "lock" when
// another process holds the file). Once ctx is done it stops waiting for the lock and fails with an
// error wrapping ctx.Err(); a repair under way is finished (or undone) first.
func FixNulPadding(ctx context.Context, path string) (FixResult, error) {
	if err := ctx.Err(); err != nil {
		return FixResult{}, &ReadError{Name: path, Op: "open", Err: err}
	}
	f, _, err := OpenRegular(path, os.O_RDWR)
	if err != nil {
		return FixResult{}, err
	}
	defer f.Close()
	unlock, err := lockFile(ctx, f, lockWait)
	if err != nil {
		return FixResult{}, &ReadError{Name: path, Op: "lock", Err: err}
	}
	defer unlock()

	m, err := readLocked(f, path)
	if err != nil {
		return FixResult{}, err
	}
	none := FixResult{Format: m.Format}
	if m.Format == FormatGGUF {
		return none, fmt.Errorf("%s: %w: GGUF files have no padding to repair (only the NUL padding of a safetensors header is repaired in place)", path, ErrNotFixable)
	}
	if m.Valid() {
		return none, nil
	}
	if m.FindingCounts()[finding.CodeNulPadding] == 0 {
		return none, notFixable(path, m)
	}
	hb := m.RawHeader
	first, last, fixed := safetensors.FixPadding(hb, m.FileSize)
	if fixed == nil {
		return none, notFixable(path, m)
	}
	// The repaired file as a whole is valid before the file is touched.
	if !fixed.Valid() {
		return none, notFixable(path, modelOfSafetensors(fixed, path))
	}
	res := FixResult{Start: 8 + int64(first), End: 8 + int64(last) + 1, Format: m.Format}
	old := hb[first : last+1] // what was checked; the runs of NUL in it are what is written

	if fixHook != nil {
		fixHook("write")
	}
	changed := &ReadError{Name: path, Op: "write", Err: ErrChanged,
		Hint: "another program wrote to the file during the repair; stdiff left it as that program left it; run again once it is done"}
	if st, err := regularStat(f, path); err != nil {
		return FixResult{}, err
	} else if st.Size() != m.FileSize {
		return FixResult{}, changed
	}
	now := make([]byte, len(old))
	if _, err := f.ReadAt(now, res.Start); err != nil || !bytes.Equal(now, old) {
		return FixResult{}, changed
	}
	runs := nulRuns(old)
	for k, r := range runs {
		if _, err := f.WriteAt(bytes.Repeat([]byte{' '}, r[1]-r[0]), res.Start+int64(r[0])); err != nil {
			undo(f, res.Start, runs[:k+1])
			return FixResult{}, &ReadError{Name: path, Op: "write", Err: fmt.Errorf("writing the repaired padding: %w", err)}
		}
		res.Changed += r[1] - r[0]
	}
	if err := f.Sync(); err != nil {
		undo(f, res.Start, runs)
		return FixResult{}, &ReadError{Name: path, Op: "write", Err: fmt.Errorf("flushing the repair: %w", err)}
	}

	if fixHook != nil {
		fixHook("verify")
	}
	after, err := readLocked(f, path)
	if err == nil && !after.Valid() {
		err = &ReadError{Name: path, Op: "write", Err: fmt.Errorf("%w: still invalid after the repair (%v); the repair was undone", ErrChanged, after.RefErr),
			Hint: "another program wrote to the file during the repair; run again once it is done"}
	}
	if err != nil {
		undo(f, res.Start, runs)
		return FixResult{}, err
	}
	return res, nil
}

// readLocked reads the header of the open file f, as it is now.
func readLocked(f *os.File, path string) (*Model, error) {
	st, err := regularStat(f, path)
	if err != nil {
		return nil, err
	}
	m, err := Read(f, st.Size(), path)
	switch {
	case errors.Is(err, io.EOF): // fewer bytes than the size just read
		return nil, &ReadError{Name: path, Op: "read", Err: ErrChanged, Hint: "another program wrote to the file; run again once it is done"}
	case err != nil:
		return nil, PathError("read", path, err)
	}
	return m, nil
}

// nulRuns are the [start, end) ranges of consecutive NUL bytes in b.
func nulRuns(b []byte) [][2]int {
	var runs [][2]int
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		j := i
		for j < len(b) && b[j] == 0 {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	return runs
}

// undo puts NUL back where the repair wrote a space that is still there: bytes another program wrote
// since are left as they are. It is best effort: it runs after a failure, whose error is what counts.
func undo(f *os.File, start int64, runs [][2]int) {
	for _, r := range runs {
		now := make([]byte, r[1]-r[0])
		n, _ := f.ReadAt(now, start+int64(r[0]))
		for i := 0; i < n; i++ {
			j := i
			for j < n && now[j] == ' ' {
				j++
			}
			if j > i {
				_, _ = f.WriteAt(make([]byte, j-i), start+int64(r[0]+i))
			}
			i = j
		}
	}
	_ = f.Sync()
}

func notFixable(path string, m *Model) error {
	for _, f := range m.Findings {
		if f.Severity == finding.SevError && f.Code != finding.CodeNulPadding {
			return fmt.Errorf("%s: %w: %s (%s)", path, ErrNotFixable, f.Message, f.Code)
		}
	}
	return fmt.Errorf("%s: %w: %v", path, ErrNotFixable, m.RefErr)
}
