#!/usr/bin/env python3
"""attn vs PyTorch on the same GPU, in one run (issue 8's benchmark). Run from the unpacked bundle on the GPU host:

    python3 tools/bench_gpu_torch.py [--attn ./attn] [--out bench-gpu.json] [--quick]

Cases (the issue's shapes):
  attention  B=8 H=16 L=S=4096, D=64 and D=128, causal and not:
             fp32: attn (precision fp32, flash kernel) vs F.scaled_dot_product_attention on fp32 tensors (PyTorch
                   picks its backend: memory-efficient for fp32; reported);
             bf16: attn --precision bf16 (tensor-core flash kernel; fp32 tensors in memory, bf16 operands) vs SDPA on
                   bf16 tensors with the FLASH_ATTENTION backend.
             attn runs `bench attention --resident`: q, k, v uploaded once and kept on the GPU, each run downloads
             only a (B, H, L) mean, so both sides time device work on device-resident inputs.
  encoder    nn.TransformerEncoderLayer(E=1024, H=16, F=4096, post-norm, relu, batch_first, dropout 0) in eval mode,
             fp32, B=8 L=1024, under torch.inference_mode (PyTorch's eager fast path) vs `attn bench encoder-layer`
             (one executor run: upload x, the layer, download y). PyTorch is timed twice: input already on the GPU,
             and host -> GPU -> host like attn (the ratio vs the latter is the like-for-like one).

Data: both sides use inputs uniform in [-1, 1] from fixed seeds (attn: SplittableRandom(2) / (3) in BenchCommand;
here torch.Generator seed 0). The values differ but the work does not depend on them (no data-dependent masks).
PyTorch times are medians of CUDA-event-timed runs after warm-up; attn's are its own median (System.nanoTime around
a synchronous run). Ratio = torch_ms / attn_ms: >= 1 means attn is faster. Goals (issue 8): fp32 attention >= 1.0,
bf16 attention >= 0.5, encoder layer >= 0.8.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def attn_bench(attn, args):
    cmd = [attn, "bench"] + args
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    res = json.loads(lines[-1])
    res["cmd"] = " ".join(cmd)
    res["on"] = next((l for l in p.stdout.splitlines() if l.startswith("bench ")), "")
    res["wall_s"] = round(time.time() - t0, 1)
    return res


def cuda_median_ms(fn, warmup, runs):
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def wall_median_ms(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attn", default=os.path.join(os.path.dirname(HERE), "attn"), help="attn launcher")
    ap.add_argument("--out", default="bench-gpu.json", help="JSON results file")
    ap.add_argument("--quick", action="store_true", help="smaller shapes (L=1024), for a smoke test")
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()

    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        sys.exit("torch.cuda is not available: run this on the GPU host")
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 on both sides
    torch.backends.cudnn.allow_tf32 = False
    env = {
        "gpu": torch.cuda.get_device_name(0),
        "capability": "%d.%d" % torch.cuda.get_device_capability(0),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": platform.python_version(),
        "host": platform.node(),
    }
    try:
        env["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        env["driver"] = "?"
    env["attn_probe"] = subprocess.run([a.attn, "probe"], capture_output=True, text=True).stdout.strip()
    print(json.dumps(env, indent=1))

    L = 1024 if a.quick else 4096
    B, H = 8, 16
    rows = []
    timing = ["--warmup-ms", "500", "--min-runs", "5", "--min-ms", "1000"]
    for d in (64, 128):
        for causal in (False, True):
            g = torch.Generator(device="cpu").manual_seed(0)
            q, k, v = (torch.rand(B, H, L, d, generator=g).mul_(2).sub_(1).to(dev) for _ in range(3))
            for prec in ("fp32", "bf16"):
                if prec == "fp32":
                    tq, tk, tv = q, k, v
                    ctx = None
                else:
                    tq, tk, tv = q.bfloat16(), k.bfloat16(), v.bfloat16()
                    from torch.nn.attention import SDPBackend, sdpa_kernel

                    ctx = sdpa_kernel(SDPBackend.FLASH_ATTENTION)

                def run():
                    return F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

                with torch.inference_mode():
                    if ctx is None:
                        torch_ms = cuda_median_ms(run, 3, a.runs)
                    else:
                        with ctx:
                            torch_ms = cuda_median_ms(run, 3, a.runs)
                args = ["attention", "--batch", str(B), "--heads", str(H), "--seq", str(L), "--head-dim", str(d),
                        "--device", "cuda", "--precision", prec, "--resident"] + timing
                if causal:
                    args.append("--causal")
                r = attn_bench(a.attn, args)
                goal = 1.0 if prec == "fp32" else 0.5
                rows.append({
                    "case": "attention B=%d H=%d L=S=%d D=%d%s %s" % (B, H, L, d, " causal" if causal else "", prec),
                    "torch": "SDPA " + ("default backend" if prec == "fp32" else "FLASH_ATTENTION"),
                    "torch_ms": torch_ms, "attn_ms": r["median_ms"], "ratio": torch_ms / r["median_ms"],
                    "goal": goal, "attn": r})
                print("%-50s torch %9.3f ms  attn %9.3f ms  ratio %.2f (goal %.1f)" % (
                    rows[-1]["case"], torch_ms, r["median_ms"], rows[-1]["ratio"], goal), flush=True)
            del q, k, v
            torch.cuda.empty_cache()

    # encoder layer, fp32
    Be, Le, E, He, Fe = (8, 256, 1024, 16, 4096) if a.quick else (8, 1024, 1024, 16, 4096)
    layer = torch.nn.TransformerEncoderLayer(E, He, Fe, dropout=0.0, batch_first=True).to(dev).eval()
    g = torch.Generator(device="cpu").manual_seed(0)
    xh = torch.rand(Be, Le, E, generator=g).mul_(2).sub_(1)
    xd = xh.to(dev)
    with torch.inference_mode():
        dev_ms = cuda_median_ms(lambda: layer(xd), 3, a.runs)

        def host_round_trip():
            y = layer(xh.to(dev, non_blocking=False))
            return y.cpu()

        host_ms = wall_median_ms(host_round_trip, 3, a.runs)
    r = attn_bench(a.attn, ["encoder-layer", "--batch", str(Be), "--seq", str(Le), "--d-model", str(E), "--heads",
                            str(He), "--ffn", str(Fe), "--device", "cuda"] + timing)
    for name, t in (("input on GPU", dev_ms), ("host -> GPU -> host", host_ms)):
        rows.append({"case": "encoder-layer B=%d L=%d E=%d H=%d F=%d fp32 (torch %s)" % (Be, Le, E, He, Fe, name),
                     "torch": "nn.TransformerEncoderLayer eval", "torch_ms": t, "attn_ms": r["median_ms"],
                     "ratio": t / r["median_ms"], "goal": 0.8, "attn": r})
        print("%-50s torch %9.3f ms  attn %9.3f ms  ratio %.2f (goal 0.8)" % (
            rows[-1]["case"], t, r["median_ms"], rows[-1]["ratio"]), flush=True)

    print("\n| case | PyTorch | torch ms | attn ms | ratio | goal | met |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        print("| %s | %s | %.3f | %.3f | %.2f | %.1f | %s |" % (
            row["case"], row["torch"], row["torch_ms"], row["attn_ms"], row["ratio"], row["goal"],
            "yes" if row["ratio"] >= row["goal"] else "no"))
    with open(a.out, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)
    print("\nwrote", a.out)


if __name__ == "__main__":
    main()
