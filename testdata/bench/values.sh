#!/usr/bin/env bash
# Comparison by value, all sides interleaved in one run (page cache warm), medians and ratios against the
# first of each pair:
# - two 1 GiB BF16 models, 64 tensors of 2048x4096, every other one nudged by normal noise (see
#   TestWriteValueBenchPair in diff): testdata/bench/torch_diff.py (the torch script people write for
#   this; Debian's python3-torch, skipped where it is absent) vs `stdiff A B`, which computes the same
#   statistics;
# - two identical copies: cmp vs `stdiff A A2`;
# then the peak memory of each, and whether stdiff's statistics agree with torch's.
# Usage: testdata/bench/values.sh [RUNS]  (repository root)
set -euo pipefail
runs=${1:-3}
torch=1
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch is not installed (apt-get install python3-torch): the torch comparison is skipped" >&2; torch=0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
STDIFF_BENCH_VALUES="$tmp" go test ./diff -run TestWriteValueBenchPair -count=1 -timeout 10m >/dev/null
cp "$tmp/a.safetensors" "$tmp/a2.safetensors"
ls -l "$tmp"/*.safetensors | awk '{print "file:", $9, $5, "bytes"}'
cat "$tmp"/*.safetensors >/dev/null
torch_cmd="/usr/bin/python3 -W ignore testdata/bench/torch_diff.py $tmp/a.safetensors $tmp/b.safetensors"
if [ $torch = 1 ]; then
  python3 testdata/bench/interleave.py "$runs" "torch=$torch_cmd" "stdiff=$tmp/stdiff $tmp/a.safetensors $tmp/b.safetensors"
fi
python3 testdata/bench/interleave.py "$runs" "cmp=cmp $tmp/a.safetensors $tmp/a2.safetensors" \
  "stdiff-same=$tmp/stdiff $tmp/a.safetensors $tmp/a2.safetensors"
/usr/bin/time -q -f "stdiff A B: peak memory %M KiB" "$tmp/stdiff" "$tmp/a.safetensors" "$tmp/b.safetensors" >/dev/null || true
/usr/bin/time -f "stdiff A A2: peak memory %M KiB" "$tmp/stdiff" "$tmp/a.safetensors" "$tmp/a2.safetensors" >/dev/null
if [ $torch = 1 ]; then
  /usr/bin/time -f "torch script: peak memory %M KiB" $torch_cmd > "$tmp/torch.jsonl"
  "$tmp/stdiff" --json "$tmp/a.safetensors" "$tmp/b.safetensors" > "$tmp/stdiff.json" || true
  python3 - "$tmp/stdiff.json" "$tmp/torch.jsonl" <<'PY'
import json, math, sys
ours = {c["name"]: c["values"] for c in json.load(open(sys.argv[1]))["tensors"]["changed"]}
theirs = [json.loads(line) for line in open(sys.argv[2])]
worst = 0.0
for t in theirs:
    v = ours[t["name"]]
    for k in ("max_abs_diff", "mean_abs_diff", "rel_l2", "cosine", "diff_fraction"):
        worst = max(worst, abs(v[k] - t[k]) / max(abs(t[k]), 1e-300))
    assert all(v[k] == t[k] for k in ("nan_a", "nan_b", "inf_a", "inf_b")), t["name"]
assert len(ours) == len(theirs), (len(ours), len(theirs))
print(f"statistics: {len(theirs)} changed tensors on both sides, largest relative difference to torch's {worst:.1e}")
PY
fi
