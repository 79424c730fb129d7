#!/usr/bin/env python3
"""Writes small ONNX models in the shapes of common architectures (random weights) into
DIR/<name>.onnx, for tests/onnx/test_architectures.cc, which compiles each and compares it
with the graph interpreter. Usage: make_architectures.py DIR (needs the onnx package only)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)


class Model:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.k = name, [], [], 0

    def w(self, shape, scale=0.2):
        self.k += 1
        n = f"w{self.k}"
        self.inits.append(nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), n))
        return n

    def c(self, arr):
        self.k += 1
        n = f"c{self.k}"
        self.inits.append(nh.from_array(np.asarray(arr), n))
        return n

    def op(self, kind, ins, **attrs):
        self.k += 1
        out = f"t{self.k}"
        self.nodes.append(h.make_node(kind, ins, [out], name=f"n{self.k}", **attrs))
        return out

    def conv(self, x, cin, cout, k=3, stride=1, group=1, dil=1):
        p = (k // 2) * dil
        return self.op("Conv", [x, self.w((cout, cin // group, k, k)), self.w((cout,), 0.1)],
                       kernel_shape=[k, k], strides=[stride] * 2, pads=[p] * 4, group=group,
                       dilations=[dil] * 2)

    def save(self, directory, inputs, outputs, opset=13, output_shapes=None):
        shapes = output_shapes or [None] * len(outputs)
        g = h.make_graph(self.nodes, self.name,
                         [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                         [h.make_tensor_value_info(o, T.FLOAT, s) for o, s in zip(outputs, shapes)],
                         self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8
        if output_shapes is None:  # onnx 1.13 cannot infer through GroupNormalization
            m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        onnx.checker.check_model(m)
        if self.name == "yolo_neck":  # an output without a shape, which ONNX Runtime accepts
            m.graph.output[0].type.tensor_type.ClearField("shape")
        onnx.save(m, os.path.join(directory, self.name + ".onnx"))


def swish(m, x):
    return m.op("Mul", [x, m.op("Sigmoid", [x])])


def efficientnet(d):  # MBConv: expand, depthwise, squeeze-and-excitation, project, residual
    m, x = Model("efficientnet_block"), "x"
    y = swish(m, m.conv(x, 16, 64, 1))
    y = swish(m, m.conv(y, 64, 64, 3, group=64))
    s = swish(m, m.conv(m.op("GlobalAveragePool", [y]), 64, 8, 1))
    y = m.op("Mul", [y, m.op("Sigmoid", [m.conv(s, 8, 64, 1)])])
    m.save(d, [("x", [1, 16, 28, 28])], [m.op("Add", [m.conv(y, 64, 16, 1), x])])


def densenet(d):  # concatenated features, BatchNorm + Relu + Conv, average pooling
    m, feats, cin = Model("densenet_block"), ["x"], 16
    for _ in range(3):
        cat = feats[0] if len(feats) == 1 else m.op("Concat", feats, axis=1)
        var = m.c(rng.uniform(0.5, 1.5, cin).astype(np.float32))
        b = m.op("BatchNormalization", [cat, m.w((cin,), 1), m.w((cin,), 0.1), m.w((cin,), 0.1), var])
        feats.append(m.conv(m.op("Relu", [b]), cin, 8, 3))
        cin += 8
    y = m.op("AveragePool", [m.op("Concat", feats, axis=1)], kernel_shape=[2, 2], strides=[2, 2])
    m.save(d, [("x", [1, 16, 16, 16])], [y])


def inception(d):  # parallel 1x1, 3x3, 5x5 and pooled branches
    m, x = Model("inception_block"), "x"
    b1 = m.conv(x, 32, 16, 1)
    b2 = m.conv(m.conv(x, 32, 8, 1), 8, 16, 3)
    b3 = m.conv(m.conv(x, 32, 4, 1), 4, 8, 5)
    b4 = m.conv(m.op("MaxPool", [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1] * 4), 32, 8, 1)
    y = m.op("Relu", [m.op("Concat", [b1, b2, b3, b4], axis=1)])
    y = m.op("AveragePool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4,
             count_include_pad=0)
    m.save(d, [("x", [1, 32, 17, 17])], [y])


def yolo(d):  # leaky relu, strided conv, nearest upsampling, concat
    m, x = Model("yolo_neck"), "x"
    a = m.op("LeakyRelu", [m.conv(x, 8, 16, 3)], alpha=0.1)
    b = m.op("LeakyRelu", [m.conv(a, 16, 32, 3, stride=2)], alpha=0.1)
    u = m.op("Resize", [b, "", m.c(np.array([1, 1, 2, 2], np.float32))], mode="nearest")
    m.save(d, [("x", [1, 8, 20, 20])], [m.conv(m.op("Concat", [a, u], axis=1), 48, 8, 1)])


def unet(d):  # reflection padding, strided conv, transposed conv, skip concat
    m, x = Model("unet_block"), "x"
    p = m.op("Pad", [x, m.c(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], mode="reflect")
    down = m.op("Relu", [m.op("Conv", [p, m.w((8, 4, 3, 3)), m.w((8,), 0.1)], kernel_shape=[3, 3],
                              strides=[2, 2])])
    up = m.op("ConvTranspose", [down, m.w((8, 4, 2, 2)), m.w((4,), 0.1)], kernel_shape=[2, 2],
              strides=[2, 2])
    y = m.op("InstanceNormalization", [m.op("Concat", [x, up], axis=1), m.w((8,), 1), m.w((8,), 0.1)])
    m.save(d, [("x", [1, 4, 16, 16])], [m.conv(y, 8, 3, 3)])


def transformer(d):  # decomposed layer norm, attention with a mask, erf gelu, einsum
    m, x, D, S, H = Model("transformer_layer"), "x", 32, 10, 4

    def ln(t):
        mu = m.op("ReduceMean", [t], axes=[-1])
        dv = m.op("Sub", [t, mu])
        var = m.op("ReduceMean", [m.op("Pow", [dv, m.c(np.array(2.0, np.float32))])], axes=[-1])
        std = m.op("Sqrt", [m.op("Add", [var, m.c(np.array(1e-5, np.float32))])])
        return m.op("Add", [m.op("Mul", [m.op("Div", [dv, std]), m.w((D,), 1.0)]), m.w((D,), 0.1)])

    def proj(t):
        return m.op("Add", [m.op("MatMul", [t, m.w((D, D))]), m.w((D,), 0.1)])

    def heads(t):
        r = m.op("Reshape", [t, m.c(np.array([1, S, H, D // H], np.int64))])
        return m.op("Transpose", [r], perm=[0, 2, 1, 3])

    t = ln(x)
    q, k, v = heads(proj(t)), heads(proj(t)), heads(proj(t))
    sc = m.op("Div", [m.op("Einsum", [q, k], equation="bhid,bhjd->bhij"),
                      m.c(np.array(np.sqrt(D // H), np.float32))])
    mask = m.op("Equal", ["mask", m.c(np.array(0.0, np.float32))])
    sc = m.op("Where", [mask, m.c(np.array(-1e9, np.float32)), sc])
    a = m.op("MatMul", [m.op("Softmax", [sc], axis=-1), v])
    a = m.op("Reshape", [m.op("Transpose", [a], perm=[0, 2, 1, 3]), m.c(np.array([1, S, D], np.int64))])
    x2 = m.op("Add", [x, proj(a)])
    f = m.op("Add", [m.op("MatMul", [ln(x2), m.w((D, 64))]), m.w((64,), 0.1)])
    half = m.op("Div", [f, m.c(np.array(1.4142135, np.float32))])
    f = m.op("Mul", [m.op("Mul", [f, m.op("Add", [m.op("Erf", [half]), m.c(np.array(1.0, np.float32))])]),
                     m.c(np.array(0.5, np.float32))])
    y = m.op("Add", [x2, m.op("Add", [m.op("MatMul", [f, m.w((64, D))]), m.w((D,), 0.1)])])
    m.save(d, [("x", [1, S, D]), ("mask", [1, 1, 1, S])], [y])


def resnext(d):  # grouped and dilated convs, hard-swish, a classifier head with ArgMax-free softmax
    m, x = Model("resnext_block"), "x"
    y = m.op("Relu", [m.conv(x, 32, 32, 3, group=4)])
    y = m.op("HardSwish", [m.conv(y, 32, 32, 3, dil=2)])
    y = m.op("Add", [m.conv(y, 32, 32, 1), x])
    g = m.op("Flatten", [m.op("GlobalAveragePool", [y])])
    logits = m.op("Gemm", [g, m.w((10, 32)), m.w((10,), 0.1)], transB=1)
    m.save(d, [("x", [1, 32, 14, 14])], [m.op("Softmax", [logits], axis=1)], opset=14)


def opset18(d):  # the forms opset 18 introduced: axes inputs, Split's num_outputs, new ops
    m, x, D = Model("opset18_block"), "x", 24
    mu = m.op("ReduceMean", [x, m.c(np.array([-1], np.int64))])
    xc = m.op("Sub", [x, mu])
    qkv = m.op("MatMul", [xc, m.w((D, 3 * D))])
    q, k, v = [f"t_split{i}" for i in range(3)]
    m.nodes.append(h.make_node("Split", [qkv], [q, k, v], name="split", axis=-1, num_outputs=3))
    s = m.op("Softmax", [m.op("MatMul", [q, m.op("Transpose", [k], perm=[0, 2, 1])])], axis=-1)
    y = m.op("Mish", [m.op("MatMul", [s, v])])
    img = m.op("Reshape", [y, m.c(np.array([1, 4, 6, 6], np.int64))])  # 6 tokens x 24 = 4x6x6
    img = m.op("Pad", [img, m.c(np.array([1, 1], np.int64)), m.c(np.array(0.0, np.float32)),
                       m.c(np.array([3], np.int64))])  # the last axis only
    gn = m.op("GroupNormalization", [img, m.w((2,), 1), m.w((2,), 0.1)], num_groups=2)
    m.save(d, [("x", [1, 6, D])], [m.op("ReduceL2", [gn, m.c(np.array([2, 3], np.int64))], keepdims=0)],
           opset=18, output_shapes=[[1, 4]])


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for f in (efficientnet, densenet, inception, yolo, unet, transformer, resnext, opset18):
        f(d)


if __name__ == "__main__":
    main()
