package dupes

import (
	"context"
	"os"
	"path/filepath"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/store"
	"github.com/stdiff/stdiff/hash/dupes/internal/diskfile"
	"github.com/stdiff/stdiff/hash/dupes/internal/pipeline"
)

// NotePipelineDiffers is the code of a Note: a diffusers pipeline folder (Path, its model_index.json)
// and a DDUF file (With) hold the same weights files, name for name and byte for byte, but other
// files beside them (Files): neither is a copy of the other, since deleting either would lose them.
const NotePipelineDiffers NoteCode = "pipeline-differs"

// FileDifference is a file that a pipeline folder and a DDUF file do not share (NotePipelineDiffers).
type FileDifference struct {
	// Name is the file's path in the folder, slash-separated: the member's name in the archive.
	Name string `json:"name"`
	// Change is how the two sides differ: "folder-only" (the archive lacks it), "archive-only" (the
	// folder lacks it), "other-bytes", or "not-a-file" (an entry of the folder that is no regular file:
	// a link).
	Change string `json:"change"`
}

// pipelineGroups adds the content groups of a diffusers pipeline folder whose components the scan
// found (s.pipelines) and the DDUF files that hold its very files (pipeline.Find), and the notes of a
// folder and a DDUF file with the same weights and other files beside them. The folder is one member,
// named by its model_index.json, every other file under it its companions, deleted whole or not at all.
func (s *finder) pipelineGroups(ctx context.Context, live []*scanned) {
	ddufs := map[string]*scanned{}
	var paths []string
	for _, f := range live {
		if f.format == canon.FormatDDUF && f.err == nil && !f.set && !f.shared && !source.IsRemote(f.path) {
			ddufs[f.path], paths = f, append(paths, f.path)
		}
	}
	matches, differs := pipeline.Find(ctx, paths, s.pipelines)
	for _, d := range differs {
		n := Note{Code: NotePipelineDiffers, Path: filepath.Join(d.Dir, source.PipelineFile), With: []string{d.DDUF}}
		for _, x := range d.Diffs {
			n.Files = append(n.Files, FileDifference{Name: x.Name, Change: string(x.Change)})
		}
		s.rep.Notes = append(s.rep.Notes, n)
	}
	for _, m := range matches {
		folder := pipelineFolder(m, s.roots)
		g := []*scanned{folder}
		for _, p := range m.Same {
			f := ddufs[p]
			folder.structure, folder.dataLen, folder.k, f.sidecars = f.structure, f.dataLen, f.k, lora.SidecarFiles(p)
			g = append(g, f)
		}
		if g, why := keepSafe(g, s.opt.Keep); folder.path != "" && len(g) > 1 {
			s.rep.Groups = append(s.rep.Groups, makeGroup(LevelContent, g, why))
		}
	}
}

// pipelineFolder is the pipeline folder of m as a scanned model, named by its model_index.json, its
// other files its companions (path "" when model_index.json is not a regular file).
func pipelineFolder(m pipeline.Match, roots []string) *scanned {
	index := filepath.Join(m.Dir, source.PipelineFile)
	st, err := os.Stat(index)
	if err != nil || !st.Mode().IsRegular() {
		return &scanned{}
	}
	f := &scanned{path: index, pipeline: true, mtime: st.ModTime().UnixNano(), ctime: diskfile.ChangeTime(st),
		managed: store.ManagedBy(index), root: rootIndex(roots, index)}
	f.dev, f.ino, f.nlink = diskfile.ID(st)
	for _, x := range m.Files {
		if f.size += x.Info.Size(); x.Name != source.PipelineFile {
			f.companions = append(f.companions, refOf(filepath.Join(m.Dir, filepath.FromSlash(x.Name)), x.Info))
		}
	}
	return f
}
