#!/usr/bin/env python3
"""Generate a synthetic version-1 calibration profile store for benchmarks.

usage: tests/bench/store/gen_profiles.py COUNT OUT [--seed S] [--keys KEYS_OUT]

Writes COUNT unique profiles (about 85% exact, 15% portable, 5% overrides)
spread over 12 backends and 8 operators, in the text format of the design
(`onnx_light_calibration_profiles 1`). With --keys, also writes one lookup
request per line (tab-separated: backend, operator, implementation,
model_digest, processor, thread_count, structure as name=value;name=value)
for profiles that exist in the store, so a benchmark can time hits.
"""
import hashlib
import random
import sys


def quoted(text):
    return '"' + text.replace('\\', '\\\\').replace('"', '\\"') + '"'


def main(argv):
    args = [a for a in argv[1:] if not a.startswith('--')]
    opts = dict(zip(argv[1::], argv[2::]))
    count, out = int(args[0]), args[1]
    rng = random.Random(int(opts.get('--seed', 7)))
    backends = [f"backend_{i}" for i in range(12)]
    operators = ["MatMul", "Gemm", "Conv", "Attention", "LayerNorm", "Softmax", "Gelu", "Reduce"]
    processors = [
        f"x86_64:GenuineIntel:Intel(R) Xeon(R) Platinum 84{i:02d}:l1d=49152:l2=2097152:l3={i * 1048576}:cores={8 * (i % 6 + 1)}"
        for i in range(1, 41)]
    keys = []
    with open(out, 'w') as f:
        f.write("onnx_light_calibration_profiles 1\n")
        for n in range(count):
            backend = rng.choice(backends)
            op = rng.choice(operators)
            impl = str(rng.randint(1, 4))
            source = "override" if rng.random() < 0.05 else "calibrated"
            digest = hashlib.sha256(f"model-{n}".encode()).hexdigest()
            if rng.random() < 0.85:
                proc = rng.choice(processors)
                threads = rng.choice([1, 2, 4, 8, 16, 32])
                f.write(f"profile exact {source}\n")
                f.write(f"backend {quoted(backend)}\noperator {quoted(op)}\nimplementation {quoted(impl)}\n")
                f.write(f"model_digest {quoted(digest)}\nprocessor {quoted(proc)}\nthread_count {threads}\n")
                keys.append((backend, op, impl, digest, proc, str(threads), ""))
            else:
                props = {"dtype": rng.choice(["float32", "float16", "bfloat16", "int8"]),
                         "shape": f"m=dynamic,n={rng.choice([256, 512, 1024, 4096])},k={n}",
                         "layout": rng.choice(["row", "col"])}
                f.write(f"profile portable {source}\n")
                f.write(f"backend {quoted(backend)}\noperator {quoted(op)}\nimplementation {quoted(impl)}\n")
                for name in sorted(props):
                    f.write(f"structure {quoted(name)} {quoted(props[name])}\n")
                keys.append((backend, op, impl, "", "", "", ";".join(f"{k}={v}" for k, v in sorted(props.items()))))
            f.write(f"measurement {quoted('median_latency')} {rng.uniform(1, 5000):.17g} {quoted('us')}\n")
            f.write(f"measurement {quoted('samples')} {rng.randint(5, 200)} {quoted('count')}\n")
            policy = (f"algorithm=blocked;mc={rng.choice([32, 64, 128])};nc={rng.choice([256, 512])};"
                      f"kc={rng.choice([128, 256])};note=" + '"' + f"n{n}" + '"')
            f.write(f"policy {quoted(policy)}\n")
            f.write("end\n")
    if '--keys' in opts:
        with open(opts['--keys'], 'w') as f:
            for k in keys:
                f.write("\t".join(k) + "\n")


if __name__ == '__main__':
    main(sys.argv)
