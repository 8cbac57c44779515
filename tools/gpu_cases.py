#!/usr/bin/env python3
"""tools/gpu-run.sh's helpers around the sweep (tools/gpu_sweep.py); Python 3 standard library only.

    python3 tools/gpu_cases.py winners --sweep sweep.json --attn ./attn --out winners.json [--budget-s 90]
        the sweep's winners through the engine: `attn bench attention --resident` at B=8 H=16 L=S=4096 (causal and
        not) with --backend-opt flash.variant=ENTRY (bf16 / fp16: --precision bf16|fp16) or
        flash.fp32.variant=ENTRY (fp32), and fp32 once more by the default dispatch (3xTF32 on sm_80+, its default
        entry per D). An option the engine does not
        know yet is recorded (the row's "error") and the case is run again without it (the default dispatch), so
        the engine's figure is there either way. Ratio = the sweep's PyTorch baseline ms / attn ms (attn: the
        bench's "device_ms" (CUDA events) where it reports one, else its wall-clock "median_ms").
    python3 tools/gpu_cases.py cudnn --sweep sweep.json --attn ./attn --out cudnn.json [--budget-s 90]
        cuDNN's fused attention through the engine (--backend-opt attention=cudnn) beside the engine's flash path
        (attention=flash), both `attn bench attention --resident --precision bf16` at B=8 H=16 L=S=4096, D=64 and 128,
        causal and not; cases named "attention D=64 bf16 cudnn" (and "... flash"). torch_ms: the sweep's PyTorch
        SDPA bf16 FLASH baseline at that shape (the goal: ratio >= 1.0), torch_cudnn_ms its CUDNN baseline. A run
        whose backend line does not say "attention: cudnn", or whose stderr says cuDNN refused the plan, is recorded
        as fallen back ("path": "flash (fallback)"), never as a cuDNN figure.
    python3 tools/gpu_cases.py collect --gpu "NAME, DRIVER, ..." --sweep sweep.json --winners winners.json
                                      --bench bench-gpu.json --embed embed.json --out FILE [--date YYYY-MM-DD]
                                      [--embed-name NAME] [--cudnn cudnn.json]
        the run's cases in one file: {"gpu", "date", "driver", "torch", "cases": [{"name", "attn_ms", "torch_ms",
        "ratio"}]}; a missing or broken input file is skipped.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

TIMING = ["--warmup-ms", "300", "--min-runs", "5", "--min-ms", "600"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, TypeError):
        return None


def bench(attn, args):
    cmd = [attn, "bench", "attention"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise RuntimeError("exit %d: %s" % (p.returncode, msg[-1][:300] if msg else "no output"))
    r = json.loads(lines[-1])
    r["cmd"] = " ".join(cmd)
    return r


def winners(a):
    sw = load(a.sweep) or {}
    base = {(b.get("name"), b.get("shape")): b.get("ms") for b in sw.get("baselines", [])}
    plan = []
    for key, entry in sorted((sw.get("winners") or {}).items()):
        prec, d = key.split(" D=")
        if prec == "tf32":  # 1xTF32 is below fp32's bound: not a choice the engine offers for fp32
            continue
        if prec == "fp32" and entry.startswith("flash_f32"):  # the SIMT kernel
            plan.append((prec, int(d), "flash.fp32=simt", entry))
            continue
        opt = "flash.fp32.variant=" if prec == "fp32" else "flash.variant="
        plan.append((prec, int(d), opt + entry, entry))
    if not plan:  # no sweep: the engine's default dispatch at least
        plan = [(p, d, None, None) for p in ("fp32", "bf16") for d in (64, 128)]
    for d in sorted({d for p, d, _, _ in plan if p == "fp32"}):  # the engine's own choice (tf32x3 since 2026-11-27)
        plan.append(("fp32", d, None, "default"))
    rows, t0 = [], time.time()
    for prec, d, opt, entry in plan:
        for causal in (False, True):
            shape = "B=8 H=16 L=S=4096 D=%d%s" % (d, " causal" if causal else "")
            name = "attention D=%d%s %s%s" % (d, " causal" if causal else "", prec,
                                             " default dispatch" if entry == "default" else "")
            row = {"name": name, "option": opt, "entry": entry}
            if a.budget_s and time.time() - t0 > a.budget_s:
                row["error"] = "skipped: the time budget was spent"
                rows.append(row)
                continue
            args = ["--batch", "8", "--heads", "16", "--seq", "4096", "--head-dim", str(d), "--device", "cuda",
                    "--precision", prec, "--resident"] + TIMING + (["--causal"] if causal else [])
            r = None
            if opt:
                try:
                    r = bench(a.attn, args + ["--backend-opt", opt])
                except Exception as e:  # an option the engine does not know yet: recorded, then the default
                    row["error"] = "%s: %s" % (opt, e)
                    row["name"] += " (default dispatch)"
            try:
                if r is None:
                    r = bench(a.attn, args)
                attn_ms = r.get("device_ms") or r["median_ms"]
                tm = base.get(("SDPA fp32 default" if prec == "fp32" else "SDPA %s FLASH" % prec, shape))
                row.update(attn_ms=attn_ms, median_ms=r["median_ms"], device_ms=r.get("device_ms"), torch_ms=tm,
                           ratio=tm / attn_ms if tm else None, bench=r)
                print("%-40s attn %9.3f ms  torch %s  ratio %s" % (
                    name, attn_ms, "%.3f ms" % tm if tm else "-", "%.2f" % row["ratio"] if tm else "-"), flush=True)
            except Exception as e:
                row["error"] = (row.get("error", "") + "; " if row.get("error") else "") + str(e)
                print("%-40s ERROR %s" % (name, row["error"]), flush=True)
            rows.append(row)
    with open(a.out, "w") as f:
        json.dump({"rows": rows, "winners": sw.get("winners")}, f, indent=1)
    ok = sum(1 for r in rows if "attn_ms" in r)
    print("wrote %s: %d of %d cases timed" % (a.out, ok, len(rows)))
    return 0 if ok else 1


def cudnn(a):
    sw = load(a.sweep) or {}
    base = {(b.get("name"), b.get("shape")): b.get("ms") for b in sw.get("baselines", [])}
    rows, t0 = [], time.time()
    for d in (64, 128):
        for causal in (False, True):
            shape = "B=8 H=16 L=S=4096 D=%d%s" % (d, " causal" if causal else "")
            for path in ("cudnn", "flash"):
                name = "attention D=%d%s bf16 %s" % (d, " causal" if causal else "", path)
                row = {"name": name, "option": "attention=" + path, "shape": shape}
                rows.append(row)
                if a.budget_s and time.time() - t0 > a.budget_s:
                    row["error"] = "skipped: the time budget was spent"
                    continue
                cmd = [a.attn, "bench", "attention", "--batch", "8", "--heads", "16", "--seq", "4096", "--head-dim",
                       str(d), "--device", "cuda", "--precision", "bf16", "--resident"] + TIMING + \
                      (["--causal"] if causal else []) + ["--backend-opt", "attention=" + path]
                try:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
                    if p.returncode != 0 or not lines:
                        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
                        raise RuntimeError("exit %d: %s" % (p.returncode, msg[-1][:300] if msg else "no output"))
                    r = json.loads(lines[-1])
                    backend = next((l for l in p.stdout.splitlines() if l.startswith("bench attention")), "")
                    row["backend"] = backend[:600]
                    refused = [l for l in p.stderr.splitlines() if "no cuDNN plan" in l]
                    if path == "cudnn" and ("attention: cudnn" not in backend or refused):
                        row["path"] = "flash (fallback)"
                        row["fallback"] = (refused[0] if refused else backend)[:400]
                    else:
                        row["path"] = path
                    attn_ms = r.get("device_ms") or r["median_ms"]
                    tm = base.get(("SDPA bf16 FLASH", shape))
                    tc = base.get(("SDPA bf16 CUDNN", shape))
                    row.update(attn_ms=attn_ms, median_ms=r["median_ms"], device_ms=r.get("device_ms"), torch_ms=tm,
                               torch_cudnn_ms=tc, ratio=tm / attn_ms if tm else None,
                               ratio_vs_torch_cudnn=tc / attn_ms if tc else None, cmd=" ".join(cmd))
                    print("%-36s %-17s attn %9.3f ms  torch flash %s  cudnn %s" % (
                        name, row["path"], attn_ms, "%.3f ms" % tm if tm else "-", "%.3f ms" % tc if tc else "-"),
                        flush=True)
                except Exception as e:
                    row["error"] = str(e)
                    print("%-36s ERROR %s" % (name, e), flush=True)
    with open(a.out, "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    ok = sum(1 for r in rows if r.get("path") == "cudnn")
    print("wrote %s: %d cuDNN cases timed on cuDNN, %d fell back, %d errors" % (
        a.out, ok, sum(1 for r in rows if r.get("fallback")), sum(1 for r in rows if r.get("error"))))
    return 0 if ok else 1


def collect(a):
    cases = []
    sw = load(a.sweep) or {}
    for c in sw.get("cases", []):
        cases.append(c)
    for r in (load(a.winners) or {}).get("rows", []):
        if "attn_ms" in r:  # through the engine: the kernel, its converters, a (B,H,L) mean of the output, its download
            how = "%s, " % r["option"] if r.get("option") and "(default dispatch)" not in r["name"] else ""
            cases.append({"name": "%s [%sattn bench --resident, engine path: incl. a (B,H,L) mean and its download]"
                                  % (r["name"], how), "attn_ms": r["attn_ms"], "torch_ms": r.get("torch_ms"),
                          "ratio": r.get("ratio")})
    for r in (load(a.bench) or {}).get("rows", []):
        if "attn_ms" not in r:
            continue
        c = r["case"]
        m = re.match(r"attention B=\d+ H=\d+ L=S=\d+ D=(\d+)( causal)? (\w+)", c)
        if m:
            name = "attention D=%s%s %s (bench_gpu_torch)" % (m.group(1), m.group(2) or "", m.group(3))
        elif c.startswith("encoder-layer"):
            m = re.match(r"encoder-layer (B=\d+ L=\d+ E=\d+ H=\d+ F=\d+)", c)
            name = "encoder layer%s fp32%s (attn: %s; torch: %s)" % (
                " " + m.group(1) if m else "", " resident" if "resident" in c else "",
                "input resident on the device" if "resident" in c else "host -> device -> host",
                "host -> device -> host" if "host ->" in c else "input on the device")
        else:
            name = c
        cases.append({"name": name, "attn_ms": r["attn_ms"], "torch_ms": r.get("torch_ms"), "ratio": r.get("ratio")})
    for r in (load(a.cudnn) or {}).get("rows", []) if a.cudnn else []:
        if "attn_ms" in r and r.get("path") != "flash (fallback)":
            cases.append({"name": "%s [attn bench --resident --backend-opt %s; torch: SDPA bf16 FLASH]" % (
                r["name"], r["option"]), "attn_ms": r["attn_ms"], "torch_ms": r.get("torch_ms"),
                "ratio": r.get("ratio"), "torch_cudnn_ms": r.get("torch_cudnn_ms")})
    em = load(a.embed) or {}
    model = a.embed_name or os.path.basename(str(em.get("model", "model")).rstrip("/"))
    for prec, ours, theirs in (("fp32", "attn_sentences_per_s", "st_sentences_per_s"),
                               ("fp16", "attn_fp16_sentences_per_s", "st_half_sentences_per_s")):
        if em.get(ours) and em.get("texts"):
            n = em["texts"]
            am = 1e3 * n / em[ours]
            tm = 1e3 * n / em[theirs] if em.get(theirs) else None
            cases.append({"name": "embed %s %s (%d texts; attn embed%s; torch: sentence-transformers%s)" % (
                model, prec, n, " --precision fp16" if prec == "fp16" else "",
                " model.half()" if prec == "fp16" else " fp32"), "attn_ms": am, "torch_ms": tm,
                "ratio": tm / am if tm else None})
    gpu = [x.strip() for x in (a.gpu or "").split(",")]
    env = sw.get("env") or (load(a.bench) or {}).get("env") or {}
    out = {"gpu": env.get("gpu") or (gpu[0] if gpu and gpu[0] else None),
           "date": a.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
           "driver": env.get("driver") or (gpu[1] if len(gpu) > 1 else None),
           "torch": env.get("torch"), "cases": cases}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote %s: %d cases" % (a.out, len(cases)))
    return 0


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", (s or "none").lower()).strip("-") or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("winners", "cudnn", "collect", "slug"))
    ap.add_argument("--cudnn", help="collect: the cudnn step's JSON")
    ap.add_argument("--sweep")
    ap.add_argument("--winners")
    ap.add_argument("--bench")
    ap.add_argument("--embed")
    ap.add_argument("--attn", default="./attn")
    ap.add_argument("--gpu", default="")
    ap.add_argument("--out")
    ap.add_argument("--embed-name", help="collect: what the embed step's model is (default: its folder's name)")
    ap.add_argument("--date", help="collect: the run's date (default: today, UTC)")
    ap.add_argument("--budget-s", type=float, default=0)
    a = ap.parse_args()
    if a.what == "slug":
        print(slug(a.gpu.split(",")[0]))
        return 0
    if a.what == "winners":
        a.out = a.out or "winners.json"
        return winners(a)
    if a.what == "cudnn":
        a.out = a.out or "cudnn.json"
        return cudnn(a)
    return collect(a)


if __name__ == "__main__":
    sys.exit(main())
