#!/usr/bin/env python3
"""Compiled artifacts against ONNX Runtime on one model, in alternating rounds.

    python3 bench/artifacts_vs_ort.py ../shared/models/mobilenet_v2 A.tuner [B.tuner ...] \
        [--threads 2] [--rounds 10] [--repeat 50]

Each round: ONNX Runtime `repeat` runs, each artifact `tuner run --repeat N`, ONNX Runtime
again (the round's ORT time is the lower of its two medians). The ratio printed per artifact
is the median over rounds of (artifact / ORT in that round): on a shared, noisy machine only
times taken side by side compare.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir", help="directory with model.onnx and test_data_set_0/")
    ap.add_argument("artifacts", nargs="+")
    ap.add_argument("--tuner", default=os.path.join(os.path.dirname(HERE), "build", "tuner"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=50)
    a = ap.parse_args()
    from model_bench import ort_median_ms, ort_session

    data_dir = os.path.join(a.model_dir, "test_data_set_0")
    data = os.path.join(data_dir, "input_0.pb")
    sess, feed = ort_session(os.path.join(a.model_dir, "model.onnx"), data_dir, a.threads)

    def ort_ms():
        return ort_median_ms(sess, feed, a.repeat)

    def tuner_ms(art):
        out = subprocess.run([a.tuner, "run", art, "--input", data, "--threads", str(a.threads),
                              "--repeat", str(a.repeat), "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"tuner run {art} failed: {out.stderr.strip()}")
        return json.loads(out.stdout)["latency_ms"]

    times = {art: [] for art in a.artifacts}
    ratios = {art: [] for art in a.artifacts}
    orts = []
    for r in range(a.rounds):
        first = ort_ms()
        for art in a.artifacts:
            times[art].append(tuner_ms(art))
        o = min(first, ort_ms())
        orts.append(o)
        for art in a.artifacts:
            ratios[art].append(times[art][-1] / o)
        print(f"round {r}: ORT {o:.3f} ms, " +
              ", ".join(f"{os.path.basename(x)} {times[x][-1]:.3f}" for x in a.artifacts), flush=True)
    print(f"ONNX Runtime: median {statistics.median(orts):.3f} ms, min {min(orts):.3f}")
    for art in a.artifacts:
        print(f"{art}: median {statistics.median(times[art]):.3f} ms, min {min(times[art]):.3f}, "
              f"Tuner / ORT (median of rounds) {statistics.median(ratios[art]):.3f}")


if __name__ == "__main__":
    main()
