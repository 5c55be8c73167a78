package derived

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/inspect"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/source"
)

// modelExts are the endings of the files Inherit considers as originals.
var modelExts = []string{".safetensors", ".pt", ".pth", ".ckpt", ".bin"}

// Inherit gives the card of a local model without a sidecar of its own what is known of the model
// it is derived from (rounded, a subset, the same tensors): the original's
// name, CivitAI ids, base model and trigger words, each said to come from it ("derived from
// dreamy_v3.safetensors (rounded to F16)"). The original is looked for cheaply: only among the model
// files of the same folder that have a sidecar (nothing else has anything to give), compared by their
// names and shapes first, values only where those match.
func Inherit(ctx context.Context, card *inspect.Card, spec string, src source.Options) {
	if source.IsRemote(spec) || len(lora.SidecarFiles(spec)) > 0 || !card.HeaderParsed {
		return
	}
	entries, err := os.ReadDir(filepath.Dir(spec))
	if err != nil {
		return
	}
	self, err := os.Stat(spec)
	if err != nil || !self.Mode().IsRegular() {
		return
	}
	paths := []string{spec}
	for _, e := range entries {
		p := filepath.Join(filepath.Dir(spec), e.Name())
		if !e.Type().IsRegular() || !slices.Contains(modelExts, strings.ToLower(filepath.Ext(p))) || len(lora.SidecarFiles(p)) == 0 {
			continue
		}
		if st, err := os.Stat(p); err != nil || os.SameFile(st, self) {
			continue
		}
		paths = append(paths, p)
	}
	if len(paths) < 2 {
		return
	}
	rest := paths[1:] // of files holding the same tensors the first is the original: safetensors first
	other := func(p string) int {
		if strings.EqualFold(filepath.Ext(p), ".safetensors") {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(rest, func(a, b string) int { return cmp.Compare(other(a), other(b)) })
	models := make([]Model, len(paths))
	for i, p := range paths {
		models[i] = fileModel(p, src)
	}
	groups, err := Find(ctx, models, 2)
	if err != nil {
		return
	}
	for _, g := range groups {
		for _, m := range g.Members[1:] {
			if m.Index == 0 && g.Members[0].Index != 0 {
				inherit(ctx, card, paths[g.Members[0].Index], m, src)
				return
			}
		}
	}
}

// inherit copies the original's name, CivitAI ids, base model and trigger words into card.
func inherit(ctx context.Context, card *inspect.Card, orig string, m Member, src source.Options) {
	o, err := source.Open(ctx, orig, src)
	if err != nil {
		return
	}
	defer o.Close()
	sidecars, _ := lora.LoadSidecars(ctx, orig)
	in := lora.Derive(o.Model, sidecars, filepath.Base(orig))
	how := string(m.Relation)
	switch {
	case m.Relation == Rounded:
		how = "rounded to " + string(m.RoundedTo)
	case m.Relation == Subset && m.LeftOut != nil:
		how = fmt.Sprintf("%d tensors left out", m.LeftOut.Count)
		if m.RoundedTo != "" {
			how += ", rounded to " + string(m.RoundedTo)
		}
	case m.Relation == SameTensors:
		how = "the same tensors"
	}
	from := fmt.Sprintf("derived from %s (%s)", filepath.Base(orig), how)
	info := &card.Info
	if in.Name != "" {
		info.Name, info.Sources["name"] = in.Name, from
	}
	if in.BaseModel != "" {
		info.BaseModel, info.Sources["base_model"] = in.BaseModel, from
	}
	if in.CivitAI != (lora.CivitAI{}) {
		info.CivitAI, info.Sources["civitai"] = in.CivitAI, from
	}
	if len(in.Triggers) > 0 {
		info.Triggers = slices.Clone(in.Triggers)
		var details []lora.Trigger
		for _, w := range in.Triggers {
			details = append(details, lora.Trigger{Word: w, Source: from})
		}
		for _, d := range info.TriggerDetails {
			if d.Derived {
				details = append(details, d)
			}
		}
		info.TriggerDetails = details
		info.Sources["triggers"] = from
	}
	info.Sources["derived_from"] = from
}

// fileModel is the model at path p as Find reads it.
func fileModel(p string, src source.Options) Model {
	return Model{Path: p, Safetensors: strings.EqualFold(filepath.Ext(p), ".safetensors"),
		Header: func(ctx context.Context) (*canon.Model, error) {
			o, err := source.Open(ctx, p, src)
			if err != nil {
				return nil, err
			}
			defer o.Close()
			if !o.Model.Valid() {
				return nil, canon.ErrUnreadable
			}
			return o.Model, nil
		},
		Open: func(ctx context.Context) (io.ReaderAt, int64, func(), error) {
			o, err := source.Open(ctx, p, src)
			if err != nil {
				return nil, 0, nil, err
			}
			return o.Source, o.Model.DataOffset(), func() { o.Close() }, nil
		}}
}

// InheritRows gives each row of `inspect --short` whose model has no sidecar of its own what the row
// of the model it is derived from shows (Inherit's rule, the original looked for among the models of
// the same folder that have a sidecar): its name, base model, CivitAI ids and trigger words, and its
// preview where the copy has none; Row.DerivedFrom names the original. The models of a folder are
// compared once, together (names and shapes first, values only where those match), and only in a
// folder that holds models with sidecars and models without.
func InheritRows(ctx context.Context, r *inspect.ShortReport, src source.Options, workers int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	byDir := map[string][]int{}
	var dirs []string
	for i := range r.Files {
		f := &r.Files[i]
		if f.Err != nil || f.Error != "" || !f.HeaderParsed || source.IsRemote(f.Path) || !slices.Contains(modelExts, strings.ToLower(filepath.Ext(f.Path))) {
			continue
		}
		d := filepath.Dir(f.Path)
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], i)
	}
	for _, d := range dirs {
		rows := byDir[d]
		own := make([]bool, len(rows))
		n := 0
		names := sidecarNames(d)
		for k, i := range rows {
			if own[k] = hasSidecar(r.Files[i].Path, names); own[k] {
				n++
			}
		}
		if n == 0 || n == len(rows) || ctx.Err() != nil {
			continue
		}
		models := make([]Model, len(rows))
		for k, i := range rows {
			models[k] = fileModel(r.Files[i].Path, src)
		}
		groups, err := Find(ctx, models, workers)
		if err != nil {
			return
		}
		for _, g := range groups {
			o := g.Members[0].Index
			if !own[o] {
				continue
			}
			from := &r.Files[rows[o]]
			for _, m := range g.Members[1:] {
				if own[m.Index] {
					continue
				}
				to := &r.Files[rows[m.Index]]
				if from.Name != "" {
					to.Name = from.Name
				}
				if from.BaseModel != "" {
					to.BaseModel = from.BaseModel
				}
				if from.CivitAI != (lora.CivitAI{}) {
					to.CivitAI = from.CivitAI
				}
				if len(from.Triggers) > 0 {
					to.Triggers = slices.Clone(from.Triggers)
				}
				if to.Preview == "" {
					to.Preview = from.Preview
				}
				to.DerivedFrom = from.Path
			}
		}
	}
}

// sidecarNames are the names in folder dir that may be sidecars: its regular files, and its links
// (to be followed). One listing of a folder instead of a look-up of every sidecar ending for each of
// its models: a folder of 1,000 LoRAs without sidecars costs one read, not 12,000 failed stats.
func sidecarNames(dir string) map[string]fs.FileMode {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := make(map[string]fs.FileMode, len(entries))
	for _, e := range entries {
		if t := e.Type(); t.IsRegular() || t&fs.ModeSymlink != 0 {
			names[e.Name()] = t
		}
	}
	return names
}

// hasSidecar reports whether the model at path has a sidecar (lora.SidecarFiles), names being its
// folder's (sidecarNames); nil names (the folder could not be listed) asks the file system.
func hasSidecar(path string, names map[string]fs.FileMode) bool {
	if names == nil {
		return len(lora.SidecarFiles(path)) > 0
	}
	for _, e := range lora.SidecarEndings {
		p := lora.SidecarPath(path, e)
		t, ok := names[filepath.Base(p)]
		switch {
		case !ok || p == path:
		case t.IsRegular():
			return true
		default: // a link: followed, as SidecarFiles does
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return true
			}
		}
	}
	return false
}
