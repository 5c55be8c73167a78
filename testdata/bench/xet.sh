#!/usr/bin/env bash
# The Xet hash's speed, all sides interleaved in one run (page cache warm), medians and ratios against
# the first: b3sum (BLAKE3 of the file, all cores) vs stdiff hash --xet (the Hub's Xet hash: Gear
# chunking and keyed BLAKE3 per chunk, the file in pieces on all cores), and where stdiff's time goes
# (pprof of hash/xet's BenchmarkSum, top entries). The file is random bytes, as weights are to a
# chunker. Usage: testdata/bench/xet.sh [MiB] [RUNS]  (repository root)
set -euo pipefail
mib=${1:-1024}
runs=${2:-5}
command -v b3sum >/dev/null || { echo "b3sum is needed: apt-get install b3sum" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
f="$tmp/big.bin"
head -c $((mib << 20)) /dev/urandom >"$f"
ls -l "$f" | awk '{print "file:", $5, "bytes"}'
python3 testdata/bench/interleave.py "$runs" \
  "b3sum=b3sum $f" \
  "xet=$tmp/stdiff hash --xet $f"
/usr/bin/time -f "stdiff hash --xet: peak memory %M KiB" "$tmp/stdiff" hash --xet "$f" >/dev/null
go test ./hash/xet -run XXX -bench 'BenchmarkSum$' -benchtime 5x -cpuprofile "$tmp/cpu.out" -o "$tmp/xet.test" >/dev/null
go tool pprof -top -nodecount 12 "$tmp/xet.test" "$tmp/cpu.out" 2>/dev/null | sed -n '1,20p'
