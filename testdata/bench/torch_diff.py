#!/usr/bin/python3
"""What people write today to see how much two models' weights moved, the comparison for
testdata/bench/values.sh: both safetensors files memory-mapped (the header parsed with json and struct:
Debian's python3-torch has no safetensors package), every tensor of one name, dtype and shape on both
sides compared in float64 with torch on every core, and for those that differ the statistics
`stdiff A B` computes: max |a-b| and its flat index, mean |a-b|, relative L2, cosine similarity, the
fraction of elements that differ, NaN and Inf counts on each side. One JSON line per changed tensor.
Usage: torch_diff.py A B"""
import json, mmap, os, struct, sys

import torch

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}


def load(path):
    f = open(path, "rb")
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    n = struct.unpack("<Q", mm[:8])[0]
    header = json.loads(mm[8:8 + n])
    header.pop("__metadata__", None)
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        dt = DTYPES[t["dtype"]]
        count = (end - begin) // torch.empty((), dtype=dt).element_size()
        x = torch.frombuffer(mm, dtype=dt, count=count, offset=8 + n + begin) if count else torch.empty(0, dtype=dt)
        tensors[name] = x.reshape(t["shape"])
    return tensors


def main():
    torch.set_num_threads(os.cpu_count())
    a, b = load(sys.argv[1]), load(sys.argv[2])
    for name, ta in a.items():
        tb = b.get(name)
        if tb is None or tb.dtype != ta.dtype or tb.shape != ta.shape or torch.equal(ta, tb):
            continue
        x, y = ta.reshape(-1).double(), tb.reshape(-1).double()
        nan_a = nan_b = inf_a = inf_b = 0
        if not (torch.isfinite(x).all() and torch.isfinite(y).all()):  # statistics over finite pairs
            nan_a, nan_b = torch.isnan(x).sum().item(), torch.isnan(y).sum().item()
            inf_a, inf_b = torch.isinf(x).sum().item(), torch.isinf(y).sum().item()
            finite = torch.isfinite(x) & torch.isfinite(y)
            x, y = x[finite], y[finite]
        d = x - y
        ad = d.abs()
        mx, idx = ad.max(0)
        na, nb = torch.linalg.vector_norm(x), torch.linalg.vector_norm(y)
        print(json.dumps({
            "name": name,
            "max_abs_diff": mx.item(), "max_abs_diff_index": idx.item(),
            "mean_abs_diff": ad.mean().item(),
            "rel_l2": (torch.linalg.vector_norm(d) / na).item(),
            "cosine": (torch.dot(x, y) / (na * nb)).item(),
            "diff_fraction": (ta != tb).sum().item() / ta.numel(),
            "nan_a": nan_a, "nan_b": nan_b, "inf_a": inf_a, "inf_b": inf_b,
        }))


main()
