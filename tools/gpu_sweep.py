#!/usr/bin/env python3
"""Every attention kernel variant of kernels/.../attention_variants.json on this GPU, against PyTorch, in one process
(issue 38's sweep; tools/gpu-run.sh's `sweep` step):

    python3 tools/gpu_sweep.py [--out sweep.json] [--budget-s 150] [--runs 20] [--ptx-dir DIR] [--quick]
    python3 tools/gpu_sweep.py --dry-run      # no GPU, no torch: the JSON against the PTX, the launch plans (CI)

The kernels run inside PyTorch's CUDA context: ctypes on libcuda.so.1, the committed PTX text loaded with
cuModuleLoadDataEx, cuModuleGetFunction, cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) where a variant's dynamic
shared memory exceeds 48 KiB, cuLaunchKernel on torch's current stream with torch tensors' data_ptr()s; times are
torch.cuda.Event medians of --runs runs after warm-up.

The PTX and the JSON: --ptx-dir DIR, else the repository's kernels/src/main/resources/io/attn/kernels/, else the
bundle's kernels jar (lib/kernels-*.jar: the very files the engine loads).

For every variant whose compute capability the GPU has:
  correctness  a small shape (B=2 H=3 L=70 S=90, the variant's D), one case per mask kind (none, causal, key padding
               (bool), additive (B, H, L, S) mask), against torch in float64: relative Frobenius error, bound per
               precision (fp32 1e-5, bf16 2e-2, fp16 4e-3).
  timing       B=8 H=16 L=S=4096 at the variant's D (64 or 128), causal and not; B=64 H=12 L=S=128 (embedding-like)
               at D=64; ms, TFLOP/s (4 B H L S D, halved for causal); 16-bit-input variants ("in": bf16|f16) also with
               the converter launches (q, k, v from fp32) inside the timed region.
PyTorch baselines on the same shapes: SDPA fp32 default backend and EFFICIENT_ATTENTION (TF32 off), bf16 and fp16
FLASH_ATTENTION, CUDNN_ATTENTION, EFFICIENT_ATTENTION; a missing backend is recorded, not fatal.
Ratio = torch_ms / attn_ms against SDPA fp32 default (fp32 variants) or FLASH (bf16 / fp16 variants).
"winners": per precision and D, the fastest variant that passed every correctness case (sum of the long shapes).
"cases": one row per timed variant and shape, {"name", "attn_ms", "torch_ms", "ratio"} (gpu-run.sh collects them).
Exit status: 0 when every step ran and every run variant passed; 1 otherwise; 2 for a broken JSON/PTX (dry run too).
"""
import argparse
import ctypes
import glob
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RES = "io/attn/kernels"
BOUNDS = {"fp32": 1e-5, "tf32": 1e-2, "bf16": 2e-2, "fp16": 4e-3}  # as docs/parity.md
BASELINE_OF = {"fp32": "SDPA fp32 default", "tf32": "SDPA fp32 default", "bf16": "SDPA bf16 FLASH", "fp16": "SDPA fp16 FLASH"}
# the argument list of "about" when it cannot be read: q k v o B H HKV L S scale causal mask maskKind strideB strideH kpm
# kind winL winR
DEFAULT_PARAMS = ["u64"] * 4 + ["u32"] * 5 + ["f32", "u32", "u64", "u32", "u32", "u32", "u64", "u32", "u32", "u32"]
OPEN = (1 << 30) - 1  # a window side that is open (the Java host's value)
CONVERTER_PARAMS = ["u64", "u64", "u64"]  # const float* x, uint16* y, long long n
MASKS = ("none", "causal", "key padding", "additive")
SMALL = dict(B=2, H=3, L=70, S=90)
DEV = "cuda"  # the torch device of every tensor (a host-emulation check of this script sets "cpu")


def long_shapes(quick):
    L = 1024 if quick else 4096
    return [dict(B=8, H=16, L=L, S=L, D=d, causal=c, tag="long") for d in (64, 128) for c in (False, True)]


def short_shapes():
    return [dict(B=64, H=12, L=128, S=128, D=64, causal=c, tag="short") for c in (False, True)]


# ---- the JSON and the PTX (no GPU) -----------------------------------------------------------------------------------
class Sources:
    """Where the PTX files and attention_variants.json are: a folder, or the kernels jar of the bundle."""

    def __init__(self, ptx_dir=None):
        self.dir, self.jar = None, None
        cands = [ptx_dir] if ptx_dir else [os.path.join(ROOT, "kernels/src/main/resources", RES),
                                           os.path.join(ROOT, "kernels")]
        for d in cands:
            if d and os.path.isfile(os.path.join(d, "attention_variants.json")):
                self.dir = d
                break
        if self.dir is None and not ptx_dir:
            jars = sorted(glob.glob(os.path.join(ROOT, "lib", "kernels-*.jar")))
            if jars:
                self.jar = jars[-1]
        if self.dir is None and self.jar is None:
            raise FileNotFoundError("no attention_variants.json in %s, nor a lib/kernels-*.jar" % cands)

    def where(self):
        return self.dir or self.jar

    def read(self, name):
        if self.dir:
            with open(os.path.join(self.dir, name), "rb") as f:
                return f.read()
        with zipfile.ZipFile(self.jar) as z:
            return z.read(RES + "/" + name)


def about_params(about):
    """The kernel parameter types (u64 / u32 / f32) from the JSON's "about": "Arguments, in order: q, k, v (...), ..."."""
    m = re.search(r"Arguments, in order:\s*(.*?)\.\s+(?:[A-Z]|$)", about or "", re.S)
    if not m:
        return None
    text = m.group(1)
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)
    out = []
    for a in (x.strip() for x in text.split(",")):
        if not a:
            continue
        if "*" in a or re.fullmatch(r"[A-Za-z_]\w*", a):  # a pointer, or a bare tensor name (q, k, v, o)
            out.append("u64")
        elif a.startswith(("int ", "unsigned ")):
            out.append("u32")
        elif a.startswith("float "):
            out.append("f32")
        elif a.startswith(("long ", "size_t ")):
            out.append("u64")
        else:
            return None
    return out


def ptx_entries(ptx):
    """{entry: [param types]} of every .entry in the PTX text."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S):
        out[m.group(1)] = [t for t, _ in re.findall(r"\.param\s+\.(\w+)\s+(\w+)", m.group(2))]
    return out


def ptx_file(name):
    return name if name.endswith(".ptx") else name + ".ptx"


def converter_for(conv, inp):
    """The converter entry that makes 16-bit input `inp` (bf16 | f16) from fp32."""
    for c in conv:
        if c.get("out") == inp or c.get("to") == inp or c.get("in") == inp or c.get("entry") == "f32_to_" + inp:
            return c
    return None


def converter_plan(c, n):
    """grid, block of a converter launch over n elements (a grid-stride loop where max_blocks caps the grid)."""
    threads = int(c.get("threads", 256))
    per = int(c.get("elems_per_thread", c.get("per_thread", 1)))
    blocks = max(1, -(-n // (threads * per)))
    if c.get("max_blocks"):
        blocks = min(blocks, int(c["max_blocks"]))
    return blocks, threads, int(c.get("smem", 0))


def variant_plan(v, B, H, L):
    br = int(v["br"])
    return B * H * (-(-L // br)), int(v["threads"]), int(v.get("smem", 0))


def check_table(src):
    """Loads the JSON and checks it against the PTX: (table, params, problems, ptx texts by file)."""
    problems = []
    table = json.loads(src.read("attention_variants.json").decode("utf-8"))
    params = about_params(table.get("about", ""))
    if params is None:
        problems.append("the JSON's \"about\" has no readable \"Arguments, in order:\" list")
        params = DEFAULT_PARAMS
    if len(params) != len(DEFAULT_PARAMS):
        problems.append("the \"about\" argument list has %d parameters, not %d: %s"
                        % (len(params), len(DEFAULT_PARAMS), params))
    texts, entries = {}, {}

    def entry_params(file, entry):
        f = ptx_file(file)
        if f not in texts:
            try:
                texts[f] = src.read(f).decode("utf-8")
                entries[f] = ptx_entries(texts[f])
            except (OSError, KeyError) as e:
                problems.append("%s: cannot read %s (%s)" % (entry, f, e))
                texts[f], entries[f] = None, {}
        return entries[f].get(entry)

    seen = set()
    need = ("entry", "file", "precision", "in", "d", "br", "threads", "smem", "capability")
    for v in table.get("variants", []):
        miss = [k for k in need if k not in v]
        if miss:
            problems.append("variant %s lacks %s" % (v.get("entry", "?"), ", ".join(miss)))
            continue
        if v["entry"] in seen:
            problems.append("variant %s listed twice" % v["entry"])
        seen.add(v["entry"])
        if v["precision"] not in BOUNDS:
            problems.append("%s: precision %s is none of %s" % (v["entry"], v["precision"], sorted(BOUNDS)))
        if v["in"] not in ("f32", "bf16", "f16"):
            problems.append("%s: in %s is none of f32, bf16, f16" % (v["entry"], v["in"]))
        elif v["in"] != "f32" and converter_for(table.get("converters", []), v["in"]) is None:
            problems.append("%s: input %s but no converter entry makes it" % (v["entry"], v["in"]))
        if int(v["threads"]) % 32 or not 0 < int(v["threads"]) <= 1024:
            problems.append("%s: threads %s" % (v["entry"], v["threads"]))
        if int(v["smem"]) > 227 * 1024:
            problems.append("%s: smem %s exceeds 227 KiB" % (v["entry"], v["smem"]))
        got = entry_params(v["file"], v["entry"])
        if got is None:
            problems.append("%s: no .entry %s in %s" % (v["entry"], v["entry"], ptx_file(v["file"])))
        elif got != params:
            problems.append("%s: PTX parameters %s, the JSON's argument list %s" % (v["entry"], got, params))
    for c in table.get("converters", []):
        if "entry" not in c or "file" not in c:
            problems.append("converter %s lacks entry or file" % c)
            continue
        got = entry_params(c["file"], c["entry"])
        if got is None:
            problems.append("converter %s: no .entry in %s" % (c["entry"], ptx_file(c["file"])))
        elif got != CONVERTER_PARAMS:
            problems.append("converter %s: PTX parameters %s, expected %s (const float* x, uint16* y, long long n)"
                            % (c["entry"], got, CONVERTER_PARAMS))
    return table, params, problems, texts


def timing_shapes(v, quick):
    return [s for s in long_shapes(quick) + short_shapes() if s["D"] == int(v["d"])]


def flops(s):
    f = 4.0 * s["B"] * s["H"] * s["L"] * s["S"] * s["D"]
    return f / 2 if s["causal"] else f


def shape_name(s):
    return "B=%d H=%d L=S=%d D=%d%s" % (s["B"], s["H"], s["L"], s["D"], " causal" if s["causal"] else "")


def dry_run(a, src):
    table, params, problems, _ = check_table(src)
    print("sources: %s" % src.where())
    print("argument types (from \"about\"): %s" % " ".join(params))
    for c in table.get("converters", []):
        b, t, sm = converter_plan(c, 8 * 16 * 4096 * 128)
        print("converter %-24s %s.ptx  grid %d x %d threads (n = 8*16*4096*128), smem %d" % (
            c.get("entry"), c.get("file"), b, t, sm))
    for v in table.get("variants", []):
        if not all(k in v for k in ("entry", "br", "threads", "d")):
            continue
        print("variant %-24s %s.ptx  %s in=%s D=%s  sm_%s+  br %s, %s threads, smem %s%s" % (
            v["entry"], v.get("file"), v.get("precision"), v.get("in"), v["d"], v.get("capability"), v["br"],
            v["threads"], v.get("smem"), " (cuFuncSetAttribute)" if int(v.get("smem", 0)) > 48 * 1024 else ""))
        for m in MASKS:
            g, t, sm = variant_plan(v, SMALL["B"], SMALL["H"], SMALL["L"])
            print("  check %-12s B=2 H=3 L=70 S=90: grid %d x %d" % (m, g, t))
        for s in timing_shapes(v, a.quick):
            g, t, sm = variant_plan(v, s["B"], s["H"], s["L"])
            print("  time  %-32s grid %d x %d, %.1f GFLOP%s" % (
                shape_name(s), g, t, flops(s) / 1e9, " (+3 converter launches)" if v.get("in") != "f32" else ""))
    base = baseline_plan(a.quick)
    print("baselines: %d (%s)" % (len(base), ", ".join(sorted({"%s %s" % (p, b) for p, b, _ in base}))))
    for p in problems:
        print("PROBLEM " + p)
    n = len(table.get("variants", []))
    print("%s: %d variants, %d converters, %d problems" % (
        "dry run ok" if not problems else "DRY RUN FAILED", n, len(table.get("converters", [])), len(problems)))
    return 2 if problems else 0


def baseline_plan(quick):
    out = []
    for s in long_shapes(quick) + short_shapes():
        for b in ("default", "EFFICIENT"):
            out.append(("fp32", b, s))
        for p in ("bf16", "fp16"):
            for b in ("FLASH", "CUDNN", "EFFICIENT"):
                out.append((p, b, s))
    return out


# ---- the driver (ctypes, inside torch's context) ---------------------------------------------------------------------
class Driver:
    def __init__(self, torch):
        self.torch = torch
        self.cu = ctypes.CDLL("libcuda.so.1")
        cu = self.cu
        cu.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        cu.cuModuleLoadDataEx.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_uint,
                                          ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_void_p)]
        cu.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        cu.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        cu.cuModuleUnload.argtypes = [ctypes.c_void_p]
        self.context()
        self.modules, self.functions = {}, {}

    def context(self):
        """PyTorch's primary context, current on this thread."""
        self.torch.cuda.init()
        self.torch.zeros(1, device="cuda")
        ctx = ctypes.c_void_p()
        self.cu.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.check(self.cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise RuntimeError("no current CUDA context after torch.cuda.init()")

    def stream(self):
        """torch's current stream (its CUstream handle)."""
        return self.torch.cuda.current_stream().cuda_stream

    def check(self, st, what, log=None):
        if st != 0:
            name = ctypes.c_char_p()
            self.cu.cuGetErrorName(st, ctypes.byref(name))
            raise RuntimeError("%s failed: %s (%d)%s" % (what, (name.value or b"?").decode(), st,
                                                          ("; JIT log: " + log) if log else ""))

    def function(self, src, file, entry, smem=0):
        key = (file, entry)
        if key in self.functions:
            return self.functions[key]
        f = ptx_file(file)
        if f not in self.modules:
            text = src.read(f)
            if not text.endswith(b"\0"):
                text += b"\0"
            log = ctypes.create_string_buffer(8192)
            opts = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER, ..._SIZE_BYTES
            vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p).value, 8192)
            mod = ctypes.c_void_p()
            st = self.cu.cuModuleLoadDataEx(ctypes.byref(mod), text, 2, opts, vals)
            self.check(st, "cuModuleLoadDataEx(%s)" % f, log.value.decode(errors="replace").strip())
            self.modules[f] = mod
        fn = ctypes.c_void_p()
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(fn), self.modules[f], entry.encode()),
                   "cuModuleGetFunction(%s)" % entry)
        if smem > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.cu.cuFuncSetAttribute(fn, 8, int(smem)), "cuFuncSetAttribute(%s, %d)" % (entry, smem))
        self.functions[key] = fn
        return fn

    def launch(self, fn, grid, block, smem, types, args, what):
        vals = []
        for t, x in zip(types, args):
            vals.append(ctypes.c_uint64(int(x)) if t == "u64" else ctypes.c_float(float(x)) if t == "f32"
                        else ctypes.c_int32(int(x)))
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        stream = self.stream()
        self.check(self.cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, ctypes.c_void_p(stream), ptrs, None),
                   "cuLaunchKernel(%s, grid %d, block %d)" % (what, grid, block))

    def close(self):
        for m in self.modules.values():
            self.cu.cuModuleUnload(m)


# ---- the GPU sweep ---------------------------------------------------------------------------------------------------
def reference(torch, q, k, v, dead, add):
    """softmax(q k^T / sqrt(D) + add, keys where dead removed) v in float64; a row with every key removed gives 0."""
    sc = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1]) + add
    sc = sc.masked_fill(dead, float("-inf"))
    allm = torch.isinf(sc).all(-1, keepdim=True) & (sc < 0).all(-1, keepdim=True)
    p = torch.softmax(sc.masked_fill(allm, 0), -1).masked_fill(allm, 0)
    return p @ v.double()


def uniform(torch, shp):
    """q, k, v uniform in [-1, 1) on the GPU (seed 0), as the benches draw theirs."""
    g = torch.Generator(device=DEV).manual_seed(0)
    return tuple(torch.rand(*shp, generator=g, device=DEV).mul_(2).sub_(1) for _ in range(3))


def median_ms(torch, fn, warmup, runs, cap_s):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times, t0 = [], time.time()
    for i in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
        if i >= 4 and time.time() - t0 > cap_s:
            break
    times.sort()
    return times[len(times) // 2], len(times)


class Sweep:
    def __init__(self, a, src, table, params, torch, driver=None):
        self.a, self.src, self.table, self.params, self.torch = a, src, table, params, torch
        self.t0 = time.time()
        self.drv = driver or Driver(torch)
        self.errors = []

    def left(self):
        return self.a.budget_s - (time.time() - self.t0)

    def inputs16(self, v, q, k, v_):
        """q, k, v as the variant reads them: the fp32 tensors, or 16-bit copies made by the converter entry."""
        torch = self.torch
        if v["in"] == "f32":
            return (q, k, v_), None
        c = converter_for(self.table.get("converters", []), v["in"])
        fn = self.drv.function(self.src, c["file"], c["entry"], int(c.get("smem", 0)))
        outs = [torch.empty(t.numel(), dtype=torch.int16, device=t.device) for t in (q, k, v_)]

        def convert():
            for x, y in zip((q, k, v_), outs):
                g, t, sm = converter_plan(c, x.numel())
                self.drv.launch(fn, g, t, sm, CONVERTER_PARAMS, (x.data_ptr(), y.data_ptr(), x.numel()), c["entry"])

        convert()
        return tuple(outs), convert

    def attention(self, v, fn, qkv, o, s, causal, mask=0, mask_kind=0, sb=0, sh=0, kpm=0, kpm_kind=0):
        g, t, sm = variant_plan(v, s["B"], s["H"], s["L"])
        # as many K/V heads as query heads (HKV = H), no sliding window (both sides open)
        args = (qkv[0].data_ptr(), qkv[1].data_ptr(), qkv[2].data_ptr(), o.data_ptr(), s["B"], s["H"], s["H"], s["L"],
                s["S"], 1.0 / math.sqrt(s["D"]), int(causal), mask, mask_kind, sb, sh, kpm, kpm_kind, OPEN, OPEN)
        self.drv.launch(fn, g, t, sm, self.params, args, v["entry"])

    def check(self, v, fn):
        torch = self.torch
        s = dict(SMALL, D=int(v["d"]))
        B, H, L, S, D = s["B"], s["H"], s["L"], s["S"], s["D"]
        gen = torch.Generator(device="cpu").manual_seed(7)
        q, k, v_ = (torch.rand(B, H, n, D, generator=gen).mul_(2).sub_(1).to(DEV) for n in (L, S, S))
        qkv, _ = self.inputs16(v, q, k, v_)
        out = []
        for m in MASKS:
            o = torch.full((B, H, L, D), float("nan"), device=DEV)
            kw, causal = {}, m == "causal"
            dead = torch.zeros(B, H, L, S, dtype=torch.bool, device=DEV)
            add = torch.zeros(B, H, L, S, dtype=torch.float64, device=DEV)
            if causal:
                dead |= torch.ones(L, S, device=DEV).triu(1) > 0
            if m == "key padding":  # batch 0: the last 20 keys; batch 1: every key (its rows give zeros)
                kpm = torch.zeros(B, S, device=DEV)
                kpm[0, S - 20:] = 1
                kpm[1, :] = 1
                kw = dict(kpm=kpm.data_ptr(), kpm_kind=1)
                dead |= (kpm != 0)[:, None, None, :]
            if m == "additive":
                mask = torch.randn(B, H, L, S, generator=gen).mul_(2).to(DEV)
                mask[0, 0, :, :5] = float("-inf")
                kw = dict(mask=mask.data_ptr(), mask_kind=2, sb=H * L * S, sh=L * S)
                add = mask.double()
            self.attention(v, fn, qkv, o, s, causal, **kw)
            torch.cuda.synchronize()
            ref = reference(torch, q, k, v_, dead, add)
            err = float((o.double() - ref).norm() / ref.norm())
            if not math.isfinite(err):
                err = float("inf")
            bound = BOUNDS[v["precision"]]
            out.append({"mask": m, "rel_err": err, "bound": bound, "ok": err <= bound})
            print("  check %-12s rel err %.3e (bound %.0e) %s" % (m, err, bound, "ok" if err <= bound else "FAIL"),
                  flush=True)
        return out

    def time_variant(self, v, fn, s, cap_s):
        torch = self.torch
        shp = (s["B"], s["H"], s["L"], s["D"])
        q, k, v_ = uniform(torch, shp)
        qkv, convert = self.inputs16(v, q, k, v_)
        o = torch.empty(*shp, device=DEV)
        run = lambda: self.attention(v, fn, qkv, o, s, s["causal"])  # noqa: E731
        ms, n = median_ms(torch, run, 2, self.a.runs, cap_s)
        row = {"shape": shape_name(s), "tag": s["tag"], "causal": s["causal"], "D": s["D"], "ms": ms, "runs": n,
               "tflops": flops(s) / ms / 1e9}
        if convert is not None:
            both = lambda: (convert(), run())  # noqa: E731
            ms2, _ = median_ms(torch, both, 1, self.a.runs, cap_s)
            row.update(ms_with_convert=ms2, tflops_with_convert=flops(s) / ms2 / 1e9)
        del q, k, v_, qkv, o
        torch.cuda.empty_cache()
        return row

    def baselines(self, cap_s):
        torch = self.torch
        import torch.nn.functional as F

        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError:
            SDPBackend = sdpa_kernel = None
        out, inputs = [], {}
        for prec, backend, s in baseline_plan(self.a.quick):
            name = "SDPA %s %s" % (prec, backend)
            row = {"name": name, "precision": prec, "backend": backend, "shape": shape_name(s), "tag": s["tag"],
                   "causal": s["causal"], "D": s["D"]}
            if self.left() < 5:
                row["error"] = "skipped: the time budget was spent"
                out.append(row)
                continue
            try:
                dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[prec]
                shp = (s["B"], s["H"], s["L"], s["D"])
                if shp not in inputs:  # one fp32 set per shape (the last shape's freed first)
                    inputs.clear()
                    torch.cuda.empty_cache()
                    inputs[shp] = uniform(torch, shp)
                q, k, v = (x.to(dt) for x in inputs[shp])
                run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=s["causal"])  # noqa: E731
                with torch.inference_mode():
                    if backend == "default":
                        ms, n = median_ms(torch, run, 2, self.a.runs, cap_s)
                    else:
                        if sdpa_kernel is None:
                            raise RuntimeError("torch %s has no torch.nn.attention.sdpa_kernel" % torch.__version__)
                        be = {"FLASH": "FLASH_ATTENTION", "CUDNN": "CUDNN_ATTENTION",
                              "EFFICIENT": "EFFICIENT_ATTENTION"}[backend]
                        if not hasattr(SDPBackend, be):
                            raise RuntimeError("SDPBackend has no %s in torch %s" % (be, torch.__version__))
                        with sdpa_kernel(getattr(SDPBackend, be)):
                            ms, n = median_ms(torch, run, 2, self.a.runs, cap_s)
                row.update(ms=ms, runs=n, tflops=flops(s) / ms / 1e9)
                print("baseline %-26s %-34s %9.3f ms %7.1f TFLOP/s" % (name, shape_name(s), ms, row["tflops"]),
                      flush=True)
            except Exception as e:  # a missing backend is recorded, not fatal
                row["error"] = "%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or [""])[-1][:300])
                print("baseline %-26s %-34s unavailable: %s" % (name, shape_name(s), row["error"]), flush=True)
            finally:
                q = k = v = None
            out.append(row)
        inputs.clear()
        torch.cuda.empty_cache()
        return out


def run_gpu(a, src):
    import torch

    table, params, problems, _ = check_table(src)
    res = {"sources": src.where(), "problems": problems, "variants": [], "baselines": [], "cases": [], "winners": {},
           "errors": []}
    if not torch.cuda.is_available():
        res["errors"].append("torch.cuda is not available")
        return res, 1
    cc = torch.cuda.get_device_capability(0)
    cap = cc[0] * 10 + cc[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    env = {"gpu": torch.cuda.get_device_name(0), "capability": "%d.%d" % cc, "torch": torch.__version__,
           "torch_cuda": torch.version.cuda, "python": platform.python_version(), "host": platform.node()}
    try:
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        env["driver"] = "?"
    res["env"] = env
    print(json.dumps(env), flush=True)
    sw = Sweep(a, src, table, params, torch)
    skip = set(e for e in (a.skip or "").split(",") if e)
    variants = [v for v in table.get("variants", []) if all(k in v for k in ("entry", "file", "d", "br", "threads"))
                and v["entry"] not in skip]
    runnable = [v for v in variants if int(v.get("capability", 0)) <= cap]
    # PyTorch's baselines first (a faulting variant cannot take them with it), with at most a third of the budget;
    # the variants share what is left
    if not a.no_baselines:
        n_base = max(1, len(baseline_plan(a.quick)))
        res["baselines"] = sw.baselines(max(0.3, min(1.5, a.budget_s * 0.3 / n_base)))
    per_variant = max(4.0, sw.left() * 0.95 / max(1, len(runnable)))
    for v in variants:
        rec = {k: v.get(k) for k in ("entry", "file", "precision", "in", "d", "br", "threads", "smem", "capability")}
        res["variants"].append(rec)
        if int(v.get("capability", 0)) > cap:
            rec["status"] = "skipped (needs sm_%s, the GPU is sm_%d)" % (v["capability"], cap)
            continue
        if sw.left() < 10:
            rec["status"] = "skipped (time budget)"
            res["errors"].append("%s: skipped, the time budget was spent" % v["entry"])
            continue
        print("variant %s (%s, in %s, D=%s)" % (v["entry"], v["precision"], v["in"], v["d"]), flush=True)
        t_v = time.time()
        try:
            fn = sw.drv.function(src, v["file"], v["entry"], int(v.get("smem", 0)))
            rec["correctness"] = sw.check(v, fn)
            rec["timings"] = []
            shapes = timing_shapes(v, a.quick)
            for s in shapes:
                cap_s = max(0.5, (per_variant - (time.time() - t_v)) / max(1, len(shapes) - len(rec["timings"])) / 2)
                if sw.left() < 8 or time.time() - t_v > per_variant * 1.5:
                    rec["timings"].append({"shape": shape_name(s), "error": "skipped: time budget"})
                    continue
                row = sw.time_variant(v, fn, s, cap_s)
                rec["timings"].append(row)
                print("  time  %-34s %9.3f ms %7.1f TFLOP/s%s" % (
                    row["shape"], row["ms"], row["tflops"],
                    "; with converters %.3f ms" % row["ms_with_convert"] if "ms_with_convert" in row else ""),
                    flush=True)
            rec["status"] = "ok" if all(c["ok"] for c in rec["correctness"]) else "failed (correctness)"
        except Exception as e:  # the next variant runs
            rec["status"] = "failed (%s: %s)" % (type(e).__name__, (str(e).strip().splitlines() or [""])[0][:300])
            res["errors"].append("%s: %s" % (v["entry"], rec["status"]))
            print("  " + rec["status"], flush=True)
            try:
                torch.cuda.synchronize()
            except Exception as e2:  # a kernel fault poisons the context: the parent goes on in a fresh process
                res["errors"].append("the CUDA context is unusable after %s: %s" % (v["entry"], e2))
                res["poisoned"] = v["entry"]
                rec["seconds"] = round(time.time() - t_v, 1)
                break
        rec["seconds"] = round(time.time() - t_v, 1)
    finish(res)
    if "poisoned" not in res:
        sw.drv.close()
    bad = problems or res["errors"] or any(r.get("status", "ok") != "ok" and not r["status"].startswith("skipped (needs")
                                            for r in res["variants"])
    return res, 1 if bad else 0


def finish(res):
    """ratios, cases and winners from the variants' and the baselines' rows."""
    base = {(b["name"], b["shape"]): b.get("ms") for b in res["baselines"]}
    best = {}
    for rec in res["variants"]:
        for t in rec.get("timings", []):
            if "ms" not in t:
                continue
            bname = BASELINE_OF[rec["precision"]]
            tm = base.get((bname, t["shape"]))
            if tm:
                t.update(baseline=bname, torch_ms=tm, ratio=tm / t["ms"])
                if "ms_with_convert" in t:
                    t["ratio_with_convert"] = tm / t["ms_with_convert"]
            label = "attention D=%d%s %s%s [%s, sweep]" % (
                t["D"], " causal" if t["causal"] else "", rec["precision"],
                "" if t["tag"] == "long" else " B=64 L=128", rec["entry"])
            res["cases"].append({"name": label, "attn_ms": t["ms"], "torch_ms": tm, "ratio": t.get("ratio")})
            if "ms_with_convert" in t:
                res["cases"].append({"name": label.replace(", sweep]", ", sweep, with converters]"),
                                     "attn_ms": t["ms_with_convert"], "torch_ms": tm,
                                     "ratio": t.get("ratio_with_convert")})
        if rec.get("status") == "ok":
            long_ms = [t.get("ms_with_convert", t["ms"]) for t in rec.get("timings", []) if t.get("tag") == "long"]
            if long_ms and len(long_ms) == sum(1 for t in rec["timings"] if t.get("tag") == "long"):
                key = "%s D=%s" % (rec["precision"], rec["d"])
                if key not in best or sum(long_ms) < best[key][0]:
                    best[key] = (sum(long_ms), rec["entry"])
    res["winners"] = {k: v[1] for k, v in sorted(best.items())}
    print("winners: %s" % json.dumps(res["winners"]), flush=True)


def run_children(a, t0, tries=4):
    """Runs the sweep in child processes: a kernel fault (illegal address, ...) leaves a CUDA context unusable, so
    after one the next child goes on with the variants not yet run (the faulting one recorded as failed)."""
    res, rc, done = None, 0, []
    for i in range(tries):
        left = a.budget_s - (time.time() - t0)
        if left < 15:
            break
        part = "%s.part%d" % (a.out, i)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--out", part, "--budget-s", "%.0f" % (left - 5),
               "--runs", str(a.runs)]
        cmd += ["--ptx-dir", a.ptx_dir] if a.ptx_dir else []
        cmd += ["--quick"] if a.quick else []
        skip = [e for e in (a.skip or "").split(",") if e] + done
        cmd += ["--skip", ",".join(skip)] if skip else []
        cmd += ["--no-baselines"] if i > 0 else []
        p = subprocess.run(cmd)
        try:
            with open(part) as f:
                r = json.load(f)
            os.remove(part)
        except (OSError, ValueError) as e:
            r = {"errors": ["child %d wrote no results (exit %d): %s" % (i, p.returncode, e)], "cases": [],
                 "winners": {}}
        rc = max(rc, p.returncode)
        if res is None:
            res = r
        else:
            res["variants"] = res.get("variants", []) + r.get("variants", [])
            res["errors"] = res.get("errors", []) + r.get("errors", [])
        done += [v["entry"] for v in r.get("variants", []) if "status" in v or "seconds" in v]
        if "poisoned" not in r:
            break
        res.pop("poisoned", None)
        res.setdefault("poisoned_by", []).append(r["poisoned"])
        print("gpu_sweep: %s left the CUDA context unusable; the rest run in a fresh process" % r["poisoned"],
              flush=True)
    if res is None:
        return {"errors": ["no child ran (budget)"], "cases": [], "winners": {}}, 1
    if "baselines" in res:
        res["cases"], res["winners"] = [], {}
        finish(res)
    return res, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="sweep.json")
    ap.add_argument("--budget-s", type=float, default=150)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--ptx-dir", help="folder holding the *.ptx files and attention_variants.json")
    ap.add_argument("--quick", action="store_true", help="L=1024 instead of 4096 for the long shapes")
    ap.add_argument("--dry-run", action="store_true", help="no GPU, no torch: check the JSON against the PTX")
    ap.add_argument("--skip", help="comma-separated variant entries not to run")
    ap.add_argument("--no-baselines", action="store_true", help="skip PyTorch's baselines")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    try:
        src = Sources(a.ptx_dir)
    except FileNotFoundError as e:
        print("gpu_sweep: %s" % e, file=sys.stderr)
        sys.exit(2)
    if a.dry_run:
        sys.exit(dry_run(a, src))
    t0 = time.time()
    if not a.child:
        res, rc = run_children(a, t0)
    else:
        try:
            res, rc = run_gpu(a, src)
        except Exception as e:  # no torch, no driver: one JSON saying so
            res, rc = {"errors": ["%s: %s" % (type(e).__name__, str(e).strip()[-500:])], "cases": [], "winners": {}}, 1
            print("gpu_sweep: " + res["errors"][0], file=sys.stderr)
    res["seconds"] = round(time.time() - t0, 1)
    res["budget_s"] = a.budget_s
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote %s (%d variants, %d cases, %d errors, %.0f s)" % (
        a.out, len(res.get("variants", [])), len(res["cases"]), len(res["errors"]), res["seconds"]))
    sys.exit(rc)


if __name__ == "__main__":
    main()
