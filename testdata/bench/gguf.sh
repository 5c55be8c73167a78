#!/usr/bin/env bash
# GGUF header speed, interleaved in one run, medians and ratios against `stdiff inspect`: stdiff
# inspect (text and --json) and check, and @huggingface/gguf (the Hub's reader) on Node, each reading
# one local file of 50,000 tensors with a 150,000-token tokenizer (about 30 MB, a 7 MB header).
# Needs node and a folder where `npm install @huggingface/gguf` was run, named by STDIFF_GGUF_NODE
# (as the comparison tests in canon/gguf); without them it says so and stops.
# Usage: STDIFF_GGUF_NODE=FOLDER testdata/bench/gguf.sh [RUNS]    (from the repository root)
set -euo pipefail
runs=${1:-21}
node_dir=${STDIFF_GGUF_NODE:-}
if ! command -v node >/dev/null || [ -z "$node_dir" ] || [ ! -d "$node_dir/node_modules/@huggingface/gguf" ]; then
  echo "skipped: needs node on PATH and STDIFF_GGUF_NODE naming a folder with node_modules/@huggingface/gguf"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
STDIFF_BENCH_GGUF="$tmp/bench.gguf" go test ./canon/gguf/ggufw -run TestWriteBenchFile -count=1 >/dev/null
ls -l "$tmp/bench.gguf" | awk '{print "file:", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "inspect=$tmp/stdiff inspect $tmp/bench.gguf" \
  "inspect-json=$tmp/stdiff inspect --json $tmp/bench.gguf" \
  "check=$tmp/stdiff check $tmp/bench.gguf" \
  "node=node testdata/bench/gguf_reader.mjs $node_dir $tmp/bench.gguf"
