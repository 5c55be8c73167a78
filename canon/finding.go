package canon

// Severity says how bad a finding is.
type Severity string

// Severities, from worst to mildest.
const (
	// SevError: strict readers (the reference and everything built on it) reject the file.
	SevError Severity = "error"
	// SevWarning: strict readers accept the file, but something in it is suspicious or breaks other readers.
	SevWarning Severity = "warning"
	// SevInfo: worth knowing, nothing wrong.
	SevInfo Severity = "info"
)

// Finding is one thing stdiff noticed about a file. Code is stable (kebab-case) and safe to match in scripts.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Offset is the byte offset in the file the finding points at, or -1 when it is about the whole file.
	Offset  int64  `json:"offset"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// RefKind is the reference reader's error kind when this finding is the reason it rejects the file.
	RefKind RefKind `json:"reference_kind,omitempty"`
	// Fixable is true when `stdiff check --fix` repairs this defect in place.
	Fixable bool `json:"fixable,omitempty"`
}

// Finding codes. They are part of stdiff's contract with scripts: add, never rename.
const (
	CodeFileTooSmall       = "file-too-small"
	CodeEmptyFile          = "empty-file"
	CodeHeaderTooLarge     = "header-too-large"
	CodeLFSPointer         = "lfs-pointer"
	CodeHTMLPage           = "html-page"
	CodeNotSafetensors     = "not-safetensors"
	CodeBigEndianLength    = "big-endian-length"
	CodeHeaderBeyondFile   = "header-beyond-file"
	CodeInvalidUTF8        = "invalid-utf8"
	CodeBOM                = "byte-order-mark"
	CodeInvalidJSON        = "invalid-json"
	CodeNulPadding         = "nul-padding"
	CodeTrailingChars      = "trailing-characters"
	CodeMetadataOutside    = "metadata-outside-object"
	CodeNotObject          = "header-not-object"
	CodeMetadataNotObject  = "metadata-not-object"
	CodeMetadataNotString  = "metadata-not-string"
	CodeDuplicateMetadata  = "duplicate-metadata-field"
	CodeDuplicateMetaKey   = "duplicate-metadata-key"
	CodeDuplicateTensor    = "duplicate-tensor-name"
	CodeInvalidTensorEntry = "invalid-tensor-entry"
	CodeUnknownDType       = "unknown-dtype"
	CodeOffsetNotZero      = "offsets-not-from-zero"
	CodeOffsetGap          = "offset-gap"
	CodeOffsetOverlap      = "offset-overlap"
	CodeOffsetReversed     = "offset-reversed"
	CodeShapeOverflow      = "shape-overflow"
	CodeMisalignedSlice    = "misaligned-slice"
	CodeSizeMismatch       = "size-mismatch"
	CodeTrailingBytes      = "trailing-bytes"
	CodeTruncatedData      = "truncated-data"
	CodeOddTensorForm      = "nonstandard-tensor-entry"
	CodeUnknownField       = "unknown-tensor-field"
	CodeLeadingSpace       = "leading-whitespace"
	CodeNoTensors          = "no-tensors"
	CodeHashMismatch       = "embedded-hash-mismatch"
	CodeHashMatch          = "embedded-hash-verified"
	CodeBadSidecar         = "bad-sidecar"
	CodeRankMismatch       = "rank-mismatch"
	CodeShardMetadata      = "shard-metadata-differs"
	CodeTensorInTwoShards  = "tensor-in-two-shards"
	CodeIndexTensorMissing = "index-tensor-missing"
	CodeTensorNotInIndex   = "tensor-not-in-index"
	CodeIndexTotalSize     = "index-total-size"
	CodeIncompleteSet      = "incomplete-shard-set"
)
