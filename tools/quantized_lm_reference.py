#!/usr/bin/env python3
"""The judge of `attn quantize` on `attn generate`'s language models (DecoderOnlyLM): checks a quantized file and
writes the logits PyTorch computes with it (needs torch, safetensors and onnxruntime; attn does not).

    python3 tools/quantized_lm_reference.py random OUT.safetensors          # a seeded random LM to quantize (step 1)
    python3 tools/quantized_lm_reference.py golden FLOAT.safetensors Q.safetensors OUT.json   # (step 2)

Step 2 checks every int8 tensor of Q (written by `attn quantize FLOAT --out Q [--per-channel]`) bitwise against
ONNX Runtime's own `quant_utils.quantize_data` of FLOAT's weight (int8 symmetric projections, per tensor or per
output; uint8 asymmetric embedding tables, stored less 128), then runs Q in PyTorch float32 by full recomputation,
every projection an exact integer product: each token's activations quantized on their own (uint8, ONNX Runtime's
DynamicQuantizeLinear arithmetic: the range holds 0, scale = (max - min) / 255, zero point and values rounded half to
even, saturated), the int32 sum of (q - zero) * w, times (activation scale * weight scale), plus the bias.
OUT.json holds, for three prompts and a fixed continuation of each, the logits that follow every prefix from the
prompt on, and each prompt's greedy continuation (the tests: QuantizedLanguageModelTest).
"""

import json
import math
import os
import sys

import numpy as np
import torch
from onnx import TensorProto
from onnxruntime.quantization import quant_utils
from safetensors.numpy import load_file
from safetensors import safe_open

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decoder_only_lm import DecoderOnlyLM, sinusoidal_table  # noqa: E402
from export_torch import export  # noqa: E402

PROMPTS = [[1, 3, 9, 14, 7], [1], [1, 20, 11]]
STEPS = 6


def config_of(path):
    with safe_open(path, "np") as f:
        return json.loads(f.metadata()["config"])


def random_lm(out):
    torch.manual_seed(1234)
    lm = DecoderOnlyLM(vocab_size=40, d_model=32, nhead=4, num_layers=2, dim_feedforward=64, max_len=32,
                       positional="learned", norm_first=False, activation="relu", tied_embeddings=False)
    with torch.no_grad():  # larger weights than the default init: logits that spread, so flips show
        for p in lm.parameters():
            p.mul_(2.0)
    export(lm.eval(), out)


def check_weights(fl, q, cfg, qcfg):
    block = qcfg["quantization_config"]
    per_channel, reduce = block["per_channel"], block["reduce_range"]
    linears = ["lm_head.weight"]
    for i in range(cfg["num_layers"]):
        linears += [f"layers.{i}.self_attn.in_proj_weight", f"layers.{i}.self_attn.out_proj.weight",
                    f"layers.{i}.linear1.weight", f"layers.{i}.linear2.weight"]
    tables = ["embed.weight"] + (["pos.weight"] if cfg.get("positional") == "learned" else [])
    for name in linears:
        w = fl.get(name, fl["embed.weight"] if name == "lm_head.weight" else None).T.copy()  # (in, out), as ONNX
        cols = [w[:, c] for c in range(w.shape[1])] if per_channel else [w]
        got = q[name]
        for c, data in enumerate(cols):
            zp, scale, qd = quant_utils.quantize_data(data.reshape(-1), TensorProto.INT8, True, reduce)
            g = got[:, c] if per_channel else got.reshape(-1)
            assert np.array_equal(g.reshape(-1), np.asarray(qd).reshape(-1)), f"{name}: int8 values differ from ONNX Runtime"
            assert np.float32(q[name + "_scale"][c]) == np.float32(scale), f"{name}: scale differs from ONNX Runtime"
            assert int(q[name + "_zero_point"][c]) == int(zp) == 0, f"{name}: zero point"
    for name in tables:
        zp, scale, qd = quant_utils.quantize_data(fl[name].reshape(-1), TensorProto.UINT8, False)
        assert np.array_equal(q[name].astype(np.int32).reshape(-1) + 128, np.asarray(qd).astype(np.int32)), name
        assert np.float32(q[name + "_scale"][0]) == np.float32(scale), name
        assert int(q[name + "_zero_point"][0]) + 128 == int(zp), name
    return linears, tables


def qlinear(x, q, name, bias):
    """x (..., K) float32 -> (..., N): each row quantized on its own, the exact integer product, then the scales."""
    w = torch.from_numpy(q[name].astype(np.int64))  # (K, N)
    ws = torch.from_numpy(q[name + "_scale"].astype(np.float32))
    wz = torch.from_numpy(q[name + "_zero_point"].astype(np.int64))
    rows = x.reshape(-1, x.shape[-1]).to(torch.float32)
    rmin = torch.clamp(rows.min(dim=1, keepdim=True).values, max=0.0)
    rmax = torch.clamp(rows.max(dim=1, keepdim=True).values, min=0.0)
    scale = (rmax - rmin) / np.float32(255.0)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    zero = torch.clamp(torch.round(0.0 - rmin / scale), 0, 255)
    xq = torch.clamp(torch.round(rows / scale) + zero, 0, 255).to(torch.int64) - zero.to(torch.int64)
    acc = xq @ (w - wz)  # exact: int64
    y = acc.to(torch.float32) * (scale * ws)
    if bias is not None:
        y = y + bias
    return y.reshape(*x.shape[:-1], -1)


def table(q, name, ids):
    t = (q[name].astype(np.float32) - np.float32(int(q[name + "_zero_point"][0]))) * q[name + "_scale"][0]
    return torch.from_numpy(t.astype(np.float32))[ids]


def forward(q, cfg, ids):
    """ids (L,) -> logits (L, V), full recomputation."""
    e, h = cfg["d_model"], cfg["nhead"]
    d = e // h
    n = len(ids)
    t = lambda k: torch.from_numpy(q[k]) if k in q else None  # noqa: E731
    ids = torch.tensor(ids)
    pos = table(q, "pos.weight", torch.arange(n)) if cfg.get("positional") == "learned" else \
        sinusoidal_table(cfg["max_len"], e)[:n]
    x = table(q, "embed.weight", ids) + pos
    eps = cfg.get("layer_norm_eps", 1e-5)
    act = torch.nn.functional.gelu if cfg.get("activation") == "gelu" else torch.relu
    mask = torch.full((n, n), float("-inf")).triu(1)

    def ln(y, p):
        return torch.nn.functional.layer_norm(y, (e,), t(p + ".weight"), t(p + ".bias"), eps)

    for i in range(cfg["num_layers"]):
        p = f"layers.{i}."

        def sa(y):
            qkv = qlinear(y, q, p + "self_attn.in_proj_weight", t(p + "self_attn.in_proj_bias"))
            qh, kh, vh = (qkv[:, j * e:(j + 1) * e].reshape(n, h, d).transpose(0, 1) for j in range(3))
            a = torch.softmax(qh @ kh.transpose(1, 2) / math.sqrt(d) + mask, dim=-1) @ vh
            return qlinear(a.transpose(0, 1).reshape(n, e), q, p + "self_attn.out_proj.weight",
                           t(p + "self_attn.out_proj.bias"))

        def ff(y):
            return qlinear(act(qlinear(y, q, p + "linear1.weight", t(p + "linear1.bias"))), q, p + "linear2.weight",
                           t(p + "linear2.bias"))

        if cfg.get("norm_first"):
            x = x + sa(ln(x, p + "norm1"))
            x = x + ff(ln(x, p + "norm2"))
        else:
            x = ln(x + sa(x), p + "norm1")
            x = ln(x + ff(x), p + "norm2")
    if cfg.get("final_norm", True):
        x = ln(x, "norm")
    return qlinear(x, q, "lm_head.weight", t("lm_head.bias"))


def golden(float_path, q_path, out):
    cfg, qcfg = config_of(float_path), config_of(q_path)
    fl, q = load_file(float_path), load_file(q_path)
    linears, tables = check_weights(fl, q, cfg, qcfg)
    assert qcfg["quantization_config"]["activations"] == "uint8_dynamic_per_token"
    v = cfg["vocab_size"]
    cases = []
    with torch.no_grad():
        for s, prompt in enumerate(PROMPTS):
            prompt = [i % v for i in prompt]
            seq, logits = list(prompt), []
            for step in range(STEPS + 1):
                logits.append([float(z) for z in forward(q, cfg, seq)[-1]])
                seq.append((step * 7 + s * 5 + 3) % v)  # fixed tokens, as DecoderOnlyTest
            greedy = list(prompt)
            for _ in range(STEPS):
                greedy.append(int(forward(q, cfg, greedy)[-1].argmax()))
            cases.append({"prompt": prompt, "continuation": seq[len(prompt):len(prompt) + STEPS],
                          "logits": logits, "greedy": greedy[len(prompt):]})
    with open(out, "w") as f:
        json.dump({"float": os.path.basename(float_path), "quantized": os.path.basename(q_path),
                   "checked_int8_tensors": len(linears) + len(tables), "steps": STEPS, "cases": cases}, f)
        f.write("\n")
    print(f"{q_path}: {len(linears) + len(tables)} int8 tensors equal ONNX Runtime's quantize_data; wrote {out}")


if __name__ == "__main__":
    if sys.argv[1] == "random":
        random_lm(sys.argv[2])
    else:
        golden(sys.argv[2], sys.argv[3], sys.argv[4])
