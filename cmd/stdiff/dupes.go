package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff"
	"github.com/stdiff/stdiff/hash/dupes"
)

type dupesCmd struct {
	Level      string   `help:"content: identical files and same-tensor copies; structure: also files of the same architecture." enum:"content,structure" default:"content"`
	NoCache    bool     `help:"Neither read nor write the cache of content IDs."`
	ClearCache bool     `help:"Delete the cache of content IDs first."`
	Paths      []string `arg:"" optional:"" name:"PATH" help:"Folders (searched recursively) and files." type:"string"`
}

type dupesGroupJSON struct {
	dupes.Group
	Differences map[string]string `json:"differences,omitempty"`
}

// groupJSON is a group as scripts see it: files[] are the paths, members[] the details.
type groupJSON struct {
	Level       dupes.Level       `json:"level"`
	Files       []string          `json:"files"`
	Members     []dupes.File      `json:"members"`
	StructureID string            `json:"structure_id"`
	ContentID   string            `json:"content_id,omitempty"`
	Keeper      string            `json:"keeper,omitempty"`
	Reclaimable int64             `json:"reclaimable"`
	Differences map[string]string `json:"differences,omitempty"`
}

func (c *dupesCmd) run(o *out) int {
	var cache *dupes.Cache
	if !c.NoCache || c.ClearCache {
		path, err := cachePath()
		if err != nil {
			o.errorf("", "%v", err)
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
			if cache, err = dupes.OpenCache(path); err != nil { // one line; the scan goes on
				hint := ""
				var ce *dupes.CacheError
				if errors.As(err, &ce) && ce.Problem == dupes.CacheNotFile {
					hint = "remove it, or set STDIFF_CACHE_DIR to another folder"
				}
				o.errorf(hint, "%s", textfmt.Escape(err.Error()))
			}
		}
	}
	if len(c.Paths) == 0 {
		o.errorf("try `stdiff dupes ~/loras`", "dupes needs at least one PATH")
		return exitTrouble
	}
	status := exitOK
	for _, p := range c.Paths {
		if _, err := os.Stat(p); err != nil && !source.IsRemote(p) {
			o.readFailed(&canon.ReadError{Name: p, Err: errors.New("no such file or folder")})
			status = exitTrouble
		}
	}
	paths, walkStatus := o.walk(c.Paths)
	status = max(status, walkStatus)
	prog := o.stageProgress()
	rep, err := dupes.Find(o.ctx, paths, dupes.Options{Structure: c.Level == "structure", Cache: cache, Source: o.src, Progress: prog.update})
	prog.stop()
	if err != nil {
		o.readFailed(err)
		return exitTrouble
	}
	if cache != nil {
		if err := cache.Save(o.ctx); err != nil {
			o.errorf("run with --no-cache to do without", "saving the cache %s: %v", textfmt.Escape(cache.Path()), err)
		}
	}
	groups := make([]dupesGroupJSON, len(rep.Groups))
	for i, g := range rep.Groups {
		groups[i] = dupesGroupJSON{Group: g}
		if g.Level == dupes.LevelContent {
			groups[i].Differences = differences(o, g)
		}
	}
	if len(groups) > 0 && status == exitOK {
		status = exitFound
	}
	if o.format == "json" {
		js := make([]groupJSON, 0, len(groups))
		for _, g := range groups {
			gj := groupJSON{Level: g.Level, Members: g.Files, StructureID: g.StructureID, ContentID: g.ContentID,
				Keeper: g.Keeper, Reclaimable: g.Reclaimable, Differences: g.Differences}
			for _, f := range g.Files {
				gj.Files = append(gj.Files, f.Path)
			}
			js = append(js, gj)
		}
		o.writeJSON(struct {
			Schema          string          `json:"schema"`
			Groups          []groupJSON     `json:"groups"`
			Skipped         []dupes.Skipped `json:"skipped"`
			Notes           []dupes.Note    `json:"notes"`
			Files           int             `json:"files"`
			TensorBytesRead int64           `json:"tensor_bytes_read"`
			Reclaimable     int64           `json:"reclaimable"`
		}{"stdiff.dupes/v1", js, rep.Skipped, rep.Notes, rep.Files, rep.TensorBytesRead, rep.Reclaimable})
		return status
	}
	for _, g := range groups {
		if o.format == "markdown" {
			o.printf("**%s** (%s, %s reclaimable)\n\n", g.Level, textfmt.Plural(len(g.Files), "file"), textfmt.Bytes(uint64(g.Reclaimable)))
			for _, f := range g.Files {
				line := markdown.Text(f.Path)
				if d := g.Differences[f.Path]; d != "" {
					line += " — " + markdown.Text(d)
				}
				o.printf("- %s\n", line)
			}
			o.printf("\n")
			continue
		}
		c.printGroup(o, g)
	}
	printDupeNotes(o, rep.Notes)
	if len(rep.Skipped) > 0 && o.format == "markdown" {
		o.printf("skipped %s:\n\n", textfmt.Plural(len(rep.Skipped), "file"))
		for _, s := range rep.Skipped {
			o.printf("- %s: %s\n", markdown.Text(s.Path), markdown.Text(s.Reason))
		}
		o.printf("\n")
	} else if len(rep.Skipped) > 0 {
		o.printf("%s\n", o.pal.Yellow(fmt.Sprintf("skipped %s:", textfmt.Plural(len(rep.Skipped), "file"))))
		for _, s := range rep.Skipped {
			o.printf("  %s: %s\n", textfmt.Escape(s.Path), textfmt.Escape(s.Reason))
		}
		o.printf("\n")
	}
	counts := map[dupes.Level]int{}
	for _, g := range groups {
		counts[g.Level]++
	}
	var parts []string
	for _, l := range []dupes.Level{dupes.LevelBytes, dupes.LevelContent, dupes.LevelStructure} {
		if counts[l] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[l], l))
		}
	}
	found := "no duplicates"
	if len(parts) > 0 {
		found = textfmt.Plural(len(groups), "group") + " (" + strings.Join(parts, ", ") + ")"
	}
	o.printf("%s scanned: %s, %s reclaimable; %s of tensor data read\n", textfmt.Plural(rep.Files, "model"), found,
		textfmt.Bytes(uint64(rep.Reclaimable)), textfmt.Bytes(uint64(rep.TensorBytesRead)))
	return status
}

func (c *dupesCmd) printGroup(o *out, g dupesGroupJSON) {
	size := textfmt.Bytes(uint64(g.Files[0].Size))
	switch g.Level {
	case dupes.LevelBytes:
		o.printf("%s  %d identical files, %s each, %s reclaimable\n", o.pal.Bold("bytes"), len(g.Files), size, textfmt.Bytes(uint64(g.Reclaimable)))
	case dupes.LevelContent:
		o.printf("%s  %d files with the same tensors, other metadata or layout, %s reclaimable\n", o.pal.Bold("content"), len(g.Files), textfmt.Bytes(uint64(g.Reclaimable)))
	default:
		o.printf("%s  %d files of the same architecture, different weights\n", o.pal.Bold("structure"), len(g.Files))
	}
	width := 0
	for _, f := range g.Files {
		width = max(width, min(len(textfmt.Escape(f.Path)), 60))
	}
	for _, f := range g.Files {
		if d := g.Differences[f.Path]; d != "" {
			o.printf("  %-*s  %s\n", width, textfmt.Escape(f.Path), o.pal.Dim(d))
		} else {
			o.printf("  %s\n", textfmt.Escape(f.Path))
		}
	}
	o.printf("\n")
}

// printDupeNotes lists the notes, one block per code.
func printDupeNotes(o *out, notes []dupes.Note) {
	byCode := map[string][]dupes.Note{}
	var codes []string
	for _, n := range notes {
		if byCode[n.Code] == nil {
			codes = append(codes, n.Code)
		}
		byCode[n.Code] = append(byCode[n.Code], n)
	}
	for _, code := range codes {
		ns := byCode[code]
		switch code {
		case dupes.NoteSharesFiles:
			o.printf("%s\n", o.pal.Yellow(fmt.Sprintf("%s share files with other models (%s), so are never offered as copies to delete:",
				textfmt.Plural(len(ns), "model"), code)))
		default:
			o.printf("%s\n", o.pal.Yellow(code+":"))
		}
		for _, n := range ns {
			with := make([]string, 0, 3)
			for _, w := range n.With[:min(len(n.With), 3)] {
				with = append(with, textfmt.Escape(w))
			}
			if len(n.With) > 3 {
				with = append(with, fmt.Sprintf("%d more", len(n.With)-3))
			}
			o.printf("  %s: with %s\n", textfmt.Escape(n.Path), strings.Join(with, ", "))
		}
		o.printf("\n")
	}
}

// cachePath is where the cache of content IDs lives: $STDIFF_CACHE_DIR/dupes-v1.json, else the user
// cache folder's stdiff/dupes-v1.json.
func cachePath() (string, error) {
	if dir := os.Getenv("STDIFF_CACHE_DIR"); dir != "" {
		return filepath.Join(dir, dupes.CacheFile), nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder: %w (set STDIFF_CACHE_DIR)", err)
	}
	return filepath.Join(dir, "stdiff", dupes.CacheFile), nil
}

// differences says how each file of a content group differs from the group's first file.
func differences(o *out, g dupes.Group) map[string]string {
	out := map[string]string{}
	first, err := dupeModel(o, g.Files[0].Path)
	if err != nil {
		return out
	}
	for _, f := range g.Files[1:] {
		if f.Header == g.Files[0].Header {
			out[f.Path] = "identical to " + textfmt.Escape(g.Files[0].Path)
			continue
		}
		m, err := dupeModel(o, f.Path)
		if err != nil {
			continue
		}
		r := diff.Compare(diff.Side{Model: first}, diff.Side{Model: m}, diff.Options{})
		var keys []string
		for _, e := range r.Metadata.Added {
			keys = append(keys, "+"+e.Key)
		}
		for _, e := range r.Metadata.Removed {
			keys = append(keys, "-"+e.Key)
		}
		for _, ch := range r.Metadata.Changed {
			keys = append(keys, ch.Key)
		}
		var what []string
		if len(keys) > 0 {
			if len(keys) > 4 {
				keys = append(keys[:4], fmt.Sprintf("… %d more", len(keys)-4))
			}
			what = append(what, "metadata: "+strings.Join(keys, ", "))
		}
		var layout []string
		labels := map[diff.NoteCode]string{diff.NoteHeaderSize: "header size", diff.NoteTensorOrder: "tensor order",
			diff.NoteOffsets: "offsets", diff.NoteKeyOrder: "key order"}
		for _, n := range r.Notes {
			switch {
			case n.Code == diff.NoteSharding:
				layout = append(layout, n.Message)
			case labels[n.Code] != "":
				layout = append(layout, labels[n.Code])
			}
		}
		if len(layout) > 0 {
			what = append(what, "layout: "+strings.Join(layout, ", "))
		}
		if len(what) == 0 {
			what = append(what, "same metadata; header bytes differ")
		}
		out[f.Path] = strings.Join(what, "; ")
	}
	return out
}

// dupeModel reads a model the way dupes sees it: an index is its shard set, anything else one file.
func dupeModel(o *out, path string) (*canon.Model, error) {
	open := source.OpenFileModel
	if strings.HasSuffix(path, ".safetensors.index.json") || source.IsRemote(path) {
		open = func(ctx context.Context, p string) (*source.Opened, error) { return source.Open(ctx, p, o.src) }
	}
	opened, err := open(o.ctx, path)
	if err != nil {
		return nil, err
	}
	defer opened.Close()
	return opened.Model, nil
}

// stageProgress shows the stages of a scan on stderr when it is a terminal.
type stageProgress struct {
	mu    sync.Mutex
	last  time.Time
	f     *os.File
	start time.Time
}

func (o *out) stageProgress() *stageProgress {
	p := &stageProgress{start: time.Now()}
	if f, ok := o.errw.(*os.File); ok && isTerminal(f) {
		p.f = f
	}
	return p
}

func (p *stageProgress) update(stage string, n, total int, bytes int64) {
	if p.f == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond && n != total {
		return
	}
	p.last = time.Now()
	eta := ""
	if el := time.Since(p.start); n > 0 && n < total {
		eta = fmt.Sprintf(", about %s left in this stage", (time.Duration(float64(el) * float64(total-n) / float64(n))).Round(time.Second))
	}
	fmt.Fprintf(p.f, "\r\x1b[K%s: %d of %d files, %s of tensor data read%s", stage, n, total, textfmt.Bytes(uint64(bytes)), eta)
}

func (p *stageProgress) stop() {
	if p.f != nil {
		fmt.Fprintf(p.f, "\r\x1b[K")
	}
}
