#!/usr/bin/env bash
# Derived copies at collection scale (issue #37): the 1,000 kohya SDXL LoRAs of collection.sh
# (stfile.KohyaSDXL; here each with weights of its own, as in a real collection: collection.sh's share
# their tensor bytes) with 100 copies derived from the first 100 added (derived_copies.go: 50 rounded
# from F16 to F8_E4M3, 50 with the lora_unet_input_blocks_8 modules left out), both sides interleaved,
# page cache warm, no cache: `stdiff dupes --level derived` against `stdiff dupes` (level renamed). The
# goal is at most 2x. Then checks that every copy is found in its original's derived group with the
# right relation. Usage: testdata/bench/derived.sh [RUNS] [FILES] [COPIES]    (from the repository root)
set -euo pipefail
runs=${1:-11}
files=${2:-1000}
copies=${3:-100}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/stdiff" ./cmd/stdiff
go run testdata/bench/derived_copies.go collection "$tmp/loras" "$files"
go run testdata/bench/derived_copies.go copies "$tmp/loras" "$copies" "$tmp/loras/derived"
echo "collection: $(find "$tmp/loras" -name '*.safetensors' | wc -l) files, $(du -sh "$tmp/loras" | cut -f1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
sync
cat "$tmp"/loras/*.safetensors "$tmp"/loras/derived/* >/dev/null
python3 testdata/bench/interleave.py "$runs" \
  "dupes=$tmp/stdiff dupes --no-cache $tmp/loras" \
  "derived=$tmp/stdiff dupes --no-cache --level derived $tmp/loras" | tee "$tmp/times.txt"
awk '$2 == "median" { t[$1] = $3 } END { printf "derived/dupes %.2f (goal: at most 2)\n", t["derived:"] / t["dupes:"] }' "$tmp/times.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/stdiff" dupes --no-cache --level derived --json "$tmp/loras" > "$tmp/derived.json" || true
python3 - "$tmp/derived.json" "$copies" <<'PY'
import json, os, sys
rep = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
found = {}
for g in rep["groups"]:
    if g["level"] != "derived":
        continue
    orig = os.path.basename(g["keeper"])
    for m in g["members"][1:]:
        found[os.path.basename(m["path"])] = (orig, m["relation"], m.get("rounded_to"))
bad = 0
for name, (orig, rel, to) in found.items():
    stem, kind = name.rsplit("-", 1)
    ok = orig == stem + ".safetensors" and ((kind == "fp8.safetensors" and rel == "rounded" and to == "F8_E4M3") or (kind == "pruned.safetensors" and rel == "subset"))
    bad += not ok
print(f"derived copies found: {len(found)} of {want}, {bad} with the wrong original or relation")
sys.exit(0 if len(found) == want and bad == 0 else 1)
PY
