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
