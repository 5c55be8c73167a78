#!/usr/bin/env python3
"""Times whole commands side by side, interleaved (A B C A B C …), and prints each median and the ratios
against the first command: the ratio of the medians, and the best and worst ratio of one run's times. Usage: interleave.py RUNS 'label=command' 'label=command' …
With STDIFF_BENCH_MEDIANS set, each label's median (seconds) is also appended to that file as
"SCRIPT LABEL SECONDS", SCRIPT being STDIFF_BENCH_SCRIPT (all.sh reads them)."""
import os, statistics, subprocess, sys, time

runs = int(sys.argv[1])
cmds = [a.split("=", 1) for a in sys.argv[2:]]
times = {label: [] for label, _ in cmds}
for label, cmd in cmds:  # warm-up: page cache, first-run effects
    subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(runs):
    for label, cmd in cmds:
        t0 = time.perf_counter()
        r = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[label].append(time.perf_counter() - t0)
        if r.returncode not in (0, 1):
            sys.exit(f"{label}: exit {r.returncode}: {cmd}")
first = cmds[0][0]
base = statistics.median(times[first])
for label, _ in cmds:
    med = statistics.median(times[label])
    pairs = sorted(t / b for t, b in zip(times[label], times[first]))  # run by run: A B taken together
    ratio = "" if label == first else f"  ({med / base:.2f}x {first}'s time; run by run {pairs[0]:.2f} to {pairs[-1]:.2f})"
    print(f"{label:>14}: median {med * 1000:8.1f} ms over {runs} runs{ratio}")
if os.environ.get("STDIFF_BENCH_MEDIANS"):
    with open(os.environ["STDIFF_BENCH_MEDIANS"], "a") as f:
        for label, _ in cmds:
            f.write(f"{os.environ.get('STDIFF_BENCH_SCRIPT', '-')} {label} {statistics.median(times[label]):.6f}\n")
