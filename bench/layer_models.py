#!/usr/bin/env python3
"""Layer models against ONNX Runtime: dilated convs (DeepLab's ASPP), Resize (segmentation heads,
antialiased downsampling), torchvision-like models with seeded random weights (squeezenet1_1,
efficientnet_b0, shufflenet_v2, mobilenet_v3_small, resnext50, densenet121, googlenet,
regnet_y_400mf), transformer and convnext blocks, recurrent layers (LSTM, GRU) and YOLO's
255-channel heads, untuned, each compiled by Tuner and timed in alternating rounds.

    python3 -m pip install onnxruntime      # the peer (not needed by the tests)
    python3 bench/layer_models.py [--out /tmp/layer_models] [--rounds 4] [--only NAME ...] \
        [--baseline OTHER_TUNER]   # also an artifact compiled by another build, same rounds

Writes NAME/model.onnx and NAME/test_data_set_0/ (input, ONNX Runtime's output) under --out,
compiles each with an empty database (fallback schedules) and runs bench/artifacts_vs_ort.py.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def save(out, name, nodes, x_shape, y_shape, inits, opset=13):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, x_shape)],
                          [helper.make_tensor_value_info("y", F, y_shape)], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(d, "model.onnx"))
    x = np.random.RandomState(0).randn(*x_shape).astype(np.float32)
    y = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for f, t, n in [("input_0.pb", x, "x"), ("output_0.pb", y, "y")]:
        with open(os.path.join(d, "test_data_set_0", f), "wb") as fh:
            fh.write(numpy_helper.from_array(t, n).SerializeToString())
    return d


def models(out):
    rs = np.random.RandomState(1)
    made = {}
    for d in [1, 2, 12, 24, 36]:  # 3x3, 512 -> 256 at 28x28 (DeepLab's ASPP at a 224 input)
        w = numpy_helper.from_array((rs.randn(256, 512, 3, 3) * 0.02).astype(np.float32), "w")
        conv = helper.make_node("Conv", ["x", "w"], ["y"], pads=[d] * 4, dilations=[d, d], kernel_shape=[3, 3])
        made[f"dilated{d}"] = lambda n, conv=conv, w=w: save(out, n, [conv], [1, 512, 28, 28], [1, 256, 28, 28], [w])

    def resize(mode, ctm, x_shape, y_shape, pre=(), antialias=0):
        sizes = numpy_helper.from_array(np.array(y_shape, np.int64), "sizes")
        roi = numpy_helper.from_array(np.array([], np.float32), "roi")
        scales = numpy_helper.from_array(np.array([], np.float32), "scales")
        src = pre[0].output[0] if pre else "x"
        node = helper.make_node("Resize", [src, "roi", "scales", "sizes"], ["y"], mode=mode,
                                coordinate_transformation_mode=ctm, **({"antialias": 1} if antialias else {}))
        extra = [pre[1]] if pre else []
        return lambda n: save(out, n, list(pre[:1]) + [node], x_shape, y_shape, [sizes, roi, scales] + extra,
                              18 if antialias else 13)

    made["bilinear8x"] = resize("linear", "half_pixel", [1, 21, 28, 28], [1, 21, 224, 224])
    made["bilinear8x_align_corners"] = resize("linear", "align_corners", [1, 21, 28, 28], [1, 21, 224, 224])
    made["nearest8x"] = resize("nearest", "asymmetric", [1, 21, 28, 28], [1, 21, 224, 224])
    made["bicubic2x"] = resize("cubic", "half_pixel", [1, 3, 112, 112], [1, 3, 224, 224])
    made["bilinear_down2x"] = resize("linear", "pytorch_half_pixel", [1, 64, 112, 112], [1, 64, 56, 56])
    w = numpy_helper.from_array((rs.randn(21, 128, 1, 1) * 0.05).astype(np.float32), "w")
    head = helper.make_node("Conv", ["x", "w"], ["c"])
    made["conv1x1_bilinear8x"] = resize("linear", "half_pixel", [1, 128, 28, 28], [1, 21, 224, 224], (head, w))
    made["antialias_bilinear_224to64"] = resize("linear", "half_pixel", [1, 3, 224, 224], [1, 3, 64, 64], antialias=1)
    made["antialias_bicubic_224to100x150"] = resize("cubic", "half_pixel", [1, 3, 224, 224], [1, 3, 100, 150],
                                                    antialias=1)
    made["squeezenet1_1"] = lambda n: save(out, n, *squeezenet(rs))
    made["efficientnet_b0"] = lambda n: save(out, n, *efficientnet_b0(rs))
    made["shufflenet_v2"] = lambda n: save(out, n, *shufflenet_v2(rs))
    made["mobilenet_v3_small"] = lambda n: save(out, n, *mobilenet_v3_small(rs))
    made["resnext50"] = lambda n: save(out, n, *resnext50(rs))
    for name, op, gates, seq, hidden, batch in [("lstm", "LSTM", 4, 50, 256, 1), ("gru", "GRU", 3, 50, 256, 1),
                                                ("lstm_b8", "LSTM", 4, 30, 512, 8)]:
        # A recurrent layer, PyTorch's initialization (uniform in +-1/sqrt(hidden)), input 256 wide.
        wr = [numpy_helper.from_array((rs.uniform(-1, 1, s) / np.sqrt(hidden)).astype(np.float32), k)
              for k, s in [("W", (1, gates * hidden, 256)), ("R", (1, gates * hidden, hidden)), ("B", (1, 2 * gates * hidden))]]
        node = helper.make_node(op, ["x", "W", "R", "B"], ["y"], hidden_size=hidden)
        made[name] = lambda n, node=node, wr=wr, seq=seq, batch=batch, hidden=hidden: save(
            out, n, [node], [seq, batch, 256], [seq, 1, batch, hidden], wr)
    made["densenet121"] = lambda n: save(out, n, *densenet121(rs))
    made["googlenet"] = lambda n: save(out, n, *googlenet(rs))
    made["regnet_y_400mf"] = lambda n: save(out, n, *regnet_y_400mf(rs))
    made["vit_block"] = lambda n: save(out, n, *vit_block(rs), opset=17)
    made["convnext_block14"] = lambda n: save(out, n, *convnext_block(rs), opset=17)
    made["convnext_block56"] = lambda n: save(out, n, *convnext_block(rs, 96, 56), opset=17)
    for c, hw in [(512, 13), (256, 26)]:  # YOLO's 255-channel 1x1 heads (3 anchors x 85)
        w = numpy_helper.from_array((rs.randn(255, c, 1, 1) * 0.05).astype(np.float32), "w")
        b = numpy_helper.from_array(rs.randn(255).astype(np.float32), "b")
        conv = helper.make_node("Conv", ["x", "w", "b"], ["y"])
        made[f"yolo_head{hw}"] = lambda n, conv=conv, w=w, b=b, c=c, hw=hw: save(
            out, n, [conv], [1, c, hw, hw], [1, 255, hw, hw], [w, b])
    return made


def squeezenet(rs):
    """torchvision's squeezenet1_1 at 224x224, seeded random weights: nodes, shapes, inits."""
    nodes, inits = [], []

    def conv(x, cin, cout, k, stride=1, pad=0):
        n = f"c{len(nodes)}"
        inits.append(numpy_helper.from_array((rs.randn(cout, cin, k, k) * np.sqrt(2 / (cin * k * k))).astype(np.float32), n + "_w"))
        inits.append(numpy_helper.from_array((rs.randn(cout) * 0.1).astype(np.float32), n + "_b"))
        nodes.append(helper.make_node("Conv", [x, n + "_w", n + "_b"], [n], kernel_shape=[k, k], strides=[stride] * 2,
                                      pads=[pad] * 4))
        nodes.append(helper.make_node("Relu", [n], [n + "_r"]))
        return n + "_r"

    def pool(x):
        nodes.append(helper.make_node("MaxPool", [x], [f"p{len(nodes)}"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
        return nodes[-1].output[0]

    def fire(x, cin, squeeze, expand):
        s = conv(x, cin, squeeze, 1)
        a, b = conv(s, squeeze, expand, 1), conv(s, squeeze, expand, 3, pad=1)
        nodes.append(helper.make_node("Concat", [a, b], [f"cat{len(nodes)}"], axis=1))
        return nodes[-1].output[0]

    x = pool(conv("x", 3, 64, 3, stride=2))
    x = pool(fire(fire(x, 64, 16, 64), 128, 16, 64))
    x = pool(fire(fire(x, 128, 32, 128), 256, 32, 128))
    x = fire(fire(fire(fire(x, 256, 48, 192), 384, 48, 192), 384, 64, 256), 512, 64, 256)
    x = conv(x, 512, 1000, 1)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["y"]))
    return nodes, [1, 3, 224, 224], [1, 1000], inits


def efficientnet_b0(rs):
    """torchvision's efficientnet_b0 at 224x224 (BN folded into the convs, SiLU as Sigmoid and
    Mul as PyTorch exports it), seeded random weights: nodes, shapes, inits."""
    nodes, inits = [], []

    def node(op, ins, **attrs):
        nodes.append(helper.make_node(op, ins, [f"t{len(nodes)}"], **attrs))
        return nodes[-1].output[0]

    def conv(x, cin, cout, k=1, stride=1, groups=1, act="silu"):
        n = f"w{len(inits)}"
        w = rs.randn(cout, cin // groups, k, k) * np.sqrt(2 / (cin // groups * k * k))
        inits.append(numpy_helper.from_array(w.astype(np.float32), n))
        inits.append(numpy_helper.from_array((rs.randn(cout) * 0.1).astype(np.float32), n + "_b"))
        y = node("Conv", [x, n, n + "_b"], kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4, group=groups)
        if act == "silu":
            return node("Mul", [y, node("Sigmoid", [y])])
        return node("Sigmoid", [y]) if act == "sigmoid" else y

    def mbconv(x, cin, cout, expand, k, stride):
        h = conv(x, cin, cin * expand) if expand != 1 else x
        h = conv(h, cin * expand, cin * expand, k, stride, groups=cin * expand)
        se = conv(conv(node("GlobalAveragePool", [h]), cin * expand, max(1, cin // 4)), max(1, cin // 4),
                  cin * expand, act="sigmoid")
        h = conv(node("Mul", [h, se]), cin * expand, cout, act=None)
        return node("Add", [h, x]) if stride == 1 and cin == cout else h

    x, cin = conv("x", 3, 32, 3, 2), 32
    for expand, k, stride, cout, repeats in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                                             (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for r in range(repeats):
            x, cin = mbconv(x, cin, cout, expand, k, stride if r == 0 else 1), cout
    x = node("Flatten", [node("GlobalAveragePool", [conv(x, 320, 1280)])])
    inits.append(numpy_helper.from_array((rs.randn(1000, 1280) * 0.03).astype(np.float32), "fc_w"))
    inits.append(numpy_helper.from_array(np.zeros(1000, np.float32), "fc_b"))
    nodes.append(helper.make_node("Gemm", [x, "fc_w", "fc_b"], ["y"], transB=1))
    return nodes, [1, 3, 224, 224], [1, 1000], inits


class Net:
    """A graph under construction: seeded random conv weights (He-scaled, BN folded), fresh names."""

    def __init__(self, rs):
        self.rs, self.nodes, self.inits = rs, [], []

    def node(self, op, ins, **attrs):
        self.nodes.append(helper.make_node(op, ins, [f"t{len(self.nodes)}"], **attrs))
        return self.nodes[-1].output[0]

    def const(self, a):
        a = np.asarray(a)
        self.inits.append(numpy_helper.from_array(a.astype(np.float32 if a.dtype.kind == "f" else np.int64),
                                                  f"k{len(self.inits)}"))
        return self.inits[-1].name

    def conv(self, x, cin, cout, k=1, stride=1, groups=1, act="relu"):
        w = self.rs.randn(cout, cin // groups, k, k) * np.sqrt(2 / (cin // groups * k * k))
        y = self.node("Conv", [x, self.const(w), self.const(self.rs.randn(cout) * 0.1)], kernel_shape=[k, k],
                      strides=[stride] * 2, pads=[k // 2] * 4, group=groups)
        return self.act(y, act)

    def act(self, y, act):
        if act == "relu":
            return self.node("Relu", [y])
        if act == "hardswish":  # as PyTorch exports it below opset 14
            return self.node("Mul", [y, self.node("HardSigmoid", [y], alpha=1 / 6)])
        return y

    def linear(self, x, n_in, n_out, act=None):
        y = self.node("Gemm", [x, self.const(self.rs.randn(n_out, n_in) / np.sqrt(n_in)),
                               self.const(np.zeros(n_out))], transB=1)
        return self.act(y, act)

    def head(self, x, c, out="y"):
        """Global average pool, flatten, a 1000-class linear layer named `out`."""
        x = self.node("Flatten", [self.node("GlobalAveragePool", [x])])
        self.nodes.append(helper.make_node("Gemm", [x, self.const(self.rs.randn(1000, c) / np.sqrt(c)),
                                                    self.const(np.zeros(1000))], [out], transB=1))


def shufflenet_v2(rs):
    """torchvision's shufflenet_v2_x1_0 at 224x224: chunks, concats and channel shuffles
    (Reshape, Transpose, Reshape) around depthwise 3x3 convs."""
    n = Net(rs)

    def shuffle(x, c, hw):
        x = n.node("Reshape", [x, n.const([1, 2, c // 2, hw, hw])])
        return n.node("Reshape", [n.node("Transpose", [x], perm=[0, 2, 1, 3, 4]), n.const([1, c, hw, hw])])

    def unit(x, cin, cout, stride, hw):
        half = cout // 2
        if stride == 1:
            n.nodes.append(helper.make_node("Split", [x, n.const([half, half])], ["s%d" % len(n.nodes) + s for s in "ab"],
                                            axis=1))
            keep, x = n.nodes[-1].output
            cin = half
        else:
            keep = n.conv(n.conv(x, cin, cin, 3, stride, groups=cin, act=None), cin, half)
        b = n.conv(x, cin, half)
        b = n.conv(n.conv(b, half, half, 3, stride, groups=half, act=None), half, half)
        return shuffle(n.node("Concat", [keep, b], axis=1), cout, hw)

    x = n.node("MaxPool", [n.conv("x", 3, 24, 3, 2)], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin, hw = 24, 56
    for cout, repeats in [(116, 4), (232, 8), (464, 4)]:
        hw //= 2
        for r in range(repeats):
            x, cin = unit(x, cin, cout, 2 if r == 0 else 1, hw), cout
    n.head(n.conv(x, 464, 1024), 1024)
    return n.nodes, [1, 3, 224, 224], [1, 1000], n.inits


def mobilenet_v3_small(rs):
    """torchvision's mobilenet_v3_small at 224x224: hardswish as HardSigmoid and Mul, squeeze-
    and-excite gates by HardSigmoid, 3x3 and 5x5 depthwise convs."""
    n = Net(rs)

    def block(x, cin, k, exp, cout, se, act, stride):
        h = n.conv(x, cin, exp, act=act) if exp != cin else x
        h = n.conv(h, exp, exp, k, stride, groups=exp, act=act)
        if se:
            sq = max(8, (exp // 4 + 4) // 8 * 8)
            g = n.conv(n.conv(n.node("GlobalAveragePool", [h]), exp, sq), sq, exp, act=None)
            h = n.node("Mul", [h, n.node("HardSigmoid", [g], alpha=1 / 6)])
        h = n.conv(h, exp, cout, act=None)
        return n.node("Add", [h, x]) if stride == 1 and cin == cout else h

    x = n.conv("x", 3, 16, 3, 2, act="hardswish")
    for cfg in [(16, 3, 16, 16, 1, "relu", 2), (16, 3, 72, 24, 0, "relu", 2), (24, 3, 88, 24, 0, "relu", 1),
                (24, 5, 96, 40, 1, "hardswish", 2), (40, 5, 240, 40, 1, "hardswish", 1),
                (40, 5, 240, 40, 1, "hardswish", 1), (40, 5, 120, 48, 1, "hardswish", 1),
                (48, 5, 144, 48, 1, "hardswish", 1), (48, 5, 288, 96, 1, "hardswish", 2),
                (96, 5, 576, 96, 1, "hardswish", 1), (96, 5, 576, 96, 1, "hardswish", 1)]:
        x = block(x, *cfg)
    x = n.node("Flatten", [n.node("GlobalAveragePool", [n.conv(x, 96, 576, act="hardswish")])])
    x = n.linear(x, 576, 1024, act="hardswish")
    n.nodes.append(helper.make_node("Gemm", [x, n.const(rs.randn(1000, 1024) / 32), n.const(np.zeros(1000))], ["y"],
                                    transB=1))
    return n.nodes, [1, 3, 224, 224], [1, 1000], n.inits


def resnext50(rs):
    """torchvision's resnext50_32x4d at 224x224: bottlenecks whose 3x3 convs have 32 groups."""
    n = Net(rs)

    def bottleneck(x, cin, planes, stride):
        width, cout = planes * 2, planes * 4
        h = n.conv(n.conv(x, cin, width), width, width, 3, stride, groups=32)
        h = n.conv(h, width, cout, act=None)
        short = n.conv(x, cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else x
        return n.node("Relu", [n.node("Add", [h, short])])

    x = n.node("MaxPool", [n.conv("x", 3, 64, 7, 2)], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 64
    for planes, repeats, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for r in range(repeats):
            x, cin = bottleneck(x, cin, planes, stride if r == 0 else 1), planes * 4
    n.head(x, 2048)
    return n.nodes, [1, 3, 224, 224], [1, 1000], n.inits


def densenet121(rs):
    """torchvision's densenet121 at 224x224: every layer concatenates all earlier features and
    normalizes them (BatchNormalization and ReLU before each conv, not foldable into it)."""
    n = Net(rs)

    def bn_relu(x, c):
        return n.node("Relu", [n.node("BatchNormalization", [x, n.const(1 + 0.1 * rs.randn(c)), n.const(0.1 * rs.randn(c)),
                                                            n.const(0.1 * rs.randn(c)), n.const(1 + 0.1 * rs.rand(c))])])

    def conv(x, cin, cout, k):
        w = rs.randn(cout, cin, k, k) * np.sqrt(2 / (cin * k * k))
        return n.node("Conv", [x, n.const(w)], kernel_shape=[k, k], pads=[k // 2] * 4)

    x = n.node("MaxPool", [n.conv("x", 3, 64, 7, 2)], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    c = 64
    for b, layers in enumerate([6, 12, 24, 16]):
        feats = [x]
        for _ in range(layers):
            cat = n.node("Concat", feats, axis=1) if len(feats) > 1 else feats[0]
            h = conv(bn_relu(cat, c + 32 * (len(feats) - 1)), c + 32 * (len(feats) - 1), 128, 1)
            feats.append(conv(bn_relu(h, 128), 128, 32, 3))
        x, c = n.node("Concat", feats, axis=1), c + 32 * layers
        if b < 3:
            x = n.node("AveragePool", [conv(bn_relu(x, c), c, c // 2, 1)], kernel_shape=[2, 2], strides=[2, 2])
            c //= 2
    n.head(bn_relu(x, c), c)
    return n.nodes, [1, 3, 224, 224], [1, 1000], n.inits


def googlenet(rs):
    """torchvision's googlenet at 224x224 (no auxiliary heads): inception modules, four branches
    (1x1; 1x1 then 3x3; 1x1 then 3x3 (torchvision's "5x5"); 3x3 max pool then 1x1) concatenated."""
    n = Net(rs)

    def pool(x, k=3, s=2):
        return n.node("MaxPool", [x], kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4 if s == 1 else [0] * 4,
                      ceil_mode=1)

    def inception(x, cin, c1, c3r, c3, c5r, c5, pp):
        b = [n.conv(x, cin, c1), n.conv(n.conv(x, cin, c3r), c3r, c3, 3), n.conv(n.conv(x, cin, c5r), c5r, c5, 3),
             n.conv(pool(x, 3, 1), cin, pp)]
        return n.node("Concat", b, axis=1), c1 + c3 + c5 + pp

    x = pool(n.conv(n.conv(pool(n.conv("x", 3, 64, 7, 2)), 64, 64), 64, 192, 3))
    c = 192
    for i, cfg in enumerate([(64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64), None, (192, 96, 208, 16, 48, 64),
                             (160, 112, 224, 24, 64, 64), (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64),
                             (256, 160, 320, 32, 128, 128), None, (256, 160, 320, 32, 128, 128),
                             (384, 192, 384, 48, 128, 128)]):
        x, c = (pool(x), c) if cfg is None else inception(x, c, *cfg)
    n.head(x, c)
    return n.nodes, [1, 3, 224, 224], [1, 1000], n.inits


def regnet_y_400mf(rs):
    """torchvision's regnet_y_400mf at 224x224: 3x3 convs in groups of 8 channels, squeeze-and-
    excite (ReLU, Sigmoid) in every block."""
    n = Net(rs)

    def block(x, cin, cout, stride):
        h = n.conv(n.conv(x, cin, cout), cout, cout, 3, stride, groups=cout // 8)
        sq = int(round(0.25 * cin))
        g = n.conv(n.conv(n.node("GlobalAveragePool", [h]), cout, sq), sq, cout, act=None)
        h = n.conv(n.node("Mul", [h, n.node("Sigmoid", [g])]), cout, cout, act=None)
        short = n.conv(x, cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else x
        return n.node("Relu", [n.node("Add", [h, short])])

    x, cin = n.conv("x", 3, 32, 3, 2), 32
    for cout, depth in [(48, 1), (104, 3), (208, 6), (440, 6)]:
        for r in range(depth):
            x, cin = block(x, cin, cout, 2 if r == 0 else 1), cout
    n.head(x, 440)
    return n.nodes, [1, 3, 224, 224], [1, 1000], n.inits


def vit_block(rs, tokens=197, dim=768, heads=12, mlp=3072):
    """One pre-norm transformer encoder layer as torchvision's vit_b_16 has twelve (LayerNorm,
    multi-head attention, GELU as PyTorch exports it with Erf), seeded random weights."""
    nodes, inits = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32 if np.asarray(a).dtype.kind == "f" else np.int64),
                                             name))
        return name

    def node(op, ins, **attrs):
        nodes.append(helper.make_node(op, ins, [f"t{len(nodes)}"], **attrs))
        return nodes[-1].output[0]

    def linear(x, n_in, n_out):
        w = const(f"w{len(inits)}", rs.randn(n_in, n_out) * np.sqrt(1 / n_in))
        return node("Add", [node("MatMul", [x, w]), const(f"b{len(inits)}", rs.randn(n_out) * 0.02)])

    def norm(x):
        return node("LayerNormalization", [x, const(f"g{len(inits)}", 1 + 0.1 * rs.randn(dim)),
                                           const(f"be{len(inits)}", 0.1 * rs.randn(dim))], axis=-1, epsilon=1e-6)

    hd = dim // heads
    h = norm("x")
    split = lambda t: node("Transpose", [node("Reshape", [t, const(f"s{len(inits)}", [1, tokens, heads, hd])])],
                           perm=[0, 2, 1, 3])
    q, k, v = (split(linear(h, dim, dim)) for _ in range(3))
    scores = node("Mul", [node("MatMul", [q, node("Transpose", [k], perm=[0, 1, 3, 2])]), const("scale", 1 / np.sqrt(hd))])
    a = node("MatMul", [node("Softmax", [scores], axis=-1), v])
    a = node("Reshape", [node("Transpose", [a], perm=[0, 2, 1, 3]), const("merge", [1, tokens, dim])])
    x = node("Add", ["x", linear(a, dim, dim)])
    m = linear(norm(x), dim, mlp)
    gelu = node("Mul", [node("Mul", [m, node("Add", [node("Erf", [node("Div", [m, const("sqrt2", np.sqrt(2))])]),
                                                      const("one", 1.0)])]), const("half", 0.5)])
    nodes.append(helper.make_node("Add", [x, linear(gelu, mlp, dim)], ["y"]))
    return nodes, [1, tokens, dim], [1, tokens, dim], inits


def convnext_block(rs, c=384, hw=14):
    """One block of torchvision's convnext_tiny (a 7x7 depthwise conv, then channels last:
    LayerNorm, Linear c -> 4c, GELU with Erf, Linear 4c -> c, layer scale; back to NCHW and the
    residual), seeded random weights."""
    nodes, inits = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32), name))
        return name

    def node(op, ins, **attrs):
        nodes.append(helper.make_node(op, ins, [f"t{len(nodes)}"], **attrs))
        return nodes[-1].output[0]

    def linear(x, n_in, n_out):
        return node("Add", [node("MatMul", [x, const(f"w{len(inits)}", rs.randn(n_in, n_out) / np.sqrt(n_in))]),
                            const(f"b{len(inits)}", rs.randn(n_out) * 0.02)])

    h = node("Conv", ["x", const("dw", rs.randn(c, 1, 7, 7) / 7), const("dwb", rs.randn(c) * 0.1)],
             kernel_shape=[7, 7], pads=[3] * 4, group=c)
    h = node("Transpose", [h], perm=[0, 2, 3, 1])
    h = node("LayerNormalization", [h, const("g", 1 + 0.1 * rs.randn(c)), const("be", 0.1 * rs.randn(c))],
             axis=-1, epsilon=1e-6)
    m = linear(h, c, 4 * c)
    gelu = node("Mul", [node("Mul", [m, node("Add", [node("Erf", [node("Div", [m, const("sqrt2", np.sqrt(2))])]),
                                                      const("one", 1.0)])]), const("half", 0.5)])
    h = node("Mul", [linear(gelu, 4 * c, c), const("scale", 0.1 + 0.01 * rs.randn(c))])
    nodes.append(helper.make_node("Add", ["x", node("Transpose", [h], perm=[0, 3, 1, 2])], ["y"]))
    return nodes, [1, c, hw, hw], [1, c, hw, hw], inits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/layer_models")
    ap.add_argument("--tuner", default=os.path.join(os.path.dirname(HERE), "build", "tuner"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--baseline", help="another tuner binary: its artifact is timed in the same rounds")
    a = ap.parse_args()
    empty_db = os.path.join(a.out, "empty.db")  # never created: every task takes its fallback
    for name, make in models(a.out).items():
        if a.only and name not in a.only:
            continue
        d = make(name)
        arts = []
        for label, tuner in [("baseline", a.baseline), ("model", a.tuner)]:
            if not tuner:
                continue
            arts.append(os.path.join(d, label + ".tuner"))
            subprocess.run([tuner, "compile", os.path.join(d, "model.onnx"), "-o", arts[-1], "--db", empty_db],
                           check=True, capture_output=True)
        print(f"== {name}", flush=True)
        r = subprocess.run([sys.executable, os.path.join(HERE, "artifacts_vs_ort.py"), d, *arts, "--tuner", a.tuner,
                            "--threads", str(a.threads), "--rounds", str(a.rounds), "--repeat", "30"],
                           capture_output=True, text=True)
        print("\n".join(r.stdout.strip().splitlines()[-1 - len(arts):]), flush=True)


if __name__ == "__main__":
    main()
