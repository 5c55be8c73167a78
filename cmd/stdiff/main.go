// Command stdiff reads safetensors model files and answers, from their headers and (when asked) their
// bytes: what is this model, what changed between these two, is this file really loadable, and which of
// these files are the same model.
//
// Exit status: 0 identical / valid / nothing found, 1 differences / defects / duplicates found,
// 2 trouble (usage error, unreadable input, I/O error).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stdiff/stdiff/canon/source"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit statuses, the contract with scripts.
const (
	exitOK      = 0
	exitFound   = 1
	exitTrouble = 2
)

type globals struct {
	Format  string           `help:"Output format: text, json or markdown." enum:"text,json,markdown" default:"text" placeholder:"FORMAT"`
	JSON    bool             `help:"Short for --format=json." name:"json"`
	Color   string           `help:"Colour: auto (only on a terminal, never with NO_COLOR), always or never." enum:"auto,always,never" default:"auto"`
	Timeout *time.Duration   `help:"Stop after DURATION (30s, 5m, 1h; 0: no limit). Default: 2m when only headers are read and a URL or hf:// is named; otherwise no limit." placeholder:"DURATION"`
	Version kong.VersionFlag `help:"Print the version and exit."`
}

type cli struct {
	globals
	Diff    diffCmd    `cmd:"" default:"withargs" help:"Compare two models (the default command: stdiff A B)."`
	Hash    hashCmd    `cmd:"" help:"Print structure IDs (and content IDs, ecosystem hashes); verify a manifest."`
	Inspect inspectCmd `cmd:"" help:"Show what a model is: tensors, parameters, metadata, LoRA info, findings."`
	Check   checkCmd   `cmd:"" help:"Give the reference reader's verdict and diagnose defects; --fix repairs NUL padding."`
	Dupes   dupesCmd   `cmd:"" help:"Find duplicate models under folders, including copies with edited metadata."`
}

// versionString is the version set at build time, else the module version `go install` recorded.
func versionString() string {
	if version == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return version
}

// exitPanic carries kong's exit request (after --help or --version) out of the parser.
type exitPanic int

func main() {
	// stdiff is short-lived and what it allocates (headers) lives to the end: it does not collect
	// garbage until the heap nears a soft limit. Commands that read many files turn collection back on
	// (see memoryPolicy).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(softLimit)
	watchHeap()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// manyFiles is implemented by commands that may read the headers of many files.
type manyFiles interface {
	manyFiles() bool
}

func (c *dupesCmd) manyFiles() bool   { return true }
func (c *inspectCmd) manyFiles() bool { return c.Short }

// memoryPolicy is the one place the garbage collector is tuned for a command: one that reads many
// headers, most of them garbage once read, collects, rarely (the others do not collect at all below
// the soft limit, as main sets).
func memoryPolicy(cmd command) {
	if m, ok := cmd.(manyFiles); ok && m.manyFiles() {
		debug.SetGCPercent(400)
	}
}

// softLimit is the heap size up to which stdiff does not collect garbage.
const softLimit = 512 << 20

// watchHeap hands memory back to proportional collection when what stays alive nears the soft limit
// (a header of many millions of entries): past it, the limit alone would run the collector back to
// back, each run freeing almost nothing. The heap then grows to at most 1.5 times what is alive.
func watchHeap() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		runtime.SetFinalizer(new([16]byte), func(*[16]byte) { // runs after each collection
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > softLimit*3/4 {
				debug.SetGCPercent(50)
				debug.SetMemoryLimit(math.MaxInt64)
				return
			}
			arm()
		})
	}
	arm()
}

// run is the whole program; it returns the exit status. Ctrl-C (or SIGTERM) cancels the command's
// context; a second one ends the process at once.
func run(args []string, stdout, stderr io.Writer) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	var c cli
	parser, err := kong.New(&c,
		kong.Name("stdiff"),
		kong.Description("Diff, hash, inspect and check safetensors models."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitPanic(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"version": versionString()},
	)
	if err != nil {
		fmt.Fprintf(stderr, "stdiff: %v\n", err)
		return exitTrouble
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(exitPanic); ok {
				code = int(e)
				if code != 0 {
					code = exitTrouble
				}
				return
			}
			panic(r)
		}
	}()
	if len(args) == 0 { // no command: the overview, on stderr, as a usage error
		parser.Stdout = stderr
		func() {
			defer func() { _ = recover() }() // kong's exit after printing help
			_, _ = parser.Parse([]string{"--help"})
		}()
		return exitTrouble
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "stdiff: %s\n", usageMessage(err))
		var pe *kong.ParseError
		if errors.As(err, &pe) && pe.Context != nil {
			parser.Stdout = stderr // usage after an error belongs with the error
			_ = pe.Context.PrintUsage(true)
		}
		return exitTrouble
	}
	bout := newBufferedOut(stdout)
	defer bout.Flush()
	o := &out{ctx: ctx, w: bout, errw: stderr, format: c.Format,
		src: source.Options{Endpoint: os.Getenv("HF_ENDPOINT"), Token: os.Getenv("HF_TOKEN")}}
	if c.JSON {
		o.format = "json"
	}
	o.pal.On = o.format == "text" && colorWanted(c.Color)
	cmd, ok := kctx.Selected().Target.Addr().Interface().(command)
	if !ok {
		fmt.Fprintf(stderr, "stdiff: no command given\n")
		parser.Stdout = stderr
		_ = kctx.PrintUsage(true)
		return exitTrouble
	}
	memoryPolicy(cmd)
	limit := timeLimit(cmd, c.Timeout)
	if limit > 0 {
		var cancel context.CancelFunc
		o.ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	code = cmd.run(o)
	switch err := o.ctx.Err(); {
	case errors.Is(err, context.DeadlineExceeded):
		o.errorf("allow more time with --timeout, e.g. --timeout 10m (0: no limit)", "timed out after %s", limit)
		return exitTrouble
	case err != nil:
		o.errorf("", "interrupted")
		return exitTrouble
	}
	return code
}

// command is implemented by every subcommand.
type command interface {
	run(o *out) int
}

// usageMessage turns kong's error into stdiff's voice (lower case, no trailing period).
func usageMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimSuffix(msg, ".")
	return msg
}
