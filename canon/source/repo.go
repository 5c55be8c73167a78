package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// PipelineFile is the file that makes a folder a diffusers pipeline: it names the pipeline's class
// and its components (unet, text_encoder, vae, …), each the folder of the same name.
const PipelineFile = "model_index.json"

// repoFS is a model repository, in a local folder or a revision on the Hub: where a pipeline's
// components, or a repository's models, are found. Paths are slash-separated, relative to the top.
type repoFS interface {
	// list gives the files directly in dir ("" for the top), their names relative to dir.
	list(dir string) []string
	// read reads a small file (at most MaxIndexSize bytes).
	read(p string) ([]byte, error)
	// open opens a model: a file, an index or a shard, as Open does.
	open(p string) (*Opened, error)
	// remote reports whether the repository is on the network.
	remote() bool
}

// localRepo is a folder.
type localRepo struct {
	ctx context.Context
	dir string
}

func (r localRepo) list(dir string) []string {
	entries, _ := os.ReadDir(filepath.Join(r.dir, filepath.FromSlash(dir)))
	var out []string
	for _, e := range entries {
		p := filepath.Join(r.dir, filepath.FromSlash(dir), e.Name())
		if fileExists(p) || danglingLink(p) { // links to files count: the Hugging Face cache; so do links to a file not there (a blob missing), which opening says
			out = append(out, e.Name())
		}
	}
	return out
}

// danglingLink reports whether p is a symbolic link to a file that is not there.
func danglingLink(p string) bool {
	st, err := os.Lstat(p)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	_, err = os.Stat(p)
	return errors.Is(err, fs.ErrNotExist)
}

// missingWhy says why the file at p is not there: "a link to ../../blobs/…, which is not there".
func missingWhy(p string) string {
	if target, err := os.Readlink(p); err == nil {
		return "a link to " + textfmt.Escape(target) + ", which is not there"
	}
	return "not there"
}

func (r localRepo) read(p string) ([]byte, error) {
	src, err := OpenFile(filepath.Join(r.dir, filepath.FromSlash(p)))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return readSmall(src)
}

func (r localRepo) open(p string) (*Opened, error) {
	return Open(r.ctx, filepath.Join(r.dir, filepath.FromSlash(p)), Options{})
}

func (localRepo) remote() bool { return false }

// hubRepo is a revision of a repository on the Hub, its files as its tree API lists them.
type hubRepo struct {
	ctx   context.Context
	base  string // {endpoint}/ORG/REPO/resolve/REV
	files []string
	opt   HTTPOptions
}

func (r *hubRepo) list(dir string) []string {
	var out []string
	for _, f := range r.files {
		if d, name := path.Split(f); strings.TrimSuffix(d, "/") == dir {
			out = append(out, name)
		}
	}
	return out
}

func (r *hubRepo) read(p string) ([]byte, error) {
	src, err := OpenHTTP(r.ctx, r.base+"/"+escapePath(p), r.opt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return readSmall(src)
}

func (r *hubRepo) open(p string) (*Opened, error) {
	return openRemoteURL(r.ctx, r.base+"/"+escapePath(p), r.opt)
}

func (*hubRepo) remote() bool { return true }

// readSmall reads a whole source of at most MaxIndexSize bytes.
func readSmall(src canon.Source) ([]byte, error) {
	if src.Size() > MaxIndexSize {
		return nil, &canon.ReadError{Name: src.Name(), Err: fmt.Errorf("is %d bytes, over the %d stdiff reads of such a file", src.Size(), MaxIndexSize)}
	}
	b := make([]byte, src.Size())
	if _, err := src.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// modelsAmong picks the models among a repository's files (slash-separated paths): each
// *.safetensors.index.json, each .safetensors, .gguf or .dduf file, and for the shards of a set the
// set once (its first shard, when no index beside it names the set), in path order.
func modelsAmong(files []string) []string {
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	sorted := slices.Clone(files)
	sort.Strings(sorted)
	var out []string
	sets := map[string]bool{}
	for _, f := range sorted {
		dir, base := path.Split(f)
		lower := strings.ToLower(base)
		if prefix, _, n, ok := ShardPattern(base); ok && n > 1 {
			if !has[dir+prefix+".safetensors.index.json"] && !sets[dir+prefix] {
				sets[dir+prefix] = true
				out = append(out, f)
			}
			continue
		}
		if prefix, _, n, ok := GGUFSplitPattern(base); ok && n > 1 {
			if !sets[dir+prefix+".gguf"] {
				sets[dir+prefix+".gguf"] = true
				out = append(out, f)
			}
			continue
		}
		if strings.HasSuffix(lower, ".safetensors.index.json") || strings.HasSuffix(lower, ".safetensors") || strings.HasSuffix(lower, ".gguf") || strings.HasSuffix(lower, ".dduf") {
			out = append(out, f)
		}
	}
	return out
}

// componentWeights are the names diffusers and transformers save a component's weights under,
// without a variant (diffusion_pytorch_model.fp16.safetensors is a variant), preferred in this order.
var componentWeights = []string{"diffusion_pytorch_model.safetensors.index.json", "model.safetensors.index.json",
	"diffusion_pytorch_model.safetensors", "model.safetensors"}

// weightsOf chooses a component's weights among the files of its folder: the weights saved without a
// variant, else the only model there is. With none it returns ""; with several to choose from, "" and
// them.
func weightsOf(files []string) (string, []string) {
	models := modelsAmong(files)
	for _, w := range componentWeights {
		if slices.Contains(models, w) {
			return w, nil
		}
	}
	if len(models) == 1 {
		return models[0], nil
	}
	return "", models
}

// pipeline is what a model_index.json says.
type pipeline struct {
	class      string
	components []string // sorted
}

// parsePipeline reads a model_index.json: its _class_name, and its components, the keys whose value is
// a [library, class] pair (a [null, null] pair is a component the pipeline goes without). A
// component's name is a folder beside the file, so it must be one plain name.
func parsePipeline(name string, b []byte) (*pipeline, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("not a diffusers %s: %v", PipelineFile, err)}
	}
	p := &pipeline{}
	_ = json.Unmarshal(raw["_class_name"], &p.class) // absent or not a string: no class to name
	for k, v := range raw {
		var pair []*string
		if strings.HasPrefix(k, "_") || json.Unmarshal(v, &pair) != nil || len(pair) != 2 || pair[0] == nil || pair[1] == nil {
			continue
		}
		if !safePath(k) || strings.Contains(k, "/") {
			return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("component name %q is not a folder beside the file", textfmt.Escape(k)),
				Hint: "a pipeline's components are folders beside its model_index.json; this one may be hostile"}
		}
		p.components = append(p.components, k)
	}
	sort.Strings(p.components)
	return p, nil
}

// openPipeline opens the diffusers pipeline at the top of r as one model made of its components
// (JoinComponents): each component's weights (see weightsOf), opened workers at a time, their
// tensors named after their folder ("unet/conv_in.weight"). A CodePipeline finding names the
// components read and those without weights; a component with several weight files and none saved
// without a variant is a CodePipelineComponent warning, and is not read. A local component whose
// weights are a link to a file that is not there (the Hugging Face cache with a blob missing) is
// missing (Component.Missing): the model is known in part.
func openPipeline(ctx context.Context, name string, r repoFS, workers int) (*Opened, error) {
	b, err := r.read(PipelineFile)
	if err != nil {
		return nil, err
	}
	p, err := parsePipeline(name, b)
	if err != nil {
		return nil, err
	}
	var comps, files, without []string
	var skipped []finding.Finding
	for _, c := range p.components {
		file, others := weightsOf(r.list(c))
		switch {
		case file != "":
			comps, files = append(comps, c), append(files, file)
		case others == nil:
			without = append(without, c)
		default:
			skipped = append(skipped, finding.Finding{Code: canon.CodePipelineComponent, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("%s has several weight files and none saved without a variant (%s): not read", c, strings.Join(others, ", ")),
				Hint:    "name the one to read: …/" + c + "/" + others[0]})
		}
	}
	class := p.class
	if class == "" {
		class = "no _class_name"
	}
	if len(comps) == 0 {
		return nil, &canon.ReadError{Name: name, Err: fmt.Errorf("is a diffusers pipeline (%s) without .safetensors weights", textfmt.Escape(class)),
			Hint: "stdiff reads .safetensors weights; a pipeline saved with safe_serialization=False has none"}
	}
	opened, missing := make([]*Opened, len(comps)), make([]string, len(comps))
	out := &Opened{Remote: r.remote()}
	if !out.Remote {
		out.index = filepath.Join(name, PipelineFile)
	}
	err = pool.Run(ctx, workers, len(comps), func(_ context.Context, i int) (err error) {
		p := comps[i] + "/" + files[i]
		opened[i], err = r.open(p) // the sources keep ctx, the caller's: they read later
		if err != nil && !r.remote() && errors.Is(err, fs.ErrNotExist) {
			missing[i] = missingWhy(filepath.Join(name, filepath.FromSlash(p)))
			return nil
		}
		return err
	})
	for _, o := range opened {
		if o != nil {
			out.closers = append(out.closers, o)
		}
	}
	if err != nil {
		out.Close()
		return nil, err
	}
	parts := make([]Component, len(comps))
	var read []string
	for i, o := range opened {
		parts[i] = Component{Name: comps[i], File: files[i], Missing: missing[i]}
		if o != nil {
			parts[i].Model, parts[i].Source = o.Model, o.Source
			read = append(read, comps[i]+" ("+files[i]+")")
		}
	}
	out.Model, out.Source = JoinComponents(name, parts)
	if read == nil {
		read = []string{"none"}
	}
	msg := fmt.Sprintf("a diffusers pipeline (%s) read as one model, component by component: %s", textfmt.Escape(class), strings.Join(read, ", "))
	if without != nil {
		msg += "; without .safetensors weights: " + strings.Join(without, ", ")
	}
	out.Model.AddFinding(finding.Finding{Code: canon.CodePipeline, Severity: finding.SevInfo, Offset: -1, Message: msg})
	for _, f := range skipped {
		out.Model.AddFinding(f)
	}
	return out, nil
}
