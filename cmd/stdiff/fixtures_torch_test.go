package main

import (
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// torchTensors are a safetensors file's tensors for torchw.
func torchTensors(f stfile.File) []torchw.Tensor {
	ts := make([]torchw.Tensor, len(f.Tensors))
	for i, t := range f.Tensors {
		ts[i] = torchw.Tensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Data: t.Data}
	}
	return ts
}

// torchFixtures are the PyTorch checkpoints in ../../testdata: weights.safetensors' tensors as
// torch.save writes them (named .bin, as the Hugging Face Hub names them: stdiff goes by content),
// and hostile checkpoints whose pickles would run os.system on torch.load(weights_only=False).
func torchFixtures() map[string][]byte {
	ts := torchTensors(weightsModel())
	sd := torchw.StateDict(ts, "epoch", "3")
	return map[string][]byte{
		"weights.bin":       torchw.Zip("weights", sd, ts),
		"weights-legacy.pt": torchw.Legacy(sd, ts),
		"hostile.pt":        torchw.Zip("hostile", torchw.Call("os", "system", "touch pwned"), nil),
		"hostile-beside.pt": torchw.Zip("hostile-beside", sd, ts, "extra.pkl", torchw.Call("builtins", "eval", "print(1)")),
	}
}
