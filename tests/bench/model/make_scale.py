#!/usr/bin/python3
# make_scale.py OUTDIR N...: for each N, distinct_N.onnx (N MatMul nodes of N
# distinct structures: x[4,8] times an input w_i[8,i+1]; shapes only, no
# weights) and same_N.onnx (N MatMul nodes of one structure), for
# model-scale.sh's doubling ratios. Debian's python3-onnx (/usr/bin/python3).
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT
for n in map(int, sys.argv[2:]):
    for kind in ("distinct", "same"):
        nodes, inputs = [], [helper.make_tensor_value_info("x", F, [4, 8])]
        for i in range(n):
            cols = i + 1 if kind == "distinct" else 16
            inputs.append(helper.make_tensor_value_info("w%d" % i, F, [8, cols]))
            nodes.append(helper.make_node("MatMul", ["x", "w%d" % i], ["y%d" % i],
                                          name="/layer.%d/MatMul" % i))
        g = helper.make_graph(nodes, kind, inputs,
                              [helper.make_tensor_value_info("y%d" % i, F, None)
                               for i in range(n)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        onnx.save(m, os.path.join(out, "%s_%d.onnx" % (kind, n)))
