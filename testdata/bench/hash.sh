#!/usr/bin/env bash
# Byte speed, all sides interleaved in one run (page cache warm), medians and ratios against the first:
# - stdiff hash --content (per-tensor BLAKE3 on all cores) vs b3sum (BLAKE3 of the file, all cores);
# - stdiff hash --all (SHA256, AutoV1/V2/V3, BLAKE3, CRC32 in one pass) vs sha256sum then b3sum;
# then the peak memory of each stdiff run. Usage: testdata/bench/hash.sh [MiB] [RUNS]  (repository root)
set -euo pipefail
mib=${1:-2048}
runs=${2:-5}
command -v b3sum >/dev/null || { echo "b3sum is needed: apt-get install b3sum" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
f="$tmp/big.safetensors"
STDIFF_BENCH_BIG="$f" STDIFF_BENCH_BIG_MIB="$mib" go test ./canon/stfile -run TestWriteBigBenchFile -count=1 >/dev/null
ls -l "$f" | awk '{print "file:", $5, "bytes"}'
cat "$f" >/dev/null
python3 testdata/bench/interleave.py "$runs" \
  "content=$tmp/stdiff hash --content $f" \
  "b3sum=b3sum $f" \
  "all=$tmp/stdiff hash --all $f" \
  "sha256sum+b3sum=sha256sum $f && b3sum $f"
for args in "--content" "--all" "--all --content"; do
  /usr/bin/time -f "stdiff hash $args: peak memory %M KiB" "$tmp/stdiff" hash $args "$f" >/dev/null
done
