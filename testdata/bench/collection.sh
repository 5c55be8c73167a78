#!/usr/bin/env bash
# Header work at collection scale (issue #23), all sides interleaved in one run, page cache warm,
# medians and ratios against the plain Python reader (../shared/bench/py_reader.py: read each header,
# json.loads it):
# - on 1,000 kohya SDXL LoRAs (stfile.KohyaSDXL: headers of about 110 KB with sd-scripts' metadata,
#   tag frequencies included; small data): `stdiff inspect --short DIR` and `stdiff check FILE…` vs
#   the Python script given every file;
# - on one 50,000-tensor header (about 6 MB): `stdiff check` vs the Python script.
# The goal is at most 0.25x Python's time for the two collection commands. Then the peak memory
# (maximum resident set) of each side, from /usr/bin/time -v.
# Usage: testdata/bench/collection.sh [RUNS] [FILES]    (from the repository root)
set -euo pipefail
runs=${1:-11}
files=${2:-1000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shared=${STDIFF_SHARED:-../shared}
py="python3 $shared/bench/py_reader.py"
go build -o "$tmp/stdiff" ./cmd/stdiff
STDIFF_BENCH_KOHYA="$tmp/loras" STDIFF_BENCH_KOHYA_N=$files go test ./canon/stfile -run TestWriteKohyaCollection -count=1 -timeout 10m >/dev/null
STDIFF_BENCH_FILE="$tmp/h50k.safetensors" go test ./canon/stfile -run TestWriteBenchFile -count=1 >/dev/null
python3 - "$tmp/loras" <<'PY'
import os, struct, sys
d = sys.argv[1]
n = [struct.unpack("<Q", open(os.path.join(d, f), "rb").read(8))[0] for f in os.listdir(d)]
print(f"collection: {len(n)} kohya SDXL LoRAs, headers {min(n)} to {max(n)} bytes, {sum(n) / 1e6:.1f} MB of JSON")
PY
sync
cat "$tmp"/loras/* >/dev/null
python3 testdata/bench/interleave.py "$runs" \
  "python=$py $tmp/loras/*.safetensors" \
  "inspect-short=$tmp/stdiff inspect --short $tmp/loras" \
  "check=$tmp/stdiff check $tmp/loras/*.safetensors" \
  "python-50k=$py $tmp/h50k.safetensors" \
  "check-50k=$tmp/stdiff check $tmp/h50k.safetensors" | tee "$tmp/times.txt"
awk '$2 == "median" { t[$1] = $3 } END {
  printf "inspect-short/python %.2f, check/python %.2f (goal: at most 0.25 each); check-50k/python-50k %.2f\n",
    t["inspect-short:"] / t["python:"], t["check:"] / t["python:"], t["check-50k:"] / t["python-50k:"] }' "$tmp/times.txt"
if [ -x /usr/bin/time ]; then
  rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident set size/ { printf "%.0f MB", $6 / 1024 }'; }
  echo "peak memory: python $(rss $py "$tmp"/loras/*.safetensors), inspect-short $(rss "$tmp/stdiff" inspect --short "$tmp/loras")," \
    "check $(rss "$tmp/stdiff" check "$tmp"/loras/*.safetensors), check-50k $(rss "$tmp/stdiff" check "$tmp/h50k.safetensors")"
fi
