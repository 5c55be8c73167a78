package inspect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
)

// ShortSchema is the version of the JSON of `inspect --short`, its first field.
const ShortSchema = "stdiff.inspect-short/v1"

// ShortReport is one row per model found under some folders (and files, URLs): `inspect --short`.
type ShortReport struct {
	Schema string `json:"schema"`
	Files  []Row  `json:"files"`
	// Errors are what the walk could not read (a folder, a file, as *canon.ReadError values) and,
	// when ctx ended the work early, ctx.Err(). They have no row.
	Errors []error `json:"-"`
}

// Row is what one model is, in a few words.
type Row struct {
	// Path is the model as found or named (a shard set by its index).
	Path string `json:"path"`
	// Name, Kind, Family, BaseModel and Rank are those of the card's Info.
	Name      string      `json:"name"`
	Kind      lora.Kind   `json:"kind"`
	Family    lora.Family `json:"family"`
	BaseModel string      `json:"base_model"`
	Rank      int         `json:"rank"`
	// Format is the model's format: safetensors, gguf, onnx, pytorch or numpy ("" when it could not
	// be read).
	Format canon.Format `json:"format"`
	// Size is the file's size (of every shard, for a set).
	Size int64 `json:"size"`
	// Triggers are the declared trigger words; GuessedTriggers those guessed from the training data
	// (lora.Info's), never shown as triggers without saying so.
	Triggers        []string `json:"triggers"`
	GuessedTriggers []string `json:"guessed_triggers"`
	// Valid is the reference reader's verdict; HeaderParsed is false when the file has no readable
	// header at all (not a model: an LFS pointer, an HTML page).
	Valid        bool `json:"valid"`
	HeaderParsed bool `json:"header_parsed"`
	// CivitAI locates the model on CivitAI (lora.Info's).
	CivitAI lora.CivitAI `json:"civitai"`
	// Preview is the preview image beside a local model (<stem>.preview.png, <stem>.png, .jpg, .jpeg,
	// .webp), as a path like Path; "" when there is none or Options.Images was not set.
	Preview string `json:"preview,omitempty"`
	// Cover is the cover image the metadata embeds (modelspec.thumbnail, the first of
	// ssmd_cover_images), as a data: URL checked to hold a PNG, JPEG or WebP image of at most
	// MaxCover bytes of text; "" when there is none or Options.Images was not set.
	Cover string `json:"-"`
	// Findings are what was found wrong in the model (its card's findings), for pages that list them;
	// nil unless Options.Images was set.
	Findings []finding.Finding `json:"-"`
	// DerivedFrom is the path of the model this one is derived from (Options.InheritShort), whose
	// name, base model, CivitAI ids, trigger words and preview the row shows, this model having no
	// sidecar of its own; "" for none.
	DerivedFrom string `json:"derived_from,omitempty"`
	// Error is Err's message: the model could not be read, and nothing else here holds.
	Error string `json:"error,omitempty"`
	Err   error  `json:"-"`
}

// Short finds the models under roots (see source.Walk: folders are searched for .safetensors and
// .gguf files, shard sets, and the PyTorch checkpoints, NumPy arrays and ONNX models of
// source.WalkOptions.AllFormats; files and URLs are taken as they are) and reads each one's header and
// sidecars (and with opt.Verify its data), several at a time, for a row each, in path order.
// Once ctx is done it stops: the models not read then have rows with Err ctx.Err(), which is among
// the report's Errors too.
func Short(ctx context.Context, roots []string, opt Options) *ShortReport {
	paths, errs := source.Walk(ctx, roots, source.WalkOptions{AllFormats: true})
	paths = oncePerModel(paths) // a cache's blob and its snapshots' links to it are one model
	r := &ShortReport{Schema: ShortSchema, Files: make([]Row, len(paths)), Errors: errs}
	workers := opt.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	listed := listFolders(paths)
	// Headers are read into buffers kept for the next model (a row holds copies of its words), one a
	// worker for the whole collection, let go with the report; not for a page, whose rows hold more
	// of a model.
	buffers := make(chan []byte, workers)
	err := pool.Run(ctx, workers, len(paths), func(ctx context.Context, i int) error {
		opt := opt
		opt.noSidecars = listed.none(paths[i], lora.SidecarNames(paths[i]))
		opt.noLoadCode = !opt.Images // a row shows findings only on a page
		if opt.Images {
			r.Files[i], _ = rowOf(ctx, paths[i], opt, nil)
			return nil
		}
		var buf []byte
		select {
		case buf = <-buffers:
		default:
		}
		r.Files[i], buf = rowOf(ctx, paths[i], opt, buf)
		select {
		case buffers <- buf:
		default:
		}
		return nil
	})
	if err != nil {
		for i := range r.Files {
			if r.Files[i].Path == "" { // never read
				r.Files[i] = Row{Path: paths[i], Triggers: []string{}, GuessedTriggers: []string{}, Err: err, Error: err.Error()}
			}
		}
		if len(errs) == 0 || errs[len(errs)-1] != err {
			r.Errors = append(r.Errors, err)
		}
	}
	if opt.InheritShort != nil && ctx.Err() == nil {
		opt.InheritShort(ctx, r)
	}
	return r
}

// FromOriginal is how the table and the gallery mark what a row inherits: " (from dreamy_v3)", the
// original's file name without its extension; "" for a row that inherits nothing.
func (r Row) FromOriginal() string {
	if r.DerivedFrom == "" {
		return ""
	}
	base := filepath.Base(r.DerivedFrom)
	return " (from " + strings.TrimSuffix(base, filepath.Ext(base)) + ")"
}

// listings are the names in the folders of a walk's files, lower-cased, read once (a folder whose
// names could not be read has none): a model none of whose sidecars is listed is not looked for them
// one by one (four failed look-ups of a path each).
type listings map[string]map[string]bool

// listFolders lists the folders of the local files among paths.
func listFolders(paths []string) listings {
	l := listings{}
	for _, p := range paths {
		dir := filepath.Dir(p)
		if _, done := l[dir]; done || source.IsRemote(p) {
			continue
		}
		l[dir] = nil
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			continue
		}
		set := make(map[string]bool, len(names))
		for _, n := range names {
			set[strings.ToLower(n)] = true
		}
		l[dir] = set
	}
	return l
}

// none reports whether the folder of the local file path was listed and holds none of names (told
// apart regardless of case, as some file systems do).
func (l listings) none(path string, names []string) bool {
	set := l[filepath.Dir(path)]
	if set == nil || source.IsRemote(path) {
		return false
	}
	for _, n := range names {
		if set[strings.ToLower(n)] {
			return false
		}
	}
	return true
}

// maxHeaderBuffer is the largest header buffer Short keeps for the next model.
const maxHeaderBuffer = 4 << 20

// rowOf reads the model at path and makes its row, its header read into buf when it fits (see
// source.Options.HeaderBuffer). It returns the buffer for the next model: buf, or the model's header
// when that is larger (and at most maxHeaderBuffer): the row holds no part of either.
func rowOf(ctx context.Context, path string, opt Options, buf []byte) (Row, []byte) {
	opt.Source.HeaderBuffer = buf
	in, err := readModel(ctx, path, opt)
	if err != nil {
		return Row{Path: path, Triggers: []string{}, GuessedTriggers: []string{}, Err: err, Error: errorText(err)}, buf
	}
	next := buf
	if h := in.m.RawHeader; cap(h) > cap(buf) && cap(h) <= maxHeaderBuffer {
		next = h[:0]
	}
	// The words may be parts of the header's bytes: copies of them let the header go once the row is made,
	// so that reading a collection holds a few headers at a time, not every one.
	row := Row{Path: path, Name: strings.Clone(in.info.Name), Kind: in.info.Kind, Family: in.info.Family, BaseModel: strings.Clone(in.info.BaseModel),
		Rank: in.info.Rank, Format: in.m.Format, Size: in.m.FileSize, Triggers: cloneAll(in.info.Triggers), GuessedTriggers: cloneAll(in.info.GuessedTriggers),
		Valid: in.m.Valid(), HeaderParsed: in.m.HeaderParsed, CivitAI: in.info.CivitAI}
	if opt.Images { // a page: only it shows images and findings
		row.Preview, row.Cover, row.Findings = previewOf(in.m.Name), coverOf(in.m), in.findings
	}
	return row, next
}

// cloneAll returns copies of the strings of ss, in a new slice (nil for nil).
func cloneAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}

// errorText is err on its own in a row that names the model already: a *canon.ReadError's reason.
func errorText(err error) string {
	var re *canon.ReadError
	if errors.As(err, &re) {
		return re.Reason()
	}
	return err.Error()
}

// Outcome is Trouble when something could not be read, Found when a model is invalid, else Clean.
func (r *ShortReport) Outcome() canon.Outcome {
	o := canon.Clean
	if len(r.Errors) > 0 {
		o = canon.Trouble
	}
	for i := range r.Files {
		switch f := &r.Files[i]; {
		case f.Err != nil || f.Error != "":
			o = canon.Trouble
		case !f.Valid:
			o = max(o, canon.Found)
		}
	}
	return o
}
