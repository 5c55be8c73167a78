#!/usr/bin/env bash
# Duplicate finding on a generated LoRA collection (300 files of 4-20 MB, about 3.6 GB; see
# TestWriteLoRACollection in canon/stfile for the planted duplicates), all sides interleaved, page cache
# warm: stdiff dupes (no cache) vs jdupes -r (byte duplicates only) vs b3sum of every file (what collection
# managers do), and the two ratios the issue sets (stdiff/b3sum at most 0.25, stdiff/jdupes at most 2).
# Then checks that stdiff found every group jdupes found plus the planted content and renamed copies,
# and that a second run with the cache reads no tensor bytes. Usage: testdata/bench/dupes.sh [RUNS]
set -euo pipefail
runs=${1:-5}
for tool in jdupes b3sum; do
  command -v $tool >/dev/null || { echo "$tool is needed: apt-get install $tool" >&2; exit 2; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
STDIFF_BENCH_COLLECTION="$tmp/loras" go test ./canon/stfile -run TestWriteLoRACollection -count=1 -timeout 10m >/dev/null
echo "collection: $(ls "$tmp/loras" | wc -l) files, $(du -sh "$tmp/loras" | cut -f1)"
sync # the 3.6 GB just written go to disk now, not while the sides are timed
cat "$tmp"/loras/* >/dev/null
python3 testdata/bench/interleave.py "$runs" \
  "stdiff=$tmp/stdiff dupes --no-cache $tmp/loras" \
  "jdupes=jdupes -r $tmp/loras" \
  "b3sum=b3sum $tmp/loras/*" | tee "$tmp/times.txt"
awk '$2 == "median" { t[$1] = $3 } END { printf "stdiff/b3sum %.2f, stdiff/jdupes %.2f\n", t["stdiff:"] / t["b3sum:"], t["stdiff:"] / t["jdupes:"] }' "$tmp/times.txt"

"$tmp/stdiff" dupes --no-cache --json "$tmp/loras" > "$tmp/stdiff.json" || true
jdupes -r "$tmp/loras" > "$tmp/jdupes.txt" || true
python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
rep = json.load(open(os.path.join(tmp, "stdiff.json")))
groups = {g["level"]: [] for g in rep["groups"]}
for g in rep["groups"]:
    groups[g["level"]].append({os.path.basename(f) for f in g["files"]})
def found(level, names):
    return any(names <= g for g in groups.get(level, []))
jd = [set(os.path.basename(l) for l in block.split("\n") if l) for block in open(os.path.join(tmp, "jdupes.txt")).read().split("\n\n") if block.strip()]
missed = [g for g in jd if not found("bytes", g)]
planted = [l.split() for l in open(os.path.join(tmp, "planted.txt"))]
def right(kind, names):
    if kind == "none":
        return not found("bytes", names) and not found("content", names)
    return found(kind, names)
wrong = [p for p in planted if not right(p[0], set(p[1:]))]
print(f"jdupes groups: {len(jd)}, all found by stdiff: {not missed}; stdiff groups: "
      + ", ".join(f"{len(v)} {k}" for k, v in groups.items())
      + f"; planted groups right: {len(planted) - len(wrong)} of {len(planted)}")
if missed or wrong:
    sys.exit(f"missed {missed}, wrong {wrong}")
PY
export STDIFF_CACHE_DIR="$tmp/cache"
"$tmp/stdiff" dupes "$tmp/loras" >/dev/null || true
/usr/bin/time -f "second run with the cache: %e s" sh -c "'$tmp/stdiff' dupes '$tmp/loras' | tail -1"
