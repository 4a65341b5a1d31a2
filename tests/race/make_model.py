#!/usr/bin/python3
# make_model.py OUT.onnx: two MatMul structures, three nodes (q and k share
# one), small enough that calibrating them with two backends takes seconds.
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def weight(name, *dims):
    return numpy_helper.from_array(np.zeros(dims, dtype=np.float32), name)


g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "wa"], ["a"], name="q"),
     helper.make_node("MatMul", ["x", "wb"], ["b"], name="k"),
     helper.make_node("MatMul", ["b", "wc"], ["y"], name="out")],
    "pair", [helper.make_tensor_value_info("x", F, [16, 64])],
    [helper.make_tensor_value_info("y", F, [16, 32])],
    [weight("wa", 64, 64), weight("wb", 64, 64), weight("wc", 64, 32)])
m = helper.make_model(g, producer_name="calhost-tests",
                      opset_imports=[helper.make_opsetid("", 13)])
onnx.save(onnx.shape_inference.infer_shapes(m), sys.argv[1])
