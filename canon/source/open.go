// Package source opens models by name: a local file (any format canon reads), a shard set (its index, the
// folder holding it, or any of its shards; any file of a split GGUF model; a sharded PyTorch
// checkpoint), a diffusers pipeline (one
// model made of its components), an http(s) URL, or an hf://ORG/REPO[@REVISION][/PATH] address on the
// Hugging Face Hub (a repository named without a path is found through the Hub's file list); and it
// walks folders for the models under them. It reads shard sets and split GGUF models as one model
// (ReadSet, over a SetSource that joins their data) and the components of a diffusers pipeline
// (JoinComponents). It reads headers only; the bytes stay behind a canon.Source, read on demand, for
// HTTP with range requests.
//
// It never reads the environment (the Hub's endpoint, a token and time limits come in Options, which
// the caller fills, from HF_ENDPOINT and HF_TOKEN for the CLI) and never prints.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/dduf"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/stdiff/stdiff/canon/snapshot"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// DefaultEndpoint is where hf:// addresses point when Options.Endpoint is empty: the public Hub.
const DefaultEndpoint = "https://huggingface.co"

// Options tune how models are opened.
type Options struct {
	// Endpoint is where hf:// addresses point (default DefaultEndpoint); the CLI takes HF_ENDPOINT.
	Endpoint string
	// Token is sent as a bearer token with hf:// requests, to Endpoint's origin only (see
	// HTTPOptions.TokenOrigin); the CLI takes HF_TOKEN.
	Token string
	// HTTP tunes every request, as it is for http(s) URLs; for hf:// addresses Open sets its Token and
	// TokenOrigin from Token and Endpoint.
	HTTP HTTPOptions
	// Snapshots makes Open open a local snapshot file (package canon/snapshot, told apart by its first
	// bytes) as the model it stands for, without bytes: Opened.Snapshot is set, and Source has none.
	// Without it a snapshot is a file that is not a model, as any JSON file.
	Snapshots bool
	// HeaderBuffer is room for the header of a local safetensors file that Open reads as one model (see
	// canon.ReadInto): the Model then shares its memory. Whoever reads many models one after another
	// may pass the same buffer each time, once nothing uses the last Model any more.
	HeaderBuffer []byte
	// OneFile makes Open read spec as the one file it names (OpenOne): a shard without its set, an
	// index as the file it is.
	OneFile bool
}

// endpoint is Endpoint, or the public Hub, without a trailing slash.
func (o Options) endpoint() string {
	if e := strings.TrimRight(o.Endpoint, "/"); e != "" {
		return e
	}
	return DefaultEndpoint
}

// Opened is a model ready to use: its header view and the Source of its bytes.
type Opened struct {
	Model *canon.Model
	// Source holds the model's bytes: its file's, its shards' one after another, or for an ONNX model
	// its tensors' (onnx.Data: raw, typed and external data, one tensor after another), for a PyTorch
	// or NumPy file its tensors' in row-major order (torch.Data).
	Source canon.Source
	// File is the model's one file when Source is not its bytes as they are (ONNX, PyTorch, NumPy),
	// else nil.
	File canon.Source
	// Remote is true for http(s) and hf:// sources.
	Remote bool
	// Snapshot is the snapshot the model was read from (Options.Snapshots), nil for a model: its
	// Model is the snapshot's (snapshot.Snapshot.Model) and its Source holds no byte.
	Snapshot *snapshot.Snapshot
	// Folder is the folder the model was opened as (a save_pretrained, PEFT or diffusers folder, its
	// model_index.json, a local DDUF file, or the snapshot of a Hugging Face cache folder), "" for a model named by a
	// file, an index or a URL; Companions are the files a loader reads beside its tensors there
	// (package companion), in path order. A snapshot of a folder model carries its Companions too. An
	// hf:// repository named without a path is a folder model too: Folder is its address, and its
	// Companions are read from the Hub's listing of it.
	Folder     string
	Companions []companion.File
	closers    []io.Closer
	// index is the local index a set, or a pipeline (its model_index.json), was opened with ("" for
	// none): one of Files.
	index string
}

// Close closes every file and response the model holds.
func (o *Opened) Close() error {
	var first error
	for _, c := range o.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Unchanged reports an error when a local file of the model changed since it was opened; remote
// sources check this on every response instead.
func (o *Opened) Unchanged() error {
	for _, c := range o.closers {
		var err error
		switch c := c.(type) {
		case *FileSource:
			err = c.Unchanged()
		case *Opened: // a component of a pipeline
			err = c.Unchanged()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Files lists the local files the model is read from (a set's shards and its index, a pipeline's
// model_index.json and its components' files; a folder is not among them), as they were opened.
func (o *Opened) Files() []string {
	var out []string
	if o.index != "" {
		out = append(out, o.index)
	}
	for _, c := range o.closers {
		switch c := c.(type) {
		case *FileSource:
			out = append(out, c.Name())
		case *Opened:
			out = append(out, c.Files()...)
		}
	}
	return out
}

// IsRemote reports whether spec names a remote model (http, https or hf://).
func IsRemote(spec string) bool {
	return strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") || strings.HasPrefix(spec, "hf://")
}

// Open opens whatever names a model: a model file (its format told apart by its first bytes, by
// its name only where they say nothing, as canon.Read does); a *.safetensors.index.json, a folder holding one, or any shard named
// …-0000K-of-0000N.safetensors (the whole set, as one model; shards that are not there leave a model
// known in part, see ReadSet); any file of a split GGUF model named …-0000K-of-0000N.gguf, as
// llama.cpp's gguf-split names them (the whole set, as one model, known in part as a set is); a sharded
// PyTorch checkpoint's *.bin.index.json, or any of its shards named …-0000K-of-0000N.bin beside it (the
// whole set, as a shard set is read); a folder
// holding a diffusers pipeline's model_index.json, or that file (one model made of its components, see
// JoinComponents); an http(s) URL; or hf://ORG/REPO[@REVISION][/PATH] (on opt.Endpoint, with
// opt.Token; without a PATH, the repository's model.safetensors, else what its file list holds: its
// index, its pipeline, its only model). Only headers are read. ctx bounds the opening and, for remote
// models, every later read of the Source; once it is done, Open fails at once with an error wrapping
// ctx.Err(). Errors are *canon.ReadError values.
func Open(ctx context.Context, spec string, opt Options) (*Opened, error) {
	if err := ctx.Err(); err != nil {
		return nil, &canon.ReadError{Name: spec, Op: "open", Err: netError(ctx, err, 0)}
	}
	if opt.OneFile {
		return OpenOne(ctx, spec, opt)
	}
	if IsRemote(spec) {
		return openRemote(ctx, spec, opt)
	}
	st, err := os.Stat(spec)
	if err != nil {
		if dir, rev, ok := CacheRev(spec); ok && errors.Is(err, fs.ErrNotExist) {
			return openCache(ctx, dir, rev, opt)
		}
		return nil, canon.PathError("stat", spec, err)
	}
	if st.IsDir() && fileExists(filepath.Join(spec, PipelineFile)) {
		o, err := openPipeline(ctx, spec, localRepo{ctx, spec}, 1)
		return withCompanions(o, err, spec, "")
	}
	if st.IsDir() {
		o, err := openFolder(ctx, spec, opt)
		if errors.Is(err, ErrNoModel) && IsCache(spec) {
			return openCache(ctx, spec, "", opt)
		}
		return withCompanions(o, err, spec, "")
	}
	base := filepath.Base(spec)
	if base == PipelineFile {
		o, err := openPipeline(ctx, filepath.Dir(spec), localRepo{ctx, filepath.Dir(spec)}, 1)
		return withCompanions(o, err, filepath.Dir(spec), "")
	}
	if strings.HasSuffix(base, ".index.json") {
		return openLocalSet(spec, spec, nil)
	}
	if prefix, _, n, ok := ShardPattern(base); ok && n > 1 {
		idx := filepath.Join(filepath.Dir(spec), prefix+".safetensors.index.json")
		if !indexNames(idx, base) { // an index beside it that does not name it is another set's
			idx = ""
		}
		return openLocalSet(spec, idx, ShardNames(prefix, n))
	}
	if prefix, _, n, ok := GGUFSplitPattern(base); ok && n > 1 {
		return openLocalSet(spec, "", GGUFSplitNames(prefix, n))
	}
	if prefix, _, n, ok := TorchShardPattern(base); ok && n > 1 {
		if idx := filepath.Join(filepath.Dir(spec), prefix+".bin.index.json"); indexNames(idx, base) {
			return openLocalSet(spec, idx, nil)
		}
	}
	if opt.Snapshots && isSnapshot(spec) {
		return openSnapshot(spec)
	}
	o, err := openFileModel(ctx, spec, opt.HeaderBuffer)
	if err == nil {
		noteLoneSplit(o.Model)
	}
	return o, err
}

// indexNames reports whether the index at idxPath names the file base (in its folder) among its
// shards: a file joins a set only when its index names it. An index that cannot be read or parsed
// names nothing; a file named like a shard is then read with its siblings by their names alone.
func indexNames(idxPath, base string) bool {
	src, err := OpenFile(idxPath)
	if err != nil {
		return false
	}
	b := make([]byte, min(src.Size(), MaxIndexSize+1))
	_, err = src.ReadAt(b, 0)
	src.Close()
	if err != nil && err != io.EOF {
		return false
	}
	idx, err := ParseIndex(idxPath, b)
	return err == nil && slices.Contains(idx.Shards, base)
}

// isSnapshot reports whether the file at path begins as a snapshot does (snapshot.Sniff).
func isSnapshot(path string) bool {
	f, _, err := canon.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return false // opening it as a model says why
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := io.ReadFull(f, b)
	return snapshot.Sniff(b[:n])
}

// openSnapshot opens the snapshot at path as the model it stands for (see Options.Snapshots).
func openSnapshot(path string) (*Opened, error) {
	s, err := snapshot.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &Opened{Model: s.Model(path), Source: canon.SourceOf(strings.NewReader(""), 0, path), Snapshot: s, Companions: s.Companions}, nil
}

// noteLoneSplit notes that a GGUF file read on its own says it is one file of a split model: its name
// is not one llama.cpp gives split files, so the others cannot be found.
func noteLoneSplit(m *canon.Model) {
	f, ok := m.Detail.(*gguf.File)
	if !ok {
		return
	}
	kv := f.KV(gguf.SplitCountKey)
	if kv == nil {
		return
	}
	if n, _ := kv.Value.Int(); n > 1 {
		m.AddFinding(finding.Finding{Code: canon.CodeIncompleteSet, Severity: finding.SevInfo, Offset: -1,
			Message: fmt.Sprintf("the file says it is one of the %d files of a split model (%s), but it is not named like one (…-00001-of-%05d.gguf), so the others cannot be found; read as one file", n, gguf.SplitCountKey, n),
			Hint:    "keep the names llama.cpp's gguf-split gave the files, or join them with `llama-gguf-split --merge`"})
	}
}

// OpenFileModel opens one local file as a model, even one named like a shard of a set (Open reads the
// whole set then). Once ctx is done it fails at once with an error wrapping ctx.Err().
func OpenFileModel(ctx context.Context, path string) (*Opened, error) {
	return openFileModel(ctx, path, nil)
}

// openFileModel is OpenFileModel, the header read into buf when it fits (canon.ReadInto).
func openFileModel(ctx context.Context, path string, buf []byte) (*Opened, error) {
	if err := ctx.Err(); err != nil {
		return nil, &canon.ReadError{Name: path, Op: "open", Err: err}
	}
	src, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	return openSingle(ctx, src, false, buf)
}

// OpenOne opens the one file spec names, a local path or a URL (http(s), or hf://ORG/REPO[@REV]/PATH),
// as a model of its own: a shard is read without its set, and an index as the file it is (which holds
// no model: its Model says so in its findings). Whole-file hashes are made of such files. Errors are
// *canon.ReadError values.
func OpenOne(ctx context.Context, spec string, opt Options) (*Opened, error) {
	if !IsRemote(spec) {
		return OpenFileModel(ctx, spec)
	}
	target, httpOpt := spec, opt.HTTP
	if strings.HasPrefix(spec, "hf://") {
		fileURL, _, err := ResolveHF(opt.endpoint(), spec)
		if err == nil && fileURL == "" {
			err = errors.New("names a repository, not one file")
		}
		if err != nil {
			return nil, &canon.ReadError{Name: spec, Err: err}
		}
		target, httpOpt.Token, httpOpt.TokenOrigin = fileURL, opt.Token, opt.endpoint()
	}
	src, err := OpenHTTP(ctx, target, httpOpt)
	if err != nil {
		return nil, err
	}
	return openSingle(ctx, src, true, nil)
}

// openSingle reads the header of one opened source, into buf when it fits (canon.ReadInto); on
// failure it closes the source.
func openSingle(ctx context.Context, src interface {
	canon.Source
	io.Closer
}, remote bool, buf []byte) (*Opened, error) {
	m, err := canon.ReadInto(src, src.Size(), src.Name(), buf)
	if err != nil {
		src.Close()
		return nil, err
	}
	if f, ok := m.Detail.(*dduf.File); ok {
		return openDDUF(ctx, src, m, f, remote)
	}
	o := &Opened{Model: m, Source: src, Remote: remote, closers: []io.Closer{src}}
	where := canon.Where{Remote: remote}
	if !remote {
		where.Dir = filepath.Dir(src.Name())
	}
	if data := canon.OpenSpace(m, src, where); data != nil { // its tensors' bytes are not the file's after a header
		o.File, o.Source = src, canon.SourceOf(data, data.Size(), src.Name())
		o.closers = append(o.closers, data)
	}
	return o, nil
}

// openFolder opens the one model a folder holds, as save_pretrained, PEFT and diffusers write them: its
// shard set's index (model.safetensors.index.json, else the only *.safetensors.index.json), else its
// one weights file (model.safetensors, adapter_model.safetensors, diffusion_pytorch_model.safetensors,
// model.gguf…), or the files of its one shard set or split GGUF model, else its sharded PyTorch
// checkpoint (pytorch_model.bin.index.json…, read as a shard set is) or its PyTorch checkpoint
// (pytorch_model.bin…, or its one checkpoint beside a Trainer's state): a Hugging Face folder with both
// is read from its safetensors. Only the folder itself is looked in, not the folders under it. A folder holding several models is an error that lists them.
func openFolder(ctx context.Context, dir string, opt Options) (*Opened, error) {
	f, err := folderFiles(dir)
	if err != nil {
		return nil, canon.PathError("read", dir, err)
	}
	indexes, weights := f.indexes, f.weights
	switch {
	case slices.Contains(indexes, "model.safetensors.index.json"):
		return openLocalSet(dir, filepath.Join(dir, "model.safetensors.index.json"), nil)
	case len(indexes) == 1:
		return openLocalSet(dir, filepath.Join(dir, indexes[0]), nil)
	case len(indexes) > 1:
		return nil, &canon.ReadError{Name: dir, Err: fmt.Errorf("holds %d indexes (%s)", len(indexes), listSome(indexes, 3, "more")),
			Hint: "name the index to use"}
	case len(weights) == 1 || len(weights) > 1 && oneSet(weights):
		return Open(ctx, filepath.Join(dir, weights[0]), opt)
	case len(weights) > 1:
		return nil, &canon.ReadError{Name: dir, Err: folderError{fmt.Sprintf("holds %d models (%s), not one", len(weights), listSome(weights, 3, "more")), ErrSeveralModels},
			Hint: "name one of them (or a glob of them)"}
	case len(f.torchIndexes) == 1:
		return openLocalSet(dir, filepath.Join(dir, f.torchIndexes[0]), nil)
	case len(f.torchIndexes) > 1:
		return nil, &canon.ReadError{Name: dir, Err: fmt.Errorf("holds %d indexes of sharded PyTorch checkpoints (%s)", len(f.torchIndexes), listSome(f.torchIndexes, 3, "more")),
			Hint: "name the index to use"}
	case f.torchNamed != "":
		return Open(ctx, filepath.Join(dir, f.torchNamed), opt)
	case len(f.torch) == 1:
		return Open(ctx, filepath.Join(dir, f.torch[0]), opt)
	case len(f.torch) > 1:
		return nil, &canon.ReadError{Name: dir, Err: fmt.Errorf("holds %d PyTorch checkpoints (%s), not one", len(f.torch), listSome(f.torch, 3, "more")),
			Hint: "name one of them"}
	}
	return nil, &canon.ReadError{Name: dir, Err: folderError{"is a folder without a model in it (no *.safetensors, *.gguf, *.onnx, *.safetensors.index.json or PyTorch checkpoint)", ErrNoModel},
		Hint: "name the model file"}
}

// ErrSeveralModels and ErrNoModel are wrapped by the error for a folder named as a model that is not
// one: it holds several models, or none at its top (there may be some in the folders under it). A
// program that also reads folders of models (stdiff's inspect --short and dupes) can point to it.
var (
	ErrSeveralModels = errors.New("a folder of several models")
	ErrNoModel       = errors.New("a folder without a model")
)

// folderError is the cause of the error for a folder that is not one model: its message, and is,
// ErrSeveralModels or ErrNoModel.
type folderError struct {
	msg string
	is  error
}

func (e folderError) Error() string        { return e.msg }
func (e folderError) Is(target error) bool { return target == e.is }

// torchWeightNames are the names save_pretrained (safe_serialization=False), PEFT and diffusers give a
// PyTorch checkpoint; trainerFiles those of a Trainer checkpoint's state, which are not the model.
var (
	torchWeightNames = []string{"pytorch_model.bin", "adapter_model.bin", "diffusion_pytorch_model.bin"}
	trainerFiles     = []string{"training_args.bin", "optimizer.pt", "optimizer.bin", "scheduler.pt", "scaler.pt"}
)

// modelFiles are the names, sorted, of the files in a folder that may hold a model.
type modelFiles struct {
	indexes []string // *.safetensors.index.json
	weights []string // *.safetensors, *.gguf, *.onnx
	// torch are its *.bin, *.pt, *.pth and *.ckpt files but a Trainer's state (optimizer.pt,
	// rng_state.pth…); torchNamed the one of them save_pretrained, PEFT or diffusers named, if any;
	// torchIndexes the *.bin.index.json of sharded checkpoints.
	torch, torchIndexes []string
	torchNamed          string
}

// folderFiles lists the regular files (or links to them) in dir that may hold a model, any case;
// hidden files are left out.
func folderFiles(dir string) (modelFiles, error) {
	var f modelFiles
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return f, err
	}
	for _, e := range entries {
		name, lower := e.Name(), strings.ToLower(e.Name())
		if strings.HasPrefix(name, ".") || !fileExists(filepath.Join(dir, name)) {
			continue
		}
		switch ext := filepath.Ext(lower); {
		case strings.HasSuffix(lower, ".safetensors.index.json"):
			f.indexes = append(f.indexes, name)
		case ext == ".safetensors", ext == ".gguf", ext == ".onnx":
			f.weights = append(f.weights, name)
		case strings.HasSuffix(lower, ".bin.index.json"):
			f.torchIndexes = append(f.torchIndexes, name)
		case slices.Contains(torchWeightNames, lower):
			f.torchNamed = name
			f.torch = append(f.torch, name)
		case (ext == ".bin" || ext == ".pt" || ext == ".pth" || ext == ".ckpt") && !slices.Contains(trainerFiles, lower) && !strings.HasPrefix(lower, "rng_state"):
			f.torch = append(f.torch, name)
		}
	}
	return f, nil
}

// oneSet reports whether names (sorted) are exactly the files of one shard set or one split GGUF model.
func oneSet(names []string) bool {
	if prefix, _, n, ok := ShardPattern(names[0]); ok && slices.Equal(names, ShardNames(prefix, n)) {
		return true
	}
	prefix, _, n, ok := GGUFSplitPattern(names[0])
	return ok && slices.Equal(names, GGUFSplitNames(prefix, n))
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// openLocalSet opens a shard set from its index (idxPath) or, without one, from its shards' names.
// Shards that are not there leave a model known in part (see ReadSet).
func openLocalSet(name, idxPath string, names []string) (*Opened, error) {
	dir := filepath.Dir(name)
	var idx *Index
	if idxPath != "" {
		src, err := OpenFile(idxPath)
		if err != nil {
			return nil, err
		}
		b := make([]byte, min(src.Size(), MaxIndexSize+1))
		_, err = src.ReadAt(b, 0)
		src.Close()
		if err != nil && err != io.EOF {
			return nil, err
		}
		if idx, err = ParseIndex(idxPath, b); err != nil {
			return nil, err
		}
		names, dir = idx.Shards, filepath.Dir(idxPath)
	}
	setName := filepath.Base(idxPath)
	if setName == "." {
		setName = "the set"
	}
	o := &Opened{index: idxPath}
	m, set, err := ReadSet(name, idx, names, func(shard string) (canon.Source, error) {
		src, err := OpenFile(filepath.Join(dir, filepath.FromSlash(shard)))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &canon.ReadError{Name: filepath.Join(dir, shard), Op: "open", Err: missingShard{setName},
					Hint: "every shard the index names must be there: download the whole set"}
			}
			return nil, err
		}
		o.closers = append(o.closers, src)
		return src, nil
	})
	if err != nil {
		o.Close()
		return nil, err
	}
	o.Model, o.Source = m, set
	o.closers = append(o.closers, set)
	return o, nil
}

// missingShard is the error for a shard that is not there; it is an fs.ErrNotExist and a
// ErrMissingShard: the set is read without it.
type missingShard struct{ set string }

func (e missingShard) Error() string        { return "missing shard of " + e.set }
func (e missingShard) Unwrap() error        { return fs.ErrNotExist }
func (e missingShard) Is(target error) bool { return target == ErrMissingShard }

// openRemote opens an http(s) URL or an hf:// address.
func openRemote(ctx context.Context, spec string, opt Options) (*Opened, error) {
	if !strings.HasPrefix(spec, "hf://") {
		return openRemoteURL(ctx, spec, opt.HTTP)
	}
	a, err := parseHF(spec)
	if err != nil {
		return nil, &canon.ReadError{Name: spec, Err: err}
	}
	httpOpt := opt.HTTP
	httpOpt.Token, httpOpt.TokenOrigin = opt.Token, opt.endpoint()
	if a.path != "" {
		return openRemoteURL(ctx, a.resolve(opt.endpoint())+"/"+escapePath(a.path), httpOpt)
	}
	return openRepo(ctx, spec, a, opt.endpoint(), httpOpt)
}

// openRepo opens the model of a repository on the Hub, named without a path: model.safetensors, as
// the Hub's clients look first; else, from the list of its files (the tree API), its
// model.safetensors.index.json, its diffusers pipeline (model_index.json), or its only model. A
// repository or revision the Hub does not have is said so.
//
// The files a loader reads beside the tensors (config.json, the tokenizer's…) are read from the
// listing as a local folder's are (withHubCompanions): the repository is a folder model. An endpoint
// without the tree API lists none: its model is then not a folder model (Opened.Folder is "").
func openRepo(ctx context.Context, spec string, a hfAddr, endpoint string, opt HTTPOptions) (*Opened, error) {
	withheld, base := withheldToken(opt), a.resolve(endpoint)
	o, err := openRemoteURL(ctx, base+"/model.safetensors", opt)
	if hubMissing(a, err) != "" {
		return nil, hubError(spec, a, err, withheld)
	}
	if err != nil && !notFound(err) {
		return nil, err
	}
	files, lerr := listHub(ctx, a, endpoint, opt)
	switch {
	case hubMissing(a, lerr) != "":
		if o != nil {
			o.Close()
		}
		return nil, hubError(spec, a, lerr, withheld)
	case lerr != nil && notFound(lerr): // an endpoint without the tree API: look for the index, as clients did before it
		if o != nil {
			return o, nil
		}
		o, err := openRemoteURL(ctx, base+"/model.safetensors.index.json", opt)
		if err != nil && notFound(err) {
			return nil, &canon.ReadError{Name: spec, Err: errors.New("the repository has neither model.safetensors nor model.safetensors.index.json, and the endpoint lists no files"),
				Hint: "name the file: hf://ORG/REPO/path/to/file.safetensors (or .gguf)"}
		}
		return o, err
	case lerr != nil:
		if o != nil {
			o.Close()
		}
		var he *HTTPError
		hint := ""
		if errors.As(lerr, &he) {
			hint = httpHint(he, withheld)
		}
		return nil, &canon.ReadError{Name: spec, Err: fmt.Errorf("listing its files: %w", netError(ctx, lerr, opt.Timeout)), Hint: hint}
	}
	if o == nil {
		if o, err = openListed(ctx, spec, base, files, opt); err != nil {
			return nil, err
		}
	}
	return withHubCompanions(ctx, o, spec, base, files, opt)
}

// openListed opens the model of a repository from the list of its files (see openRepo).
func openListed(ctx context.Context, spec, base string, files []string, opt HTTPOptions) (*Opened, error) {
	switch {
	case slices.Contains(files, "model.safetensors.index.json"):
		return openRemoteURL(ctx, base+"/model.safetensors.index.json", opt)
	case slices.Contains(files, PipelineFile):
		return openPipeline(ctx, spec, &hubRepo{ctx: ctx, base: base, files: files, opt: opt}, 4)
	}
	models := modelsAmong(files)
	switch len(models) {
	case 1:
		return openRemoteURL(ctx, base+"/"+escapePath(models[0]), opt)
	case 0:
		return nil, &canon.ReadError{Name: spec, Err: fmt.Errorf("the repository has no .safetensors or .gguf file (%s)", listSome(files, 8, "file")),
			Hint: "stdiff reads .safetensors and .gguf files"}
	}
	return nil, &canon.ReadError{Name: spec, Err: fmt.Errorf("the repository holds %d models, and no model.safetensors: %s", len(models), listSome(models, 8, "more")),
		Hint: "name one: " + strings.TrimSuffix(spec, "/") + "/" + models[0]}
}

// listSome lists the first n names, escaped, and how many more there are ("… and 3 more"); "no
// <word>s" for none.
func listSome(names []string, n int, word string) string {
	if len(names) == 0 {
		return "no " + word + "s"
	}
	shown := make([]string, 0, n)
	for _, s := range names[:min(n, len(names))] {
		shown = append(shown, textfmt.Escape(s))
	}
	out := strings.Join(shown, ", ")
	if len(names) > n {
		out += fmt.Sprintf(", … and %d more", len(names)-n)
	}
	return out
}

func openRemoteURL(ctx context.Context, rawURL string, opt HTTPOptions) (*Opened, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &canon.ReadError{Name: rawURL, Err: err}
	}
	base := path.Base(u.Path)
	dirURL := func() *url.URL { d := *u; d.Path = path.Dir(u.Path); d.RawPath = ""; return &d }
	shardURL := func(shard string) string { return dirURL().JoinPath(shard).String() }
	o := &Opened{Remote: true}
	partial := strings.HasSuffix(base, ".index.json") // a shard named stands for the whole set
	openShard := func(shard string) (canon.Source, error) {
		src, err := OpenHTTP(ctx, shardURL(shard), opt)
		var he *HTTPError
		if err != nil && partial && errors.As(err, &he) && he.Status == http.StatusNotFound {
			return nil, absent{err}
		}
		if err != nil {
			return nil, err
		}
		o.closers = append(o.closers, src)
		return src, nil
	}
	readSet := func(idx *Index, names []string) (*Opened, error) {
		m, set, err := ReadSet(rawURL, idx, names, openShard)
		if err != nil {
			o.Close()
			return nil, err
		}
		o.Model, o.Source = m, set
		o.closers = append(o.closers, set)
		return o, nil
	}
	if strings.HasSuffix(base, ".index.json") {
		idx, err := fetchIndex(ctx, rawURL, opt)
		if err != nil {
			return nil, err
		}
		return readSet(idx, idx.Shards)
	}
	if prefix, _, n, ok := GGUFSplitPattern(base); ok && n > 1 {
		return readSet(nil, GGUFSplitNames(prefix, n))
	}
	if prefix, _, n, ok := ShardPattern(base); ok && n > 1 {
		idx, err := fetchIndex(ctx, shardURL(prefix+".safetensors.index.json"), opt)
		var he *HTTPError
		names := ShardNames(prefix, n)
		if err == nil {
			names = idx.Shards
		} else if !errors.As(err, &he) || he.Status != http.StatusNotFound {
			return nil, err
		}
		return readSet(idx, names)
	}
	src, err := OpenHTTP(ctx, rawURL, opt)
	if err != nil {
		return nil, err
	}
	o, err = openSingle(ctx, src, true, nil)
	if err == nil {
		noteLoneSplit(o.Model)
	}
	return o, err
}

// absent is the error of a remote shard the server does not have, in a set that may be read without it.
type absent struct{ error }

func (e absent) Unwrap() error        { return e.error }
func (e absent) Is(target error) bool { return target == ErrMissingShard }

// fetchIndex downloads and parses a remote index (at most MaxIndexSize bytes).
func fetchIndex(ctx context.Context, rawURL string, opt HTTPOptions) (*Index, error) {
	src, err := OpenHTTP(ctx, rawURL, opt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if src.Size() > MaxIndexSize {
		return nil, &canon.ReadError{Name: rawURL, Err: fmt.Errorf("index is %d bytes, over the %d stdiff reads", src.Size(), MaxIndexSize)}
	}
	b := make([]byte, src.Size())
	if _, err := src.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return ParseIndex(rawURL, b)
}
