package main

import (
	"encoding/json"
	"fmt"

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

// torchSet is weightsModel as a sharded PyTorch checkpoint of n shards (save_pretrained without
// safetensors: pytorch_model.bin.index.json and pytorch_model-0000K-of-0000N.bin), every other tensor
// a view of a larger storage (a storage offset, column-major strides), as torch.save keeps slices and
// transposes; the file names map to their bytes.
func torchSet(n int) map[string][]byte {
	ts := torchTensors(weightsModel())
	for i := range ts {
		if i%2 == 0 {
			ts[i] = torchw.Strided(ts[i], uint64(i+1))
		}
	}
	return torchw.Sharded(ts, n)
}

// safetensorsSet is weightsModel as a safetensors shard set of n shards, as convert.py and
// save_pretrained write one (model.safetensors.index.json, model-0000K-of-0000N.safetensors, each
// with the metadata format=pt); the file names map to their bytes.
func safetensorsSet(n int) map[string][]byte {
	f := weightsModel()
	files := map[string][]byte{}
	weights := map[string]string{}
	total := 0
	per := (len(f.Tensors) + n - 1) / n
	for k := range n {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", k+1, n)
		shard := stfile.File{Metadata: f.Metadata, Tensors: f.Tensors[min(k*per, len(f.Tensors)):min((k+1)*per, len(f.Tensors))]}
		for _, t := range shard.Tensors {
			weights[t.Name] = name
			total += len(t.Data)
		}
		files[name] = shard.Build()
	}
	files["model.safetensors.index.json"], _ = json.Marshal(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weights})
	return files
}
