#!/usr/bin/env python3
"""Writes tests/transformers-ops: inputs and Hugging Face transformers' float32 outputs of the rotary embedding
(rotate-half, full and partial rotary, thetas 1e4 / 1.6e5 / 1e6, positions up to 16383, left-padded position ids,
rope scaling linear and llama3),
RMSNorm (LlamaRMSNorm, torch.nn.RMSNorm) and the gated feed-forward activations (SwiGLU / GeGLU, either half
activated), for the engine's ROPE, RMS_NORM and GLU ops (tests' TransformersOpsTest; no Python needed to run it).

    /work/venv-hf/bin/python tools/ops_transformers.py --out tests/transformers-ops

Deterministic (seeded); index.json names the versions and each case's settings, ops.npz holds the arrays.
"""
import argparse
import json
import os

import numpy as np
import torch
import transformers
from transformers.activations import ACT2FN
from transformers.models.gpt_neox.configuration_gpt_neox import GPTNeoXConfig
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb
from transformers.models.llama.configuration_llama import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRMSNorm, LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply


def rope_case(name, b, h, d, theta, factor, positions, arrays, cases, gen, scaling=None):
    positions = torch.tensor(positions, dtype=torch.int64)
    l = positions.shape[1]
    x = torch.randn(b, h, l, d, generator=gen, dtype=torch.float32)
    if scaling is not None:  # rope scaling (rope_type linear / llama3): Llama's classes
        cfg = LlamaConfig(hidden_size=h * d, num_attention_heads=h, head_dim=d,
                          rope_parameters=dict(scaling, rope_theta=theta), max_position_embeddings=131072)
        assert cfg.rope_parameters["rope_type"] == scaling["rope_type"], cfg.rope_parameters
        emb = LlamaRotaryEmbedding(cfg)
        assert emb.attention_scaling == 1.0, emb.attention_scaling
        cos, sin = emb(x, positions)
        out, _ = llama_apply(x, x, cos, sin)
    elif factor == 1.0:  # Llama's own classes
        cfg = LlamaConfig(hidden_size=h * d, num_attention_heads=h, head_dim=d, rope_theta=theta)
        emb = LlamaRotaryEmbedding(cfg)
        cos, sin = emb(x, positions)
        out, _ = llama_apply(x, x, cos, sin)
    else:  # a family with partial rotary (partial_rotary_factor, rotary_pct): GPT-NeoX's classes
        cfg = GPTNeoXConfig(hidden_size=h * d, num_attention_heads=h, rope_parameters={
            "rope_type": "default", "rope_theta": theta, "partial_rotary_factor": factor})
        emb = GPTNeoXRotaryEmbedding(cfg)
        cos, sin = emb(x, positions)
        out, _ = apply_rotary_pos_emb(x, x, cos, sin)
    rd = cos.shape[-1]
    assert cfg.rope_parameters["rope_theta"] == theta, cfg.rope_parameters  # what transformers used, not a default
    arrays[name + ".x"] = x.numpy()
    arrays[name + ".positions"] = positions.numpy().astype(np.float32)
    arrays[name + ".inv_freq"] = emb.inv_freq.numpy()
    arrays[name + ".out"] = out.detach().numpy()
    case = {"name": name, "op": "rope", "theta": theta, "rotary_dim": int(rd), "head_dim": d,
            "classes": "Llama" if factor == 1.0 else "GPT-NeoX (partial_rotary_factor %g)" % factor}
    if scaling is not None:
        case["scaling"] = scaling
    cases.append(case)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(35)
    arrays, cases = {}, []
    r = lambda lo, n: [list(range(lo, lo + n))]
    rope_case("rope_llama_theta1e4_d64", 1, 2, 64, 10000.0, 1.0, r(0, 12), arrays, cases, gen)
    rope_case("rope_llama_theta1e6_d128_far", 1, 2, 128, 1e6, 1.0, r(8180, 12), arrays, cases, gen)
    rope_case("rope_llama_theta160000_d64_far", 1, 3, 64, 160000.0, 1.0, r(16372, 12), arrays, cases, gen)
    rope_case("rope_llama_theta1e6_leftpad", 3, 2, 64, 1e6, 1.0,
              [[0, 1, 2, 3, 4, 5], [1, 1, 1, 0, 1, 2], [1, 1, 0, 1, 2, 3]], arrays, cases, gen)
    rope_case("rope_partial_half_theta160000", 2, 2, 64, 160000.0, 0.5, [list(range(4000, 4005))] * 2, arrays,
              cases, gen)
    rope_case("rope_partial_quarter_theta1e4_d96", 1, 2, 96, 10000.0, 0.25, r(100, 7), arrays, cases, gen)
    rope_case("rope_partial_half_theta1e6_d80", 1, 1, 80, 1e6, 0.5, r(0, 9), arrays, cases, gen)
    # a rotary dim that is not a power of two (40: the exponents 2i/40 round in float32) at far positions
    rope_case("rope_partial_half_theta1e6_d80_far", 1, 2, 80, 1e6, 0.5, r(8180, 12), arrays, cases, gen)
    rope_case("rope_llama_theta1e6_d80_far", 1, 2, 80, 1e6, 1.0, r(16370, 14), arrays, cases, gen)

    # RMSNorm: LlamaRMSNorm (float32 inside) and torch.nn.RMSNorm, random weights
    for name, cls, shape, eps in [("rmsnorm_llama", "LlamaRMSNorm", (3, 65), 1e-6),
                                  ("rmsnorm_torch", "torch.nn.RMSNorm", (2, 4, 128), 1e-5)]:
        x = torch.randn(*shape, generator=gen)
        m = LlamaRMSNorm(shape[-1], eps=eps) if cls == "LlamaRMSNorm" else torch.nn.RMSNorm(shape[-1], eps=eps)
        with torch.no_grad():
            m.weight.copy_(torch.randn(shape[-1], generator=gen))
        arrays[name + ".x"] = x.numpy()
        arrays[name + ".weight"] = m.weight.detach().numpy()
        arrays[name + ".out"] = m(x).detach().numpy()
        cases.append({"name": name, "op": "rms_norm", "eps": eps, "classes": cls})

    # gated FFN activations: ModernBERT's chunk (act on the first half), GTE's split (act on the second)
    for act in ["silu", "gelu", "gelu_pytorch_tanh"]:
        for first in [True, False]:
            name = "glu_%s_%s" % (act, "first" if first else "second")
            x = 2 * torch.randn(2, 5, 2 * 48, generator=gen)
            u, v = x.chunk(2, dim=-1)
            out = ACT2FN[act](u) * v if first else u * ACT2FN[act](v)
            arrays[name + ".x"] = x.numpy()
            arrays[name + ".out"] = out.numpy()
            cases.append({"name": name, "op": "glu", "act": act, "activated_first": first})

    # rope scaling (issue 35: Llama 3.1+ configs carry rope_type llama3), after the cases above so that their inputs
    # keep their bytes: Llama 3.1's and 3.2's settings at near and far positions (several frequencies in the blended
    # band), a small original context that puts most of a 64-dim head's frequencies in the band, and linear scaling
    l31 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 8192}
    rope_case("rope_llama3_31_theta500000_d128", 1, 2, 128, 500000.0, 1.0, r(0, 12), arrays, cases, gen, l31)
    rope_case("rope_llama3_31_theta500000_d128_far", 2, 2, 128, 500000.0, 1.0, [list(range(16360, 16372))] * 2,
              arrays, cases, gen, l31)
    rope_case("rope_llama3_32_theta500000_d64_leftpad", 2, 2, 64, 500000.0, 1.0,
              [[0, 1, 2, 3, 4, 5], [1, 1, 0, 1, 2, 3]], arrays, cases, gen, dict(l31, factor=32.0))
    rope_case("rope_llama3_small_context_theta10000_d64", 1, 2, 64, 10000.0, 1.0, r(500, 9), arrays, cases, gen,
              {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 8.0,
               "original_max_position_embeddings": 256})
    rope_case("rope_linear_factor4_theta10000_d64", 1, 2, 64, 10000.0, 1.0, r(1000, 9), arrays, cases, gen,
              {"rope_type": "linear", "factor": 4.0})
    rope_case("rope_linear_factor2_5_theta1e6_d80", 1, 2, 80, 1e6, 1.0, r(8000, 7), arrays, cases, gen,
              {"rope_type": "linear", "factor": 2.5})

    np.savez(os.path.join(a.out, "ops.npz"), **arrays)
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                   "written_by": "tools/ops_transformers.py", "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
