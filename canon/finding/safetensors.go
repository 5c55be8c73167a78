package finding

// The safetensors format's vocabulary lives here, beside Finding and RefKind, rather than in package
// canon/safetensors: the commands (check, inspect, hash, dupes, diff) name these codes, kinds and the
// header limit, and they reach formats through canon's Model, never a format package by name.

// MaxHeaderLen is the largest header length the safetensors reference reader accepts: past it, its
// verdict is HeaderTooLarge.
const MaxHeaderLen = 100_000_000

// The safetensors reference reader's error kinds (its SafeTensorError variants), in the order its checks
// run.
const (
	HeaderTooSmall               RefKind = "HeaderTooSmall"
	HeaderTooLarge               RefKind = "HeaderTooLarge"
	InvalidHeaderLength          RefKind = "InvalidHeaderLength"
	InvalidHeader                RefKind = "InvalidHeader"
	InvalidHeaderDeserialization RefKind = "InvalidHeaderDeserialization"
	InvalidOffset                RefKind = "InvalidOffset"
	ValidationOverflow           RefKind = "ValidationOverflow"
	MisalignedSlice              RefKind = "MisalignedSlice"
	TensorInvalidInfo            RefKind = "TensorInvalidInfo"
	MetadataIncompleteBuffer     RefKind = "MetadataIncompleteBuffer"
)

// Finding codes of the safetensors format (package canon/safetensors makes them). They are part of
// stdiff's contract with scripts: add, never rename.
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
)
