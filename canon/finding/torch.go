package finding

// Finding codes of PyTorch checkpoints, pickles and NumPy files (package canon/torch makes them; an
// empty file is CodeEmptyFile and a cut-off one CodeTruncatedData, as for safetensors), here so that
// commands name them without the format package. They are part of stdiff's contract with scripts:
// add, never rename. The zip container's own (zip-malformed, zip-encrypted, zip-unsupported-method,
// zip-unusual-flags, zip-local-header) are package zipdir's, which torch shares with canon/dduf.
const (
	CodeUnsafeGlobal      = "pickle-unsafe-global"      // error: a global that runs code or reaches the system
	CodeUnknownGlobal     = "pickle-unknown-global"     // error: a global outside the weights-only allowlist
	CodeUnsupportedOpcode = "pickle-unsupported-opcode" // error: an opcode the weights-only unpickler lacks
	CodeRefusedOperation  = "pickle-refused-operation"  // error: an operation the weights-only unpickler refuses
	CodeMalformedPickle   = "pickle-malformed"          // error: the pickle cannot be read
	CodeBarePickle        = "bare-pickle"               // info: not a torch.save container
	CodeNotPyTorch        = "not-pytorch"               // error: not a format this package reads
	CodeTorchScript       = "torchscript-archive"       // error: weights_only refuses TorchScript
	CodeTarFormat         = "pytorch-tar-format"        // error: the oldest torch.save format, not read
	CodeOtherArchive      = "not-pytorch-archive"       // error: a zip archive without data.pkl
	CodeZipPrefix         = "zip-mixed-prefix"          // error: an entry outside the archive's folder
	CodeZipDuplicate      = "zip-duplicate-name"        // error: two entries whose names are equal, or equal but for case
	CodeZipVersion        = "zip-no-version"            // error: no version record PyTorch can read
	CodeZipBadCRC         = "zip-bad-crc"               // warning: a pickle fails its CRC (PyTorch does not check)
	CodeLegacyMagic       = "legacy-bad-magic"          // error
	CodeLegacyProtocol    = "legacy-bad-protocol"       // error
	CodeStorageMissing    = "storage-missing"           // error: a tensor's storage is not in the file
	CodeStorageSize       = "storage-size-mismatch"     // error: the pickle and the storage disagree on its size (torch ≥ 2.10 refuses it)
	CodeTensorBounds      = "tensor-out-of-storage"     // error: a tensor reaches past its storage
	CodeNonContiguous     = "non-contiguous-tensor"     // info
	CodeSharedStorage     = "shared-storage"            // info: tensors share one storage (tied weights)
	CodeBigEndian         = "big-endian"                // info
	CodeUnlistedTensor    = "tensor-not-listed"         // warning: a tensor kind (quantized, sparse…) not listed
	CodeNumpyObject       = "numpy-object-array"        // error: numpy.load(allow_pickle=False) refuses it
	CodeNumpyHeader       = "numpy-bad-header"          // error
	CodeNumpyDType        = "numpy-unsupported-dtype"   // warning: structured or string dtypes are not listed
	CodeTooDeep           = "nesting-too-deep"          // warning: the object tree is deeper than MaxDepth
	CodeTreeTooLarge      = "object-tree-too-large"     // warning: the object tree has too many values to list
	CodeOverBudget        = "read-over-budget"          // error: the file claims more than stdiff reads within its memory budget
)
