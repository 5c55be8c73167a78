// Package inspect says what a model is: Inspect makes its card (sizes, parameters per dtype,
// metadata, tensors, what the LoRA conventions say of it, every finding) and Short the one-row-a-model
// table of whole folders (`inspect --short`). Writers render both as text, JSON, JSON Lines and
// Markdown.
//
// It never prints on its own, reads no environment variable and decides nothing about the
// terminal: the caller passes how to open models (source.Options), a writer and, for colour, a
// textfmt.Palette. It reads headers and the sidecar files next to a model, and tensor data only
// with Options.Verify.
package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/check"
	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/loadcode"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/store"
	"github.com/stdiff/stdiff/canon/tensor"
)

// Schema is the version of a card's JSON, its first field.
const Schema = "stdiff.inspect/v1"

// Options tune Inspect and Short.
type Options struct {
	// Source says how models are opened (the Hub's endpoint and token, HTTP settings).
	Source source.Options
	// Verify reads each model's data to check the hashes a trainer embedded in its metadata
	// (sshs_model_hash, modelspec.hash_sha256) against its real AutoV3: each gives a finding. The
	// hashes a CivitAI sidecar records of its file are checked too (see lora.MatchSidecars). It needs
	// FileHashes.
	Verify bool
	// FileHashes computes a local model file's whole-file hashes, by the names lora.ModelFile uses
	// (SHA256, AutoV1, AutoV2, AutoV3, BLAKE3, CRC32; AutoV3 lower-case hex), reading src once.
	// hash.FileHashesOf is the one stdiff uses; inspect computes no hash of its own.
	FileHashes func(ctx context.Context, src canon.Source, m *canon.Model) (map[string]string, error)
	// Inherit, when set, is called with each card made: it may fill in what is known of the model it
	// is derived from (derived.Inherit in hash/dupes/derived is the one stdiff uses: the original's
	// CivitAI name, ids, base model and triggers, their Sources saying so).
	Inherit func(ctx context.Context, c *Card, spec string)
	// InheritShort, when set, is called with the rows Short made: it may fill in, for each model
	// without a sidecar of its own, what the row of the model it is derived from says (derived.InheritRows
	// is the one stdiff uses), setting Row.DerivedFrom.
	InheritShort func(ctx context.Context, r *ShortReport)
	// MaxTensors, when above 0, is how many tensors a card lists (the first ones, in header order);
	// Card.TensorCount still counts them all. 0 lists every tensor.
	MaxTensors int
	// Workers is how many models Short reads at once (0: twice GOMAXPROCS, as reading headers mostly
	// waits for the disk or the network).
	Workers int
	// Images makes Short look for each model's preview image and embedded cover (Row.Preview,
	// Row.Cover), for a gallery.
	Images bool
	// noSidecars says that a listing of the model file's folder has none of its sidecars (Short).
	noSidecars bool
	// noLoadCode skips the scan for code a loader would run (loadcode.Scan): it gives findings only,
	// which Short's rows show only on a page (Images).
	noLoadCode bool
}

// Card is what one model is.
type Card struct {
	Schema string `json:"schema"`
	// Path is the name the model was read under (a URL for hf://).
	Path  string `json:"path"`
	Valid bool   `json:"valid"`
	// ReferenceError is the reference reader's error (nil when Valid).
	ReferenceError *check.RefError `json:"reference_error"`
	// FileSize is the size of the file (of every shard, for a set); HeaderLen the header's length N;
	// DataLen the length of the data section (0 when the file is shorter than its header says).
	FileSize  int64  `json:"file_size"`
	HeaderLen uint64 `json:"header_len"`
	DataLen   int64  `json:"data_len"`
	// TensorCount counts every tensor; Params counts their elements per dtype, ParamsTotal in all.
	TensorCount int    `json:"tensor_count"`
	Params      Params `json:"params"`
	ParamsTotal uint64 `json:"params_total"`
	// ParamsApart counts, per role, the tensors that are not the model's weights and that Params
	// leaves out (canon.Model.ParamsApart): tied aliases (a storage counts once), optimizer and
	// training state of a checkpoint, graph constants. Empty when every tensor is a weight.
	ParamsApart []canon.RoleCount `json:"params_apart"`
	// Metadata is `__metadata__` in file order (a JSON object).
	Metadata Metadata `json:"metadata"`
	// Info is what the LoRA conventions and the tensors say the model is (for GGUF, also what the
	// general.* keys say: name, author, description, base model, kind and family).
	Info Info `json:"info"`
	// GGUF is what a GGUF file's header says in llama.cpp's terms (absent for safetensors).
	GGUF *card.GGUF `json:"gguf,omitempty"`
	// ONNX is what an ONNX model says besides its initializers (absent for other formats).
	ONNX *card.ONNX `json:"onnx,omitempty"`
	// PyTorch is what a PyTorch checkpoint or NumPy file says besides its tensors (absent for other
	// formats).
	PyTorch *card.PyTorch `json:"pytorch,omitempty"`
	// DDUF is what a DDUF file says besides its tensors: its pipeline and components (absent for
	// other formats).
	DDUF *card.DDUF `json:"dduf,omitempty"`
	// Tensors lists the tensors in header order: all of them, or the first Options.MaxTensors.
	Tensors []Tensor `json:"tensors"`
	// Findings are the header's, the sidecars', those of deriving Info and, with Options.Verify, of
	// the embedded hashes: at most finding.MaxPerCode of a code; FindingCounts counts them all.
	Findings      []finding.Finding `json:"findings"`
	FindingCounts map[string]int    `json:"finding_counts"`

	// What the text shows besides: whether the header could be read at all, whether it has a
	// `__metadata__` (Metadata is empty for an empty one and for none), the number of shards (0 for
	// one file), and whether Options.Verify checked the embedded hashes.
	HeaderParsed bool `json:"-"`
	HasMetadata  bool `json:"-"`
	Shards       int  `json:"-"`
	// SnapshotOf is, for a snapshot (source.Options.Snapshots), the model it was made of as the
	// snapshot names it; absent for a model. A snapshot records no layout: HeaderLen and DataLen are 0.
	SnapshotOf string `json:"snapshot_of,omitempty"`
	Verified   bool   `json:"-"`
	// Store is, for a local file that is a store's blob (a Hugging Face cache repository's
	// blobs/ETAG, the cache's shared blob store, ollama's blobs), where it lies: which store, the hash
	// its name claims and the snapshot files that refer to it (see store.Locate); absent otherwise.
	Store *store.Blob `json:"store,omitempty"`
	// Companions are the files a loader reads beside the tensors of a folder model (a
	// save_pretrained, PEFT or diffusers folder, the Hugging Face cache's snapshot, an hf:// repository,
	// or a snapshot of one), in path order; absent for a model named by its file and for a folder
	// without any.
	Companions []CompanionFile `json:"companions,omitempty"`
}

// Info is lora.Info as the card shows it, with the rank and alpha the metadata declares as numbers.
type Info struct {
	lora.Info
	// DeclaredRank is ss_network_dim as a whole number, nil when absent or not one (Info.Info.DeclaredRank
	// keeps the text as written).
	DeclaredRank *int64 `json:"declared_rank"`
	// DeclaredAlpha is ss_network_alpha as a number, nil when absent or not a finite number.
	DeclaredAlpha *float64 `json:"declared_alpha"`
}

// Tensor is one tensor entry of the header.
type Tensor struct {
	Name  string       `json:"name"`
	DType tensor.DType `json:"dtype"`
	Shape []uint64     `json:"shape"`
	// DataOffsets are relative to the data section (of the set, for a shard set).
	DataOffsets [2]uint64 `json:"data_offsets"`
	Bytes       uint64    `json:"bytes"`
	// Shard is the file of a shard set that holds the tensor ("" for a model in one file). A tensor of
	// a missing shard (the one its index names) is known by this and its name only: DType "", Shape [].
	Shard string `json:"shard,omitempty"`
	// TensorRole, for a tensor that is not a weight of the model, says what it is (in JSON its fields
	// are the tensor's: role, alias_of); nil for a weight.
	*TensorRole
}

// TensorRole is what a tensor that is not a weight of the model is.
type TensorRole struct {
	// Role is canon.Role: alias, optimizer, training, constant.
	Role canon.Role `json:"role"`
	// AliasOf names the tensor an alias views.
	AliasOf string `json:"alias_of,omitempty"`
}

// Metadata is metadata in file order; its JSON is an object with the keys in that order.
type Metadata []canon.MetaEntry

// MarshalJSON writes {"key": "value", …} in order.
func (m Metadata) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Key)
		v, _ := json.Marshal(e.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Params is element counts per dtype, in order of first appearance; its JSON is an object
// {"F32": n, …} in that order.
type Params []canon.ParamCount

// MarshalJSON writes {"dtype": elements, …} in order.
func (p Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(string(c.DType))
		fmt.Fprintf(&b, "%s:%d", k, c.Elements)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Outcome is Found when the card has a finding of severity error, else Clean.
func (c *Card) Outcome() canon.Outcome {
	if check.HasError(c.Findings) {
		return canon.Found
	}
	return canon.Clean
}

// read is one model as inspect sees it: its header, its Info, every finding.
type read struct {
	m        *canon.Model
	info     lora.Info
	findings []finding.Finding
	verified bool
	// snapshotOf is the model a snapshot was made of ("" for a model).
	snapshotOf string
	// store is where a store's blob lies (store.Locate), nil for another file.
	store *store.Blob
	// companions are the files beside a folder model's tensors (source.Opened.Companions).
	companions []companion.File
	// card is what the model's format says besides its tensors (canon.Model.Card).
	card any
}

// readModel reads a model's header and, for a local file, its sidecars (and with opt.Verify its
// data), and derives its Info.
func readModel(ctx context.Context, spec string, opt Options) (*read, error) {
	o, err := source.Open(ctx, spec, opt.Source)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	m := o.Model
	if o.Snapshot == nil && !opt.noLoadCode {
		for _, x := range loadcode.Scan(spec, m) {
			m.AddFinding(x)
		}
	}
	var sidecars []lora.Sidecar
	var sidecarFindings []finding.Finding
	if !o.Remote && m.Shards == nil && !(opt.noSidecars && m.Name == spec) {
		sidecars, sidecarFindings = lora.LoadSidecars(ctx, m.Name) // the file: spec may be its folder
	}
	named := spec // what the name is derived from: the file a folder holds, a snapshot's model
	if !o.Remote && m.Shards == nil {
		named = m.Name
	}
	var where *store.Blob
	if !o.Remote && o.Snapshot == nil {
		where = store.Locate(spec)
	}
	if p := where.Snapshot(); p != "" && m.Shards == nil {
		named = p // a blob's name is a hash: it is named as the snapshot file that refers to it is
	}
	if o.Snapshot != nil && opt.Verify {
		return nil, &canon.ReadError{Name: spec, Err: errors.New("is a snapshot: it holds no bytes to verify hashes against"), Hint: "verify the model itself"}
	}
	if o.Snapshot != nil {
		named, sidecars, sidecarFindings = o.Snapshot.Of, nil, nil
	}
	// With Verify, the data is read once: for the embedded hashes and the hashes a sidecar records.
	var hashes map[string]string
	if opt.Verify && m.HeaderParsed && m.Shards == nil && (hasEmbeddedHashes(m) || len(sidecars) > 0) {
		if opt.FileHashes == nil {
			return nil, &canon.ReadError{Name: spec, Err: errors.New("cannot verify hashes: no way to compute them was given (inspect.Options.FileHashes)")}
		}
		if hashes, err = opt.FileHashes(ctx, o.Source, m); err != nil {
			return nil, err
		}
		if err := o.Unchanged(); err != nil {
			return nil, err
		}
	}
	if len(sidecars) > 0 {
		file := lora.ModelFile{Name: filepath.Base(spec), Size: m.FileSize, Hashes: hashes}
		var mismatched []finding.Finding
		sidecars, mismatched = lora.MatchSidecars(sidecars, file)
		sidecarFindings = append(sidecarFindings, mismatched...)
	}
	r := &read{m: m, info: lora.Derive(m, sidecars, named), snapshotOf: named, store: where, companions: o.Companions}
	if o.Snapshot == nil {
		r.snapshotOf = ""
	}
	r.card = m.Card()
	g, _ := r.card.(*card.GGUF)
	ggufInfo(m, g, &r.info)
	r.findings = append(append(append([]finding.Finding{}, m.Findings...), sidecarFindings...), r.info.Findings...)
	if hashes != nil && len(r.info.EmbeddedHashes) > 0 {
		r.findings = append(r.findings, lora.VerifyEmbedded(m, hashes["AutoV3"])...)
		r.verified = true
	}
	return r, nil
}

// hasEmbeddedHashes reports whether the metadata holds a hash a trainer embedded (what Derive puts
// in Info.EmbeddedHashes).
func hasEmbeddedHashes(m *canon.Model) bool {
	for _, k := range lora.EmbeddedHashKeys {
		if v, _ := m.Meta(k.Key); strings.TrimSpace(v) != "" && strings.TrimSpace(v) != "None" && strings.TrimSpace(v) != "null" {
			return true
		}
	}
	return false
}

// Inspect reads the model spec names (a file, a shard set, a URL: see source.Open) and makes its
// card. Only the header and the sidecar files next to a local model are read, and with opt.Verify
// the data. An error means the model could not be read (a *canon.ReadError); an invalid model still
// gets its card.
func Inspect(ctx context.Context, spec string, opt Options) (*Card, error) {
	r, err := readModel(ctx, spec, opt)
	if err != nil {
		return nil, err
	}
	m := r.m
	per, total := m.Params()
	if per == nil {
		per = []canon.ParamCount{}
	}
	c := &Card{Schema: Schema, Path: m.Name, Valid: m.Valid(), ReferenceError: check.RefErrorOf(m.RefErr),
		FileSize: m.FileSize, HeaderLen: m.HeaderLen, DataLen: max(m.DataLen(), 0), TensorCount: len(m.Tensors),
		Params: per, ParamsTotal: total.Elements, ParamsApart: m.ParamsApart(), Metadata: m.Metadata, Info: infoOf(r.info),
		Findings: r.findings, FindingCounts: canon.CountFindings(r.findings, m.Omitted),
		HeaderParsed: m.HeaderParsed, HasMetadata: m.HasMetadata, Shards: len(m.Shards), Verified: r.verified, SnapshotOf: r.snapshotOf}
	switch s := r.card.(type) {
	case *card.GGUF:
		c.GGUF = s
	case *card.ONNX:
		c.ONNX = s
	case *card.PyTorch:
		c.PyTorch = s
	case *card.DDUF:
		c.DDUF = s
	}
	if m.InSpace { // its tensors' bytes (inline and external, gathered), not the file's after a header
		c.DataLen = 0
		for i := range m.Tensors {
			c.DataLen += int64(m.Tensors[i].Len())
		}
	}
	if c.SnapshotOf != "" {
		c.HeaderLen, c.DataLen = 0, 0
	}
	c.Store = r.store
	c.Companions = companionsOf(r.companions)
	if opt.Inherit != nil {
		defer opt.Inherit(ctx, c, spec)
	}
	if c.Metadata == nil {
		c.Metadata = Metadata{}
	}
	if c.ParamsApart == nil {
		c.ParamsApart = []canon.RoleCount{}
	}
	roles, aliasOf := m.Roles()
	tensors := m.Tensors
	if opt.MaxTensors > 0 && len(tensors) > opt.MaxTensors {
		tensors = tensors[:opt.MaxTensors]
	}
	c.Tensors = make([]Tensor, len(tensors))
	shards := m.TensorShards()
	for i, t := range tensors {
		shape := t.Shape
		if shape == nil {
			shape = []uint64{}
		}
		c.Tensors[i] = Tensor{Name: t.Name, DType: t.DType, Shape: shape, DataOffsets: [2]uint64{t.Begin, t.End}, Bytes: t.Len()}
		if shards != nil {
			c.Tensors[i].Shard = shards[i]
		}
		if r := canon.RoleAt(roles, i); r != canon.RoleWeight {
			c.Tensors[i].TensorRole = &TensorRole{Role: r}
			if aliasOf[i] >= 0 {
				c.Tensors[i].AliasOf = m.Tensors[aliasOf[i]].Name
			}
		}
	}
	return c, nil
}

// infoOf is in with its declared rank and alpha as numbers.
func infoOf(in lora.Info) Info {
	out := Info{Info: in}
	if f, ok := number(in.DeclaredRank); ok && f == math.Trunc(f) && f >= 0 && f <= 1<<53 {
		n := int64(f)
		out.DeclaredRank = &n
	}
	if f, ok := number(in.DeclaredAlpha); ok {
		out.DeclaredAlpha = &f
	}
	return out
}

// number reads s as a finite decimal number.
func number(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}
