#!/usr/bin/env bash
# PyTorch checkpoint header speed: stdiff inspect and check of a 1 GiB torch.save checkpoint (zip) against
# torch.load(weights_only=True) of it (Debian's python3-torch), and Python importing torch alone (what
# torch.load's time includes besides the load), interleaved in one run, medians and ratios.
# Usage: testdata/bench/torch.sh [RUNS] [MiB]    (from the repository root)
set -euo pipefail
runs=${1:-7}
mib=${2:-1024}
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
"$py" - "$tmp/model.bin" "$mib" <<'PY'
import sys, torch
path, mib = sys.argv[1], int(sys.argv[2])
rows = mib * 1024 * 1024 // 4 // 4096 // 8
torch.save({f"layers.{i}.weight": torch.randn(rows, 4096) for i in range(8)}, path)
PY
ls -l "$tmp/model.bin" | awk '{print "model.bin:", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "inspect=$tmp/stdiff inspect $tmp/model.bin" \
  "check=$tmp/stdiff check $tmp/model.bin" \
  "torch.load=$py -c 'import torch, sys; torch.load(sys.argv[1], weights_only=True)' $tmp/model.bin" \
  "import torch=$py -c 'import torch'"
