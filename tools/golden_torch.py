#!/usr/bin/env python3
"""Golden cases from PyTorch for attn's attention layers (run on a host with torch; not needed by the Java build).

Usage:
    python3 tools/golden_torch.py [--out golden] [--seed 1234] [--only SUBSTRING]

Runs on torch 1.13 and later (checked on 1.13, Debian's python3-torch) with numpy; uses the ``safetensors`` package
when installed, else writes the file by hand (same format). Everything runs on CPU with dropout 0 and the modules in
training mode: with dropout 0 that is eval mode's arithmetic, and it keeps PyTorch on its plain math path on every
version (the MHA / encoder fast paths and nested tensors are eval-only; torch.backends.mha.set_fastpath_enabled, where
it exists, is switched off too). Where an older torch lacks a feature the case needs, it is written out with torch's
own ops and the case says so (``"computed_with"``): ``F.scaled_dot_product_attention`` (torch 2.0; its ``scale``
argument 2.1) as ``softmax(q k^T * scale + mask) v``, the layers' ``bias=False`` (2.1) by removing the biases of a
``bias=True`` module. The ``is_causal`` hints (2.0 / 2.1) are passed where the forward takes them; the explicit causal
mask they describe always is, so every version computes the same thing.

Output layout, one folder per case::

    <out>/index.json                 {"torch": version, "seed": ..., "cases": [{"name": ..., "config": {...}}, ...]}
    <out>/<case>/model.safetensors   the module's state_dict() as F32 (PyTorch names); __metadata__["config"] is a
                                     JSON string: the constructor arguments plus "module" (e.g. {"module":
                                     "MultiheadAttention", "embed_dim": 16, "num_heads": 4, "bias": true, ...}),
                                     "forward" (the keyword arguments of the call) and "inputs"/"outputs" (names).
                                     SDPA cases have no parameters: the file holds only the metadata.
    <out>/<case>/in.<name>.npy       float32 inputs, in the module's layout ((B, L, E) with batch_first=True,
                                     (L, B, E) with batch_first=False).
    <out>/<case>/out.<name>.npy      float64 outputs: the module converted to float64 (.double()) run on the same
                                     float32 weights and inputs widened to float64 -- the oracle for a double
                                     reference (agreement to ~1e-12 expected).
    <out>/<case>/out32.<name>.npy    float32 outputs of the float32 module (PyTorch's own float32 result).

Mask convention in the .npy files (the engine's, see io.attn.graph.MaskSpec): a boolean mask is stored as float32
0/1 where 1 = MASKED OUT; "forward" says "bool" or "float" per mask; float masks are added to the scores (may hold
-inf), key-padding masks included, as PyTorch adds a float key_padding_mask. Careful: F.scaled_dot_product_attention
reads a bool mask the other way round (True = attend), so the SDPA cases pass the inverted mask to torch but store the
masked-out convention. Key-padding masks are (B, S), 1 = padding. No case masks a whole query row (PyTorch gives NaN
there; the engine gives zeros). For is_causal cases the explicit causal mask (float -inf above the diagonal) is passed
too, as PyTorch's modules require, and stored as in.<mask>.npy. Mask types are combined only where every torch
version agrees (torch 1.13 reads a float key-padding mask beside a bool attention mask as bool).

Outputs: MHA cases write "output" and "weights" ((B,L,S) averaged or (B,H,L,S) per head, batch-first in either
layout, as PyTorch returns them); SDPA cases write "output" only (PyTorch's SDPA does not return weights);
layer/stack/Transformer cases write "output".
"""

import argparse
import copy
import inspect
import json
import math
import os
import struct
import traceback
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decoder_only_lm import with_bias  # noqa: E402  (bias=False on every torch version)


# ----------------------------------------------------------------------------------------------------------- files

def write_safetensors(path, tensors, metadata):
    """Writes {name: torch.Tensor} as F32 safetensors with string metadata (package if present, else by hand)."""
    tensors = {k: v.detach().to(torch.float32).contiguous().cpu() for k, v in tensors.items()}
    if tensors:  # (the hand-written path also covers parameterless SDPA cases)
        try:
            from safetensors.torch import save_file
            save_file(tensors, path, metadata=metadata)
            return
        except ImportError:
            pass
    # Format: u64 little-endian header length N, N bytes of JSON header (padded with spaces to a multiple of 8),
    # then the raw little-endian tensor bytes; data_offsets are [begin, end) relative to the start of the data.
    header = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, t in tensors.items():
        b = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def save_case(out_dir, name, config, state_dict, inputs, outputs64, outputs32, index):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    config = dict(config, inputs=list(inputs), outputs=list(outputs64))
    write_safetensors(os.path.join(d, "model.safetensors"), state_dict, {"config": json.dumps(config)})
    for k, v in inputs.items():
        np.save(os.path.join(d, "in.%s.npy" % k), v.detach().cpu().numpy().astype(np.float32))
    for k, v in outputs64.items():
        np.save(os.path.join(d, "out.%s.npy" % k), v.detach().cpu().numpy().astype(np.float64))
    for k, v in outputs32.items():
        np.save(os.path.join(d, "out32.%s.npy" % k), v.detach().cpu().numpy().astype(np.float32))
    index.append({"name": name, "config": config})
    print("wrote", d)


# --------------------------------------------------------------------------------------------------------- helpers

def randomize(module):
    """Non-trivial values for parameters PyTorch initialises to constants (LayerNorm 1/0, MHA biases 0)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.9, 1.1)
                if m.bias is not None:
                    m.bias.uniform_(-0.1, 0.1)
            elif isinstance(m, nn.MultiheadAttention):
                if m.in_proj_bias is not None:
                    m.in_proj_bias.uniform_(-0.1, 0.1)
                if m.out_proj.bias is not None:
                    m.out_proj.bias.uniform_(-0.1, 0.1)
    return module.train()  # dropout is 0: the math of eval mode, never a fast path


def run_both(module, call):
    """call(module, cast) -> dict of outputs; runs the float32 module and a float64 copy on widened inputs."""
    with torch.no_grad():
        out32 = call(module, lambda t: t)
        m64 = copy.deepcopy(module).double().train() if module is not None else None
        out64 = call(m64, lambda t: t.double() if t is not None and t.is_floating_point() else t)
    return out64, out32


def takes(fn, **kwargs):
    """The keyword arguments that fn (a forward or constructor) has: the is_causal hints are 2.0/2.1 additions."""
    params = inspect.signature(fn).parameters
    return {k: v for k, v in kwargs.items() if k in params}


def make(cls, **kw):
    """cls(**kw); "bias" is passed where the constructor has it, else applied by removing the biases."""
    bias = kw.pop("bias", True)
    return with_bias(cls, bias, **kw)


def computed_with(cls):
    return "torch" if "bias" in inspect.signature(cls.__init__).parameters else "torch (biases removed: torch < 2.1)"


def padding_mask(b, s):
    """(B,S) bool, batch i pads its last i positions (never all of them): True = padding."""
    m = torch.zeros(b, s, dtype=torch.bool)
    for i in range(b):
        if i:
            m[i, s - min(i, s - 1):] = True
    return m


def float_padding(b, s):
    """(B,S) float, added to the scores: random values, and -inf at the positions padding_mask pads."""
    return torch.randn(b, s).masked_fill(padding_mask(b, s), float("-inf"))


def random_bool_mask(*shape, p=0.3):
    """Random bool mask, True = masked out, key column 0 always kept so no row is fully masked."""
    m = torch.rand(*shape) < p
    m[..., 0] = False
    return m


def causal_float(n, s=None):
    """(n, s) float: -inf above the diagonal (nn.Transformer.generate_square_subsequent_mask for s = n)."""
    return torch.full((n, n if s is None else s), float("-inf")).triu(1)


def as_float(mask):
    return None if mask is None else mask.to(torch.float32)


def mask_kind(mask):
    return None if mask is None else ("bool" if mask.dtype == torch.bool else "float")


def seq_first(x):
    """(B, L, E) -> (L, B, E): an input as a batch_first=False module takes it."""
    return x.transpose(0, 1).contiguous()


# ----------------------------------------------------------------------------------------------------------- cases

def mha_cases(out, index):
    specs = [
        # name, E, H, bias, batch_first, B, L, S, self-attention, kpm kind, attn mask kind, causal, average
        ("mha_cross_avg", 16, 4, True, True, 2, 5, 7, False, None, None, False, True),
        ("mha_cross_perhead_nobias", 16, 4, False, True, 2, 5, 7, False, None, None, False, False),
        ("mha_self_kpm_boolmask", 16, 2, True, True, 3, 6, 6, True, "bool", "bool2d", False, True),
        ("mha_cross_floatmask3d", 8, 2, True, True, 2, 4, 5, False, None, "float3d", False, False),
        ("mha_self_causal", 16, 4, True, True, 2, 6, 6, True, None, "causal", True, False),
        ("mha_cross_floatkpm", 16, 4, True, True, 3, 4, 6, False, "float", None, False, True),
        ("mha_seqfirst_cross_kpm_boolmask", 16, 4, True, False, 2, 5, 7, False, "bool", "bool2d", False, False),
        ("mha_seqfirst_self_floatkpm", 12, 3, True, False, 3, 6, 6, True, "float", None, False, True),
    ]
    for name, e, h, bias, bf, b, l, s, self_attn, kpm, mk, causal, avg in specs:
        m = randomize(nn.MultiheadAttention(e, h, dropout=0.0, bias=bias, batch_first=bf))
        q = torch.randn(b, l, e)
        kv = q if self_attn else torch.randn(b, s, e)
        v = q if self_attn else torch.randn(b, s, e)
        if not bf:
            q, kv, v = seq_first(q), seq_first(kv), seq_first(v)
        kpm_t = padding_mask(b, s) if kpm == "bool" else float_padding(b, s) if kpm == "float" else None
        if mk == "bool2d":
            am = random_bool_mask(l, s)
        elif mk == "float3d":
            am = torch.randn(b * h, l, s)
        elif mk == "causal":
            am = causal_float(l)
        else:
            am = None
        fwd = dict(need_weights=True, average_attn_weights=avg, is_causal=causal,
                   attn_mask=mask_kind(am), key_padding_mask=mask_kind(kpm_t))

        def call(mod, c):
            o, w = mod(c(q), c(kv), c(v), key_padding_mask=None if kpm_t is None else c(kpm_t), need_weights=True,
                       attn_mask=c(am) if am is not None else None, average_attn_weights=avg,
                       **takes(mod.forward, is_causal=causal))
            return {"output": o, "weights": w}

        o64, o32 = run_both(m, call)
        inputs = {"query": q, "key": kv, "value": v}
        if kpm_t is not None:
            inputs["key_padding_mask"] = as_float(kpm_t)
        if am is not None:
            inputs["attn_mask"] = as_float(am)
        cfg = dict(module="MultiheadAttention", embed_dim=e, num_heads=h, bias=bias, batch_first=bf, dropout=0.0,
                   forward=fwd)
        save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


def sdpa_math(q, k, v, attn_mask, is_causal, scale):
    """F.scaled_dot_product_attention's math path written out (torch < 2.0, or < 2.1 with a scale)."""
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.size(-1)) if scale is None else scale)
    if is_causal:
        scores = scores.masked_fill(torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).triu(1), float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    return torch.softmax(scores, dim=-1) @ v


def sdpa_cases(out, index):
    specs = [
        # name, B, H, L, S, D, Dv, mask kind, causal, scale
        ("sdpa_plain", 2, 3, 5, 7, 8, 6, None, False, None),
        ("sdpa_causal_square", 2, 2, 6, 6, 8, 8, None, True, None),
        ("sdpa_causal_rect", 1, 2, 4, 6, 8, 8, None, True, None),
        ("sdpa_boolmask", 2, 2, 5, 6, 8, 8, "bool", False, None),
        ("sdpa_floatmask_bcast", 2, 3, 4, 5, 8, 8, "float", False, None),
        ("sdpa_scale", 1, 2, 3, 4, 8, 8, None, False, 0.3),
    ]
    native = hasattr(F, "scaled_dot_product_attention")
    for name, b, h, l, s, d, dv, mk, causal, scale in specs:
        q, k, v = torch.randn(b, h, l, d), torch.randn(b, h, s, d), torch.randn(b, h, s, dv)
        if mk == "bool":
            masked_out = random_bool_mask(b, h, l, s)
            torch_mask = ~masked_out  # SDPA: True = take part in attention
            stored = as_float(masked_out)
        elif mk == "float":
            torch_mask = torch.randn(1, h, l, s)
            stored = torch_mask
        else:
            torch_mask, stored = None, None
        use_torch = native and (scale is None or "scale" in inspect.signature(F.scaled_dot_product_attention).parameters)

        def call(_, c):
            tm = None if torch_mask is None else (torch_mask if torch_mask.dtype == torch.bool else c(torch_mask))
            if use_torch:
                o = F.scaled_dot_product_attention(c(q), c(k), c(v), attn_mask=tm, dropout_p=0.0, is_causal=causal,
                                                   **({} if scale is None else {"scale": scale}))
            else:
                o = sdpa_math(c(q), c(k), c(v), tm, causal, scale)
            return {"output": o}

        o64, o32 = run_both(None, call)
        inputs = {"q": q, "k": k, "v": v}
        if stored is not None:
            inputs["attn_mask"] = stored
        cfg = dict(module="scaled_dot_product_attention",
                   forward=dict(attn_mask=mk, is_causal=causal, scale=scale,
                                note="bool attn_mask stored as 1 = masked out (inverted for torch)"),
                   computed_with="F.scaled_dot_product_attention" if use_torch else "torch.matmul and torch.softmax")
        save_case(out, name, cfg, {}, inputs, o64, o32, index)


def layer_kwargs(e, h, f, act, norm_first, bias, batch_first=True):
    return dict(d_model=e, nhead=h, dim_feedforward=f, dropout=0.0, activation=act, layer_norm_eps=1e-5,
                batch_first=batch_first, norm_first=norm_first, bias=bias)


def encoder_layer_cases(out, index):
    b, l, e, h, f = 2, 6, 16, 4, 32
    variants = [(nf, act, v, True) for nf in (False, True) for act in ("relu", "gelu")
                for v in ("plain", "kpm", "causal", "nobias") if v != "nobias" or (not nf and act == "relu")]
    variants += [(False, "relu", "floatkpm", True), (True, "gelu", "floatmask_kpm", False)]
    for norm_first, act, variant, bf in variants:
        kw = layer_kwargs(e, h, f, act, norm_first, variant != "nobias", bf)
        m = randomize(make(nn.TransformerEncoderLayer, **kw))
        x = torch.randn(b, l, e)
        kpm = {"kpm": padding_mask(b, l), "floatmask_kpm": padding_mask(b, l),
               "floatkpm": float_padding(b, l)}.get(variant)
        causal = variant == "causal"
        mask = causal_float(l) if causal else torch.randn(l, l) if variant == "floatmask_kpm" else None
        if not bf:
            x = seq_first(x)

        def call(mod, c):
            return {"output": mod(c(x), src_mask=c(mask) if mask is not None else None,
                                  src_key_padding_mask=None if kpm is None else c(kpm),
                                  **takes(mod.forward, is_causal=causal))}

        o64, o32 = run_both(m, call)
        inputs = {"src": x}
        if kpm is not None:
            inputs["src_key_padding_mask"] = as_float(kpm)
        if mask is not None:
            inputs["src_mask"] = mask
        cfg = dict(module="TransformerEncoderLayer", **kw,
                   forward=dict(src_mask=mask_kind(mask), src_key_padding_mask=mask_kind(kpm), is_causal=causal),
                   computed_with=computed_with(nn.TransformerEncoderLayer))
        name = "enc_layer_%s%s_%s_%s" % ("" if bf else "seqfirst_", "pre" if norm_first else "post", act, variant)
        save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


def decoder_layer_cases(out, index):
    b, t, s, e, h, f = 2, 5, 7, 16, 4, 32
    # norm_first, activation, batch_first, memory masks (float memory_mask (B*H, T, S) + memory_is_causal)
    for norm_first, act, bf, memory_masks in ((False, "relu", True, False), (False, "gelu", True, False),
                                              (True, "relu", True, False), (True, "gelu", True, False),
                                              (True, "relu", False, True)):
        kw = layer_kwargs(e, h, f, act, norm_first, True, bf)
        m = randomize(make(nn.TransformerDecoderLayer, **kw))
        tgt, mem = torch.randn(b, t, e), torch.randn(b, s, e)
        if not bf:
            tgt, mem = seq_first(tgt), seq_first(mem)
        tgt_mask = causal_float(t)
        tkpm, mkpm = padding_mask(b, t), padding_mask(b, s)
        mem_mask = (causal_float(t, s) + torch.randn(b * h, t, s)) if memory_masks else None

        def call(mod, c):
            return {"output": mod(c(tgt), c(mem), tgt_mask=c(tgt_mask), tgt_key_padding_mask=tkpm,
                                  memory_mask=None if mem_mask is None else c(mem_mask),
                                  memory_key_padding_mask=mkpm,
                                  **takes(mod.forward, tgt_is_causal=True, memory_is_causal=memory_masks))}

        o64, o32 = run_both(m, call)
        inputs = {"tgt": tgt, "memory": mem, "tgt_mask": tgt_mask, "tgt_key_padding_mask": as_float(tkpm),
                  "memory_key_padding_mask": as_float(mkpm)}
        if mem_mask is not None:
            inputs["memory_mask"] = mem_mask
        cfg = dict(module="TransformerDecoderLayer", **kw,
                   forward=dict(tgt_mask="float", tgt_is_causal=True, tgt_key_padding_mask="bool",
                                memory_key_padding_mask="bool", memory_mask=mask_kind(mem_mask),
                                memory_is_causal=memory_masks),
                   computed_with=computed_with(nn.TransformerDecoderLayer))
        name = "dec_layer_%s%s_%s_causal_kpm%s" % ("" if bf else "seqfirst_", "pre" if norm_first else "post", act,
                                                  "_memory_mask" if memory_masks else "")
        save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


def stack_cases(out, index):
    b, l, t, e, h, f, n = 2, 6, 5, 16, 4, 32, 2
    for norm_first, act, bf in ((False, "relu", True), (True, "gelu", True), (False, "gelu", False)):
        kw = layer_kwargs(e, h, f, act, norm_first, True, bf)
        tag = "%s%s_%s" % ("" if bf else "seqfirst_", "pre" if norm_first else "post", act)

        enc = randomize(nn.TransformerEncoder(make(nn.TransformerEncoderLayer, **kw), num_layers=n,
                                              norm=nn.LayerNorm(e, eps=1e-5), enable_nested_tensor=False))
        x = torch.randn(b, l, e)
        if not bf:
            x = seq_first(x)
        kpm = padding_mask(b, l)
        src_mask = None if bf else torch.randn(l, l)
        o64, o32 = run_both(enc, lambda mod, c: {"output": mod(c(x), mask=None if src_mask is None else c(src_mask),
                                                               src_key_padding_mask=kpm)})
        cfg = dict(module="TransformerEncoder", num_layers=n, norm=True, encoder_layer=kw,
                   forward=dict(mask=mask_kind(src_mask), src_key_padding_mask="bool", is_causal=False),
                   computed_with=computed_with(nn.TransformerEncoderLayer))
        inputs = {"src": x, "src_key_padding_mask": as_float(kpm)}
        if src_mask is not None:
            inputs["mask"] = src_mask
        save_case(out, "encoder_%s_kpm" % tag, cfg, enc.state_dict(), inputs, o64, o32, index)

        dec = randomize(nn.TransformerDecoder(make(nn.TransformerDecoderLayer, **kw), num_layers=n,
                                              norm=nn.LayerNorm(e, eps=1e-5)))
        tgt, mem = torch.randn(b, t, e), torch.randn(b, l, e)
        if not bf:
            tgt, mem = seq_first(tgt), seq_first(mem)
        tmask = causal_float(t)
        o64, o32 = run_both(dec, lambda mod, c: {"output": mod(c(tgt), c(mem), tgt_mask=c(tmask),
                                                               memory_key_padding_mask=kpm,
                                                               **takes(mod.forward, tgt_is_causal=True))})
        cfg = dict(module="TransformerDecoder", num_layers=n, norm=True, decoder_layer=kw,
                   forward=dict(tgt_mask="float", tgt_is_causal=True, memory_key_padding_mask="bool"),
                   computed_with=computed_with(nn.TransformerDecoderLayer))
        save_case(out, "decoder_%s_causal" % tag, cfg, dec.state_dict(),
                  {"tgt": tgt, "memory": mem, "tgt_mask": tmask, "memory_key_padding_mask": as_float(kpm)},
                  o64, o32, index)


def transformer_cases(out, index):
    b, s, t, e, h, f = 2, 7, 5, 16, 4, 32
    for norm_first, act, bf in ((False, "relu", True), (True, "gelu", True), (True, "relu", False)):
        kw = dict(d_model=e, nhead=h, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=f, dropout=0.0,
                  activation=act, layer_norm_eps=1e-5, batch_first=bf, norm_first=norm_first, bias=True)
        m = randomize(make(nn.Transformer, **kw))
        src, tgt = torch.randn(b, s, e), torch.randn(b, t, e)
        if not bf:
            src, tgt = seq_first(src), seq_first(tgt)
        tmask = causal_float(t)
        skpm, tkpm = padding_mask(b, s), padding_mask(b, t)
        src_mask = None if bf else torch.randn(s, s)
        mem_mask = None if bf else torch.randn(t, s)

        def call(mod, c):
            return {"output": mod(c(src), c(tgt), src_mask=None if src_mask is None else c(src_mask),
                                  tgt_mask=c(tmask), memory_mask=None if mem_mask is None else c(mem_mask),
                                  src_key_padding_mask=skpm, tgt_key_padding_mask=tkpm,
                                  memory_key_padding_mask=skpm, **takes(mod.forward, tgt_is_causal=True))}

        o64, o32 = run_both(m, call)
        cfg = dict(module="Transformer", **kw,
                   forward=dict(src_mask=mask_kind(src_mask), tgt_mask="float", memory_mask=mask_kind(mem_mask),
                                tgt_is_causal=True, src_key_padding_mask="bool", tgt_key_padding_mask="bool",
                                memory_key_padding_mask="bool"),
                   computed_with=computed_with(nn.Transformer))
        inputs = {"src": src, "tgt": tgt, "tgt_mask": tmask, "src_key_padding_mask": as_float(skpm),
                  "tgt_key_padding_mask": as_float(tkpm), "memory_key_padding_mask": as_float(skpm)}
        if src_mask is not None:
            inputs["src_mask"] = src_mask
            inputs["memory_mask"] = mem_mask
        name = "transformer_%s%s_%s" % ("" if bf else "seqfirst_", "pre" if norm_first else "post", act)
        save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="golden", help="output folder (created)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--only", default="", help="run only case groups whose name contains this (mha, sdpa, ...)")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    try:  # plain math path everywhere (training mode already rules out the fast paths; this is belt and braces)
        torch.backends.mha.set_fastpath_enabled(False)
    except AttributeError:
        pass
    os.makedirs(args.out, exist_ok=True)
    index = []
    groups = [("mha", mha_cases), ("sdpa", sdpa_cases), ("enc_layer", encoder_layer_cases),
              ("dec_layer", decoder_layer_cases), ("stack", stack_cases), ("transformer", transformer_cases)]
    errors = []
    for gname, fn in groups:
        if args.only in gname:
            before = len(index)
            try:  # a group that fails on this torch version is recorded; the other groups still run
                fn(args.out, index)
            except Exception as e:
                last = traceback.format_exc().strip().splitlines()[-1]
                errors.append({"group": gname, "cases_written": [c["name"] for c in index[before:]], "error": last})
                print("golden_torch: group %s failed after %d case(s): %s" % (gname, len(index) - before, last),
                      file=sys.stderr)
    with open(os.path.join(args.out, "index.json"), "w") as fh:
        doc = {"torch": torch.__version__, "seed": args.seed, "cases": index}
        if errors:
            doc["errors"] = errors
        json.dump(doc, fh, indent=1)
    print("%d cases in %s%s" % (len(index), args.out, "; %d group(s) failed" % len(errors) if errors else ""))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
