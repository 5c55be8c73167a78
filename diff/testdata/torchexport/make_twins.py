#!/usr/bin/python3
"""Makes the twins files of diff/testdata/torchexport with the real writers (Debian's python3-torch and
python3-onnx; run with /usr/bin/python3 from this folder): a model of two square Linear layers of one
shape and a wider one, none with a bias, so torch.onnx.export stores each weight transposed as an
onnx::MatMul_N initializer read by a MatMul named after its module (/layer0/MatMul).

  twins.safetensors     its state dict (the safetensors format, as make.py writes it)
  twins.onnx            torch.onnx.export of it: a faithful export
  twins-swapped.onnx    the export of the model with layer0's and layer1's weights exchanged: by value
                        alone each initializer still equals a source tensor (the other layer's)
  twins-untransposed.onnx twins.onnx with layer0's initializer replaced by layer0.weight as it is, not
                        transposed: the MatMul now computes x·W, not x·Wᵀ, yet the bytes equal the source's
  conv1d.safetensors, conv1d.onnx  a model of GPT-2's Conv1D layers (y = x·W + b, W stored [in, out]):
                        the exporter stores W as it is for the MatMul, square or not
  twins-oracle.json     what numpy says each initializer of each export holds, and onnx's node names
"""
import json

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

import struct

torch.manual_seed(7)


def save_safetensors(path, sd):
    """The safetensors format: 8-byte little-endian header length, JSON header, data."""
    header, data, off = {}, bytearray(), 0
    names = {torch.float32: "F32", torch.int64: "I64"}
    for k in sorted(sd):
        t = sd[k].contiguous()
        b = t.numpy().tobytes()
        header[k] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        data += b
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + bytes(data))


class Twins(nn.Module):
    def __init__(self, dim=4, wide=6):
        super().__init__()
        self.layer0 = nn.Linear(dim, dim, bias=False)
        self.layer1 = nn.Linear(dim, dim, bias=False)
        self.proj = nn.Linear(dim, wide, bias=False)

    def forward(self, x):
        return self.proj(self.layer1(torch.relu(self.layer0(x))))


def export(model, path):
    torch.onnx.export(model, (torch.zeros(1, 4),), path, input_names=["x"], output_names=["y"], opset_version=13)


model = Twins().eval()
sd = model.state_dict()
save_safetensors("twins.safetensors", sd)
export(model, "twins.onnx")

swapped = Twins().eval()
swapped.load_state_dict({"layer0.weight": sd["layer1.weight"], "layer1.weight": sd["layer0.weight"],
                         "proj.weight": sd["proj.weight"]})
export(swapped, "twins-swapped.onnx")

m = onnx.load("twins.onnx")
reader = {i: n.name for n in m.graph.node for i in n.input}
for k, init in enumerate(m.graph.initializer):
    if reader.get(init.name) == "/layer0/MatMul":
        m.graph.initializer[k].CopyFrom(numpy_helper.from_array(sd["layer0.weight"].numpy(), init.name))
onnx.save(m, "twins-untransposed.onnx")

class Conv1D(nn.Module):  # transformers' GPT-2 Conv1D: the weight is [in, out]
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf))
        self.bias = nn.Parameter(torch.randn(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)


class GPT2ish(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.c_fc = Conv1D(2 * dim, dim)
        self.c_proj = Conv1D(dim, dim)
        self.c_out = Conv1D(dim, 2 * dim)

    def forward(self, x):
        return self.c_proj(self.c_out(torch.relu(self.c_fc(x))))


gpt = GPT2ish().eval()
save_safetensors("conv1d.safetensors", gpt.state_dict())
export(gpt, "conv1d.onnx")

oracle = {}
for name in ("twins.onnx", "twins-swapped.onnx", "twins-untransposed.onnx", "conv1d.onnx"):
    g = onnx.load(name).graph
    readers = {i: n.name for n in g.node for i in n.input}
    held = {}
    for init in g.initializer:
        a = numpy_helper.to_array(init)
        for k, v in (gpt.state_dict() if name == "conv1d.onnx" else sd).items():
            v = v.numpy()
            if a.shape == v.shape and np.array_equal(a, v):
                held[init.name] = [readers.get(init.name, ""), k, "none"]
            elif a.ndim == 2 and a.T.shape == v.shape and np.array_equal(a.T, v):
                held[init.name] = [readers.get(init.name, ""), k, "transpose"]
    oracle[name] = held
with open("twins-oracle.json", "w") as f:
    json.dump(oracle, f, indent=1, sort_keys=True)
    f.write("\n")
