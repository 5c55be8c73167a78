package torchw

import "github.com/stdiff/stdiff/canon/stfile"

// TensorsOf is a safetensors file's tensors, to write as PyTorch's.
func TensorsOf(f stfile.File) []Tensor {
	ts := make([]Tensor, len(f.Tensors))
	for i, t := range f.Tensors {
		ts[i] = Tensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Data: t.Data}
	}
	return ts
}

// Fixtures are the PyTorch checkpoints of the project's testdata folder, by file name: stfile.Weights'
// tensors as torch.save writes them (named .bin, as the Hugging Face Hub names them: stdiff goes by
// content), and hostile checkpoints whose pickles would run os.system on torch.load(weights_only=False).
// Tests of any package may build the one they need, or read the committed copy, which this package's
// TestFixtures keeps in step with this function (after changing it: go test ./canon/torch/torchw -run
// TestFixtures -update, then review the files with stdiff).
func Fixtures() map[string][]byte {
	ts := TensorsOf(stfile.Weights())
	sd := StateDict(ts, "epoch", "3")
	return map[string][]byte{
		"weights.bin":       Zip("weights", sd, ts),
		"weights-legacy.pt": Legacy(sd, ts),
		"hostile.pt":        Zip("hostile", Call("os", "system", "touch pwned"), nil),
		"hostile-beside.pt": Zip("hostile-beside", sd, ts, "extra.pkl", Call("builtins", "eval", "print(1)")),
	}
}

// ShardedWeights is stfile.Weights as a sharded PyTorch checkpoint of n shards (save_pretrained without
// safetensors: pytorch_model.bin.index.json and pytorch_model-0000K-of-0000N.bin), every other tensor
// a view of a larger storage (a storage offset, column-major strides), as torch.save keeps slices and
// transposes; the file names map to their bytes.
func ShardedWeights(n int) map[string][]byte {
	ts := TensorsOf(stfile.Weights())
	for i := range ts {
		if i%2 == 0 {
			ts[i] = Strided(ts[i], uint64(i+1))
		}
	}
	return Sharded(ts, n)
}
