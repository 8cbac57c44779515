#!/usr/bin/env python3
"""SGEMM timings with NumPy (OpenBLAS), for comparison with `attn bench gemm` on the same machine.

usage: gemm_numpy.py --threads T [--seconds S] [--shapes big,attention,encoder]
Sets OPENBLAS_NUM_THREADS (and OMP/MKL) before importing numpy, times float32 products of the same shapes as
docs/performance.md (big: 1024^3, 2048^3; attention: 64 x (512x64 . 64x512), 64 x (512x512 . 512x64); encoder: a
sentence encoder's feed-forward products, 512 x 384 . (1536 x 384)^T and 2048 x 1536 . (384 x 1536)^T, as
`attn bench gemm --weights`), warm-up first, and prints one JSON object per shape with the median:
{"bench":"gemm-numpy", ..., "blas": ..., "cpu": {...}} (the CPU as attn's benchmarks print it).
Use a NumPy built on OpenBLAS (numpy.show_config()): a NumPy on the reference BLAS (Debian's python3-numpy with only
libblas3 installed) is 10-50x slower and no peer.
"""
import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=1)
p.add_argument("--seconds", type=float, default=3.0)
p.add_argument("--shapes", default="big,attention")
a = p.parse_args()
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(a.threads)
import numpy as np  # noqa: E402  (after the thread settings)

rng = np.random.default_rng(1)


def cpu():
    """/proc/cpuinfo's first processor: model name, family, model, avx2 / avx512f (as io.attn.cpu.CpuInfo)."""
    f = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                f[k.strip()] = v.strip()
    except OSError:
        pass
    flags = f.get("flags", "").split()
    num = lambda k: int(f[k]) if f.get(k, "").isdigit() else -1  # noqa: E731
    return {"name": f.get("model name", "?"), "family": num("cpu family"), "model": num("model"),
            "avx2": "avx2" in flags, "avx512f": "avx512f" in flags, "cores": os.cpu_count()}


def blas():
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg["Build Dependencies"]["blas"]
        return "%s %s" % (b.get("name", "?"), b.get("version", "?"))
    except Exception:  # older NumPy: no dict mode
        return "?"


CPU, BLAS = cpu(), blas()


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


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
    ts, cs = [], []
    end = time.perf_counter() + a.seconds
    while len(ts) < 5 or time.perf_counter() < end:
        c0, t0 = time.thread_time(), time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
        cs.append((time.thread_time() - c0) * 1e3)  # the calling thread's CPU time: all the work at 1 thread
    med, cmed = median(ts), median(cs)
    flops = 2.0 * batch * m * n * k
    print(json.dumps({"bench": "gemm-numpy", "shape": name, "threads": a.threads, "median_ms": round(med, 4),
                      "gflops": round(flops / med / 1e6, 2), "runs": len(ts), "thread_cpu_ms": round(cmed, 4), "blas": BLAS, "cpu": CPU}))
    sys.stdout.flush()


print("numpy", np.__version__, BLAS, CPU, file=sys.stderr)
sets = a.shapes.split(",")
if "big" in sets or "big1024" in sets:
    bench("batch=1 m=1024 n=1024 k=1024", 1, 1024, 1024, 1024)
    if "big" in sets:
        bench("batch=1 m=2048 n=2048 k=2048", 1, 2048, 2048, 2048)
if "attention" in sets:
    bench("batch=64 m=512 n=512 k=64 B^T", 64, 512, 512, 64, trans_b=True)
    bench("batch=64 m=512 n=64 k=512", 64, 512, 64, 512)
if "encoder" in sets:  # a Linear's weight W (N, K): A @ W.T, as attn bench gemm --weights
    bench("batch=1 m=512 n=1536 k=384 weights B^T", 1, 512, 1536, 384, trans_b=True)
    bench("batch=1 m=2048 n=384 k=1536 weights B^T", 1, 2048, 384, 1536, trans_b=True)
