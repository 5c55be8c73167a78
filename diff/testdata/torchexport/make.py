#!/usr/bin/python3
"""Makes the tiny files of diff/testdata/torchexport with the real writers (Debian's python3-torch and
python3-onnx; run with /usr/bin/python3 from this folder). A model with Linear layers and an embedding
tied to its head, saved as:

  model.pt         torch.save(model.state_dict()): head.weight aliases emb.weight (one storage)
  lightning.ckpt   a PyTorch Lightning checkpoint of it after one Adam step (optimizer state, epoch,
                   global_step, a ModelCheckpoint callback's best_model_score)
  trainer.pt       {"optimizer": ..., "model": state dict, "epoch": 0}, as training scripts save
  model.safetensors the state dict as transformers' save_model writes it: the tied alias head.weight
                   dropped, every other tensor contiguous, written by hand (the safetensors format;
                   no safetensors package is needed)
  edited.safetensors the same with fc1.weight[0,0] changed
  model.onnx       torch.onnx.export (TorchScript exporter, offline): Linear weights stored transposed
                   as onnx::MatMul_N initializers, Constant nodes for the shapes
  edited.onnx      model.onnx exported after fc1.weight[0,0] was changed the same way
  layers.safetensors, layers.onnx  a model of two blocks with a LayerNorm each: their weights (all
                   ones) and biases (all zeros) are equal, and the exporter keeps one initializer of each
  twins.safetensors     a model of two square Linear layers of one shape and a wider one, none with a
                        bias (torch.onnx.export stores each weight transposed, as an onnx::MatMul_N
                        initializer read by a MatMul named after its module, /layer0/MatMul): its
                        state dict
  twins.onnx            torch.onnx.export of it: a faithful export
  twins-swapped.onnx    the export of the model with layer0's and layer1's weights exchanged: by value
                        alone each initializer still equals a source tensor (the other layer's)
  twins-untransposed.onnx twins.onnx with layer0's initializer replaced by layer0.weight as it is, not
                        transposed: the MatMul now computes x·W, not x·Wᵀ, yet the bytes equal the source's
  twins-unnamed.onnx, twins-unnamed-swapped.onnx  twins.onnx and twins-swapped.onnx with their
                        nodes named as torch.onnx.export named them before 1.13 (MatMul_3): no module
                        names a node, the graph's order is all that says which layer an initializer is
  conv1d.safetensors, conv1d.onnx  a model of GPT-2's Conv1D layers (y = x·W + b, W stored [in, out]):
                        the exporter keeps W as it is for the Gemm that reads it, square or not
  twins-oracle.json     what numpy says each initializer of each export holds, and onnx's node names
  oracle.json      what torch says: parameter count (model.parameters()), the tensors of each file
"""
import json
import struct

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(33)


class Tiny(nn.Module):
    def __init__(self, vocab=16, dim=8, hidden=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight  # tied

    def forward(self, ids):
        h = self.emb(ids)
        h = h + self.fc2(torch.relu(self.fc1(h)))
        h = self.norm(h)
        return self.head(h)


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


def export(model, path):
    ids = torch.zeros((1, 4), dtype=torch.long)
    torch.onnx.export(model, (ids,), path, input_names=["ids"], output_names=["logits"],
                      dynamic_axes={"ids": {1: "seq"}}, opset_version=13)


model = Tiny().eval()
sd = model.state_dict()
torch.save(sd, "model.pt")

# Lightning: one Adam step, then the checkpoint dict Lightning's trainer.save_checkpoint writes
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
loss = model(torch.tensor([[1, 2, 3, 4]])).sum()
loss.backward()
with torch.no_grad():
    saved = {k: v.clone() for k, v in model.state_dict().items()}
opt.step()
with torch.no_grad():  # keep the weights as saved, so the checkpoint's weights equal model.pt's
    for k, v in model.state_dict().items():
        v.copy_(saved[k])
model.eval()
ckpt = {
    "epoch": 0,
    "global_step": 1,
    "pytorch-lightning_version": "2.1.0",
    "state_dict": model.state_dict(),
    "loops": {},
    "callbacks": {"ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min'}": {
        "monitor": "val_loss", "best_model_score": torch.tensor(0.25), "best_model_path": "epoch=0.ckpt"}},
    "optimizer_states": [opt.state_dict()],
    "lr_schedulers": [],
}
torch.save(ckpt, "lightning.ckpt")
# a training script's checkpoint, its optimizer state first (an Adam moment has its weight's shape)
torch.save({"optimizer": opt.state_dict(), "model": model.state_dict(), "epoch": 0}, "trainer.pt")

kept = {k: v for k, v in sd.items() if k != "head.weight"}  # save_model drops the tied alias
save_safetensors("model.safetensors", kept)
export(model, "model.onnx")

edited = Tiny().eval()
edited.load_state_dict(sd)
with torch.no_grad():
    edited.fc1.weight[0, 0] += 0.5
esd = {k: v for k, v in edited.state_dict().items() if k != "head.weight"}
save_safetensors("edited.safetensors", esd)
export(edited, "edited.onnx")



class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, h):
        return h + self.down(torch.relu(self.up(self.ln(h))))


class Layers(nn.Module):
    def __init__(self, vocab=8, dim=4, n=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(n)])

    def forward(self, ids):
        h = self.emb(ids)
        for b in self.blocks:
            h = b(h)
        return h


layers = Layers().eval()
save_safetensors("layers.safetensors", layers.state_dict())
export(layers, "layers.onnx")

import onnx
from onnx import numpy_helper

m = onnx.load("model.onnx")
oracle = {
    "torch": torch.__version__,
    "onnx": onnx.__version__,
    "parameters": sum(p.numel() for p in model.parameters()),
    "state_dict": {k: list(v.shape) for k, v in sd.items()},
    "lightning_optimizer_state": {str(i): sorted(s) for i, s in opt.state_dict()["state"].items()},
    "onnx_initializers": {i.name: list(i.dims) for i in m.graph.initializer},
    "onnx_constants": sum(1 for n in m.graph.node if n.op_type == "Constant"),
}
# how each initializer relates to the state dict (by value; transposed where the exporter did)
pairs = {}
for i in m.graph.initializer:
    a = numpy_helper.to_array(i)
    for k, v in sd.items():
        v = v.numpy()
        if a.shape == v.shape and np.array_equal(a, v):
            pairs[i.name] = [k, "none"]
            break
        if a.ndim == 2 and a.T.shape == v.shape and np.array_equal(a.T, v):
            pairs[i.name] = [k, "transpose"]
            break
oracle["onnx_pairs"] = pairs
oracle["layers_initializers"] = sorted(i.name for i in onnx.load("layers.onnx").graph.initializer)
with open("oracle.json", "w") as f:
    json.dump(oracle, f, indent=1, sort_keys=True)
    f.write("\n")


# twins and conv1d: pairs follow the graph
torch.manual_seed(7)


class Twins(nn.Module):
    def __init__(self, dim=4, wide=6):
        super().__init__()
        self.layer0 = nn.Linear(dim, dim, bias=False)
        self.layer1 = nn.Linear(dim, dim, bias=False)
        self.proj = nn.Linear(dim, wide, bias=False)

    def forward(self, x):
        return self.proj(self.layer1(torch.relu(self.layer0(x))))


def export_twins(model, path):
    torch.onnx.export(model, (torch.zeros(1, 4),), path, input_names=["x"], output_names=["y"], opset_version=13)


model = Twins().eval()
sd = model.state_dict()
save_safetensors("twins.safetensors", sd)
export_twins(model, "twins.onnx")

swapped = Twins().eval()
swapped.load_state_dict({"layer0.weight": sd["layer1.weight"], "layer1.weight": sd["layer0.weight"],
                         "proj.weight": sd["proj.weight"]})
export_twins(swapped, "twins-swapped.onnx")

m = onnx.load("twins.onnx")
reader = {i: n.name for n in m.graph.node for i in n.input}
for k, init in enumerate(m.graph.initializer):
    if reader.get(init.name) == "/layer0/MatMul":
        m.graph.initializer[k].CopyFrom(numpy_helper.from_array(sd["layer0.weight"].numpy(), init.name))
onnx.save(m, "twins-untransposed.onnx")

for name in ("twins", "twins-swapped"):  # node names as torch.onnx.export wrote them before 1.13
    m = onnx.load(name + ".onnx")
    for k, n in enumerate(m.graph.node):
        n.name = "%s_%d" % (n.op_type, k)
    onnx.save(m, name.replace("twins", "twins-unnamed") + ".onnx")

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
export_twins(gpt, "conv1d.onnx")

oracle = {}
for name in ("twins.onnx", "twins-swapped.onnx", "twins-untransposed.onnx", "twins-unnamed.onnx",
             "twins-unnamed-swapped.onnx", "conv1d.onnx"):
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
