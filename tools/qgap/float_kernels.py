"""ONNX Runtime's fused float kernels against exact emulations, on the per-tensor dump AllOut.java wrote.

Usage: python float_kernels.py GRAPH.onnx DUMP_DIR   (GRAPH: the optimized graph with every tensor an output)
Prints, for the embeddings' and layer 0's LayerNormalization, how many values equal ONNX Runtime 1.20's one-pass
float arithmetic and a correctly rounded two-pass LayerNorm; for layer 0's BiasGelu and Softmax, how many equal the
correctly rounded results."""
import sys, math, numpy as np, onnx
from onnx import numpy_helper
from scipy.special import erf

m = onnx.load(sys.argv[1]); dump = sys.argv[2]
inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
names = [o.name for o in m.graph.output]
prod = {o: n for n in m.graph.node for o in n.output}
f = np.float32


def get(name):
    return np.fromfile(f"{dump}/{names.index(name):04d}.bin", dtype=np.float32)


for ln in ["/embeddings/LayerNorm/Add_1_output_0", "/encoder/layer.0/attention/output/LayerNorm/Add_1_output_0"]:
    n = prod[ln]
    g, b = inits[n.input[1]], inits[n.input[2]]
    x = get(n.input[0]).reshape(-1, g.size)
    eps = [a.f for a in n.attribute if a.name == "epsilon"][0]
    y = get(ln).reshape(x.shape)
    out = np.empty_like(x)
    for r in range(x.shape[0]):  # onnxruntime 1.20 layer_norm_impl.cc ComputeJob<float>: one pass, in index order
        mean = f(0); sq = f(0)
        for h in range(g.size):
            mean = f(mean + x[r, h]); sq = f(sq + f(x[r, h] * x[r, h]))
        mean = f(mean / f(g.size))
        std = f(np.sqrt(f(f(f(sq / f(g.size)) - f(mean * mean)) + f(eps))))
        out[r] = ((x[r] - mean) / std) * g + b
    xd = x.astype(np.float64); mu = xd.mean(1, keepdims=True)
    yd = (((xd - mu) / np.sqrt(((xd - mu) ** 2).mean(1, keepdims=True) + eps)) * g + b).astype(np.float32)
    print(f"{ln}: one-pass float equal {int((out == y).sum())} of {y.size}; correctly rounded equal {int((yd == y).sum())}")

out = "/encoder/layer.0/intermediate/intermediate_act_fn/Mul_1_output_0"; n = prod[out]
b = inits[n.input[1]]; x = get(n.input[0]).reshape(-1, b.size); y = get(out).reshape(x.shape)
t = (x + b).astype(np.float32).astype(np.float64)
exact = (0.5 * t * (1 + erf(t / math.sqrt(2)))).astype(np.float32)
print(f"{n.op_type}: correctly rounded equal {int((exact == y).sum())} of {y.size}")
out = "/encoder/layer.0/attention/self/Softmax_output_0"; n = prod[out]
s = get(out); si = get(n.input[0]).astype(np.float64)
L = int(round(math.sqrt(s.size / 12))); si = si.reshape(12, L, L); s = s.reshape(12, L, L)
e = np.exp(si - si.max(-1, keepdims=True)); ex = (e / e.sum(-1, keepdims=True)).astype(np.float32)
print(f"Softmax: correctly rounded equal {int((ex == s).sum())} of {s.size}")
