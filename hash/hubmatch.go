package hash

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// HubMatchSchema is the schema of a HubMatchReport's JSON.
const HubMatchSchema = "stdiff.hash-hub/v1"

// How a local file was found equal to a Hub file: by the identity the Hub lists for it.
const (
	ByXet     = "xet"      // the Xet hash (the tree API's xetHash)
	BySHA256  = "sha256"   // the SHA-256 of an LFS file without a Xet hash (lfs.oid)
	ByGitSHA1 = "git-sha1" // git's blob ID of a file kept in git itself (oid)
)

// HubMatchReport says which local files equal which files of a repository on the Hub, from the Hub's
// tree API alone: nothing is downloaded.
type HubMatchReport struct {
	Schema string `json:"schema"`
	// Repo is the repository as named (hf://ORG/REPO[@REV][/FOLDER]).
	Repo  string     `json:"repo"`
	Files []HubMatch `json:"files"`
}

// HubMatch is one local file and the Hub files whose bytes it has (none: it is not in the repository).
type HubMatch struct {
	Path    string          `json:"path"`
	Size    int64           `json:"size"`
	Matches []HubMatchEntry `json:"matches"`
	// Err is why the file could not be read (Error in JSON).
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`
}

// HubMatchEntry is a Hub file a local file equals, and the identity that says so.
type HubMatchEntry struct {
	Path string `json:"path"`
	By   string `json:"by"`
}

// MatchHub lists the files of repo (hf://ORG/REPO[@REV][/FOLDER], see source.ListHubFiles) and says,
// for each local file under paths (files, or folders walked, links to files followed, .git left out),
// which Hub files have its bytes: by Xet hash where the Hub lists one, else by the SHA-256 of an LFS
// file, else by git's blob ID. Only local files whose size is that of a Hub file are read. A repository
// that cannot be listed is an error; a local file that cannot be read is a HubMatch with Err.
func MatchHub(ctx context.Context, repo string, paths []string, opt Options) (*HubMatchReport, error) {
	hub, err := source.ListHubFiles(ctx, repo, opt.Source)
	if err != nil {
		return nil, err
	}
	bySize := map[int64][]source.HubFile{}
	for _, f := range hub {
		bySize[f.Size] = append(bySize[f.Size], f)
	}
	locals, err := localFiles(paths)
	if err != nil {
		return nil, err
	}
	r := &HubMatchReport{Schema: HubMatchSchema, Repo: repo, Files: []HubMatch{}}
	for _, l := range locals {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := HubMatch{Path: l.path, Size: l.size, Matches: []HubMatchEntry{}}
		if cands := bySize[l.size]; len(cands) > 0 {
			if m.Matches, m.Err = matchFile(ctx, l.path, l.size, cands, opt); m.Err != nil {
				m.Matches, m.Error = []HubMatchEntry{}, m.Err.Error()
			}
		}
		r.Files = append(r.Files, m)
	}
	return r, nil
}

type localFile struct {
	path string
	size int64
}

// localFiles are the regular files paths name, folders walked in lexical order.
func localFiles(paths []string) ([]localFile, error) {
	var out []localFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, canon.PathError("stat", p, err)
		}
		if !st.IsDir() {
			if st.Mode().IsRegular() {
				out = append(out, localFile{p, st.Size()})
			}
			continue
		}
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			st, err := os.Stat(q) // follows links: the Hugging Face cache's snapshots link to its blobs
			if err == nil && st.Mode().IsRegular() {
				out = append(out, localFile{q, st.Size()})
			}
			return nil
		})
		if err != nil {
			return nil, canon.PathError("read", p, err)
		}
	}
	return out, nil
}

// matchFile hashes the local file as the candidates (Hub files of its size) need and returns those it
// equals, in path order.
func matchFile(ctx context.Context, path string, size int64, cands []source.HubFile, opt Options) ([]HubMatchEntry, error) {
	var needXet, needSums bool
	for _, c := range cands {
		if c.XetHash != "" {
			needXet = true
		} else {
			needSums = true
		}
	}
	var xetHash, sha, gitSHA string
	if needXet {
		x, err := XetOfFile(ctx, path, opt)
		if err != nil {
			return nil, err
		}
		xetHash = x.Hash
	}
	if needSums {
		f, _, err := canon.OpenRegular(path, os.O_RDONLY)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		s, g := sha256.New(), sha1.New()
		fmt.Fprintf(g, "blob %d\x00", size)
		if _, err := io.Copy(io.MultiWriter(s, g), io.LimitReader(f, size)); err != nil {
			return nil, canon.PathError("read", path, err)
		}
		sha, gitSHA = hex.EncodeToString(s.Sum(nil)), hex.EncodeToString(g.Sum(nil))
	}
	var out []HubMatchEntry
	for _, c := range cands {
		switch {
		case c.XetHash != "":
			if strings.EqualFold(c.XetHash, xetHash) {
				out = append(out, HubMatchEntry{c.Path, ByXet})
			}
		case c.LFS != nil:
			if strings.EqualFold(c.LFS.OID, sha) {
				out = append(out, HubMatchEntry{c.Path, BySHA256})
			}
		case strings.EqualFold(c.OID, gitSHA):
			out = append(out, HubMatchEntry{c.Path, ByGitSHA1})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if out == nil {
		out = []HubMatchEntry{}
	}
	return out, nil
}

// Outcome is Trouble when a local file could not be read, else Found when one is in no file of the
// repository, else Clean.
func (r *HubMatchReport) Outcome() canon.Outcome {
	o := canon.Clean
	for _, f := range r.Files {
		switch {
		case f.Err != nil:
			o = canon.Trouble
		case len(f.Matches) == 0:
			o = max(o, canon.Found)
		}
	}
	return o
}

// WriteHubMatch writes the report in opt.Format. Text is a line per local file: `<path>: <hub path>
// (<by>)` for each Hub file it equals, or `<path>: not in <repo>` (both left out with opt.OnlyFailed).
// JSON is one indented object: {schema, repo, files: [...]}. JSONL is a record per local file, each
// with "schema". Other formats write the text.
func WriteHubMatch(w io.Writer, r *HubMatchReport, opt WriteOptions) error {
	switch opt.Format {
	case textfmt.JSON:
		return textfmt.WriteJSON(w, r)
	case textfmt.JSONL:
		return writeHubMatchJSONL(w, r)
	}
	return writeHubMatchText(w, r, opt)
}

// writeHubMatchText writes a line per local file (WriteHubMatch).
func writeHubMatchText(w io.Writer, r *HubMatchReport, opt WriteOptions) error {
	out := &writer{w: w}
	for _, f := range r.Files {
		p := textfmt.Escape(f.Path)
		switch {
		case f.Err != nil:
			out.printf("%s: %s\n", p, opt.Palette.Red("FAILED open or read"))
		case len(f.Matches) == 0:
			if !opt.OnlyFailed {
				out.printf("%s: not in %s\n", p, textfmt.Escape(r.Repo))
			}
		case !opt.OnlyFailed:
			for _, m := range f.Matches {
				out.printf("%s: %s %s (%s)\n", p, opt.Palette.Green("="), textfmt.Escape(m.Path), m.By)
			}
		}
	}
	return out.err
}

// writeHubMatchJSONL writes the report as JSON Lines (WriteHubMatch).
func writeHubMatchJSONL(w io.Writer, r *HubMatchReport) error {
	records := make([]any, len(r.Files))
	for i := range r.Files {
		records[i] = r.Files[i]
	}
	return textfmt.WriteRecords(w, HubMatchSchema, records...)
}
