package onnx

// Field numbers of the onnx.proto messages the reader reads, each named after its message and field
// as pprof's profile decoder names its own (onnx/onnx.proto of onnx 1.12, the version Debian's
// python3-onnx installs; field numbers never change between versions). A field the reader skips is
// not listed.
const (
	modelIRVersion       = 1  // ModelProto.ir_version (int64)
	modelProducerName    = 2  // ModelProto.producer_name
	modelProducerVersion = 3  // ModelProto.producer_version
	modelDomain          = 4  // ModelProto.domain
	modelModelVersion    = 5  // ModelProto.model_version (int64)
	modelDocString       = 6  // ModelProto.doc_string
	modelGraph           = 7  // ModelProto.graph (GraphProto)
	modelOpsetImport     = 8  // ModelProto.opset_import (repeated OperatorSetIdProto)
	modelMetadataProps   = 14 // ModelProto.metadata_props (repeated StringStringEntryProto)
	modelFunctions       = 25 // ModelProto.functions (repeated FunctionProto)

	functionName   = 1  // FunctionProto.name
	functionNode   = 7  // FunctionProto.node (repeated NodeProto)
	functionDomain = 10 // FunctionProto.domain

	opsetDomain  = 1 // OperatorSetIdProto.domain
	opsetVersion = 2 // OperatorSetIdProto.version (int64)

	entryKey   = 1 // StringStringEntryProto.key
	entryValue = 2 // StringStringEntryProto.value

	graphNode              = 1  // GraphProto.node (repeated NodeProto)
	graphName              = 2  // GraphProto.name
	graphInitializer       = 5  // GraphProto.initializer (repeated TensorProto)
	graphInput             = 11 // GraphProto.input (repeated ValueInfoProto)
	graphOutput            = 12 // GraphProto.output (repeated ValueInfoProto)
	graphSparseInitializer = 15 // GraphProto.sparse_initializer (repeated SparseTensorProto)

	nodeInput     = 1 // NodeProto.input (repeated string)
	nodeOutput    = 2 // NodeProto.output (repeated string)
	nodeName      = 3 // NodeProto.name
	nodeOpType    = 4 // NodeProto.op_type
	nodeAttribute = 5 // NodeProto.attribute (repeated AttributeProto)
	nodeDomain    = 7 // NodeProto.domain

	attrName          = 1  // AttributeProto.name
	attrI             = 3  // AttributeProto.i (int64)
	attrS             = 4  // AttributeProto.s (bytes)
	attrT             = 5  // AttributeProto.t (TensorProto)
	attrG             = 6  // AttributeProto.g (GraphProto)
	attrTensors       = 10 // AttributeProto.tensors (repeated TensorProto)
	attrGraphs        = 11 // AttributeProto.graphs (repeated GraphProto)
	attrSparseTensor  = 22 // AttributeProto.sparse_tensor (SparseTensorProto)
	attrSparseTensors = 23 // AttributeProto.sparse_tensors (repeated SparseTensorProto)

	tensorDims         = 1  // TensorProto.dims (repeated int64)
	tensorDataType     = 2  // TensorProto.data_type (int32, a TensorProto.DataType)
	tensorFloatData    = 4  // TensorProto.float_data (packed float)
	tensorInt32Data    = 5  // TensorProto.int32_data (packed int32)
	tensorInt64Data    = 7  // TensorProto.int64_data (packed int64)
	tensorName         = 8  // TensorProto.name
	tensorRawData      = 9  // TensorProto.raw_data (bytes)
	tensorDoubleData   = 10 // TensorProto.double_data (packed double)
	tensorUint64Data   = 11 // TensorProto.uint64_data (packed uint64)
	tensorExternalData = 13 // TensorProto.external_data (repeated StringStringEntryProto)
	tensorDataLocation = 14 // TensorProto.data_location (a TensorProto.DataLocation)

	dataLocationExternal = 1 // TensorProto.DataLocation.EXTERNAL

	sparseValues  = 1 // SparseTensorProto.values (TensorProto)
	sparseIndices = 2 // SparseTensorProto.indices (TensorProto)
	sparseDims    = 3 // SparseTensorProto.dims (repeated int64)

	valueInfoName = 1 // ValueInfoProto.name
	valueInfoType = 2 // ValueInfoProto.type (TypeProto)

	typeTensor       = 1 // TypeProto.tensor_type (TypeProto.Tensor)
	typeSequence     = 4 // TypeProto.sequence_type
	typeMap          = 5 // TypeProto.map_type
	typeSparseTensor = 8 // TypeProto.sparse_tensor_type (TypeProto.SparseTensor, laid out as TypeProto.Tensor)
	typeOptional     = 9 // TypeProto.optional_type

	tensorTypeElemType = 1 // TypeProto.Tensor.elem_type and TypeProto.SparseTensor.elem_type
	tensorTypeShape    = 2 // TypeProto.Tensor.shape and TypeProto.SparseTensor.shape (TensorShapeProto)

	shapeDim = 1 // TensorShapeProto.dim (repeated TensorShapeProto.Dimension)

	dimValue = 1 // TensorShapeProto.Dimension.dim_value (int64)
	dimParam = 2 // TensorShapeProto.Dimension.dim_param
)

// tag is the first byte of a field whose number is below 16: its number and wire type.
func tag(num, wire byte) byte { return num<<3 | wire }
