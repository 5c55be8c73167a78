#!/usr/bin/python3
"""Writes the derived-copy fixtures with Debian's python3-torch (torch 1.13): an F32 state dict with
EMA weights (model.* and model_ema.*), its .half() and .bfloat16() copies, an EMA-pruned copy
(model_ema.* dropped) and a pruned half copy, as torch.save .pt files and as safetensors written by
hand (Debian has no safetensors package), plus an unrelated model of the same shapes. Tiny: a few KB.
Run from this folder: /usr/bin/python3 make.py"""
import json, struct
import torch

torch.manual_seed(37)
shapes = {"a.weight": (8, 16), "a.bias": (16,), "b.weight": (4, 8)}
base = {}
for prefix in ("model", "model_ema"):
    for k, s in shapes.items():
        base[f"{prefix}.{k}"] = torch.randn(*s, dtype=torch.float32)
torch.manual_seed(99)
other = {k: torch.randn(*v.shape, dtype=torch.float32) for k, v in base.items()}

DT = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def raw(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save_st(sd, path, meta=None):
    header, data = {}, b""
    if meta:
        header["__metadata__"] = meta
    for k in sorted(sd):
        b = raw(sd[k])
        header[k] = {"dtype": DT[sd[k].dtype], "shape": list(sd[k].shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def pruned(sd):
    return {k: v for k, v in sd.items() if not k.startswith("model_ema.")}


save_st(base, "dreamy_v3.safetensors", {"format": "pt"})
torch.save(base, "dreamy_v3.pt")
save_st({k: v.half() for k, v in base.items()}, "dreamy_v3-fp16.safetensors")
save_st({k: v.bfloat16() for k, v in base.items()}, "dreamy_v3-bf16.safetensors")
save_st(pruned(base), "dreamy_v3-pruned.safetensors")
torch.save({k: v.half() for k, v in pruned(base).items()}, "dreamy_v3-pruned-fp16.pt")
save_st(other, "unrelated.safetensors")
save_st({k: v.half() for k, v in other.items()}, "unrelated-fp16.safetensors")
