#!/usr/bin/env bash
# Header speed: stdiff check vs the plain Python (json.loads) and Node (JSON.parse) readers in
# ../shared/bench, on one 50,000-tensor header (about 6 MB), run interleaved; prints medians and ratios.
# Usage: testdata/bench/header.sh [RUNS]    (from the repository root)
set -euo pipefail
runs=${1:-21}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shared=${STDIFF_SHARED:-../shared}
go build -o "$tmp/stdiff" ./cmd/stdiff
STDIFF_BENCH_FILE="$tmp/h50k.safetensors" go test ./canon/stfile -run TestWriteBenchFile -count=1 >/dev/null
ls -l "$tmp/h50k.safetensors" | awk '{print "file:", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "stdiff=$tmp/stdiff check $tmp/h50k.safetensors" \
  "python=python3 $shared/bench/py_reader.py $tmp/h50k.safetensors" \
  "node=node $shared/bench/js_reader.mjs $tmp/h50k.safetensors"
