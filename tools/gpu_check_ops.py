#!/usr/bin/env python3
# GPU check of the committed PTX of rms_norm.cu, rope.cu and glu.cu without Java (python3 with CuPy and torch, as on
# this workplace's GPU machines): loads each .ptx with CuPy (the driver JIT-compiles it, as the engine's CUDA backend
# does), launches with the engine's argument lists and launch geometry (CudaStream: block 256, grid min(ceil(n/256),
# 65535); rows: one block per row), compares with float64 references (bound 1e-5, the parity suite's) and with
# transformers' committed outputs (tests/transformers-ops, bound 1e-6), and times the large shapes.
#   python3 tools/gpu_check_ops.py [DIR]   DIR: the repository root (default .), or one folder holding the three .ptx
#                                          files, index.json and ops.npz
import json, os, sys
import numpy as np, cupy as cp, torch
BASE = sys.argv[1] if len(sys.argv) > 1 else "."
FLAT = os.path.exists(os.path.join(BASE, "rope.ptx"))
K = BASE + "/" if FLAT else os.path.join(BASE, "kernels/src/main/resources/io/attn/kernels/")
T = BASE if FLAT else os.path.join(BASE, "tests/transformers-ops")
print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy", cp.__version__, "torch", torch.__version__)
mods = {n: cp.RawModule(path=K + n + ".ptx") for n in ["rms_norm", "rope", "glu"]}
NULL = np.uint64(0)
fails = []
def rel(got, ref):
    got = np.asarray(got, np.float64); ref = np.asarray(ref, np.float64)
    return float(np.sqrt(((got - ref) ** 2).sum() / (ref ** 2).sum()))
def check(name, err, bound):
    ok = err <= bound
    print(f"{'ok  ' if ok else 'FAIL'} {name:60s} {err:.3e} (bound {bound:.0e})")
    if not ok: fails.append(name)
def ew(n): return (min((n + 255) // 256, 65535),), (256,)
def rows_threads(cols): return 256 if cols >= 256 else max(32, (cols + 31) // 32 * 32)

# RMS_NORM
f = mods["rms_norm"].get_function("rms_norm_f32")
rng = np.random.default_rng(35)
for rows, e, w, eps, scale in [(3, 17, True, 1e-6, 1), (4, 1000, True, 1e-5, 1), (2, 65, False, 1e-6, 1e15), (4, 33, True, 1e-5, 1e-3), (4096, 4096, True, 1e-6, 1)]:
    x = (rng.standard_normal((rows, e)) * scale).astype(np.float32); wt = rng.standard_normal(e).astype(np.float32)
    y = cp.empty((rows, e), cp.float32)
    f((rows,), (rows_threads(e),), (cp.asarray(x), y, cp.asarray(wt) if w else NULL, np.int32(e), np.float32(eps)))
    xd = x.astype(np.float64); ref = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + np.float64(np.float32(eps))) * (wt if w else 1)
    check(f"rms_norm ({rows},{e}) weight={w} x~{scale:g}", rel(y.get(), ref), 1e-5)

# ROPE
f = mods["rope"].get_function("rope_f32")
def inv_freq(theta, rd):
    e = np.arange(0, rd, 2).astype(np.float32) / np.float32(rd)
    return (np.float32(1) / (np.float64(np.float32(theta)) ** e.astype(np.float64)).astype(np.float32)).astype(np.float32)
def rope_ref(x, pos, theta, rd):  # pos (B, L)
    B, H, L, D = x.shape; half = rd // 2
    a = (pos.astype(np.float32)[:, :, None] * inv_freq(theta, rd)[None, None, :]).astype(np.float32).astype(np.float64)
    c, s = np.cos(a)[:, None], np.sin(a)[:, None]
    xd = x.astype(np.float64); out = xd.copy()
    x1, x2 = xd[..., :half], xd[..., half:rd]
    out[..., :half] = x1 * c - x2 * s; out[..., half:rd] = x2 * c + x1 * s
    return out
def rope_run(x, mode, posarg, theta, rd, offset):
    B, H, L, D = x.shape; y = cp.empty_like(cp.asarray(x))
    n = max(B * L * (rd // 2), B * H * L * (D - rd))
    g, b = ew(n)
    f(g, b, (cp.asarray(x), y, posarg, np.int32(B), np.int32(H), np.int32(L), np.int32(D), np.int32(rd), np.float32(theta), np.int32(offset), np.int32(mode), np.int32(0), np.float32(1), np.float32(0), np.float32(0), np.float32(0), np.float32(0), np.float32(0)))  # no scaling
    return y
for B, H, L, D, rd, theta, offset in [(2, 3, 17, 64, 64, 1e4, 0), (1, 2, 5, 32, 32, 1e6, 8187), (2, 2, 7, 64, 32, 160000, 3), (1, 2, 3, 7, 4, 1e4, 1), (2, 1, 4, 96, 24, 160000, 4000), (4, 32, 2048, 128, 128, 1e6, 0)]:
    x = rng.standard_normal((B, H, L, D)).astype(np.float32)
    pos = np.broadcast_to(np.arange(offset, offset + L), (B, L))
    ref = rope_ref(x, pos, theta, rd)
    check(f"rope range ({B},{H},{L},{D}) rd {rd} theta {theta:g} offset {offset}", rel(rope_run(x, 0, NULL, theta, rd, offset).get(), ref), 1e-5)
    check(f"rope start ({B},{H},{L},{D}) rd {rd}", rel(rope_run(x, 1, cp.asarray(np.array([offset], np.float32)), theta, rd, 0).get(), ref), 1e-5)
    check(f"rope ids ({B},{H},{L},{D}) rd {rd}", rel(rope_run(x, 2, cp.asarray(np.ascontiguousarray(pos, np.float32)), theta, rd, 0).get(), ref), 1e-5)
bad = rope_run(np.ones((1, 1, 2, 4), np.float32), 2, cp.asarray(np.array([[0.5, 1]], np.float32)), 1e4, 4, 0).get()
check("rope bad position id 0.5 gives NaN on its token only", 0.0 if np.isnan(bad[0, 0, 0]).all() and not np.isnan(bad[0, 0, 1]).any() else 1.0, 0)
# transformers' outputs
idx = json.load(open(os.path.join(T, "index.json"))); arr = np.load(os.path.join(T, "ops.npz"))
for c in idx["cases"]:
    n = c["name"]; x = arr[n + ".x"]
    if c["op"] == "rope":
        y = rope_run(x, 2, cp.asarray(arr[n + ".positions"]), c["theta"], c["rotary_dim"], 0).get()
    elif c["op"] == "rms_norm":
        e = x.shape[-1]; y = cp.empty(x.shape, cp.float32)
        mods["rms_norm"].get_function("rms_norm_f32")((x.size // e,), (rows_threads(e),), (cp.asarray(x), y, cp.asarray(arr[n + ".weight"]), np.int32(e), np.float32(c["eps"])))
        y = y.get()
    else:
        F = x.shape[-1] // 2; rows = x.size // (2 * F); y = cp.empty(x.shape[:-1] + (F,), cp.float32)
        act = {"gelu": 2, "gelu_pytorch_tanh": 3, "silu": 4}[c["act"]]
        g, b = ew(rows * F)
        mods["glu"].get_function("glu_f32")(g, b, (cp.asarray(x), y, np.int32(rows), np.int32(F), np.int32(act), np.int32(1 if c["activated_first"] else 0)))
        y = y.get()
    check(f"vs transformers: {n}", rel(y, arr[n + ".out"]), 1e-6)

# GLU
f = mods["glu"].get_function("glu_f32")
for rows, F, act, first in [(3, 17, 4, 1), (6, 65, 4, 0), (10, 63, 2, 1), (4, 250, 3, 0), (8192, 4096, 4, 1)]:
    x = (2 * rng.standard_normal((rows, 2 * F))).astype(np.float32)
    x[0, :4] = [1e4, -1e4, 100, -100]
    y = cp.empty((rows, F), cp.float32); g, b = ew(rows * F)
    f(g, b, (cp.asarray(x), y, np.int32(rows), np.int32(F), np.int32(act), np.int32(first)))
    t = torch.from_numpy(x).double(); a, gg = (t[:, :F], t[:, F:]) if first else (t[:, F:], t[:, :F])
    r = {4: torch.nn.functional.silu(a), 2: torch.nn.functional.gelu(a), 3: torch.nn.functional.gelu(a, approximate="tanh")}[act] * gg
    check(f"glu ({rows},{2*F}) act {act} first {first}", rel(y.get(), r.numpy()), 1e-5)

# timings (the large shapes): mean of 20 after 3 warm-ups
def timeit(fn):
    for _ in range(3): fn()
    cp.cuda.runtime.deviceSynchronize(); s = cp.cuda.Event(); e = cp.cuda.Event(); s.record()
    for _ in range(20): fn()
    e.record(); e.synchronize(); return cp.cuda.get_elapsed_time(s, e) / 20
x = cp.asarray(rng.standard_normal((4, 32, 2048, 128)).astype(np.float32)); y = cp.empty_like(x)
ms = timeit(lambda: mods["rope"].get_function("rope_f32")(ew(4 * 2048 * 64)[0], (256,), (x, y, NULL, np.int32(4), np.int32(32), np.int32(2048), np.int32(128), np.int32(128), np.float32(1e6), np.int32(0), np.int32(0), np.int32(0), np.float32(1), np.float32(0), np.float32(0), np.float32(0), np.float32(0), np.float32(0))))
print(f"rope (4,32,2048,128): {ms:.3f} ms, {2 * x.nbytes / ms / 1e6:.0f} GB/s")
xg = cp.asarray(rng.standard_normal((8192, 8192)).astype(np.float32)); yg = cp.empty((8192, 4096), cp.float32)
ms = timeit(lambda: f(ew(8192 * 4096)[0], (256,), (xg, yg, np.int32(8192), np.int32(4096), np.int32(4), np.int32(1))))
print(f"glu silu (8192, 2*4096): {ms:.3f} ms, {(xg.nbytes + yg.nbytes) / ms / 1e6:.0f} GB/s")
xr = cp.asarray(rng.standard_normal((8192, 4096)).astype(np.float32)); yr = cp.empty_like(xr); wr = cp.ones(4096, cp.float32)
ms = timeit(lambda: mods["rms_norm"].get_function("rms_norm_f32")((8192,), (256,), (xr, yr, wr, np.int32(4096), np.float32(1e-6))))
print(f"rms_norm (8192, 4096): {ms:.3f} ms, {2 * xr.nbytes / ms / 1e6:.0f} GB/s")
print("FAILED:", fails if fails else "none")
sys.exit(1 if fails else 0)
