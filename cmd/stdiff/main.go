// Command stdiff reads model files (safetensors, GGUF, PyTorch checkpoints and pickles, NumPy, ONNX;
// shard sets, model folders and remote files) and answers, from their headers and (when asked) their
// bytes: what is this model, what changed between these two, is this file really loadable (and safe to
// load), and which of these files are the same model.
//
// Exit status: 0 identical / valid / nothing found, 1 differences / defects / duplicates found,
// 2 trouble (usage error, unreadable input, I/O error).
package main

import (
	"cmp"
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// version and revision may be set at build time with -ldflags "-X main.version=… -X main.revision=…"
// (a build without VCS stamping, -buildvcs=false, records no revision of its own).
var version, revision = "dev", ""

// Exit statuses, the contract with scripts: canon.Outcome's Clean, Found and Trouble.
const exitOK, exitFound, exitTrouble = 0, 1, 2

type globals struct {
	Format  string           `help:"Output format: text, json, jsonl (compact, one record per line), markdown, or html (one self-contained page: inspect --short, check, diff, dupes)." enum:"text,json,jsonl,markdown,html" default:"text" placeholder:"FORMAT"`
	JSON    bool             `help:"Short for --format=json." name:"json"`
	Color   string           `help:"Colour: auto (only on a terminal, never with NO_COLOR), always or never." enum:"auto,always,never" default:"auto"`
	Timeout *time.Duration   `help:"Stop after DURATION (30s, 5m, 1h; 0: no limit). Default: 2m when only headers are read and a URL or hf:// is named; otherwise no limit." placeholder:"DURATION"`
	Version kong.VersionFlag `help:"Print the version (and the VCS revision the build recorded) and exit."`
}

type cli struct {
	globals
	Diff       diffCmd     `cmd:"" default:"withargs" help:"Compare two models (the default command: stdiff A B)."`
	Hash       hashCmd     `cmd:"" help:"Print structure IDs (and content IDs, ecosystem hashes); verify a manifest."`
	Inspect    inspectCmd  `cmd:"" help:"Show what a model is: tensors, parameters, metadata, LoRA info, findings."`
	Check      checkCmd    `cmd:"" help:"Give the reference reader's verdict and diagnose defects; --fix repairs NUL padding."`
	Dupes      dupesCmd    `cmd:"" help:"Find duplicate models under folders, including copies with edited metadata."`
	Snapshot   snapshotCmd `cmd:"" help:"Write a small JSON file that stands in for a model in diff, inspect and hash --check."`
	Help       helpCmd     `cmd:"" help:"Show the help of a command, or this overview."`
	VersionCmd versionCmd  `cmd:"" name:"version" help:"Print the version and the VCS revision the build recorded."`
}

type helpCmd struct {
	Command string `arg:"" optional:"" name:"COMMAND" help:"The command to explain."`
}

// command is implemented by every subcommand but help and version.
type command interface{ run(o *out) int }

// versionString is "stdiff VERSION (revision R)": the version set at build time, else the module
// version the build recorded (`go install …@v1.2.0`, whose pseudo-versions name their commit); then
// the VCS revision the build recorded and whether the tree was modified, else the revision set at build
// time (rev), else that it is unknown.
func versionString(v, rev string, bi *debug.BuildInfo) string {
	vcs := map[string]string{}
	if bi != nil {
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
	}
	switch {
	case vcs["vcs.revision"] != "":
		return "stdiff " + v + " (revision " + vcs["vcs.revision"] + map[string]string{"true": ", modified"}[vcs["vcs.modified"]] + ")"
	case rev != "":
		return "stdiff " + v + " (revision " + rev + ")"
	case v != "dev":
		return "stdiff " + v // a module version: a release, or a pseudo-version naming its commit
	}
	return "stdiff dev (revision unknown: built without VCS stamping; -ldflags \"-X main.revision=…\" sets it)"
}

func main() {
	// stdiff is short-lived and what it allocates (headers) lives to the end: it does not collect
	// garbage until the heap nears a soft limit (below the container's). Commands that read many files
	// collect, rarely. GOGC or GOMEMLIMIT, when set, decide instead.
	s := readMemorySettings()
	if s.apply(); s.tune {
		watchHeap(s.softLimit)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// manyFiles is implemented by commands that may read the headers of many files: they collect garbage.
type manyFiles interface{ manyFiles() bool }

// memoryPolicy is the one place garbage collection is tuned for a command: commands that read many
// files collect, rarely; the others do not collect below the soft limit (see main). It changes
// nothing when the user's GOGC or GOMEMLIMIT govern the collector.
func memoryPolicy(cmd any) {
	if m, ok := cmd.(manyFiles); ok && m.manyFiles() && gcTuned {
		debug.SetGCPercent(400)
	}
}

func (c *dupesCmd) manyFiles() bool   { return true }
func (c *inspectCmd) manyFiles() bool { return c.Short }
func (c *checkCmd) manyFiles() bool   { return len(c.Files) > 1 }

// watchHeap hands memory back to proportional collection when what stays alive nears the soft limit
// (a header of many millions of entries): past it, the limit alone would run the collector back to
// back, each run freeing almost nothing. The heap then grows to at most 1.5 times what is alive.
func watchHeap(softLimit int64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		runtime.SetFinalizer(new([16]byte), func(*[16]byte) { // runs after each collection
			if metrics.Read(sample); sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > uint64(softLimit)*3/4 {
				debug.SetGCPercent(50)
				debug.SetMemoryLimit(math.MaxInt64)
				return
			}
			arm()
		})
	}
	arm()
}

// formatted is implemented by commands that cannot write every format (as their flags stand): a
// format given on the command line that is not among them is a usage error, not ignored. with names
// the flag that narrows them (" with --canonical"), if any.
type formatted interface {
	formats() (formats []string, with string)
}

func (c *hashCmd) formats() ([]string, string) {
	if c.Canonical {
		return []string{"text"}, " with --canonical" // the canonical bytes themselves
	}
	return allFormats, ""
}

func (c *dupesCmd) formats() ([]string, string) {
	switch {
	case c.PrintDeletable:
		return []string{"text"}, " with --print-deletable" // paths, for xargs
	case c.Delete || c.Link:
		return allFormats, " acting" // the log of what was done
	}
	return withHTML, ""
}

func (c *inspectCmd) formats() ([]string, string) {
	if c.Short {
		return withHTML, " --short"
	}
	return allFormats, ""
}

// formatHint is implemented by commands that can write a format given other flags.
type formatHint interface{ formatHint(format string) string }

func (c *inspectCmd) formatHint(format string) string {
	if format == "html" && !c.Short {
		return "`stdiff inspect --short --format html DIR` makes a gallery of the models in DIR"
	}
	return ""
}

func (c *checkCmd) formats() ([]string, string) { return withHTML, "" }
func (c *diffCmd) formats() ([]string, string)  { return withHTML, "" }

func (c *snapshotCmd) formats() ([]string, string) { return []string{"json"}, "" }
func (c *versionCmd) formats() ([]string, string)  { return []string{"text", "json"}, "" }

// allFormats are the formats of --format every report is written in; withHTML adds a page.
var (
	allFormats = []string{"text", "json", "jsonl", "markdown"}
	withHTML   = append(allFormats[:len(allFormats):len(allFormats)], "html")
)

// versionCmd is `stdiff version`, which main answers itself.
type versionCmd struct{}

// writeVersionJSON writes `stdiff version --json`: {"schema": "stdiff.version/v1", "version": …}, the
// version as the text prints it, without "stdiff ".
func writeVersionJSON(w io.Writer, v string) int {
	err := textfmt.WriteJSON(w, struct {
		Schema  string `json:"schema"`
		Version string `json:"version"`
	}{"stdiff.version/v1", strings.TrimPrefix(v, "stdiff ")})
	if err != nil {
		fmt.Fprintf(os.Stderr, "stdiff: writing the output: %v\n", err)
		return exitTrouble
	}
	return exitOK
}

// newParser is stdiff's kong parser of the command line into c: the CLI's model, which --help and the
// command pages (docs/, made by TestDocs) are written from.
func newParser(c *cli, stdout, stderr io.Writer, version string) (*kong.Kong, error) {
	return kong.New(c, kong.Name("stdiff"), kong.Description("Diff, hash, inspect and check models: safetensors, GGUF, PyTorch, NumPy and ONNX files, shard sets, folders, remote files."),
		kong.Writers(stdout, stderr), kong.Exit(func(code int) { panic(exitPanic(code)) }), kong.Help(printHelp),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}), kong.Vars{"version": version})
}

// interruptGrace is how long the work has to end after Ctrl-C or SIGTERM before the process ends
// without it.
const interruptGrace = 2 * time.Second

// exitPanic carries kong's exit request (after --help or --version) out of the parser.
type exitPanic int

// run is the whole program; it returns the exit status. Ctrl-C (or SIGTERM) cancels the command's
// context, and ends the process interruptGrace later if the work has not ended by then; a second one
// ends the process at once.
func run(args []string, stdout, stderr io.Writer) (code int) {
	bi, _ := debug.ReadBuildInfo()
	if len(args) == 1 && (args[0] == "version" || args[0] == "--version") {
		// Answered before the command line's model is built (most of a start's work): it needs none of it.
		fmt.Fprintln(stdout, versionString(version, revision, bi))
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	returned := make(chan struct{})
	defer close(returned) // before stop, which ends ctx too
	context.AfterFunc(ctx, func() {
		stop()
		// Work checks ctx as it goes and ends within moments; a call blocked in the system (a stalled
		// disk or mount) does not, and the process ends without it.
		time.AfterFunc(interruptGrace, func() {
			select {
			case <-returned:
			default:
				fmt.Fprintln(stderr, "stdiff: interrupted")
				os.Exit(exitTrouble)
			}
		})
	})
	var c cli
	parser, err := newParser(&c, stdout, stderr, versionString(version, revision, bi))
	if err != nil {
		fmt.Fprintf(stderr, "stdiff: %v\n", err)
		return exitTrouble
	}
	defer func() {
		switch r := recover().(type) {
		case nil:
		case exitPanic: // after --help or --version; kong's usage errors (80) are 2, as is no command
			if code = exitOK; r != 0 || len(args) == 0 {
				code = exitTrouble
			}
		default:
			panic(r)
		}
	}()
	if len(args) == 0 { // no command: the overview, on stderr, as a usage error
		parser.Stdout = stderr
		_, _ = parser.Parse([]string{"--help"})
	}
	if word, cmd := mistypedCommand(parser.Model, args); cmd != "" {
		return usageError(parser, nil, "`stdiff help` lists the commands", "no command %s and no such file: did you mean %s?", textfmt.Escape(strconv.Quote(word)), cmd)
	}
	kctx, err := parser.Parse(args)
	if pe := (*kong.ParseError)(nil); errors.As(err, &pe) {
		kctx = pe.Context
	}
	if err != nil || kctx.Selected() == nil {
		return usageError(parser, kctx, "", "%s", strings.TrimSuffix(cmp.Or(err, errors.New("no command given")).Error(), "."))
	}
	formatGiven := slices.ContainsFunc(kctx.Path, func(p *kong.Path) bool { return p.Flag != nil && p.Flag.Name == "format" })
	if c.JSON && c.Format != "json" && formatGiven {
		return usageError(parser, kctx, "--json is short for --format json: give one of them", "--json and --format %s ask for two formats", c.Format)
	} else if c.JSON {
		c.Format, formatGiven = "json", true
	}
	target := kctx.Selected().Target.Addr().Interface()
	if f, ok := target.(formatted); ok && formatGiven {
		if formats, with := f.formats(); !slices.Contains(formats, c.Format) {
			hint := ""
			if h, ok := target.(formatHint); ok {
				hint = h.formatHint(c.Format)
			}
			return usageError(parser, kctx, hint, "%s%s writes %s only, not %s", kctx.Selected().Name, with, strings.Join(formats, ", "), c.Format)
		}
	}
	cmd, isCommand := target.(command)
	switch name := c.Help.Command; {
	case isCommand:
	case kctx.Selected().Name == "version":
		if c.Format == "json" {
			return writeVersionJSON(stdout, versionString(version, revision, bi))
		}
		fmt.Fprintln(stdout, versionString(version, revision, bi))
		return exitOK
	case name != "" && !slices.ContainsFunc(parser.Model.Children, func(n *kong.Node) bool { return n.Name == name }):
		return usageError(parser, kctx, "`stdiff help` lists the commands", "no command %s", textfmt.Escape(strconv.Quote(name)))
	default: // stdiff help [COMMAND]
		_, _ = parser.Parse(append(strings.Fields(name), "--help")) // prints and exits
	}
	o := &out{ctx: ctx, w: textfmt.NewSyncWriter(stdout), stdout: stdout, errw: stderr, format: textfmt.Format(c.Format),
		src: source.Options{Endpoint: os.Getenv("HF_ENDPOINT"), Token: os.Getenv("HF_TOKEN")}}
	o.pal.On = o.format == textfmt.Text && colorWanted(c.Color) && (toTerminal(cmd) || c.Color == "always")
	memoryPolicy(cmd)
	limit := timeLimit(cmd, c.Timeout)
	if limit > 0 {
		var cancel context.CancelFunc
		o.ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	code = runTo(o, cmd)
	switch err := o.ctx.Err(); {
	case errors.Is(err, context.DeadlineExceeded):
		o.errorf("allow more time with --timeout, e.g. --timeout 10m (0: no limit)", "timed out after %s", limit)
		code = exitTrouble
	case err != nil:
		o.errorf("", "interrupted")
		code = exitTrouble
	}
	if err := cmp.Or(o.w.Flush(), o.written); err != nil { // a failed write fails the flush too: one message
		fmt.Fprintf(stderr, "stdiff: writing the output: %v\n", err)
		code = exitTrouble
	}
	return code
}

// usageError prints a usage error in stdiff's voice, then the command's usage line and where to read
// more (not the whole help, which would bury the error): exit status 2.
func usageError(parser *kong.Kong, kctx *kong.Context, hint, format string, args ...any) int {
	io.WriteString(parser.Stderr, message(hint, format, args...))
	if kctx == nil {
		return exitTrouble
	}
	usage, more := "stdiff <command> [flags]", "stdiff --help"
	if node := kctx.Selected(); node != nil {
		usage, more = "stdiff "+node.Summary(), "stdiff "+node.Path()+" --help"
	}
	fmt.Fprintf(parser.Stderr, "Usage: %s\nRun \"%s\" for more information.\n", usage, more)
	return exitTrouble
}
