#!/usr/bin/env python3
"""Two schedules of one operator, timed in turn: the ratio holds on a host whose speed drifts.

    python3 bench/trace_ab.py A.json B.json -- conv2d c=128 h=28 w=28 k=256 kh=3 kw=3 stride=2 pad=1 wblock=8

A and B are schedule traces (the "trace" of `tuner db best ... --json`, edited or not). Each
round runs `tuner op run OP PARAMS --trace A`, then B (the order alternating), with --repeat;
prints each round's medians, then the median of the per-round ratios B / A and both minima.
"""

import argparse
import re
import statistics
import subprocess
import sys


def latency(tuner, op, trace, threads, repeat):
    cmd = [tuner, "op", "run", *op, "--trace", trace, "--threads", str(threads), "--db", "",
           "--repeat", str(repeat)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"latency ([0-9.]+) ms", out.stdout + out.stderr)
    if out.returncode != 0 or not m:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("op", nargs="+", help="the operator and its parameters (after --)")
    ap.add_argument("--tuner", default="build/tuner")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    rows = []
    for r in range(a.rounds):
        first, second = (a.a, a.b) if r % 2 == 0 else (a.b, a.a)
        t = {first: latency(a.tuner, a.op, first, a.threads, a.repeat)}
        t[second] = latency(a.tuner, a.op, second, a.threads, a.repeat)
        rows.append((t[a.a], t[a.b]))
        print(f"round {r}: A {t[a.a]:.4f} ms, B {t[a.b]:.4f} ms", flush=True)
    print(f"A: min {min(x for x, _ in rows):.4f} ms, median {statistics.median(x for x, _ in rows):.4f}")
    print(f"B: min {min(y for _, y in rows):.4f} ms, median {statistics.median(y for _, y in rows):.4f}")
    print(f"B / A (median of rounds): {statistics.median(y / x for x, y in rows):.3f}")


if __name__ == "__main__":
    main()
