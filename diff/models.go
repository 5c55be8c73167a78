package diff

import (
	"context"
	"errors"
	"strconv"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/pool"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/values"
	"github.com/stdiff/stdiff/diff/ggufsrc"
	"github.com/stdiff/stdiff/diff/onnxsrc"
	"github.com/stdiff/stdiff/hash"
	"github.com/zeebo/blake3"
)

// Models compares two opened models (source.Open: a file, a shard set, a URL, hf://), as `stdiff diff`
// does. Before reading any tensor byte it refuses a model whose header could not be read at all (a
// *canon.ReadError) and patterns of opt that would filter nothing (a *pattern.Error, see
// Options.CheckPatterns), and a tolerance that is negative or not finite (values.ErrTolerance).
//
// Two local models are compared by value unless opt.HeaderOnly: tensors of the same dtype and shape
// byte by byte, and those whose bytes differ, or whose dtype changed (same shape), element by element
// (Change.Values: the statistics of values.CompareAll, with opt.Tolerance); rename candidates by their
// digests, so renames are confirmed. Tensors of ggml's block-quantised types (tensor.DType.Quantized)
// and every tensor of a big-endian GGUF file (note scope.big-endian) are compared by their bytes
// only; tensors known by name only (an index whose shards are missing) are not read. A remote model
// is compared from its header unless opt.Content, which reads both models' tensor digests (bytes
// compared, not values). Tensors that lie past the end of their file are left out (note
// scope.bytes-missing). A failure on one side stops the other. Of two GGUF models Models also reads
// the elements of the arrays that differ (ArrayChange) and the whole of strings longer than
// gguf.MaxInline. A snapshot (source.Options.Snapshots) stands for its model: its tensors are
// compared by their digests with the other side's (read, unless it is a snapshot too or remote
// without opt.Content; then the values of a local side's tensors whose digests differ are
// summarised), and a tensor whose digests
// differ shows how its value summary moved (Change.Summary, note scope.snapshot); a tolerance is then
// refused (ErrSnapshotTolerance). Models leaves a and b open.
//
// Of two folder models (source.Opened.Folder, or snapshots of folder models) Models also compares the
// files a loader reads beside the tensors (Report.Companions, category CategoryCompanion), whatever
// the scope options: config.json by key path, templates as line diffs, tokenizer.json by what changed
// in it.
func Models(ctx context.Context, a, b *source.Opened, opt Options) (*Report, error) {
	r, err := models(ctx, a, b, opt)
	if err != nil {
		return nil, err
	}
	addCompanions(r, a, b)
	return r, nil
}

// models is Models without the companion files.
func models(ctx context.Context, a, b *source.Opened, opt Options) (*Report, error) {
	opened := []*source.Opened{a, b}
	for _, o := range opened {
		if !o.Model.HeaderParsed {
			return nil, hash.HeaderError(o.Model)
		}
	}
	if err := opt.CheckPatterns(a.Model, b.Model); err != nil {
		return nil, err
	}
	if err := opt.Tolerance.Check(); err != nil {
		return nil, err
	}
	if side := ggufsrc.Side(a.Model, b.Model); side >= 0 && !opt.MetadataOnly {
		return sourceModels(ctx, a, b, side, opt)
	}
	sides := []Side{{Model: a.Model, Snapshot: a.Snapshot != nil}, {Model: b.Model, Snapshot: b.Snapshot != nil}}
	snapshots := a.Snapshot != nil || b.Snapshot != nil
	if snapshots && !opt.Tolerance.IsZero() {
		name := b.Model.Name
		if a.Snapshot != nil {
			name = a.Model.Name
		}
		return nil, &canon.ReadError{Name: name, Err: ErrSnapshotTolerance, Hint: "compare with the model itself to apply a tolerance, or leave the tolerance out"}
	}
	m := matchTensors(a.Model, b.Model, opt)
	if side := onnxsrc.Side(a.Model, b.Model); side >= 0 && !opt.MetadataOnly && !opt.HeaderOnly && !a.Remote && !b.Remote && !snapshots {
		var err error
		if m, err = onnxMatching(ctx, a, b, side, opt); err != nil {
			return nil, err
		}
	}
	var r *Report
	switch remote := a.Remote || b.Remote; {
	case opt.MetadataOnly:
		r = build(sides[0], sides[1], opt, m, nil, "")
	case opt.HeaderOnly:
		r = build(sides[0], sides[1], opt, m, nil, NotReadHeaderOnly)
	case remote && !opt.Content:
		r = build(sides[0], sides[1], opt, m, nil, NotReadRemote)
	case remote || snapshots:
		err := pool.Run(ctx, 2, 2, func(ctx context.Context, i int) (err error) {
			sides[i].Digests, sides[i].Stats, err = digests(ctx, opened[i], opt.Progress)
			return err
		})
		for i := 0; i < 2 && err == nil && snapshots; i++ {
			if opened[i].Snapshot == nil && !opened[i].Remote {
				sides[i].Stats, err = summaries(ctx, opened[i], changedSide(m, sides, i), opt)
			}
		}
		if err != nil {
			return nil, err
		}
		r = build(sides[0], sides[1], opt, m, nil, "")
	default:
		if opt.Quick { // the headers may decide already
			r := build(sides[0], sides[1], opt, m, nil, "")
			for _, c := range r.Categories {
				if c != CategoryRenamed && r.Fails(c) { // bytes may turn a likely rename into removed + added
					r.Notes = append(r.Notes, Note{Code: NoteStoppedEarly})
					return r, nil
				}
			}
		}
		read, err := readBytes(ctx, a, b, m, opt)
		if err != nil {
			return nil, err
		}
		r = build(sides[0], sides[1], opt, m, read, "")
	}
	if err := ggufDetails(ctx, r, a.Model, b.Model, opt); err != nil {
		return nil, err
	}
	if opt.Xet {
		var err error
		if r.Xet, err = xetShare(ctx, a, b, opt); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// bytesRead is what Models read of two local models' tensor bytes.
type bytesRead struct {
	// compared says which pairs of matching.matched were compared, and results what was found.
	compared []bool
	results  []values.Comparison
	// hashed says, per side and tensor index, which rename candidates were read (nil when a side has
	// none), and digests holds their digests but those of empty tensors (emptyDigest).
	hashed  [2][]bool
	digests [2]map[int][32]byte
	models  [2]*canon.Model
	// missing counts the tensors left out because their bytes lie past the end of their file;
	// missingPair says which pairs of matching.matched are left out so.
	missing     int
	missingPair []bool
	// stopped is true when Options.Quick stopped the reading at a difference that decides.
	stopped bool
	// bigEndian is true when a model is a big-endian GGUF file: its tensors were compared by their
	// bytes only.
	bigEndian bool
}

// pair is what was found about the k-th matched pair, if it was compared.
func (br *bytesRead) pair(k int) (values.Comparison, bool) {
	if br == nil || !br.compared[k] {
		return values.Comparison{}, false
	}
	return br.results[k], true
}

// unread reports whether the k-th matched pair was left out: its bytes lie past the end of a file.
func (br *bytesRead) unread(k int) bool { return br != nil && br.missingPair[k] }

func (br *bytesRead) digest(side, i int) ([32]byte, bool) {
	switch {
	case br == nil || br.hashed[side] == nil || !br.hashed[side][i]:
		return [32]byte{}, false
	case br.models[side].Tensors[i].Len() == 0:
		return emptyDigest, true
	}
	return br.digests[side][i], true
}

// readBytes reads what Models compares of two local models: the matched pairs of the same shape (by
// value when their dtypes decode, else byte by byte), and the digests of the tensors that could pair
// as renames. Tensors known by name only are not read.
func readBytes(ctx context.Context, a, b *source.Opened, m matching, opt Options) (*bytesRead, error) {
	ma, mb := a.Model, b.Model
	read := &bytesRead{compared: make([]bool, len(m.matched)), results: make([]values.Comparison, len(m.matched)), missingPair: make([]bool, len(m.matched)), models: [2]*canon.Model{ma, mb},
		bigEndian: ma.BigEndian() || mb.BigEndian()}
	// With Quick and no tolerance, a byte difference decides when data counts: no statistics needed.
	bytesDecide := opt.Quick && opt.Tolerance.IsZero() && failing(opt.FailOn, CategoryData)
	var pairs []values.Pair // built by push: append would leave about four times their size behind
	var index []int         // of each pair in m.matched
	for k, p := range m.matched {
		ta, tb := &ma.Tensors[p[0]], &mb.Tensors[p[1]]
		same := ta.DType == tb.DType && ta.Len() == tb.Len()
		byValue := !read.bigEndian && decodes(ta.DType) && decodes(tb.DType)
		shapeA, shapeB := ta.Shape, tb.Shape
		if m.onnx != nil {
			shapeA, shapeB = m.onnx.Shapes(k, shapeA, shapeB)
		}
		switch {
		case ta.NameOnly() || tb.NameOnly(): // a shard is missing: there are no bytes to read
		case !equalShape(shapeA, shapeB) || !same && !byValue:
		case !a.Model.InFile(ta, a.Source.Size()) || !b.Model.InFile(tb, b.Source.Size()):
			read.missing++
			read.missingPair[k] = true
		case same && ta.Len() == 0: // nothing to read
			read.compared[k], read.results[k] = true, values.Comparison{Equal: true}
		default:
			pair := values.Pair{A: values.TensorOf(a.Source, a.Model, ta), B: values.TensorOf(b.Source, b.Model, tb), BytesOnly: same && (bytesDecide || !byValue)}
			if m.onnx != nil {
				m.onnx.Undo(k, &pair, ta.Shape, tb.Shape)
			}
			pairs = push(pairs, pair)
			index = push(index, k)
		}
	}
	candidates := renameCandidates(ma, mb, m)
	for side, o := range []*source.Opened{a, b} {
		if err := read.hashCandidates(ctx, side, o, candidates[side], opt.Progress); err != nil {
			return nil, err
		}
	}
	vopt := opt.Values
	vopt.Tolerance, vopt.Progress = opt.Tolerance, opt.Progress
	err := values.CompareAll(ctx, pairs, vopt, func(i int, c values.Comparison) bool {
		k := index[i]
		read.compared[k], read.results[k] = true, c
		if opt.Quick && !c.Equal {
			ch := Change{Fields: []string{"data"}, Values: c.Diff}
			if pairs[i].A.DType != pairs[i].B.DType {
				ch.Fields = []string{"dtype"}
			}
			has := map[Category]bool{}
			changeCategories(&ch, !opt.Tolerance.IsZero(), has)
			for cat := range has { // only the categories that occurred are keys
				if failing(opt.FailOn, cat) {
					read.stopped = true
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	for _, o := range []*source.Opened{a, b} {
		if err := o.Unchanged(); err != nil {
			return nil, err
		}
	}
	return read, nil
}

// renameCandidates lists, per side, the removed (a) and added (b) tensors that could pair as renames:
// one of the same dtype, shape and size is on the other side (a tensor known by name only is none).
func renameCandidates(a, b *canon.Model, m matching) [2][]int {
	var buf []byte
	key := func(t *tensor.Tensor) []byte {
		buf = append(buf[:0], t.DType...)
		for _, d := range t.Shape {
			buf = strconv.AppendUint(append(buf, ' '), d, 10)
		}
		return strconv.AppendUint(append(buf, '/'), t.Len(), 10)
	}
	lists := [2][]int{m.removed, m.added}
	models := [2]*canon.Model{a, b}
	var keys [2]map[string]bool
	for side := range 2 {
		keys[side] = map[string]bool{}
		for _, i := range lists[side] {
			if k := key(&models[side].Tensors[i]); !keys[side][string(k)] {
				keys[side][string(k)] = true
			}
		}
	}
	var out [2][]int
	for side := range 2 {
		for _, i := range lists[side] {
			if t := &models[side].Tensors[i]; !t.NameOnly() && keys[1-side][string(key(t))] {
				out[side] = append(out[side], i)
			}
		}
	}
	return out
}

// hashCandidates reads the digests of the rename candidates of one side (tensor indices); those that
// lie past the end of the file are left out, and counted as missing.
func (br *bytesRead) hashCandidates(ctx context.Context, side int, o *source.Opened, candidates []int, progress func(int64)) error {
	if len(candidates) == 0 {
		return nil
	}
	m := o.Model
	br.hashed[side], br.digests[side] = make([]bool, len(m.Tensors)), map[int][32]byte{}
	sub := *m // the same header, with the candidates to read as its only tensors
	sub.Tensors = nil
	var index []int
	for _, i := range candidates {
		switch t := &m.Tensors[i]; {
		case !o.Model.InFile(t, o.Source.Size()):
			br.missing++
		case t.Len() == 0:
			br.hashed[side][i] = true
		default:
			sub.Tensors = append(sub.Tensors, *t)
			index = append(index, i)
		}
	}
	if len(index) == 0 {
		return nil
	}
	d, err := hash.TensorDigests(ctx, o.Source, &sub, hash.Options{Progress: progress})
	if err != nil {
		return err
	}
	for k, i := range index {
		br.digests[side][i], br.hashed[side][i] = d[k], true
	}
	return nil
}

// decodes reports whether tensors of dtype d are compared by value: package values decodes d, and d
// is none of ggml's block-quantised types, which are compared by their bytes.
func decodes(d tensor.DType) bool { return values.Supported(d) && !d.Quantized() }

// emptyDigest is the BLAKE3 of no bytes: the digest of every empty tensor.
var emptyDigest = blake3.Sum256(nil)

// digests reads the tensor digests of a model: a snapshot's from the snapshot (with its summaries);
// in parallel from a local file, which must not change meanwhile; front to back from a remote one
// (nothing is stored).
func digests(ctx context.Context, o *source.Opened, progress func(int64)) ([][32]byte, []*values.Stats, error) {
	opt := hash.Options{Progress: progress}
	switch {
	case o.Snapshot != nil:
		return o.Snapshot.Digests(), o.Snapshot.Stats(), nil
	case o.Remote:
		d, err := hash.StreamDigests(ctx, o.Source, o.Model, opt)
		return d, nil, err
	}
	d, err := hash.TensorDigests(ctx, o.Source, o.Model, opt)
	if err != nil {
		return nil, nil, err
	}
	return d, nil, o.Unchanged()
}

// changedSide lists the tensors of side i (indices) whose digests differ from those of the tensors
// of the same name on the other side: those whose summaries a report shows.
func changedSide(m matching, sides []Side, i int) []int {
	var out []int
	for _, p := range m.matched {
		if sides[0].Digests[p[0]] != sides[1].Digests[p[1]] {
			out = append(out, p[i])
		}
	}
	return out
}

// summaries reads the values of the tensors of a local model that index lists and returns their
// summaries (values.SummarizeAll: the numbers of a snapshot, to the bit), in Model.Tensors order, nil
// for the others and for those whose values are not decoded.
func summaries(ctx context.Context, o *source.Opened, index []int, opt Options) ([]*values.Stats, error) {
	m := o.Model
	stats := make([]*values.Stats, len(m.Tensors))
	var tensors []values.Tensor
	var of []int
	for _, i := range index {
		t := &m.Tensors[i]
		if _, err := values.Elements(t.DType, int64(t.Len())); err == nil && decodes(t.DType) && !m.BigEndian() && o.Model.InFile(t, o.Source.Size()) {
			tensors, of = append(tensors, values.TensorOf(o.Source, o.Model, t)), append(of, i)
		}
	}
	vopt := opt.Values
	vopt.Progress = opt.Progress
	err := values.SummarizeAll(ctx, tensors, vopt, func(k int, s values.Stats) bool {
		stats[of[k]] = &s
		return true
	})
	if err != nil {
		return nil, err
	}
	return stats, o.Unchanged()
}

// ErrSnapshotTolerance is why Models refuses a tolerance when a model is a snapshot: a snapshot holds
// digests and summaries, not the values a tolerance applies to.
var ErrSnapshotTolerance = errors.New("a snapshot holds digests and value summaries, not values: a tolerance cannot be applied")
