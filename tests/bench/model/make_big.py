#!/usr/bin/python3
# make_big.py OUTDIR: the models of model-bench.sh, with Debian's python3-onnx
# (/usr/bin/python3): nodes10k.onnx, a chain of 10,000 nodes (5,000 MatMul
# of 4 shapes and 5,000 Relu, value_info for every tensor, weights as graph
# inputs), weights300m.onnx, one MatMul whose 300 MB weight is an
# initializer (the peak-memory case), and mixed.onnx (see below).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
import onnx

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
nodes, inputs, vi = [], [helper.make_tensor_value_info("x0", F, [32, 64])], []
dims = [64, 128, 64, 256]
cur, width = "x0", 64
for i in range(5000):
    n = dims[(i + 1) % len(dims)]
    w = "w%d" % i
    inputs.append(helper.make_tensor_value_info(w, F, [width, n]))
    nodes.append(helper.make_node("MatMul", [cur, w], ["m%d" % i], name="mm%d" % i))
    nodes.append(helper.make_node("Relu", ["m%d" % i], ["x%d" % (i + 1)], name="relu%d" % i))
    vi.append(helper.make_tensor_value_info("m%d" % i, F, [32, n]))
    vi.append(helper.make_tensor_value_info("x%d" % (i + 1), F, [32, n]))
    cur, width = "x%d" % (i + 1), n
g = helper.make_graph(nodes, "nodes10k", inputs, [helper.make_tensor_value_info(cur, F, [32, width])],
                      value_info=vi)
onnx.save(helper.make_model(g), os.path.join(out, "nodes10k.onnx"))

k, n = 8192, 9600  # 8192 x 9600 float32 = 314,572,800 bytes
w = numpy_helper.from_array(np.zeros((k, n), dtype=np.float32), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="big")], "weights300m",
                      [helper.make_tensor_value_info("x", F, [16, k])],
                      [helper.make_tensor_value_info("y", F, [16, n])], [w])
onnx.save(helper.make_model(g), os.path.join(out, "weights300m.onnx"))

# mixed.onnx: MatMul nodes whose shapes want different tiles: two square
# 256x256x256 and one tall, thin 4096x16x64 (model-bench.sh's policy step)
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "wa"], ["a"], name="sq1"),
     helper.make_node("MatMul", ["a", "wb"], ["b"], name="sq2"),
     helper.make_node("MatMul", ["t", "wt"], ["y"], name="thin")],
    "mixed", [helper.make_tensor_value_info("x", F, [256, 256]),
              helper.make_tensor_value_info("t", F, [4096, 64])],
    [helper.make_tensor_value_info("b", F, [256, 256]), helper.make_tensor_value_info("y", F, [4096, 16])],
    [numpy_helper.from_array(np.zeros((256, 256), dtype=np.float32), "wa"),
     numpy_helper.from_array(np.zeros((256, 256), dtype=np.float32), "wb"),
     numpy_helper.from_array(np.zeros((64, 16), dtype=np.float32), "wt")])
onnx.save(onnx.shape_inference.infer_shapes(helper.make_model(g)), os.path.join(out, "mixed.onnx"))
