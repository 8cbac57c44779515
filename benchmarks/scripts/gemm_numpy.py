#!/usr/bin/env python3
"""SGEMM timings with NumPy (OpenBLAS), for comparison with `attn bench gemm` on the same machine.

usage: gemm_numpy.py --threads T [--seconds S]
Sets OPENBLAS_NUM_THREADS (and OMP/MKL) before importing numpy, times float32 products of the same shapes as
docs/performance.md (1024^3, 2048^3, and the attention shapes 64 x (512x64 . 64x512), 64 x (512x512 . 512x64)),
warm-up first, and prints one JSON object per shape with the median: {"bench":"gemm-numpy", ...}.
"""
import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=1)
p.add_argument("--seconds", type=float, default=3.0)
a = p.parse_args()
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(a.threads)
import numpy as np  # noqa: E402  (after the thread settings)

rng = np.random.default_rng(1)


def bench(name, batch, m, n, k, trans_b=False):
    A = rng.uniform(-1, 1, (batch, m, k)).astype(np.float32)
    B = rng.uniform(-1, 1, (batch, n, k) if trans_b else (batch, k, n)).astype(np.float32)
    if batch == 1:
        A, B = A[0], B[0]
    Bt = B.swapaxes(-1, -2) if trans_b else B
    out = np.empty((batch, m, n) if batch > 1 else (m, n), dtype=np.float32)
    f = lambda: np.matmul(A, Bt, out=out)  # noqa: E731
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        f()
    ts = []
    end = time.perf_counter() + a.seconds
    while len(ts) < 5 or time.perf_counter() < end:
        t0 = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    med = ts[len(ts) // 2] if len(ts) % 2 else (ts[len(ts) // 2 - 1] + ts[len(ts) // 2]) / 2
    flops = 2.0 * batch * m * n * k
    print(json.dumps({"bench": "gemm-numpy", "shape": name, "threads": a.threads, "median_ms": round(med, 4),
                      "gflops": round(flops / med / 1e6, 2), "runs": len(ts)}))
    sys.stdout.flush()


print("numpy", np.__version__, file=sys.stderr)
bench("batch=1 m=1024 n=1024 k=1024", 1, 1024, 1024, 1024)
bench("batch=1 m=2048 n=2048 k=2048", 1, 2048, 2048, 2048)
bench("batch=64 m=512 n=512 k=64 B^T", 64, 512, 512, 64, trans_b=True)
bench("batch=64 m=512 n=64 k=512", 64, 512, 64, 512)
