#!/usr/bin/env python3
"""Writes hfmap.json: llama.cpp's tensor name map (gguf-py's constants.py and tensor_mapping.py) as data.

    python3 gen.py LLAMA_CPP_CHECKOUT [--commit REPO@COMMIT] > ../hfmap.json

Only gguf-py's two data modules are imported (no numpy): the architectures' names (MODEL_ARCH_NAMES), the
tensors each architecture has (MODEL_TENSORS), the GGUF name of each tensor (TENSOR_NAMES) and the Hugging
Face names that TensorNameMap maps to it (mappings_cfg, block_mappings_cfg with {bid}, and the per-architecture
arch_block_mappings_cfg), in their order, so that package hfmap builds the same map for any architecture.
--commit names where the checkout came from when it is not a git work tree; gguf-py/pyproject.toml may then be
absent (the source then names the commit instead of a version), gguf-py/LICENSE may not.
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkout")
    ap.add_argument("--commit", default="")
    args = ap.parse_args()
    pkg_dir = os.path.join(args.checkout, "gguf-py", "gguf")
    # A bare package: gguf/__init__.py would import the writer and numpy, which the map does not need.
    pkg = types.ModuleType("gguf")
    pkg.__path__ = [pkg_dir]
    sys.modules["gguf"] = pkg
    constants = importlib.import_module("gguf.constants")
    mapping = importlib.import_module("gguf.tensor_mapping")

    commit = args.commit
    if not commit:
        commit = subprocess.run(["git", "-C", args.checkout, "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
    with open(os.path.join(args.checkout, "gguf-py", "LICENSE")) as f:
        lic = [l.strip() for l in f if l.strip()][:2]
    version = ""
    pyproject = os.path.join(args.checkout, "gguf-py", "pyproject.toml")
    if os.path.exists(pyproject):  # absent where only the two data modules were taken at --commit
        with open(pyproject) as f:
            for line in f:
                if line.startswith("version"):
                    version = line.split("=", 1)[1].strip().strip('"')
                    break

    T = constants.MODEL_TENSOR
    tnm = mapping.TensorNameMap

    def cfg(d):
        return [[t.name, list(keys)] for t, keys in d.items()]

    out = {
        "source": "llama.cpp gguf-py " + (version or "@" + commit.rsplit("@", 1)[-1][:7]),
        "commit": commit,
        "license": "gguf-py: " + ", ".join(lic),
        "tensor_names": {t.name: constants.TENSOR_NAMES[t] for t in T if t in constants.TENSOR_NAMES},
        "mappings": cfg(tnm.mappings_cfg),
        "block_mappings": cfg(tnm.block_mappings_cfg),
        "arch_block_mappings": {constants.MODEL_ARCH_NAMES[a]: cfg(d) for a, d in tnm.arch_block_mappings_cfg.items()},
        "archs": {constants.MODEL_ARCH_NAMES[a]: [t.name for t in constants.MODEL_TENSORS.get(a, [])]
                  for a in constants.MODEL_ARCH},
    }
    json.dump(out, sys.stdout, indent=0, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
