#!/usr/bin/python3
# corpus_expect.py DIR OUT: the oracle of tests/model/test_model_corpus.c,
# written with Debian's python3-onnx (run with /usr/bin/python3): for every
# *.onnx under DIR (Debian's libonnx-testdata), one line "PATH<TAB>N" where N
# counts the main graph's MatMul and Gemm nodes (default domain) whose two
# inputs (and a Gemm's C with beta != 0, its bias) have static shapes (every
# dimension a positive value) and an element
# type calhost names, found in the graph's inputs, initializers, value_info
# or outputs (the first that names the tensor). calhost must list exactly
# those nodes.
import os
import sys

import onnx

NAMED = {1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 16}
root, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    for d, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".onnx"):
                continue
            path = os.path.join(d, name)
            m = onnx.load(path, load_external_data=False)
            g = m.graph
            known = {}
            for v in list(g.input):
                known.setdefault(v.name, v)
            for t in g.initializer:
                known.setdefault(t.name, t)
            for v in list(g.value_info) + list(g.output):
                known.setdefault(v.name, v)

            def static(name):
                v = known.get(name)
                if v is None:
                    return False
                if isinstance(v, onnx.TensorProto):
                    return v.data_type in NAMED and all(x > 0 for x in v.dims)
                if not v.type.HasField("tensor_type"):
                    return False
                tt = v.type.tensor_type
                if tt.elem_type not in NAMED or not tt.HasField("shape"):
                    return False
                return all(x.HasField("dim_value") and x.dim_value > 0 for x in tt.shape.dim)

            n = 0
            for node in g.node:
                if node.domain not in ("", "ai.onnx") or node.op_type not in ("MatMul", "Gemm"):
                    continue
                if len(node.input) < 2 or not static(node.input[0]) or not static(node.input[1]):
                    continue
                # a Gemm's C (with beta != 0) is its bias: its shape is structure too
                beta = next((a.f for a in node.attribute if a.name == "beta"), 1.0)
                if (node.op_type == "Gemm" and len(node.input) >= 3 and node.input[2]
                        and beta != 0 and not static(node.input[2])):
                    continue
                n += 1
            f.write("%s\t%d\n" % (path, n))
