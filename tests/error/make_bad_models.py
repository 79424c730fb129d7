#!/usr/bin/env python3
"""Writes the bad (and one good) ONNX models that tests/error/model_bad_input.sh feeds to
`tuner compile`, `tuner tasks` and `tuner run`.

    python3 tests/error/make_bad_models.py OUT_DIR

Damage that is easier in the shell (truncated files, a 3 GiB sparse file, a directory, an
empty file) is done by the test itself. Every model here is small; none is checked by the
Python checker (some are meant to fail it).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
ext = os.path.join(out, "ext")  # models with external data live one folder down
os.makedirs(ext, exist_ok=True)


def path(name, folder=out):
    return os.path.join(folder, name)


def tensor_info(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=(), name="m"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="make_bad_models")
    m.ir_version = 8
    return m


def save(m, name, folder=out):
    with open(path(name, folder), "wb") as f:
        f.write(m.SerializeToString())


def save_tensor(a, name, tensor_name):
    with open(path(name), "wb") as f:
        f.write(numpy_helper.from_array(a, tensor_name).SerializeToString())


# y = Relu(x) + w, x and w 2x3 float32: compiles and runs.
w = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
x = np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32)


def good_with(w_tensor, folder=out, name="good.onnx"):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "w"], ["y"], name="add")]
    save(model(nodes, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])], [w_tensor]),
         name, folder)


good_with(numpy_helper.from_array(w, "w"))
# The weight also listed as a graph input (older exporters list every initializer so): ONNX
# lets a caller override it; Tuner compiles it as a constant and says so (session 57: a run
# given it said only "1 inputs, 2 given").
nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "w"], ["y"], name="add")]
save(model(nodes, [tensor_info("x", [2, 3]), tensor_info("w", [2, 3])], [tensor_info("y", [2, 3])],
           [numpy_helper.from_array(w, "w")]), "w_also_input.onnx")
save_tensor(w, "w.pb", "w")
save_tensor(x, "x.pb", "x")
save_tensor(np.maximum(x, 0) + w, "y.pb", "y")
save_tensor(np.maximum(x, 0) + w + 1, "y_wrong.pb", "y")
# Infinities through the model: equal infinities in the reference match.
x_inf = np.array([[np.inf, 2, -np.inf], [4, -5, np.inf]], dtype=np.float32)
save_tensor(x_inf, "x_inf.pb", "x")
save_tensor(np.maximum(x_inf, 0) + w, "y_inf.pb", "y")
# Found by fuzzing (session 53): an infinite reference where the output is finite passed
# --compare; a tensor with its values in two fields (raw_data and float_data) was read silently.
y_inf_wrong = np.maximum(x, 0) + w
y_inf_wrong[0, 0] = np.inf
save_tensor(y_inf_wrong, "y_inf_wrong.pb", "y")
# A graph without nodes, its output its input (valid ONNX): was "not an ONNX model".
save(model([], [tensor_info("x", [2, 3])], [tensor_info("x", [2, 3])]), "no_nodes.onnx")
# Found by an adversarial test (session 54): float16 sums accumulated in float16, a
# 4096-term dot product came out 9% low. Reference: the exact sum, rounded once.
rng = np.random.default_rng(0)
a16 = rng.uniform(0, 1, (4, 4096)).astype(np.float16)
b16 = rng.uniform(0, 1, (4096, 8)).astype(np.float16)
save(model([helper.make_node("MatMul", ["a", "b"], ["c"], name="mm"),
            helper.make_node("ReduceMean", ["a"], ["m"], name="mean", axes=[1])],
           [tensor_info("a", [4, 4096], TensorProto.FLOAT16)],
           [tensor_info("c", [4, 8], TensorProto.FLOAT16),
            tensor_info("m", [4, 1], TensorProto.FLOAT16)],
           [numpy_helper.from_array(b16, "b")]), "fp16_sums.onnx")
save_tensor(a16, "a16.pb", "a")
save_tensor((a16.astype(np.float64) @ b16.astype(np.float64)).astype(np.float16), "c16.pb", "c")
save_tensor(a16.astype(np.float64).mean(axis=1, keepdims=True).astype(np.float16), "m16.pb", "m")
# c = a - b: its input files given in another order are matched by their tensor names.
save(model([helper.make_node("Sub", ["a", "b"], ["c"], name="sub")],
           [tensor_info("a", [2]), tensor_info("b", [2])], [tensor_info("c", [2])]), "sub.onnx")
save_tensor(np.array([5, 7], np.float32), "sub_a.pb", "a")
save_tensor(np.array([1, 2], np.float32), "sub_b.pb", "b")
save_tensor(np.array([1, 2], np.float32), "sub_q.pb", "q")
save_tensor(np.array([4, 5], np.float32), "sub_c.pb", "c")
# An RNN's gate products are such sums too (32768 terms came out 7.5% low; Relu keeps them
# from saturating): W is [1, hidden, input], X [seq 1, batch 2, input 32768], R zero.
w16 = rng.uniform(0, 1, (1, 4, 32768)).astype(np.float16)
x16 = rng.uniform(0, 1, (1, 2, 32768)).astype(np.float16)
save(model([helper.make_node("RNN", ["x", "w", "r"], ["y"], name="rnn", hidden_size=4,
                             activations=["Relu"])],
           [tensor_info("x", [1, 2, 32768], TensorProto.FLOAT16)],
           [tensor_info("y", [1, 1, 2, 4], TensorProto.FLOAT16)],
           [numpy_helper.from_array(w16, "w"),
            numpy_helper.from_array(np.zeros((1, 4, 4), np.float16), "r")]), "fp16_rnn.onnx")
save_tensor(x16, "x16.pb", "x")
save_tensor(np.maximum(x16[0].astype(np.float64) @ w16[0].T.astype(np.float64), 0)
            .astype(np.float16).reshape(1, 1, 2, 4), "rnn16.pb", "y")
y_nan_wrong = np.maximum(x, 0) + w
y_nan_wrong[0, 0] = np.nan
save_tensor(y_nan_wrong, "y_nan_wrong.pb", "y")
both = numpy_helper.from_array(x, "x")
both.float_data.extend([1.0])
with open(path("x_both.pb"), "wb") as f:
    f.write(both.SerializeToString())
save_tensor(x.reshape(3, 2), "x_3x2.pb", "x")
save_tensor(x.astype(np.int64), "x_int64.pb", "x")

# The same Relu under other opsets and with dynamic / missing input dimensions.
relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
save(model(relu, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])], opset=9), "opset9.onnx")
save(model(relu, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])], opset=26), "opset26.onnx")
save(model(relu, [tensor_info("x", ["N", 3])], [tensor_info("y", ["N", 3])]), "dynamic.onnx")
save(model(relu, [tensor_info("x", ["N", "M"])], [tensor_info("y", ["N", "M"])]), "dynamic2.onnx")
save(model(relu, [tensor_info("x", [-5, 3])], [tensor_info("y", [5, 3])]), "input_negative.onnx")
save(model(relu, [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
           [tensor_info("y", None)]), "no_shape.onnx")

# Two different unsupported operators (and a supported one between them).
save(model([helper.make_node("Det", ["x"], ["d"], name="det0"),
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Unique", ["r"], ["u"], name="unique0")],
           [tensor_info("x", [3, 3])], [tensor_info("d", []), tensor_info("u", [None])]),
     "unsupported.onnx")
# One unsupported operator three times and another once: listed by type with a count.
save(model([helper.make_node("Det", ["x"], ["d0"], name="det0"),
            helper.make_node("Det", ["x"], ["d1"], name="det1"),
            helper.make_node("Unique", ["x"], ["u"], name="unique0"),
            helper.make_node("Det", ["x"], ["d2"], name="det2")],
           [tensor_info("x", [3, 3])],
           [tensor_info("d0", []), tensor_info("d1", []), tensor_info("d2", []), tensor_info("u", [None])]),
     "unsupported_repeated.onnx")
# An opset 18 operator that Debian's libonnx (opset 17) does not know, and Tuner neither.
save(model([helper.make_node("BitwiseNot", ["x"], ["y"], name="bnot0")],
           [tensor_info("x", [2, 3], TensorProto.INT32)], [tensor_info("y", [2, 3], TensorProto.INT32)],
           opset=18), "opset18_unsupported.onnx")
# An operator of another domain.
save(model([helper.make_node("MyOp", ["x"], ["y"], name="custom0", domain="com.example")],
           [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])],
           extra_opsets=[("com.example", 1)]), "custom_domain.onnx")

# A cycle, and a node reading a value nobody defines.
save(model([helper.make_node("Relu", ["b"], ["a"], name="first"),
            helper.make_node("Add", ["x", "a"], ["b"], name="second")],
           [tensor_info("x", [2, 3])], [tensor_info("b", [2, 3])]), "cycle.onnx")
save(model([helper.make_node("Add", ["x", "nosuch"], ["y"], name="add")],
           [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])]), "undefined_value.onnx")
# Constant indices out of range (ONNX makes them an error; kernels would clamp them).
save(model([helper.make_node("Gather", ["x", "i"], ["y"], name="gather0")],
           [tensor_info("x", [4, 3])], [tensor_info("y", [2, 3])],
           [numpy_helper.from_array(np.array([0, 5], dtype=np.int64), "i")]), "gather_oob.onnx")
save(model([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge0", axis=1)],
           [tensor_info("x", [2, 3])], [tensor_info("y", [2, 2])],
           [numpy_helper.from_array(np.array([[0, -4], [1, 2]], dtype=np.int64), "i")]),
     "gather_elements_oob.onnx")


# Initializers whose dims are absurd or disagree with their data.
def raw_tensor(dims, raw, dtype=TensorProto.FLOAT):
    t = TensorProto()
    t.name = "w"
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = raw
    return t


good_with(raw_tensor([1 << 62, 4], b"\0" * 24), name="dims_overflow.onnx")  # wraps to 0
good_with(raw_tensor([3037000500, 3037000500], b"\0" * 24), name="dims_overflow2.onnx")
good_with(raw_tensor([-2, 3], b"\0" * 24), name="dims_negative.onnx")
good_with(raw_tensor([1 << 20, 1 << 20], b"\0" * 24), name="dims_huge.onnx")
good_with(raw_tensor([2, 3], b"\0" * 20), name="raw_data_short.onnx")
short_floats = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [1.0] * 6)
del short_floats.float_data[5:]
good_with(short_floats, name="float_data_short.onnx")


# External data: outside the model's folder three ways, shorter than the tensor, missing.
def external(location, **kv):
    t = raw_tensor([2, 3], b"")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location)] + sorted(kv.items()):
        e = t.external_data.add()
        e.key, e.value = k, str(v)
    return t


with open(path("outside.bin"), "wb") as f:
    f.write(w.tobytes())
with open(path("w_ok.bin", ext), "wb") as f:
    f.write(w.tobytes())
with open(path("w_short.bin", ext), "wb") as f:
    f.write(w.tobytes()[:8])
link = path("link.bin", ext)
if os.path.lexists(link):
    os.remove(link)
os.symlink(os.path.join("..", "outside.bin"), link)
good_with(external("w_ok.bin"), ext, "ext_ok.onnx")
good_with(external("../outside.bin"), ext, "ext_parent.onnx")
good_with(external(os.path.abspath(path("outside.bin"))), ext, "ext_absolute.onnx")
good_with(external("link.bin"), ext, "ext_symlink.onnx")
good_with(external("w_short.bin"), ext, "ext_short.onnx")
good_with(external("w_short.bin", offset=0, length=24), ext, "ext_short_length.onnx")
good_with(external("w_ok.bin", offset=16, length=24), ext, "ext_offset_past_end.onnx")
good_with(external("w_ok.bin", offset="abc"), ext, "ext_bad_offset.onnx")
good_with(external("nothere.bin"), ext, "ext_missing.onnx")

# Found by fuzzing (session 42): each of these once crashed (a signal) or blamed Tuner.
# A 5-D conv weight on a 4-D input: libonnx's shape inference crashed on it.
save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0")],
           [tensor_info("x", [1, 3, 8, 8])], [tensor_info("y", None)],
           [numpy_helper.from_array(np.ones((4, 3, 3, 3, 1), np.float32), "w")]), "conv_w_rank5.onnx")
# Shapes the op library refuses: the message names the model's node, not Tuner's tensor.
save(model([helper.make_node("MatMul", ["a", "b"], ["c"], name="mm0")],
           [tensor_info("a", [2, 3]), tensor_info("b", [4, 5])], [tensor_info("c", None)]),
     "matmul_k_mismatch.onnx")
# Transpose and ReduceSum of a 0-d tensor: identities.
save(model([helper.make_node("Transpose", ["x"], ["t"], name="t0"),
            helper.make_node("ReduceSum", ["t"], ["y"], name="r0", keepdims=0)],
           [tensor_info("x", [])], [tensor_info("y", [])]), "scalar_ops.onnx")
# Integer division and modulo by 0 and -1 (x86 traps on x / 0 and INT_MIN / -1): 0, and a
# wrapped quotient. Inputs and expected outputs as .pb files.
ints = [tensor_info(n, [2, 3], TensorProto.INT32) for n in ("a", "b")]
save(model([helper.make_node("Div", ["a", "b"], ["q"], name="div0"),
            helper.make_node("Mod", ["a", "b"], ["r"], name="mod0")],
           ints, [tensor_info(n, [2, 3], TensorProto.INT32) for n in ("q", "r")]), "int_div.onnx")
imin = np.iinfo(np.int32).min
save_tensor(np.array([[7, -7, 5], [imin, 3, 0]], np.int32), "int_a.pb", "a")
save_tensor(np.array([[0, 2, -1], [-1, 0, 0]], np.int32), "int_b.pb", "b")
save_tensor(np.array([[0, -3, -5], [imin, 0, 0]], np.int32), "int_q.pb", "q")
save_tensor(np.array([[0, 1, 0], [0, 0, 0]], np.int32), "int_r.pb", "r")
# int64 in a kernel: INT64_MIN / -1 wraps (the negation is done unsigned: signed i64
# arithmetic is emitted no-signed-wrap).
longs = [tensor_info(n, [3], TensorProto.INT64) for n in ("a", "b")]
save(model([helper.make_node("Div", ["a", "b"], ["q"], name="div2"),
            helper.make_node("Mod", ["a", "b"], ["r"], name="mod2")],
           longs, [tensor_info(n, [3], TensorProto.INT64) for n in ("q", "r")]), "int64_div.onnx")
lmin = np.iinfo(np.int64).min
save_tensor(np.array([lmin, 9, lmin], np.int64), "long_a.pb", "a")
save_tensor(np.array([-1, -2, 3], np.int64), "long_b.pb", "b")
save_tensor(np.array([lmin, -4, lmin // 3 + 1], np.int64), "long_q.pb", "q")
save_tensor(np.array([0, -1, lmin % 3], np.int64), "long_r.pb", "r")
# Indices from model inputs (an embedding lookup; a GatherND over a 4x3 table): checked when
# the model runs, as ONNX says, not clamped by the kernels.
table = np.arange(15, dtype=np.float32).reshape(5, 3)
save(model([helper.make_node("Gather", ["table", "ids"], ["y"], name="embed")],
           [tensor_info("ids", [4], TensorProto.INT64)], [tensor_info("y", [4, 3])],
           [numpy_helper.from_array(table, "table")]), "gather_input.onnx")
save_tensor(np.array([0, 4, -5, 2], np.int64), "ids_ok.pb", "ids")
save_tensor(table[[0, 4, 0, 2]], "ids_ok_y.pb", "y")
save_tensor(np.array([0, 5, 1, 1], np.int64), "ids_big.pb", "ids")
save_tensor(np.array([1, 1, -6, 1], np.int64), "ids_neg.pb", "ids")
# The same lookup of int32 ids cast to int64 and reshaped (they were clamped, unchecked).
save(model([helper.make_node("Cast", ["ids"], ["ids64"], to=TensorProto.INT64),
            helper.make_node("Reshape", ["ids64", "shape"], ["ids2"]),
            helper.make_node("Gather", ["table", "ids2"], ["y"], name="embed_cast")],
           [tensor_info("ids", [4], TensorProto.INT32)], [tensor_info("y", [2, 2, 3])],
           [numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([2, 2], np.int64), "shape")]), "gather_cast_input.onnx")
save_tensor(np.array([0, 7, 1, 1], np.int32), "ids32_big.pb", "ids")
save(model([helper.make_node("GatherND", ["table", "pos"], ["y"], name="pick")],
           [tensor_info("pos", [2, 2], TensorProto.INT64)], [tensor_info("y", [2])],
           [numpy_helper.from_array(table[:4], "table")]), "gathernd_input.onnx")
save_tensor(np.array([[3, 2], [0, 3]], np.int64), "pos_bad.pb", "pos")
# GatherND with batch_dims 1 over a 2x4x3 table: each batch row picks along the 4.
save(model([helper.make_node("GatherND", ["table3", "pos"], ["y"], name="pick_b", batch_dims=1)],
           [tensor_info("pos", [2, 1], TensorProto.INT64)], [tensor_info("y", [2, 3])],
           [numpy_helper.from_array(np.arange(24, dtype=np.float32).reshape(2, 4, 3), "table3")]),
     "gathernd_batch.onnx")
save_tensor(np.array([[3], [4]], np.int64), "pos_batch_bad.pb", "pos")
# ScatterElements writing a model input's positions into a 3x3 constant along axis 1.
save(model([helper.make_node("ScatterElements", ["base", "where", "upd"], ["y"], name="put", axis=1)],
           [tensor_info("where", [1, 2], TensorProto.INT64)], [tensor_info("y", [3, 3])],
           [numpy_helper.from_array(np.zeros((3, 3), np.float32), "base"),
            numpy_helper.from_array(np.ones((1, 2), np.float32), "upd")]), "scatter_input.onnx")
save_tensor(np.array([[0, -4]], np.int64), "where_bad.pb", "where")
# ScatterND with constant indices out of range: refused at import like Gather's.
save(model([helper.make_node("ScatterND", ["x", "idx", "upd"], ["y"], name="snd")],
           [tensor_info("x", [4, 3])], [tensor_info("y", [4, 3])],
           [numpy_helper.from_array(np.array([[1], [4]], np.int64), "idx"),
            numpy_helper.from_array(np.ones((2, 3), np.float32), "upd")]), "scatternd_oob.onnx")
# Pads of 100,000 around a 4x4 image: a 160 GB output, more than any test machine's memory.
save(model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad0")],
           [tensor_info("x", [1, 1, 4, 4])], [tensor_info("y", None)],
           [numpy_helper.from_array(np.array([0, 0, 100000, 100000] * 2, np.int64), "pads")]),
     "huge_pad.onnx")
# A string attribute with an escape sequence and a NUL: quoted escaped, not cut at the NUL.
save(model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad1", mode=b"ref\x1blect\x00x")],
           [tensor_info("x", [2, 3])], [tensor_info("y", None)],
           [numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads")]), "pad_mode_controls.onnx")
# The same folded at compile time, INT64_MIN / -1 among them.
i64 = [numpy_helper.from_array(np.array([np.iinfo(np.int64).min, 6], np.int64), "c"),
       numpy_helper.from_array(np.array([-1, 0], np.int64), "d")]
save(model([helper.make_node("Div", ["c", "d"], ["y"], name="div1")], [],
           [tensor_info("y", [2], TensorProto.INT64)], i64), "int_div_folded.onnx")
# Operators on types they do not take.
save(model([helper.make_node("Not", ["a"], ["y"], name="not0")], ints[:1],
           [tensor_info("y", [2, 3], TensorProto.INT32)]), "not_int.onnx")
bools = [tensor_info(n, [2], TensorProto.BOOL) for n in ("a", "b")]
save(model([helper.make_node("Mod", ["a", "b"], ["y"], name="mod1")], bools,
           [tensor_info("y", [2], TensorProto.BOOL)]), "mod_bool.onnx")
# Names that are not printable UTF-8 (an output named pr\xffbs; an operator type with a newline).
nodes = [helper.make_node("Relu", ["x"], ["prXbs"], name="relu")]
raw = model(nodes, [tensor_info("x", [2, 3])], [tensor_info("prXbs", [2, 3])]).SerializeToString()
with open(path("name_not_utf8.onnx"), "wb") as f:
    f.write(raw.replace(b"prXbs", b"pr\xffbs"))
save(model([helper.make_node("Re\nlu", ["x"], ["y"], name="relu")], [tensor_info("x", [2, 3])],
           [tensor_info("y", [2, 3])]), "op_type_newline.onnx")
# A graph with no outputs; a ConvTranspose whose output_padding reaches its stride.
save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [tensor_info("x", [2, 3])], []),
     "no_outputs.onnx")
save(model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="ct0", strides=[2, 2],
                             output_padding=[2, 0])],
           [tensor_info("x", [1, 2, 4, 4])], [tensor_info("y", None)],
           [numpy_helper.from_array(np.ones((2, 3, 3, 3), np.float32), "w")]), "conv_transpose_outpad.onnx")

# Operand messages name the model's tensors (they said in0, in2).
save(model([helper.make_node("Add", ["act", "w"], ["y"], name="add")],
           [tensor_info("act", [2, 3]), tensor_info("w", [2, 3], TensorProto.INT32)],
           [tensor_info("y", None)]), "add_mixed_dtypes.onnx")
save(model([helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln")],
           [tensor_info("x", [2, 8]), tensor_info("gamma", [8]), tensor_info("beta", [4])],
           [tensor_info("y", None)], opset=17), "layernorm_bias_shape.onnx")
# Cast to a type Tuner does not compute in: named, not numbered ("data type 11").
save(model([helper.make_node("Cast", ["x"], ["y"], name="to_double", to=TensorProto.DOUBLE)],
           [tensor_info("x", [2, 3])], [tensor_info("y", None, TensorProto.DOUBLE)]),
     "cast_to_double.onnx")
