package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// shortRow is one file in `inspect --short`.
type shortRow struct {
	Path      string   `json:"path"`
	Name      string   `json:"name,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Family    string   `json:"family,omitempty"`
	BaseModel string   `json:"base_model,omitempty"`
	Rank      int      `json:"rank,omitempty"`
	Size      int64    `json:"size"`
	Triggers  []string `json:"triggers"`
	Valid     bool     `json:"valid"`
	Error     string   `json:"error,omitempty"`
}

// runShort prints one row per file, reading headers and sidecars only, several files at a time.
func (c *inspectCmd) runShort(o *out) int {
	paths, status := o.walk(c.Files)
	rows := make([]shortRow, len(paths))
	if err := pool.Run(o.ctx, 2*runtime.GOMAXPROCS(0), len(paths), func(ctx context.Context, i int) error {
		rows[i] = shortOf(ctx, o.src, paths[i], c.Verify)
		return nil
	}); err != nil {
		return exitTrouble // interrupted or out of time: run says so
	}
	for _, r := range rows {
		switch {
		case r.Error != "":
			status = exitTrouble
		case !r.Valid && status == exitOK:
			status = exitFound
		}
	}
	if o.format == "json" {
		o.writeJSON(filesJSON{Schema: "stdiff.inspect-short/v1", Files: rows})
		return status
	}
	if o.format == "markdown" {
		o.printf("| name | kind | base | rank | size | triggers | file |\n|---|---|---|---|---|---|---|\n")
	}
	widths := []int{4, 4, 4, 4}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		if r.Error != "" {
			cells[i] = []string{"?", "unreadable", "", "", "", textfmt.Escape(r.Error), textfmt.Escape(r.Path)}
			continue
		}
		rank := ""
		if r.Rank > 0 {
			rank = fmt.Sprint(r.Rank)
		}
		kind := r.Kind
		if !r.Valid {
			kind += " (invalid)"
		}
		base := r.Family
		if base == "unknown" {
			base = ""
		}
		trig := make([]string, len(r.Triggers))
		for k, t := range r.Triggers {
			trig[k] = textfmt.Escape(t)
		}
		cells[i] = []string{textfmt.Escape(r.Name), kind, base, rank, textfmt.Bytes(uint64(r.Size)), textfmt.Shorten(strings.Join(trig, ", "), 60), textfmt.Escape(r.Path)}
		for k := range widths {
			widths[k] = max(widths[k], min(len([]rune(cells[i][k])), 40))
		}
	}
	if o.format == "text" {
		o.printf("%-*s  %-*s  %-*s  %*s  %9s  %s\n", widths[0], "NAME", widths[1], "KIND", widths[2], "BASE", widths[3], "RANK", "SIZE", "TRIGGERS · FILE")
	}
	for _, c := range cells {
		if o.format == "markdown" {
			md := make([]string, len(c))
			for k, cell := range c {
				md[k] = markdown.Text(cell)
			}
			o.printf("| %s |\n", strings.Join(md, " | "))
			continue
		}
		trig := c[5]
		if trig != "" {
			trig += " · "
		}
		o.printf("%-*s  %-*s  %-*s  %*s  %9s  %s%s\n", widths[0], c[0], widths[1], c[1], widths[2], c[2], widths[3], c[3], c[4], trig, c[6])
	}
	return status
}

func shortOf(ctx context.Context, opt source.Options, path string, verify bool) shortRow {
	in, err := inspectFile(ctx, opt, path, verify)
	if err != nil {
		return shortRow{Path: path, Error: errorText(err), Triggers: []string{}}
	}
	r := shortRow{Path: path, Size: in.m.FileSize, Valid: in.m.Valid(), Triggers: in.info.Triggers,
		Name: in.info.Name, Kind: string(in.info.Kind), Family: string(in.info.Family), BaseModel: in.info.BaseModel, Rank: in.info.Rank}
	if !in.m.HeaderParsed {
		r.Kind, r.Family = "not a model", ""
	}
	return r
}

// walk expands folders into the models under them (see source.Walk), reporting what it cannot read.
func (o *out) walk(roots []string) ([]string, int) {
	paths, errs := source.Walk(o.ctx, roots, source.WalkOptions{})
	status := exitOK
	for _, err := range errs {
		o.readFailed(err)
		status = exitTrouble
	}
	return paths, status
}
