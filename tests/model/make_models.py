#!/usr/bin/python3
# make_models.py OUTDIR: the ONNX models of tests/model, written at test time
# with Debian's python3-onnx (run it with /usr/bin/python3, not the first
# python3 on PATH). Every shape here is what tests/model/test_model.c expects.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT


def weight(name, *dims):
    return numpy_helper.from_array(np.zeros(dims, dtype=np.float32), name)


def save(name, graph, infer=False):
    m = helper.make_model(graph, producer_name="calhost-tests",
                          opset_imports=[helper.make_opsetid("", 13)])
    if infer:
        m = onnx.shape_inference.infer_shapes(m)
    onnx.save(m, os.path.join(out, name))


# mlp: MatMul [8,512]x[512,256], Gemm with bias (beta=1), Gemm transB with
# alpha 0.5, plain Gemm (no C): a MatMul; ReduceSum over the output
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["h1"], name="fc1"),
     helper.make_node("Gemm", ["h1", "w2", "b2"], ["h2"], name="fc2"),
     helper.make_node("Gemm", ["h2", "w3"], ["h3"], name="fc3", transB=1, alpha=0.5),
     helper.make_node("Gemm", ["h3", "w4"], ["h4"], name="fc4"),
     helper.make_node("ReduceSum", ["h4"], ["y"], name="sum", keepdims=0)],
    "mlp", [helper.make_tensor_value_info("x", F, [8, 512])],
    [helper.make_tensor_value_info("y", F, [])],
    [weight("w1", 512, 256), weight("w2", 256, 64), weight("b2", 64), weight("w3", 32, 64),
     weight("w4", 32, 16)])
save("mlp.onnx", g, infer=True)

# batch: a symbolic batch; seq fixed
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
    "batch", [helper.make_tensor_value_info("x", F, ["batch", 128, 64])],
    [helper.make_tensor_value_info("y", F, ["batch", 128, 32])], [weight("w", 64, 32)])
save("batch.onnx", g)

# three MatMul nodes of two shapes (the worked example of config/README.md)
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "wa"], ["a"], name="q"),
     helper.make_node("MatMul", ["x", "wb"], ["b"], name="k"),
     helper.make_node("MatMul", ["b", "wc"], ["y"], name="out")],
    "three", [helper.make_tensor_value_info("x", F, [64, 256])],
    [helper.make_tensor_value_info("y", F, [64, 128])],
    [weight("wa", 256, 256), weight("wb", 256, 256), weight("wc", 256, 128)])
save("three.onnx", g, infer=True)

# a node whose input has no type (no value_info): skipped with the reason
g = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["r"], name="relu"),
     helper.make_node("MatMul", ["r", "w"], ["y"], name="after_relu")],
    "noshape", [helper.make_tensor_value_info("x", F, [4, 8])],
    [helper.make_tensor_value_info("y", F, None)], [weight("w", 8, 2)])
save("noshape.onnx", g)

# broken: a zero dimension, a negative one, a MatMul with one input, an
# absurd rank, inner dimensions that differ
def one(name, node, inputs, inits=()):
    g = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("y", F, None)],
                          list(inits))
    save(name + ".onnx", g)


one("zero_dim", helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    [helper.make_tensor_value_info("x", F, [0, 8])], [weight("w", 8, 2)])
one("negative_dim", helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    [helper.make_tensor_value_info("x", F, [-3, 8])], [weight("w", 8, 2)])
one("missing_input", helper.make_node("MatMul", ["x"], ["y"], name="lonely"),
    [helper.make_tensor_value_info("x", F, [4, 8])])
one("absurd_rank", helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    [helper.make_tensor_value_info("x", F, [1] * 100)], [weight("w", 1, 2)])
one("inner_differs", helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    [helper.make_tensor_value_info("x", F, [4, 8])], [weight("w", 7, 2)])

# truncated: the mlp cut inside its weights
with open(os.path.join(out, "mlp.onnx"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 2])
with open(os.path.join(out, "text.onnx"), "wb") as f:
    f.write(b"this is not a model\n")

# ---- models as exporters write them (issue 37) ----------------------------


def save_opset(name, graph, opset, infer=True):
    m = helper.make_model(graph, producer_name="calhost-tests",
                          opset_imports=[helper.make_opsetid("", opset)])
    if infer:
        m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    onnx.save(m, os.path.join(out, name))


def const(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


# pt_mlp: PyTorch's nn.Linear on 2-D input as torch.onnx.export writes it:
# Gemm(x, W[out,in], b[out], transB=1), a symbolic batch
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="/fc1/Gemm",
                      alpha=1.0, beta=1.0, transB=1),
     helper.make_node("Relu", ["h"], ["r"], name="/act/Relu"),
     helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], name="/fc2/Gemm",
                      alpha=1.0, beta=1.0, transB=1)],
    "pt_mlp", [helper.make_tensor_value_info("x", F, ["batch", 256])],
    [helper.make_tensor_value_info("y", F, ["batch", 10])],
    [weight("fc1.weight", 512, 256), weight("fc1.bias", 512), weight("fc2.weight", 10, 512),
     weight("fc2.bias", 10)])
save_opset("pt_mlp.onnx", g, 13)

# encoder: one BERT-style block as exported, input [batch, seq, 768]:
# Q/K/V/output projections (MatMul + Add), heads by Reshape/Transpose,
# scores [b,12,s,64]x[b,12,64,s] and context [b,12,s,s]x[b,12,s,64],
# LayerNormalization, MLP 768->3072->768; shapes by ONNX's inference with
# data_prop=True (config/README.md's one-liner)
H, D, E, FF = 12, 64, 768, 3072
nodes, inits = [], [const("heads", [0, 0, H, D]), const("merged", [0, 0, E]),
                    weight("ln1.scale", E), weight("ln1.bias", E), weight("ln2.scale", E),
                    weight("ln2.bias", E)]
for p in ("q", "k", "v", "o"):
    inits += [weight("%s.weight" % p, E, E), weight("%s.bias" % p, E)]
for p in ("q", "k", "v"):
    nodes += [helper.make_node("MatMul", ["x", "%s.weight" % p], ["%s_mm" % p],
                               name="/attn/%s/MatMul" % p),
              helper.make_node("Add", ["%s_mm" % p, "%s.bias" % p], ["%s_lin" % p],
                               name="/attn/%s/Add" % p),
              helper.make_node("Reshape", ["%s_lin" % p, "heads"], ["%s_heads" % p],
                               name="/attn/%s/Reshape" % p)]
nodes += [
    helper.make_node("Transpose", ["q_heads"], ["qt"], perm=[0, 2, 1, 3], name="/attn/q/T"),
    helper.make_node("Transpose", ["k_heads"], ["kt"], perm=[0, 2, 3, 1], name="/attn/k/T"),
    helper.make_node("Transpose", ["v_heads"], ["vt"], perm=[0, 2, 1, 3], name="/attn/v/T"),
    helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="/attn/scores/MatMul"),
    helper.make_node("Softmax", ["scores"], ["probs"], axis=-1, name="/attn/Softmax"),
    helper.make_node("MatMul", ["probs", "vt"], ["ctx"], name="/attn/context/MatMul"),
    helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3], name="/attn/ctx/T"),
    helper.make_node("Reshape", ["ctx_t", "merged"], ["ctx_m"], name="/attn/ctx/Reshape"),
    helper.make_node("MatMul", ["ctx_m", "o.weight"], ["o_mm"], name="/attn/o/MatMul"),
    helper.make_node("Add", ["o_mm", "o.bias"], ["o_lin"], name="/attn/o/Add"),
    helper.make_node("Add", ["x", "o_lin"], ["res1"], name="/res1"),
    helper.make_node("LayerNormalization", ["res1", "ln1.scale", "ln1.bias"], ["n1"], axis=-1,
                     name="/ln1"),
    helper.make_node("MatMul", ["n1", "fc1.weight"], ["f1"], name="/mlp/fc1/MatMul"),
    helper.make_node("Relu", ["f1"], ["f1r"], name="/mlp/act"),
    helper.make_node("MatMul", ["f1r", "fc2.weight"], ["f2"], name="/mlp/fc2/MatMul"),
    helper.make_node("Add", ["n1", "f2"], ["res2"], name="/res2"),
    helper.make_node("LayerNormalization", ["res2", "ln2.scale", "ln2.bias"], ["y"], axis=-1,
                     name="/ln2")]
inits += [weight("fc1.weight", E, FF), weight("fc2.weight", FF, E)]
g = helper.make_graph(nodes, "encoder",
                      [helper.make_tensor_value_info("x", F, ["batch", "seq", E])],
                      [helper.make_tensor_value_info("y", F, ["batch", "seq", E])], inits)
save_opset("encoder.onnx", g, 17)

# decoder: a GPT-style step with a past: the keys and values hold
# `past_sequence_length + 1` positions, as Hugging Face exports name it
P1 = "past_sequence_length + 1"
g = helper.make_graph(
    [helper.make_node("MatMul", ["q", "k_all"], ["scores"], name="/h.0/attn/MatMul"),
     helper.make_node("Softmax", ["scores"], ["probs"], axis=-1, name="/h.0/attn/Softmax"),
     helper.make_node("MatMul", ["probs", "v_all"], ["ctx"], name="/h.0/attn/MatMul_1"),
     helper.make_node("Gemm", ["tok", "lm.weight"], ["logits"], name="/lm_head/Gemm",
                      transB=1)],
    "decoder",
    [helper.make_tensor_value_info("q", F, ["batch", 12, 1, 64]),
     helper.make_tensor_value_info("k_all", F, ["batch", 12, 64, P1]),
     helper.make_tensor_value_info("v_all", F, ["batch", 12, P1, 64]),
     helper.make_tensor_value_info("tok", F, [1, 768])],
    [helper.make_tensor_value_info("ctx", F, None),
     helper.make_tensor_value_info("logits", F, None)],
    [weight("lm.weight", 1000, 768)])
save_opset("decoder.onnx", g, 13)

# broadcast: batched MatMuls as ONNX broadcasts them, and shared weights
g = helper.make_graph(
    [helper.make_node("MatMul", ["a4", "b5"], ["y1"], name="cross"),      # 20 products
     helper.make_node("MatMul", ["a6", "w"], ["y2"], name="shared_b"),    # one B: M x 6
     helper.make_node("MatMul", ["a1", "b6"], ["y3"], name="shared_a"),   # one A, 6 Bs
     helper.make_node("MatMul", ["a6", "w"], ["y4"], name="shared_b2"),   # same weight again
     helper.make_node("MatMul", ["a4", "b1"], ["y5"], name="ones_b")],    # B's batch all 1
    "broadcast",
    [helper.make_tensor_value_info("a4", F, [4, 1, 16, 32]),
     helper.make_tensor_value_info("b5", F, [1, 5, 32, 8]),
     helper.make_tensor_value_info("a6", F, [6, 16, 32]),
     helper.make_tensor_value_info("a1", F, [16, 32]),
     helper.make_tensor_value_info("b6", F, [6, 32, 8]),
     helper.make_tensor_value_info("b1", F, [1, 1, 32, 8])],
    [helper.make_tensor_value_info("y%d" % i, F, None) for i in range(1, 6)],
    [weight("w", 32, 8)])
save_opset("broadcast.onnx", g, 13, infer=False)
one("no_broadcast", helper.make_node("MatMul", ["a", "b"], ["y"], name="/bad/MatMul"),
    [helper.make_tensor_value_info("a", F, [2, 3, 16, 32]),
     helper.make_tensor_value_info("b", F, [3, 2, 32, 8])])

# gemm_bias: C in each broadcast form, beta other than 1, beta 0
def gemm(name, c_dims, **attrs):
    return ([helper.make_node("Gemm", ["x", "w", "c_" + name] if c_dims is not None
                              else ["x", "w"], ["y_" + name], name=name, **attrs)],
            [weight("c_" + name, *c_dims)] if c_dims is not None else [])


parts = [gemm("scalar", []), gemm("scalar1", [1]), gemm("n", [16]), gemm("one_n", [1, 16]),
         gemm("m", [8, 1]), gemm("mn", [8, 16]), gemm("half", [16], beta=0.5),
         gemm("zero", [16], beta=0.0), gemm("alpha_t", [16], alpha=2.0, transA=1)]
g = helper.make_graph(
    [n for p in parts for n in p[0]], "gemm_bias",
    [helper.make_tensor_value_info("x", F, [8, 32])],
    [helper.make_tensor_value_info("y_" + n, F, None)
     for n in ("scalar", "scalar1", "n", "one_n", "m", "mn", "half", "zero", "alpha_t")],
    [weight("w", 32, 16)] + [i for p in parts for i in p[1]])
# alpha_t's A is transposed: give it its own [32, 8] input
g.node[-1].input[0] = "xt"
g.input.append(helper.make_tensor_value_info("xt", F, [32, 8]))
save_opset("gemm_bias.onnx", g, 13, infer=False)
one("bad_bias", helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="/bad/Gemm"),
    [helper.make_tensor_value_info("x", F, [8, 32])], [weight("w", 32, 16), weight("c", 3, 16)])

# names: two nodes whose names differ only outside [A-Za-z0-9_.-], and an
# unnamed node beside one named as its old label
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["y1"], name="/enc/MatMul"),
     helper.make_node("MatMul", ["x", "w2"], ["y2"], name="_enc_MatMul"),
     helper.make_node("MatMul", ["x", "w3"], ["y3"]),
     helper.make_node("MatMul", ["x", "w4"], ["y4"], name="MatMul_2"),
     helper.make_node("MatMul", ["x", "w5"], ["y5"], name="a-b"),
     helper.make_node("MatMul", ["x", "w6"], ["y6"], name="a--b")],
    "names", [helper.make_tensor_value_info("x", F, [4, 8])],
    [helper.make_tensor_value_info("y%d" % i, F, None) for i in range(1, 7)],
    [weight("w%d" % i, 8, i + 1) for i in range(1, 7)])
save_opset("names.onnx", g, 13, infer=False)

# noop: ReduceSum without axes, noop_with_empty_axes=1 (an identity), and
# one with empty axes (a full reduction)
g = helper.make_graph(
    [helper.make_node("ReduceSum", ["x"], ["y1"], name="identity", noop_with_empty_axes=1),
     helper.make_node("ReduceSum", ["x"], ["y2"], name="full")],
    "noop", [helper.make_tensor_value_info("x", F, [4, 8])],
    [helper.make_tensor_value_info("y1", F, None), helper.make_tensor_value_info("y2", F, None)])
save_opset("noop.onnx", g, 13, infer=False)

# f64: a MatMul of float64 beside a float32 one (cpu backends serve float32
# only: the float64 node is one no backend serves) and a node left symbolic
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="f32"),
     helper.make_node("MatMul", ["xd", "wd"], ["yd"], name="f64"),
     helper.make_node("MatMul", ["xs", "w"], ["ys"], name="symbolic")],
    "f64", [helper.make_tensor_value_info("x", F, [16, 32]),
            helper.make_tensor_value_info("xd", TensorProto.DOUBLE, [16, 32]),
            helper.make_tensor_value_info("xs", F, ["rows", 32])],
    [helper.make_tensor_value_info(n, F, None) for n in ("y", "yd", "ys")],
    [weight("w", 32, 8), numpy_helper.from_array(np.zeros((32, 8)), "wd")])
save_opset("f64.onnx", g, 13, infer=False)

# big: a model of a 4 MB weight, for reading while another program
# truncates it
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big",
    [helper.make_tensor_value_info("x", F, [4, 1024])],
    [helper.make_tensor_value_info("y", F, [4, 1024])], [weight("w", 1024, 1024)])
save_opset("big.onnx", g, 13, infer=False)
