package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// out carries what every command needs: its context (cancelled by Ctrl-C or the time limit), and
// to print: the two streams, the format, and colour.
type out struct {
	ctx     context.Context
	w       *textfmt.SyncWriter
	stdout  io.Writer // what w writes to
	errw    io.Writer
	format  textfmt.Format // --format
	pal     textfmt.Palette
	src     source.Options // opens models: the Hub's endpoint and token, from the environment
	written error          // why writing the report failed
}

// open opens a model named on the command line: a file, a shard set, a URL (headers only).
func (o *out) open(spec string) (*source.Opened, error) { return source.Open(o.ctx, spec, o.src) }

// errorf prints one error line in stdiff's voice: "stdiff: …", then "hint: …" when there is one.
// What was printed on stdout before is flushed first, so that on a terminal the two keep their order.
func (o *out) errorf(hint string, format string, args ...any) {
	o.w.Flush()
	io.WriteString(o.errw, message(hint, format, args...)) // one write: concurrent messages do not interleave
}

// message is an error line in stdiff's voice, then a hint line when there is a hint.
func message(hint string, format string, args ...any) string {
	if hint != "" {
		hint = "hint: " + hint + "\n"
	}
	return fmt.Sprintf("stdiff: "+format+"\n", args...) + hint
}

// readFailed reports why a model could not be read (or repaired), with its hint; nothing for nil.
// Errors that only say the command was interrupted or ran out of time are left to run, which says so
// once.
func (o *out) readFailed(err error) {
	var re *canon.ReadError
	var fe *check.FixError
	switch {
	case err == nil || o.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
	case errors.As(err, &fe):
		o.errorf(fixHint(fe), "%s", textfmt.Escape(fe.Error()))
	case errors.As(err, &re):
		hint := re.Hint
		switch { // a folder of models: the commands that read one
		case hint == "" && errors.Is(err, canon.ErrLocked):
			hint = "another `stdiff check --fix` (or another program) is working on the file; try again when it is done"
		case errors.Is(err, source.ErrSeveralModels):
			hint += ", or use `stdiff inspect --short` or `stdiff dupes` for a folder of models"
		case errors.Is(err, source.ErrNoModel):
			hint += "; for the models in the folders under it, use `stdiff inspect --short` or `stdiff dupes`"
		}
		o.errorf(hint, "%s: %s", textfmt.Escape(re.Name), re.Reason())
	default:
		o.errorf("", "%s", textfmt.Escape(err.Error()))
	}
}

// withOptions is the writer f (a report package's Write) with opt.
func withOptions[R, O any](f func(io.Writer, R, O) error, opt O) func(io.Writer, R) error {
	return func(w io.Writer, r R) error { return f(w, r, opt) }
}

// write writes r with w, its package's Write with the options of the command line (nothing with
// quiet), and returns the exit status of outcome, or 2 when writing failed (run says why, once).
func write[R any](o *out, r R, quiet bool, outcome canon.Outcome, w func(io.Writer, R) error) int {
	if quiet || o.ctx.Err() != nil {
		return int(outcome)
	}
	if err := w(o.w, r); err != nil {
		o.written = err
		return exitTrouble
	}
	return int(outcome)
}

// isTerminal reports whether f is a terminal, without extra dependencies: a character device that
// answers the terminal's ioctl (where the system has one), so that /dev/null is not one.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && isTTY(f)
}

// colorWanted decides colour: never with NO_COLOR or a dumb terminal, always with --color=always,
// otherwise only when stdout is a terminal.
func colorWanted(mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(os.Stdout)
}

// progress shows a line saying how far work has come on stderr, redrawn five times a second, only
// when stderr is a terminal: line says it (under a lock held while the work's callbacks update it).
// The func it returns clears the line.
func (o *out) progress(line func() string) (mu *sync.Mutex, stop func()) {
	mu = &sync.Mutex{}
	f, ok := o.errw.(*os.File)
	if !ok || !isTerminal(f) {
		return mu, func() {}
	}
	done, gone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(gone)
		for tick := time.NewTicker(200 * time.Millisecond); ; {
			select {
			case <-done:
				tick.Stop()
				fmt.Fprint(f, "\r\x1b[K")
				return
			case <-tick.C:
				mu.Lock()
				fmt.Fprintf(f, "\r\x1b[K%s", line())
				mu.Unlock()
			}
		}
	}()
	return mu, func() { close(done); <-gone }
}

// bytesProgress shows how many of total bytes work has read; add is the work's callback.
func (o *out) bytesProgress(label string, total int64) (add func(int64), stop func()) {
	var n int64
	start := time.Now()
	mu, stop := o.progress(func() string {
		eta := ""
		if n > 0 {
			eta = fmt.Sprintf(", %s left", time.Duration(float64(time.Since(start))*float64(total-n)/float64(n)).Round(time.Second))
		}
		return fmt.Sprintf("%s: %s of %s (%d%%%s)", textfmt.Escape(label), textfmt.Bytes(uint64(n)), textfmt.Bytes(uint64(total)), 100*n/max(total, 1), eta)
	})
	return func(k int64) { mu.Lock(); n += k; mu.Unlock() }, stop
}

// toFile runs a command whose report goes to the file at path rather than to standard output: whole,
// once the command is done, or not at all (canon.WriteFileAtomic). what names the report in errors.
func toFile(o *out, path, what string, run func(o *out) int) int {
	var buf bytes.Buffer
	stdout := o.w
	o.w = textfmt.NewSyncWriter(&buf)
	code := run(o)
	o.w.Flush()
	o.w = stdout
	if code == exitTrouble && buf.Len() == 0 || o.written != nil {
		return code
	}
	if err := canon.WriteFileAtomic(o.ctx, path, what, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	return code
}

// pipedWidth is the width of a table written anywhere but to a terminal.
const pipedWidth = 120

// tableWidth is the widest a table's line may be: COLUMNS when it is set to a whole number of at least
// 20 (as ls and other GNU tools honour it, on a terminal or not), else the terminal's width when
// standard output is a terminal, else pipedWidth.
func tableWidth(o *out) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n >= 20 {
		return n
	}
	if f, ok := o.stdout.(*os.File); ok {
		if w := terminalWidth(f); w > 0 {
			return w
		}
	}
	return pipedWidth
}
