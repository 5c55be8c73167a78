package onnxw

import "github.com/stdiff/stdiff/canon/stfile"

// Of is a safetensors file's tensors as the initializers of an ONNX model, in raw_data.
func Of(f stfile.File) []byte {
	types := map[string]int32{"F32": 1, "U8": 2, "I8": 3, "I16": 5, "I32": 6, "I64": 7, "BOOL": 9, "F16": 10, "F64": 11, "BF16": 16}
	var inits [][]byte
	for _, t := range f.Tensors {
		dims := make([]int64, len(t.Shape))
		for i, d := range t.Shape {
			dims[i] = int64(d)
		}
		inits = append(inits, Tensor(t.Name, types[t.DType], dims, Raw(t.Data)))
	}
	return Model(inits...)
}

// Fixtures are the ONNX models of the project's testdata folder, by file name: stfile.Weights'
// tensors as initializers. Tests of any package may build the one they need, or read the committed
// copy, which this package's TestFixtures keeps in step with this function (after changing it:
// go test ./canon/onnx/onnxw -run TestFixtures -update, then review the files with stdiff).
func Fixtures() map[string][]byte {
	return map[string][]byte{"weights.onnx": Of(stfile.Weights())}
}
