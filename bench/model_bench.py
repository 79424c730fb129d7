#!/usr/bin/env python3
"""Whole-model latency, batch 1: Tuner (untuned: fallback schedules, or the database's best)
against ONNX Runtime and PyTorch on the same machine in the same run.

    python3 -m pip install onnxruntime      # the peer (not needed by the tests)
    apt-get install python3-torch python3-torchvision
    python3 bench/model_bench.py [--threads 2] [--repeat 50] [--db ""] [--rounds 3]

Each round measures every system once per model, in turn, so machine noise hits them alike;
the table gives each system's best round median and the ratios (> 1: Tuner is faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def tuner_latency(tuner, artifact, data, threads, repeat):
    out = subprocess.run([tuner, "run", artifact, "--input", os.path.join(data, "input_0.pb"),
                          "--compare", os.path.join(data, "output_0.pb"), "--threads", str(threads),
                          "--repeat", str(repeat), "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tuner run failed: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    return j["latency_ms"], j["max_abs_err"]


def ort_session(model, data, threads):
    """An ONNX Runtime session on `threads` threads and its feed (input_0.pb in `data`), warmed up."""
    import onnxruntime as ort
    from onnx import TensorProto, numpy_helper
    t = TensorProto()
    t.ParseFromString(open(os.path.join(data, "input_0.pb"), "rb").read())
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: numpy_helper.to_array(t)}
    for _ in range(3):
        sess.run(None, feed)
    return sess, feed


def ort_median_ms(sess, feed, repeat):
    """The median of `repeat` timed runs of an ONNX Runtime session, in ms."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def ort_latency(model, data, threads, repeat):
    sess, feed = ort_session(model, data, threads)
    return ort_median_ms(sess, feed, repeat)


def torch_latency(name, threads, repeat):
    try:
        out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "torch_peer.py"), name,
                              str(threads), str(repeat)], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    if out.returncode != 0:
        print(f"  (PyTorch peer unavailable: {out.stderr.strip().splitlines()[-1:]})")
        return None
    return float(out.stdout.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tuner", default=os.path.join(ROOT, "build", "tuner"))
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--names", default="resnet18,mobilenet_v2,bert_encoder")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", default="", help="tuning database ('' = untuned, fallback schedules)")
    a = ap.parse_args()
    if not os.path.isdir(a.models):
        sys.exit(f"skipped: {a.models} not found")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.names.split(","):
            model = os.path.join(a.models, name, "model.onnx")
            data = os.path.join(a.models, name, "test_data_set_0")
            art = os.path.join(tmp, name + ".tuner")
            t0 = time.perf_counter()
            subprocess.run([a.tuner, "compile", model, "--db", a.db, "-o", art], check=True,
                           capture_output=True)
            compile_s = time.perf_counter() - t0
            best = {"tuner": [], "ort": [], "torch": []}
            for _ in range(a.rounds):
                lat, err = tuner_latency(a.tuner, art, data, a.threads, a.repeat)
                best["tuner"].append(lat)
                best["ort"].append(ort_latency(model, data, a.threads, a.repeat))
                t = torch_latency(name, a.threads, a.repeat)
                if t is not None:
                    best["torch"].append(t)
            rows.append((name, compile_s, err, {k: min(v) if v else None for k, v in best.items()}))
            r = rows[-1][3]
            print(f"{name}: tuner {r['tuner']:.2f} ms, onnxruntime {r['ort']:.2f} ms, "
                  f"pytorch {r['torch']} ms", flush=True)
    print(f"\nbatch 1, {a.threads} threads, best of {a.rounds} rounds of {a.repeat} runs (median)")
    print("| model | compile s | Tuner ms | ONNX Runtime ms | PyTorch ms | ORT / Tuner | PyTorch / Tuner |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, cs, err, r in rows:
        tr = r["torch"]
        torch_ms = "-" if tr is None else f"{tr:.2f}"
        torch_ratio = "-" if tr is None else f"{tr / r['tuner']:.2f}x"
        print(f"| {name} | {cs:.1f} | {r['tuner']:.2f} | {r['ort']:.2f} | {torch_ms} | "
              f"{r['ort'] / r['tuner']:.2f}x | {torch_ratio} |")


if __name__ == "__main__":
    main()
