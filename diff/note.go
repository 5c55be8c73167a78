package diff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/delta"

	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/diff/onnxsrc"
)

// NoteCode names a note: a difference between the models that does not count (layout, formatting,
// writer bookkeeping), or something left out of the comparison. Codes are stable and safe to match in
// scripts; cmd/stdiff/docs/scripting.md lists them.
type NoteCode string

// Note codes.
const (
	// NoteBothInvalid: the reference reader rejects both models, for the same reason.
	NoteBothInvalid NoteCode = "verdict.both-invalid"
	// NoteMetadataOnly: tensors were left out (Options.MetadataOnly).
	NoteMetadataOnly NoteCode = "scope.metadata-only"
	// NoteIgnoreMetadata: metadata was left out (Options.IgnoreMetadata).
	NoteIgnoreMetadata NoteCode = "scope.ignore-metadata"
	// NoteKeysIgnored: Count metadata keys were left out (Options.IgnoreKeys, IgnoreVolatile).
	NoteKeysIgnored NoteCode = "scope.keys-ignored"
	// NoteContentNotCompared: tensor bytes were not compared; Reason says why, when known.
	NoteContentNotCompared NoteCode = "scope.content-not-compared"
	// NoteBytesMissing: Count tensors lie past the end of their file (a truncated download): their bytes
	// were not compared.
	NoteBytesMissing NoteCode = "scope.bytes-missing"
	// NoteBigEndian: a model is big-endian (a GGUF file, a NumPy or PyTorch file): its tensors were compared by their bytes, not
	// by value (Report.ValuesCompared is false).
	NoteBigEndian NoteCode = "scope.big-endian"
	// NoteSnapshot: a model is a snapshot: tensor bytes were compared by their digests, and the
	// values of changed tensors by their summaries (Change.Summary), not element by element; layout
	// was not compared.
	NoteSnapshot NoteCode = "scope.snapshot"
	// NoteStoppedEarly: Models stopped at the first difference that decides the outcome
	// (Options.Quick): the report is incomplete.
	NoteStoppedEarly NoteCode = "scope.stopped-early"
	// NoteBookkeeping: a key a writer adds about itself (Key) differs: Old → New ("" when absent).
	NoteBookkeeping NoteCode = "metadata.bookkeeping"
	// NoteReformatted: Count JSON metadata values differ only in formatting or key order.
	NoteReformatted NoteCode = "metadata.reformatted"
	// NoteSharding: one side is one file, the other a set of shards, or the shard counts differ.
	NoteSharding = NoteCode(delta.Sharding)
	// NoteShardMoves: Count tensors are in other files of their shard sets (Tensors.Moved lists them);
	// Key is the first, Old and New its files.
	NoteShardMoves NoteCode = "layout.shard-moves"
	// NoteNameOnly: Count tensors on both sides are known by name only on one side or both (a shard
	// set with shards missing): their dtypes, shapes and bytes were not compared.
	NoteNameOnly NoteCode = "scope.name-only"
	// NoteHeaderSize: the header lengths differ (formatting, padding or key order).
	NoteHeaderSize = NoteCode(delta.HeaderSize)
	// NoteTensorOrder: the tensors are listed in another order in the header.
	NoteTensorOrder = NoteCode(delta.Order)
	// NoteOffsets: the tensor data is laid out at other offsets.
	NoteOffsets = NoteCode(delta.Offsets)
	// NoteAliasDropped: Key, only in a, is a tied alias of Old (on both sides), as conversions drop.
	NoteAliasDropped NoteCode = "tensors.alias-dropped"
	// NoteAliasAdded: Key, only in b, is a tied alias of Old (on both sides).
	NoteAliasAdded NoteCode = "tensors.alias-added"
	// NoteKeyOrder: the metadata keys are in another order.
	NoteKeyOrder = NoteCode(delta.KeyOrder)
)

// Note is one note of a report: its code and the particulars its message is made from. A note is
// data until it is written: Write words it (and fills Message in the JSON and the page it writes).
type Note struct {
	Code NoteCode `json:"code"`
	// Key is the metadata key a note is about; Old and New the two sides' values, as the message shows them.
	Key string `json:"key,omitempty"`
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Count is how many things a note counts.
	Count int `json:"count,omitempty"`
	// Reason is why tensor bytes were not compared (scope.content-not-compared), when known.
	Reason NotRead `json:"reason,omitempty"`
	// Message is the note in words, made from the code and the particulars when the report is written:
	// Write fills it in, naming the caller's options as WriteOptions.Flags gives them (stdiff's flags).
	Message string `json:"message"`
	// plain says the note is worded without the caller's option names (a GGUF compared with its
	// source: what decided it is not said there).
	plain bool
}

// NotRead is why Models read no tensor byte (Note.Reason), or none of one tensor (NotCompared.Reason).
type NotRead string

// Reasons for not reading tensor bytes.
const (
	// NotReadHeaderOnly: Options.HeaderOnly (--header-only) asked for headers only.
	NotReadHeaderOnly NotRead = "header-only"
	// NotReadRemote: a model is remote, and Options.Content (--content) was not given.
	NotReadRemote NotRead = "remote"
	// NotReadBytesMissing: a tensor's bytes lie past the end of its file (a truncated download);
	// TensorReport.NotCompared gives it as a tensor's reason.
	NotReadBytesMissing NotRead = "bytes-missing"
)

// IsLayout reports whether a note is about how the same model is laid out on disk.
func (c NoteCode) IsLayout() bool { return strings.HasPrefix(string(c), "layout.") }

// worded is n in words, made from its code and particulars, with the options that decided it named
// as flags names them (WriteOptions.Flags): "tensors not compared (--metadata-only)" for stdiff;
// without names, none. It is the one place a note is worded; the writers call it as they write.
func worded(n Note, flags textfmt.Flags) string {
	if n.plain {
		flags = nil
	}
	var msg string
	switch n.Code {
	case NoteBothInvalid:
		msg = fmt.Sprintf("the reference reader rejects both models (%s)", n.Old)
	case NoteMetadataOnly:
		msg = "tensors not compared"
	case NoteIgnoreMetadata:
		msg = "metadata not compared"
	case NoteKeysIgnored:
		msg = fmt.Sprintf("%d metadata keys ignored", n.Count)
	case NoteContentNotCompared:
		msg = "tensor data not compared"
		switch n.Reason {
		case NotReadRemote:
			msg += " (remote)"
		case NotReadSnapshot:
			msg += " (a snapshot holds no values to compare a GGUF's with)"
		}
	case NoteBytesMissing:
		msg = textfmt.Plural(n.Count, "tensor") + " past the end of the file: bytes not compared"
	case NoteBigEndian:
		msg = "a model is big-endian: tensor bytes compared, not their values"
	case NoteSnapshot:
		msg = "a model is a snapshot: tensor bytes compared by digest, values by their summaries (not element-wise), layout not compared"
	case NoteStoppedEarly:
		msg = "stopped at the first difference that counts: this report is incomplete"
	case NoteBookkeeping:
		show := func(v string) string {
			if v == "" {
				return "absent"
			}
			return strconv.Quote(v)
		}
		msg = fmt.Sprintf("metadata %s is %s → %s (writer bookkeeping, not a difference)", n.Key, show(n.Old), show(n.New))
	case NoteReformatted:
		msg = fmt.Sprintf("%d metadata values differ only in JSON formatting or key order", n.Count)
	case NoteSharding:
		msg = fmt.Sprintf("stored as %s → %s", n.Old, n.New)
	case NoteShardMoves:
		msg = fmt.Sprintf("%s in another shard file (the first, %s: %s → %s)", countIs(n.Count, "tensor"), strconv.Quote(n.Key), n.Old, n.New)
	case NoteNameOnly:
		msg = fmt.Sprintf("%s known by name only (shards are missing): dtypes, shapes and bytes not compared", countIs(n.Count, "tensor"))
	case NoteHeaderSize:
		msg = fmt.Sprintf("header length differs (%s → %s bytes): formatting, padding or key order", n.Old, n.New)
	case NoteTensorOrder:
		msg = "tensors are listed in a different order in the header"
	case NoteOffsets:
		msg = "tensor data is laid out differently (other offsets)"
	case NoteAliasDropped:
		msg = fmt.Sprintf("%s, a tied alias of %s (the same storage), is dropped: not a difference", strconv.Quote(n.Key), strconv.Quote(n.Old))
	case NoteAliasAdded:
		msg = fmt.Sprintf("%s, a tied alias of %s (the same storage), is added: not a difference", strconv.Quote(n.Key), strconv.Quote(n.Old))
	case NoteKeyOrder:
		msg = "metadata keys are in a different order"
	case NoteGraphConstants, NotePairedByValue, NoteGraphCopy, NoteGraphShared:
		msg = onnxsrc.Message(onnxsrc.NoteCode(n.Code), n.Count, n.Key, n.Old, n.New)
	}
	var names []string
	for _, option := range map[NoteCode][]string{NoteMetadataOnly: {"MetadataOnly"}, NoteIgnoreMetadata: {"IgnoreMetadata"},
		NoteKeysIgnored: {"IgnoreKeys", "IgnoreVolatile"}}[n.Code] {
		if f := flags.Of(option); f != "" {
			names = append(names, f)
		}
	}
	switch {
	case len(names) > 0:
		msg += " (" + strings.Join(names, "/") + ")"
	case n.Code != NoteContentNotCompared:
	case n.Reason == NotReadHeaderOnly && flags.Of("HeaderOnly") != "":
		msg += " (" + flags.Of("HeaderOnly") + ")"
	case n.Reason == NotReadRemote && flags.Of("Content") != "": // "(remote)" says what reads it
		msg = strings.TrimSuffix(msg, ")") + "; " + flags.Of("Content") + " reads it)"
	}
	return msg
}

// countIs is "1 tensor is" or "2 tensors are".
func countIs(n int, word string) string {
	if n == 1 {
		return "1 " + word + " is"
	}
	return strconv.Itoa(n) + " " + word + "s are"
}

// LayoutCodes lists the layout notes of a report: how two models differ on disk, whatever else
// differs.
func (r *Report) LayoutCodes() []NoteCode {
	var out []NoteCode
	for _, n := range r.Notes {
		if n.Code.IsLayout() {
			out = append(out, n.Code)
		}
	}
	return out
}
