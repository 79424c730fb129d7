#!/usr/bin/env python3
"""Two compiled artifacts of one model timed in turn: the ratio holds on a host whose speed drifts.

    python3 bench/artifact_ab.py A.tuner B.tuner [--tuner-a BIN] [--tuner-b BIN] \
        [--rounds 16] [--repeat 30] [--threads 2]

Each round runs `tuner run A --repeat N`, then B, the order alternating between rounds (the
second of a fixed pair read up to 3 % slower on the same artifact); prints the median of the
per-round ratios B / A and its quartiles. An artifact written by another Tuner build runs with
that build (--tuner-a / --tuner-b; default: this checkout's build/tuner).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def latency_ms(tuner, artifact, repeat, threads):
    out = subprocess.run([tuner, "run", artifact, "--repeat", str(repeat), "--threads", str(threads), "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tuner run {artifact} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)["latency_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    default = os.path.join(os.path.dirname(HERE), "build", "tuner")
    ap.add_argument("--tuner-a", default=default)
    ap.add_argument("--tuner-b", default=default)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    ratios, times_a, times_b = [], [], []
    for r in range(a.rounds):
        first_a = r % 2 == 0
        pair = {}
        for which in ("a", "b") if first_a else ("b", "a"):
            pair[which] = latency_ms(getattr(a, "tuner_" + which), getattr(a, which), a.repeat, a.threads)
        times_a.append(pair["a"])
        times_b.append(pair["b"])
        ratios.append(pair["b"] / pair["a"])
        print(f"round {r}: A {pair['a']:.3f} ms, B {pair['b']:.3f} ms", flush=True)
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    print(f"A median {statistics.median(times_a):.3f} ms, B median {statistics.median(times_b):.3f} ms; "
          f"B / A median {statistics.median(ratios):.3f} (quartiles {q[0]:.3f}-{q[2]:.3f}, {len(ratios)} rounds)")


if __name__ == "__main__":
    main()
