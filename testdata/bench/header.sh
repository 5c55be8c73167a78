#!/usr/bin/env bash
# Header speed, all sides interleaved in one run, medians and ratios against `stdiff check`:
# - stdiff check vs the plain Python (json.loads) and Node (JSON.parse) readers in ../shared/bench, on
#   one 50,000-tensor header (about 6 MB);
# - stdiff diff of that header with itself and with a revision of it (5,000 dtype changes, 5,000
#   renames), which must stay within 3x of check.
# Usage: testdata/bench/header.sh [RUNS]    (from the repository root)
set -euo pipefail
runs=${1:-21}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shared=${STDIFF_SHARED:-../shared}
go build -o "$tmp/stdiff" ./cmd/stdiff
STDIFF_BENCH_FILE="$tmp/h50k.safetensors" go test ./canon/stfile -run TestWriteBenchFile -count=1 >/dev/null
ls -l "$tmp/h50k.safetensors" | awk '{print "file:", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "check=$tmp/stdiff check $tmp/h50k.safetensors" \
  "python=python3 $shared/bench/py_reader.py $tmp/h50k.safetensors" \
  "node=node $shared/bench/js_reader.mjs $tmp/h50k.safetensors" \
  "diff-same=$tmp/stdiff diff $tmp/h50k.safetensors $tmp/h50k.safetensors" \
  "diff-changed=$tmp/stdiff diff $tmp/h50k.safetensors $tmp/h50k.changed.safetensors"
