package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash/dupes"
)

type dupesCmd struct {
	Level      string   `help:"content: identical files and same-tensor copies; structure: also files of the same architecture." enum:"content,structure" default:"content"`
	Full       bool     `help:"Shorten nothing: every metadata key a copy differs in, every model a note names."`
	Quiet      bool     `short:"q" help:"Write no report: the exit status answers (errors still go to stderr)."`
	NoCache    bool     `help:"Neither read nor write the cache of content IDs."`
	ClearCache bool     `help:"Delete the cache of content IDs first."`
	Paths      []string `arg:"" optional:"" name:"PATH" help:"Folders (searched recursively) and files." type:"string"`
}

func (c *dupesCmd) run(o *out) int {
	opt := dupes.Options{Structure: c.Level == "structure", Source: o.src}
	// The cache: $STDIFF_CACHE_DIR/dupes-v1.json, else the user cache folder's stdiff/dupes-v1.json.
	dir, err := os.UserCacheDir()
	dir = filepath.Join(dir, "stdiff")
	if env := os.Getenv("STDIFF_CACHE_DIR"); env != "" {
		dir, err = env, nil
	}
	path := filepath.Join(dir, dupes.CacheFile)
	if err != nil && (!c.NoCache || c.ClearCache) {
		o.errorf("", "no cache folder: %v (set STDIFF_CACHE_DIR)", err)
		return exitTrouble
	}
	if c.ClearCache {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			o.errorf("", "clearing the cache: %v", err)
			return exitTrouble
		}
		if len(c.Paths) == 0 {
			o.errorf("", "cache cleared (%s)", textfmt.Escape(path))
			return exitOK
		}
	}
	if !c.NoCache {
		if opt.Cache, err = dupes.OpenCache(path); err != nil { // one line; the scan goes on
			hint := ""
			var ce *dupes.CacheError
			if errors.As(err, &ce) && ce.Problem == dupes.CacheNotFile {
				hint = "remove it, or set STDIFF_CACHE_DIR to another folder"
			}
			o.errorf(hint, "%s", textfmt.Escape(err.Error()))
		}
	}
	if len(c.Paths) == 0 {
		o.errorf("try `stdiff dupes ~/loras`", "dupes needs at least one PATH")
		return exitTrouble
	}
	stop := o.stageProgress(&opt.Progress)
	rep, err := dupes.Find(o.ctx, c.Paths, opt)
	stop()
	if err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	for _, f := range rep.Errors {
		o.readFailed(f.Err)
	}
	if opt.Cache != nil {
		if err := opt.Cache.Save(o.ctx); err != nil {
			o.errorf("run with --no-cache to do without", "saving the cache %s: %v", textfmt.Escape(opt.Cache.Path()), err)
		}
	}
	if !c.Quiet {
		switch o.format {
		case "json":
			err = dupes.WriteJSON(o.w, rep)
		case "jsonl":
			err = dupes.WriteJSONL(o.w, rep)
		case "markdown":
			err = dupes.WriteMarkdown(o.w, rep)
		default:
			err = dupes.WriteText(o.w, rep, dupes.TextOptions{Palette: o.pal, Full: c.Full})
		}
		if err != nil {
			o.errorf("", "writing the report: %v", err)
			return exitTrouble
		}
	}
	return int(rep.Outcome())
}

// stageProgress sets *update to show the stages of a scan on stderr when it is a terminal, at most ten
// times a second; the func it returns clears the line.
func (o *out) stageProgress(update *func(stage string, n, total int, bytes int64)) func() {
	f, ok := o.errw.(*os.File)
	if !ok || !isTerminal(f) {
		return func() {}
	}
	var mu sync.Mutex
	var last time.Time
	*update = func(stage string, n, total int, bytes int64) {
		mu.Lock()
		defer mu.Unlock()
		if n == total || time.Since(last) >= 100*time.Millisecond {
			last = time.Now()
			fmt.Fprintf(f, "\r\x1b[K%s: %d of %d, %s of tensor data read", stage, n, total, textfmt.Bytes(uint64(bytes)))
		}
	}
	return func() { fmt.Fprint(f, "\r\x1b[K") }
}
