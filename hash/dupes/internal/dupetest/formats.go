package dupetest

import (
	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/onnx/onnxw"
	"github.com/stdiff/stdiff/canon/tensor"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// Formats are the formats InFormat writes a safetensors file's tensors in: a torch.save zip archive,
// torch.save's legacy format, an ONNX model, and a zip archive whose second pickle calls
// builtins.eval (its tensors are the same; torch.load(weights_only=True) refuses it).
var Formats = []string{"pt", "legacy", "onnx", "unsafe-pt"}

// onnxTypes are the ONNX data types of the dtypes InFormat writes (TensorProto.DataType).
var onnxTypes = map[tensor.DType]int32{"F32": 1, "F16": 10, "BF16": 16, "I64": 7, "I32": 6}

// InFormat is the safetensors file st (F32, F16, BF16, I64 or I32 tensors) with the same tensors,
// names, shapes and bytes, in format (one of Formats); its metadata is left behind.
func InFormat(format string, st []byte) []byte {
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	var inits [][]byte
	for _, t := range m.Tensors {
		data := st[m.DataOffset()+int64(t.Begin) : m.DataOffset()+int64(t.End)]
		ts = append(ts, torchw.Tensor{Name: t.Name, DType: string(t.DType), Shape: t.Shape, Data: data})
		dims := make([]int64, len(t.Shape))
		for i, d := range t.Shape {
			dims[i] = int64(d)
		}
		inits = append(inits, onnxw.Tensor(t.Name, onnxTypes[t.DType], dims, onnxw.Raw(data)))
	}
	switch format {
	case "legacy":
		return torchw.Legacy(torchw.StateDict(ts), ts)
	case "onnx":
		return onnxw.Model(inits...)
	case "unsafe-pt":
		return torchw.Zip("archive", torchw.StateDict(ts), ts, "extra.pkl", torchw.Call("builtins", "eval", "print(1)"))
	}
	return torchw.Zip("archive", torchw.StateDict(ts), ts)
}

// TorchSet is the safetensors file st (as InFormat takes it) as a sharded PyTorch checkpoint of n
// shards, as save_pretrained writes one (torchw.Sharded: file names to bytes); views makes every other
// tensor a view of a larger storage (torchw.Strided): other files, the same tensors.
func TorchSet(st []byte, n int, views bool) map[string][]byte {
	m := canon.ReadBytes("st", st)
	var ts []torchw.Tensor
	for i, t := range m.Tensors {
		tt := torchw.Tensor{Name: t.Name, DType: string(t.DType), Shape: t.Shape, Data: st[m.DataOffset()+int64(t.Begin) : m.DataOffset()+int64(t.End)]}
		if views && i%2 == 0 {
			tt = torchw.Strided(tt, 1)
		}
		ts = append(ts, tt)
	}
	return torchw.Sharded(ts, n)
}
