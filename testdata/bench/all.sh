#!/usr/bin/env bash
# Every benchmark in one sitting, each ratio printed beside its goal (issue #38), so a change that costs
# speed anywhere shows. Runs each script of this folder ROUNDS times with its own default runs (each
# script interleaves its sides), collects the medians interleave.py records, and prints per ratio the
# best and worst round and the goal; a ratio past its goal in its worst round is marked MISSED. A script
# whose tools are absent (node, numpy, torch, onnx, b3sum, jdupes) says so and its rows read "-".
# Usage: testdata/bench/all.sh [ROUNDS] [SCRIPT…]    (from the repository root; SCRIPT: collection, gguf, …)
set -uo pipefail
rounds=${1:-1}
shift || true
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(collection header gguf ggufsrc ggufsrc-f32 hash dupes derived values snapshot torch onnx xet)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export STDIFF_BENCH_MEDIANS="$tmp/medians"
for ((r = 1; r <= rounds; r++)); do
  for s in "${scripts[@]}"; do
    script=$s args=()
    case $s in
      ggufsrc-f32) script=ggufsrc args=(3 f32) ;;
    esac
    echo "== round $r: $s" >&2
    STDIFF_BENCH_SCRIPT="$s.$r" bash "testdata/bench/$script.sh" "${args[@]}" >"$tmp/$s.$r.out" 2>&1 ||
      echo "   $s: exit $? (last lines below)" >&2
    tail -3 "$tmp/$s.$r.out" | sed 's/^/   /' >&2
  done
done
# script, numerator, denominator, goal (at most; - is none: the figure is shown to see it move), source.
goals='
collection inspect-short python 0.20 #38
collection check python 0.25 #23
collection check-50k python-50k - #23
header diff-same check 3.00 #23
header diff-changed check - #23
header check python - #23
gguf inspect node 0.15 #38
gguf check node - #38
ggufsrc stdiff numpy 0.20 #38(bf16)
ggufsrc-f32 stdiff numpy 0.20 #38(f32)
hash all sha256sum+b3sum - #38(floor)
hash content b3sum - #17
dupes stdiff b3sum 0.25 #17
dupes stdiff jdupes 2.00 #17
derived derived dupes 2.00 #37
values stdiff torch - #25
values stdiff-same cmp - #25
snapshot snapshot hash-content - #18
torch inspect torch.load - #24
onnx inspect onnx.load - #26
xet xet b3sum 2.50 #36
'
printf '%-12s %-30s %8s %8s %6s %s\n' script ratio best worst goal ""
echo "$goals" | while read -r s num den goal src; do
  [ -n "$s" ] || continue
  case " ${scripts[*]} " in *" $s "*) ;; *) continue ;; esac
  awk -v s="$s" -v num="$num" -v den="$den" -v goal="$goal" -v src="$src" '
    { split($1, p, "."); if (p[1] != s) next; r = p[2]; t[r, $2] = $3; rs[r] = 1 }
    END {
      best = -1; worst = -1
      for (r in rs) if ((r, num) in t && (r, den) in t && t[r, den] > 0) {
        x = t[r, num] / t[r, den]
        if (best < 0 || x < best) best = x
        if (worst < 0 || x > worst) worst = x
      }
      mark = ""
      if (best < 0) { b = "-"; w = "-" } else {
        b = sprintf("%.2f", best); w = sprintf("%.2f", worst)
        if (goal != "-" && worst > goal + 0) mark = "MISSED"
      }
      printf "%-12s %-30s %8s %8s %6s %s %s\n", s, num "/" den, b, w, goal, src, mark
    }' "$STDIFF_BENCH_MEDIANS"
done
