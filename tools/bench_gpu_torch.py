#!/usr/bin/env python3
"""attn vs PyTorch on the same GPU, in one run (issue 8's benchmark). Run from the unpacked bundle on the GPU host:

    python3 tools/bench_gpu_torch.py [--attn ./attn] [--out bench-gpu.json] [--quick] [--budget-s 240]
    python3 tools/bench_gpu_torch.py --torch-only --device cpu --tiny     # checks this script on any torch, no GPU

Runs on PyTorch 1.13 through 2.11: without F.scaled_dot_product_attention (< 2.0) the attention is written out with
torch ops; without sdpa_kernel (< 2.3) the bf16 backend is chosen with torch.backends.cuda.sdp_kernel, or not at all.
Each case runs in its own try: an error is recorded (JSON "errors", a table row) and the next case runs; the exit
status is 1 when any case failed.

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
             and host -> GPU -> host like attn (the ratio vs the latter is the like-for-like one); then
             `attn bench encoder-layer --resident` (x uploaded once and kept on the GPU, each run downloads only a
             (B, L) mean) against PyTorch with its input on the GPU: the like-for-like device-work ratio.
  --cases attention,encoder picks the families (gpu-run.sh --steps with its sweep: encoder only).
  attn's figure is its CUDA-event "device_ms" where the bench reports one (device work of the timed runs), else
  its wall-clock "median_ms"; both are kept in the row's "attn".

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


def sdpa(F, torch):
    """F.scaled_dot_product_attention where it exists (torch >= 2.0), else the same math written out (torch 1.13)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return lambda q, k, v, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal), "SDPA"

    def manual(q, k, v, causal):
        s = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        if causal:
            L, S = s.shape[-2], s.shape[-1]
            s = s.masked_fill(torch.ones(L, S, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        return torch.matmul(torch.softmax(s, dim=-1), v)

    return manual, "softmax(QK^T/sqrt(d))V (torch %s has no SDPA)" % torch.__version__


def flash_context(torch):
    """A context that restricts SDPA to its FLASH_ATTENTION backend, and its name; (None, why) where there is none."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3

        return sdpa_kernel(SDPBackend.FLASH_ATTENTION), "FLASH_ATTENTION"
    except ImportError:
        pass
    try:  # torch 2.0 - 2.2
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False,
                                               enable_mem_efficient=False), "FLASH_ATTENTION (sdp_kernel)"
    except AttributeError:
        return None, "default backend (torch %s has no SDPA backend choice)" % torch.__version__


def encoder_layer(torch, E, H, F_, dev):
    kw = dict(dropout=0.0)
    try:
        return torch.nn.TransformerEncoderLayer(E, H, F_, batch_first=True, **kw).to(dev).eval()
    except TypeError:  # torch < 1.9: no batch_first
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attn", default=os.path.join(os.path.dirname(HERE), "attn"), help="attn launcher")
    ap.add_argument("--out", default="bench-gpu.json", help="JSON results file")
    ap.add_argument("--quick", action="store_true", help="smaller shapes (L=1024), for a smoke test")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--budget-s", type=float, default=0, help="skip the cases left once this many seconds passed")
    ap.add_argument("--torch-only", action="store_true",
                    help="time PyTorch alone (no attn), e.g. to check this script on a torch version")
    ap.add_argument("--device", default="cuda", help="torch device (cpu with --torch-only: a check without a GPU)")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes (L=64, E=64): a check of the script itself")
    ap.add_argument("--cases", default="attention,encoder", help="families to run: attention, encoder")
    a = ap.parse_args()
    t_start = time.time()

    import torch
    import torch.nn.functional as F

    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("torch.cuda is not available: run this on the GPU host (or --torch-only --device cpu)")
    if a.device != "cuda" and not a.torch_only:
        sys.exit("--device %s compares nothing: attn's GPU figures need --device cuda (or add --torch-only)" % a.device)
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 on both sides
    torch.backends.cudnn.allow_tf32 = False
    env = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "python": platform.python_version(),
           "host": platform.node(), "device": a.device}
    if cuda:
        env["gpu"] = torch.cuda.get_device_name(0)
        env["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
    try:
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        env["driver"] = "?"
    if not a.torch_only:
        env["attn_probe"] = subprocess.run([a.attn, "probe"], capture_output=True, text=True).stdout.strip()
    attention, attention_name = sdpa(F, torch)
    env["torch_attention"] = attention_name
    print(json.dumps(env, indent=1), flush=True)

    def timed(fn, warmup, runs):
        return cuda_median_ms(fn, warmup, runs) if cuda else wall_median_ms(fn, warmup, runs)

    L = 64 if a.tiny else 1024 if a.quick else 4096
    B, H = (2, 2) if a.tiny else (8, 16)
    rows, errors = [], []
    timing = ["--warmup-ms", "500", "--min-runs", "5", "--min-ms", "1000"]

    def over_budget(case):
        if a.budget_s and time.time() - t_start > a.budget_s:
            errors.append({"case": case, "error": "skipped: the time budget of %.0f s was spent" % a.budget_s})
            print("%-50s skipped (time budget)" % case, flush=True)
            return True
        return False

    families = set(a.cases.split(","))
    for d in (64, 128) if "attention" in families else ():
        for causal in (False, True):
            for prec in ("fp32", "bf16"):
                case = "attention B=%d H=%d L=S=%d D=%d%s %s" % (B, H, L, d, " causal" if causal else "", prec)
                if over_budget(case):
                    continue
                try:
                    g = torch.Generator(device="cpu").manual_seed(0)
                    q, k, v = (torch.rand(B, H, L, d, generator=g).mul_(2).sub_(1).to(dev) for _ in range(3))
                    ctx, torch_name = None, attention_name + " fp32"
                    if prec == "bf16":
                        q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
                        if cuda and attention_name == "SDPA":
                            ctx, backend = flash_context(torch)
                            torch_name = "SDPA bf16 " + backend
                        else:
                            torch_name = attention_name + " bf16"

                    def run():
                        return attention(q, k, v, causal)

                    with torch.inference_mode() if hasattr(torch, "inference_mode") else torch.no_grad():
                        if ctx is None:
                            torch_ms = timed(run, 3, a.runs)
                        else:
                            with ctx:
                                torch_ms = timed(run, 3, a.runs)
                    row = {"case": case, "torch": torch_name, "torch_ms": torch_ms, "goal": 1.0 if prec == "fp32" else 0.5}
                    if not a.torch_only:
                        args = ["attention", "--batch", str(B), "--heads", str(H), "--seq", str(L), "--head-dim",
                                str(d), "--device", "cuda", "--precision", prec, "--resident"] + timing
                        if causal:
                            args.append("--causal")
                        r = attn_bench(a.attn, args)
                        ms = r.get("device_ms") or r["median_ms"]
                        row.update(attn_ms=ms, ratio=torch_ms / ms, attn=r)
                    rows.append(row)
                    print_row(row)
                except Exception as e:  # record, go on with the next case
                    errors.append({"case": case, "error": "%s: %s" % (type(e).__name__, str(e).strip()[-2000:])})
                    print("%-50s ERROR %s: %s" % (case, type(e).__name__, str(e).strip().splitlines()[-1:] or ""),
                          flush=True)
                finally:
                    q = k = v = None
                    if cuda:
                        torch.cuda.empty_cache()

    # encoder layer, fp32
    Be, Le, E, He, Fe = (2, 16, 64, 4, 128) if a.tiny else (8, 256, 1024, 16, 4096) if a.quick else (8, 1024, 1024, 16, 4096)
    case = "encoder-layer B=%d L=%d E=%d H=%d F=%d fp32" % (Be, Le, E, He, Fe)
    if "encoder" in families and not over_budget(case):
        try:
            layer = encoder_layer(torch, E, He, Fe, dev)
            if layer is None:
                raise RuntimeError("nn.TransformerEncoderLayer takes no batch_first in torch " + torch.__version__)
            g = torch.Generator(device="cpu").manual_seed(0)
            xh = torch.rand(Be, Le, E, generator=g).mul_(2).sub_(1)
            xd = xh.to(dev)
            with torch.inference_mode() if hasattr(torch, "inference_mode") else torch.no_grad():
                dev_ms = timed(lambda: layer(xd), 3, a.runs)
                host_ms = wall_median_ms(lambda: layer(xh.to(dev)).cpu(), 3, a.runs)
            r = None
            if not a.torch_only:
                r = attn_bench(a.attn, ["encoder-layer", "--batch", str(Be), "--seq", str(Le), "--d-model", str(E),
                                        "--heads", str(He), "--ffn", str(Fe), "--device", "cuda"] + timing)
            for name, t in (("input on the device", dev_ms), ("host -> device -> host", host_ms)):
                row = {"case": case + " (torch %s)" % name, "torch": "nn.TransformerEncoderLayer eval",
                       "torch_ms": t, "goal": 0.8}
                if r is not None:
                    row.update(attn_ms=r["median_ms"], ratio=t / r["median_ms"], attn=r)
                rows.append(row)
                print_row(row)
            if not a.torch_only:  # attn resident: x kept on the GPU, as PyTorch's "input on the device"
                rcase = case + " resident (torch input on the device)"
                try:
                    rr = attn_bench(a.attn, ["encoder-layer", "--batch", str(Be), "--seq", str(Le), "--d-model",
                                             str(E), "--heads", str(He), "--ffn", str(Fe), "--device", "cuda",
                                             "--resident"] + timing)
                    ms = rr.get("device_ms") or rr["median_ms"]
                    row = {"case": rcase, "torch": "nn.TransformerEncoderLayer eval", "torch_ms": dev_ms,
                           "goal": 0.8, "attn_ms": ms, "ratio": dev_ms / ms, "attn": rr}
                    rows.append(row)
                    print_row(row)
                except Exception as e:  # an engine without --resident for the encoder layer: recorded
                    errors.append({"case": rcase, "error": "%s: %s" % (type(e).__name__, str(e).strip()[-2000:])})
                    print("%-50s ERROR %s" % (rcase, type(e).__name__), flush=True)
        except Exception as e:
            errors.append({"case": case, "error": "%s: %s" % (type(e).__name__, str(e).strip()[-2000:])})
            print("%-50s ERROR %s" % (case, type(e).__name__), flush=True)

    print("\n| case | PyTorch | torch ms | attn ms | ratio | goal | met |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        if "ratio" in row:
            print("| %s | %s | %.3f | %.3f | %.2f | %.1f | %s |" % (
                row["case"], row["torch"], row["torch_ms"], row["attn_ms"], row["ratio"], row["goal"],
                "yes" if row["ratio"] >= row["goal"] else "no"))
        else:
            print("| %s | %s | %.3f | - | - | %.1f | - |" % (row["case"], row["torch"], row["torch_ms"], row["goal"]))
    for e in errors:
        print("| %s | error: %s | | | | | no |" % (e["case"], e["error"].splitlines()[-1] if e["error"] else ""))
    with open(a.out, "w") as f:
        json.dump({"env": env, "rows": rows, "errors": errors}, f, indent=1)
    print("\nwrote", a.out, "(%d cases, %d errors)" % (len(rows), len(errors)))
    sys.exit(1 if errors else 0)


def print_row(row):
    if "ratio" in row:
        print("%-50s torch %9.3f ms  attn %9.3f ms  ratio %.2f (goal %.1f)" % (
            row["case"], row["torch_ms"], row["attn_ms"], row["ratio"], row["goal"]), flush=True)
    else:
        print("%-50s torch %9.3f ms" % (row["case"], row["torch_ms"]), flush=True)


if __name__ == "__main__":
    main()
