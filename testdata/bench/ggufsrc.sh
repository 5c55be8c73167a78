#!/usr/bin/env bash
# A GGUF against its Hugging Face source: `stdiff model.safetensors model-q8_0.gguf` (pairing through
# llama.cpp's name map, q/k permutation undone, Q8_0 dequantised, every pair compared by value) against
# ggufsrc_numpy.py, a vectorised numpy script doing the same dequantise and compare, on a llama-shaped
# model of a billion BF16 parameters (2 GiB) and its 1 GiB Q8_0 GGUF written with canon/gguf/ggufw; with
# DTYPE f32 the source holds the same values in F32, in two shards with their index (4 GiB).
# Interleaved runs, medians and the ratio; then each one's peak memory (maximum resident set size).
# Needs Debian's python3-numpy (apt-get install -y python3-numpy).
# Usage: testdata/bench/ggufsrc.sh [RUNS] [bf16|f32]    (from the repository root)
set -euo pipefail
runs=${1:-3}
dtype=${2:-bf16}
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
mkdir "$tmp/model"
STDIFF_BENCH_GGUFSRC_DTYPE=$(echo "$dtype" | tr a-z A-Z) STDIFF_BENCH_GGUFSRC="$tmp/model" go test ./diff -run 'TestWriteSourceBench$' -count=1 >/dev/null
mv "$tmp/model/model-q8_0.gguf" "$tmp/model-q8_0.gguf"
source="$tmp/model/model.safetensors"
[ -f "$source" ] || source="$tmp/model/model.safetensors.index.json"
ls -l "$tmp"/model/*.safetensors "$tmp/model-q8_0.gguf" | awk '{print $9 ":", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "stdiff=$tmp/stdiff $tmp/model $tmp/model-q8_0.gguf" \
  "numpy=$py testdata/bench/ggufsrc_numpy.py $source $tmp/model-q8_0.gguf $tmp/model/config.json"
for c in "stdiff $tmp/stdiff $tmp/model $tmp/model-q8_0.gguf" \
         "numpy $py testdata/bench/ggufsrc_numpy.py $source $tmp/model-q8_0.gguf $tmp/model/config.json"; do
  set -- $c
  label=$1; shift
  /usr/bin/time -f "$label: peak memory %M KiB" "$@" >/dev/null 2>"$tmp/time" || true
  tail -1 "$tmp/time"
done
