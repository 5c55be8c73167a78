package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

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
	var stage string
	var n, total int
	var read int64
	mu, stop := o.progress(func() string {
		return fmt.Sprintf("%s: %d of %d, %s of tensor data read", stage, n, total, textfmt.Bytes(uint64(read)))
	})
	opt.Progress = func(s string, k, t int, b int64) { mu.Lock(); stage, n, total, read = s, k, t, b; mu.Unlock() }
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
	return write(o, rep, c.Quiet, rep.Outcome(), writers[*dupes.Report]{
		text: func(w io.Writer, r *dupes.Report) error {
			return dupes.WriteText(w, r, dupes.TextOptions{Palette: o.pal, Full: c.Full})
		},
		json: dupes.WriteJSON, jsonl: dupes.WriteJSONL, markdown: dupes.WriteMarkdown})
}
