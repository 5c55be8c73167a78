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
	format  string // text, json or markdown
	pal     textfmt.Palette
	// src opens models: the Hub's endpoint and token, from the environment.
	src source.Options
}

// open opens a model named on the command line: a file, a shard set, a URL (headers only).
func (o *out) open(spec string) (*source.Opened, error) { return source.Open(o.ctx, spec, o.src) }

func (o *out) printf(format string, args ...any) { fmt.Fprintf(o.w, format, args...) }

// errorf prints one error line in stdiff's voice: "stdiff: …", then "hint: …" when there is one.
// What was printed on stdout before is flushed first, so that on a terminal the two keep their order.
func (o *out) errorf(hint string, format string, args ...any) {
	msg := fmt.Sprintf("stdiff: "+format+"\n", args...)
	if hint != "" {
		msg += "hint: " + hint + "\n"
	}
	if f, ok := o.w.(*bufferedOut); ok {
		f.Flush()
	}
	io.WriteString(o.errw, msg) // one write: messages from concurrent readers do not interleave
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

// filesJSON is the envelope of commands that report on several files: the schema first.
type filesJSON struct {
	Schema string `json:"schema"`
	Files  any    `json:"files"`
}

// writeJSON prints v as indented JSON, streamed (see textfmt.WriteJSON).
func (o *out) writeJSON(v any) {
	if err := textfmt.WriteJSON(o.w, v); err != nil {
		o.errorf("", "writing JSON: %v", err)
	}
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

// findingJSON is a finding as scripts see it.
type findingJSON struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Offset   *int64 `json:"offset"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	RefKind  string `json:"reference_kind,omitempty"`
	Fixable  bool   `json:"fixable,omitempty"`
}

func findingsJSON(fs []canon.Finding) []findingJSON {
	out := make([]findingJSON, 0, len(fs))
	for _, f := range fs {
		j := findingJSON{Code: f.Code, Severity: string(f.Severity), Message: f.Message, Hint: f.Hint,
			RefKind: string(f.RefKind), Fixable: f.Fixable}
		if f.Offset >= 0 {
			off := f.Offset
			j.Offset = &off
		}
		out = append(out, j)
	}
	return out
}

// findingsPerCode is how many findings of one code text output shows before "… and N more".
const findingsPerCode = 3

// printFindings prints findings as indented lines: severity, code, offset, message, hint. Past the first
// few of a code it prints "… and N more CODE" instead, counting the findings omitted from fs too.
func (o *out) printFindings(fs []canon.Finding, omitted map[string]int, indent string) {
	counts := canon.CountFindings(fs, omitted)
	shown := map[string]int{}
	for _, f := range fs {
		if shown[f.Code] == findingsPerCode {
			continue
		}
		shown[f.Code]++
		sev := string(f.Severity)
		switch f.Severity {
		case canon.SevError:
			sev = o.pal.Red(sev)
		case canon.SevWarning:
			sev = o.pal.Yellow(sev)
		default:
			sev = o.pal.Cyan(sev)
		}
		where := ""
		if f.Offset >= 0 {
			where = fmt.Sprintf(" at byte %d", f.Offset)
		}
		o.printf("%s%s %s%s: %s\n", indent, sev, f.Code, where, textfmt.Escape(f.Message))
		if f.Hint != "" {
			o.printf("%s  hint: %s\n", indent, textfmt.Escape(f.Hint))
		}
		if n := counts[f.Code] - findingsPerCode; shown[f.Code] == findingsPerCode && n > 0 {
			o.printf("%s… and %s more %s\n", indent, textfmt.Thousands(uint64(n)), f.Code)
		}
	}
}

// progress shows how far byte work has come, on stderr, only when stderr is a terminal.
type progress struct {
	done  atomic.Int64
	stopc chan struct{}
	wg    sync.WaitGroup
}

// progress starts a progress line for work of total bytes; add reports bytes done, stop clears the line.
func (o *out) progress(label string, total int64) *progress {
	p := &progress{}
	f, ok := o.errw.(*os.File)
	if !ok || !isTerminal(f) || total < 64<<20 {
		return p
	}
	p.stopc = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		start := time.Now()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stopc:
				fmt.Fprintf(f, "\r\x1b[K")
				return
			case <-tick.C:
				d := p.done.Load()
				eta := ""
				if el := time.Since(start); d > 0 {
					rest := time.Duration(float64(el) * float64(total-d) / float64(d))
					eta = fmt.Sprintf(", %s left", rest.Round(time.Second))
				}
				fmt.Fprintf(f, "\r\x1b[K%s: %s of %s (%d%%%s)", textfmt.Escape(label), textfmt.Bytes(uint64(d)), textfmt.Bytes(uint64(total)), 100*d/max(total, 1), eta)
			}
		}
	}()
	return p
}

func (p *progress) add(n int64) { p.done.Add(n) }

func (p *progress) stop() {
	if p.stopc != nil {
		close(p.stopc)
		p.wg.Wait()
	}
}

// errorText is an error as one line, for tables and JSON.
func errorText(err error) string {
	var re *canon.ReadError
	if errors.As(err, &re) {
		return re.Reason()
	}
	return err.Error()
}
