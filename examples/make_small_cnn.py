#!/usr/bin/env python3
"""Writes examples/small_cnn: a small residual CNN (the README's example model) in the ONNX
test-data layout, with ONNX Runtime's output as the reference.

    python3 -m pip install onnx==1.13.1 onnxruntime && python3 examples/make_small_cnn.py

The files are checked in; this script documents how they were made.
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "small_cnn")
inits, nodes = [], []


def weight(name, shape, scale):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def conv(x, cin, cout, name, k=3):
    w = weight(name + ".w", (cout, cin, k, k), (2.0 / (cin * k * k)) ** 0.5)
    b = weight(name + ".b", (cout,), 0.1)
    nodes.append(helper.make_node("Conv", [x, w, b], [name], name=name, pads=[k // 2] * 4))
    return name


def op(kind, inputs, name, **attrs):
    nodes.append(helper.make_node(kind, inputs, [name], name=name, **attrs))
    return name


x = conv("input", 3, 16, "conv1")
bn = [weight("bn1." + p, (16,), 0.1) for p in ("scale", "bias", "mean")]
inits.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, 16).astype(np.float32), "bn1.var"))
x = op("BatchNormalization", [x] + bn + ["bn1.var"], "bn1")
x = op("Relu", [x], "relu1")
x = op("MaxPool", [x], "pool1", kernel_shape=[2, 2], strides=[2, 2])
x = op("Relu", [conv(x, 16, 32, "conv2")], "relu2")
y = op("Relu", [conv(x, 32, 32, "conv3")], "relu3")
y = conv(y, 32, 32, "conv4")
x = op("Relu", [op("Add", [y, x], "residual")], "relu4")
x = op("GlobalAveragePool", [x], "gap")
x = op("Flatten", [x], "flatten")
fc_w = weight("fc.w", (10, 32), 0.3)
fc_b = weight("fc.b", (10,), 0.1)
x = op("Gemm", [x, fc_w, fc_b], "fc", transB=1)
op("Softmax", [x], "probs", axis=1)

graph = helper.make_graph(
    nodes, "small_cnn",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="tuner examples/make_small_cnn.py")
model.ir_version = 8
onnx.checker.check_model(model)
os.makedirs(os.path.join(out_dir, "test_data_set_0"), exist_ok=True)
onnx.save(model, os.path.join(out_dir, "model.onnx"))

inp = rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
ref = ort.InferenceSession(os.path.join(out_dir, "model.onnx")).run(None, {"input": inp})[0]
for name, arr in (("input_0.pb", inp), ("output_0.pb", ref)):
    with open(os.path.join(out_dir, "test_data_set_0", name), "wb") as f:
        f.write(numpy_helper.from_array(arr).SerializeToString())
print("wrote", out_dir, "output", ref.ravel()[:4], "...")
