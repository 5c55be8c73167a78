package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// out carries what every command needs: its context (cancelled by Ctrl-C or the time limit), and
// to print: the two streams, the format, and colour.
type out struct {
	ctx     context.Context
	w, errw io.Writer
	format  string // text, json, jsonl or markdown
	pal     textfmt.Palette
	// src opens models: the Hub's endpoint and token, from the environment.
	src source.Options
	// writeErr is why writing the report failed.
	writeErr error
}

// open opens a model named on the command line: a file, a shard set, a URL (headers only).
func (o *out) open(spec string) (*source.Opened, error) { return source.Open(o.ctx, spec, o.src) }

// errorf prints one error line in stdiff's voice: "stdiff: …", then "hint: …" when there is one.
// What was printed on stdout before is flushed first, so that on a terminal the two keep their order.
func (o *out) errorf(hint string, format string, args ...any) {
	if f, ok := o.w.(*bufferedOut); ok {
		f.Flush()
	}
	io.WriteString(o.errw, message(hint, format, args...)) // one write: concurrent messages do not interleave
}

// message is an error line in stdiff's voice, then a hint line when there is a hint.
func message(hint string, format string, args ...any) string {
	if hint != "" {
		hint = "hint: " + hint + "\n"
	}
	return fmt.Sprintf("stdiff: "+format+"\n", args...) + hint
}

// bufferedOut buffers stdout: written line by line, a report of a million lines cost a million system
// calls. It is safe for concurrent use.
type bufferedOut struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newBufferedOut(w io.Writer) *bufferedOut { return &bufferedOut{w: bufio.NewWriterSize(w, 64<<10)} }

func (b *bufferedOut) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes what is buffered.
func (b *bufferedOut) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// writers are a report's writers, by --format.
type writers map[string]func(w io.Writer) error

// write writes a report in the format asked for. When that fails it returns exitTrouble and keeps
// the error for run, which says it once, with stdout's.
func (o *out) write(ws writers) int {
	if err := ws[o.format](o.w); err != nil {
		o.writeErr = err
		return exitTrouble
	}
	return exitOK
}

// readFailed reports an error from opening or reading a source. Errors that only say the command was
// interrupted or ran out of time are left to run, which says so once.
func (o *out) readFailed(err error) {
	if o.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return
	}
	var re *canon.ReadError
	if errors.As(err, &re) {
		o.errorf(re.Hint, "%s: %s", textfmt.Escape(re.Name), re.Reason())
		return
	}
	o.errorf("", "%s", textfmt.Escape(err.Error()))
}

// isTerminal reports whether f is a character device (a terminal), without extra dependencies.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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

// progress shows how far byte work has come, on stderr, only when stderr is a terminal.
type progress struct {
	done        atomic.Int64
	stopc, gone chan struct{}
}

// progress starts a progress line for work of total bytes; add reports bytes done, stop clears the line.
func (o *out) progress(label string, total int64) *progress {
	p := &progress{}
	if f, ok := o.errw.(*os.File); ok && isTerminal(f) && total >= 64<<20 {
		p.stopc, p.gone = make(chan struct{}), make(chan struct{})
		go p.show(f, textfmt.Escape(label), total)
	}
	return p
}

func (p *progress) show(f *os.File, label string, total int64) {
	defer close(p.gone)
	start, tick := time.Now(), time.NewTicker(200*time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stopc:
			fmt.Fprintf(f, "\r\x1b[K")
			return
		case <-tick.C:
			d, eta := p.done.Load(), ""
			if d > 0 {
				eta = fmt.Sprintf(", %s left", time.Duration(float64(time.Since(start))*float64(total-d)/float64(d)).Round(time.Second))
			}
			fmt.Fprintf(f, "\r\x1b[K%s: %s of %s (%d%%%s)", label, textfmt.Bytes(uint64(d)), textfmt.Bytes(uint64(total)), 100*d/max(total, 1), eta)
		}
	}
}

func (p *progress) add(n int64) { p.done.Add(n) }

func (p *progress) stop() {
	if p.stopc != nil {
		close(p.stopc)
		<-p.gone
	}
}
