#!/usr/bin/env bash
# Snapshot speed and size, interleaved in one run (page cache warm), medians and ratios against
# `stdiff hash --content` (the per-tensor BLAKE3 a snapshot also computes): `stdiff snapshot -o` and
# `stdiff check --values` (the value summaries a snapshot also computes) on a model of 50,000 tensors
# with realistic names and MiB of BF16 data (see TestWriteSnapshotBenchFile); the snapshot's size and
# bytes per tensor; `stdiff diff SNAP MODEL` and `stdiff diff SNAP SNAP`; the peak memory of each.
# Usage: testdata/bench/snapshot.sh [MiB] [RUNS] [TENSORS]  (repository root; default 1024 5 50000)
set -euo pipefail
mib=${1:-1024}
runs=${2:-5}
tensors=${3:-50000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
f="$tmp/model.safetensors"
STDIFF_BENCH_SNAPSHOT="$f" STDIFF_BENCH_SNAPSHOT_MIB="$mib" STDIFF_BENCH_SNAPSHOT_TENSORS="$tensors" \
  go test ./hash -run TestWriteSnapshotBenchFile -count=1 >/dev/null
ls -l "$f" | awk '{print "model:", $5, "bytes"}'
cat "$f" >/dev/null
"$tmp/stdiff" snapshot "$f" -o "$tmp/model.snap"
ls -l "$tmp/model.snap" | awk -v n="$tensors" '{printf "snapshot: %d bytes, %.0f bytes per tensor\n", $5, $5 / n}'
python3 testdata/bench/interleave.py "$runs" \
  "hash-content=$tmp/stdiff hash --content $f" \
  "snapshot=$tmp/stdiff snapshot $f -o $tmp/out.snap" \
  "check-values=$tmp/stdiff check --values $f" \
  "diff-snap-model=$tmp/stdiff diff $tmp/model.snap $f" \
  "diff-snap-snap=$tmp/stdiff diff $tmp/model.snap $tmp/out.snap"
/usr/bin/time -f "stdiff hash --content: peak memory %M KiB" "$tmp/stdiff" hash --content "$f" >/dev/null
/usr/bin/time -f "stdiff snapshot: peak memory %M KiB" "$tmp/stdiff" snapshot "$f" -o "$tmp/out.snap"
/usr/bin/time -f "stdiff diff SNAP MODEL: peak memory %M KiB" "$tmp/stdiff" diff "$tmp/model.snap" "$f" >/dev/null
