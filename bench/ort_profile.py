#!/usr/bin/env python3
"""ONNX Runtime's per-node times for a model, to set beside `tuner run MODEL.tuner --profile`.

    python3 bench/ort_profile.py ../shared/models/mobilenet_v2 [--threads 2] [--runs 200]

MODEL is an .onnx file or a folder holding model.onnx.

Prints each node's median kernel time (ms) in execution order and their sum. Profiling adds a
little per node, so the sum exceeds ONNX Runtime's plain latency by a few percent.
"""
import argparse
import collections
import json
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    model = os.path.join(a.model, "model.onnx") if os.path.isdir(a.model) else a.model
    if not os.path.isfile(model):
        sys.exit(f"error: {a.model}: no such model (an .onnx file or a folder with model.onnx)")
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    # The profile goes to a scratch folder, not the working directory.
    scratch = tempfile.mkdtemp(prefix="ort_profile_")
    so.profile_file_prefix = os.path.join(scratch, "profile")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {}
    for inp in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in inp.shape]
        # Integer inputs (token ids) get small values, valid for any embedding table.
        feed[inp.name] = (rng.integers(0, 100, shape).astype(np.int32 if "int32" in inp.type else np.int64)
                          if "int" in inp.type else rng.random(shape, dtype=np.float32))
    for _ in range(a.runs):
        sess.run(None, feed)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    os.rmdir(scratch)
    times = collections.OrderedDict()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            times.setdefault(e["name"][: -len("_kernel_time")], (e["args"].get("op_name"), []))[1].append(e["dur"])
    total = 0.0
    for name, (op, durs) in times.items():
        ms = float(np.median(durs)) / 1e3
        total += ms
        print(f"{ms:8.3f}  {op:20s} {name}")
    print(f"{total:8.3f}  total (medians summed)")


if __name__ == "__main__":
    main()
