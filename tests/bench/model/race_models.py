#!/usr/bin/python3
# race_models.py OUTDIR BATCH SEQ: the three models of race-figures.sh, as
# PyTorch exports them for 3-D inputs (nn.Linear on [batch, seq, d] is a
# MatMul with the transposed weight and an Add of the bias), hidden 768,
# static shapes:
#   mlp.onnx      768 -> 3072 -> 768 (Relu)
#   encoder.onnx  a BERT-base layer: Q/K/V/output projections, attention
#                 scores [b,12,s,64]x[b,12,64,s] and context
#                 [b,12,s,s]x[b,12,s,64] (batched MatMuls), MLP 768->3072->768
#   decoder.onnx  a GPT-style decoding step: one new token per sequence
#                 ([b,1,768]) attending to `seq` past positions, the same
#                 projections and MLP
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, B, S = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
D, H, HD, FF = 768, 12, 64, 3072


def w(name, *dims):
    return numpy_helper.from_array(np.zeros(dims, dtype=np.float32), name)


def const(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def linear(nodes, inits, x, name, din, dout):
    inits += [w(name + ".weight", din, dout), w(name + ".bias", dout)]
    nodes.append(helper.make_node("MatMul", [x, name + ".weight"], [name + ".mm"], name=name))
    nodes.append(helper.make_node("Add", [name + ".mm", name + ".bias"], [name + ".out"],
                                  name=name + ".add"))
    return name + ".out"


def mlp(nodes, inits, x, prefix):
    h = linear(nodes, inits, x, prefix + "fc1", D, FF)
    nodes.append(helper.make_node("Relu", [h], [prefix + "act"], name=prefix + "relu"))
    return linear(nodes, inits, prefix + "act", prefix + "fc2", FF, D)


def heads(nodes, inits, x, name, s):
    # [b, s, 768] -> [b, 12, s, 64]
    inits.append(const(name + ".shape", [B, s, H, HD]))
    nodes.append(helper.make_node("Reshape", [x, name + ".shape"], [name + ".r"], name=name + ".reshape"))
    nodes.append(helper.make_node("Transpose", [name + ".r"], [name + ".t"], name=name + ".transpose",
                                  perm=[0, 2, 1, 3]))
    return name + ".t"


def attention(nodes, inits, x, kv, sq, skv):
    q = heads(nodes, inits, linear(nodes, inits, x, "q_proj", D, D), "q", sq)
    k = heads(nodes, inits, linear(nodes, inits, kv, "k_proj", D, D), "k", skv)
    v = heads(nodes, inits, linear(nodes, inits, kv, "v_proj", D, D), "v", skv)
    nodes.append(helper.make_node("Transpose", [k], ["kT"], name="k.transpose2", perm=[0, 1, 3, 2]))
    nodes.append(helper.make_node("MatMul", [q, "kT"], ["scores"], name="scores"))
    nodes.append(helper.make_node("Softmax", ["scores"], ["probs"], name="softmax", axis=-1))
    nodes.append(helper.make_node("MatMul", ["probs", v], ["ctx"], name="context"))
    nodes.append(helper.make_node("Transpose", ["ctx"], ["ctx.t"], name="ctx.transpose",
                                  perm=[0, 2, 1, 3]))
    inits.append(const("ctx.shape", [B, sq, D]))
    nodes.append(helper.make_node("Reshape", ["ctx.t", "ctx.shape"], ["ctx.r"], name="ctx.reshape"))
    return linear(nodes, inits, "ctx.r", "o_proj", D, D)


def save(name, nodes, inits, inputs, output, shape):
    g = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info(output, F, shape)],
                          inits)
    m = helper.make_model(g, producer_name="calhost-race-figures",
                          opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(onnx.shape_inference.infer_shapes(m, data_prop=True), os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", F, [B, S, D])
nodes, inits = [], []
save("mlp", nodes, inits, [x], mlp(nodes, inits, "x", ""), [B, S, D])

nodes, inits = [], []
a = attention(nodes, inits, "x", "x", S, S)
nodes.append(helper.make_node("Add", ["x", a], ["res1"], name="residual1"))
save("encoder", nodes, inits, [x], mlp(nodes, inits, "res1", "mlp."), [B, S, D])

nodes, inits = [], []
tok = helper.make_tensor_value_info("tok", F, [B, 1, D])
past = helper.make_tensor_value_info("past", F, [B, S, D])
a = attention(nodes, inits, "tok", "past", 1, S)
nodes.append(helper.make_node("Add", ["tok", a], ["res1"], name="residual1"))
save("decoder", nodes, inits, [tok, past], mlp(nodes, inits, "res1", "mlp."), [B, 1, D])
