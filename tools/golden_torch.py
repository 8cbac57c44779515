#!/usr/bin/env python3
"""Golden cases from PyTorch for attn's attention layers (run on a host with torch; not needed by the Java build).

Usage:
    python3 tools/golden_torch.py [--out golden] [--seed 1234] [--only SUBSTRING]

Needs torch (>= 2.1, for the ``bias`` constructor argument) and numpy; uses the ``safetensors`` package when
installed, else writes the file by hand (same format). Everything runs on CPU, in eval mode, with dropout 0 and
PyTorch's MHA/encoder fast paths switched off, so the results come from the plain math path.

Output layout, one folder per case::

    <out>/index.json                 {"cases": [{"name": ..., "config": {...}}, ...]}
    <out>/<case>/model.safetensors   the module's state_dict() as F32 (PyTorch names); __metadata__["config"] is a
                                     JSON string: the constructor arguments plus "module" (e.g. {"module":
                                     "MultiheadAttention", "embed_dim": 16, "num_heads": 4, "bias": true, ...}),
                                     "forward" (the keyword arguments of the call) and "inputs"/"outputs" (names).
                                     SDPA cases have no parameters: the file holds only the metadata.
    <out>/<case>/in.<name>.npy       float32 inputs (B-first layouts, batch_first=True).
    <out>/<case>/out.<name>.npy      float64 outputs: the module converted to float64 (.double()) run on the same
                                     float32 weights and inputs widened to float64 -- the oracle for a double
                                     reference (agreement to ~1e-12 expected).
    <out>/<case>/out32.<name>.npy    float32 outputs of the float32 module (PyTorch's own float32 result).

Mask convention in the .npy files (the engine's, see io.attn.graph.MaskSpec): a boolean mask is stored as float32
0/1 where 1 = MASKED OUT; "forward" says "bool" or "float" per mask; float masks are additive (may hold -inf).
Careful: F.scaled_dot_product_attention reads a bool mask the other way round (True = attend), so the SDPA cases
pass the inverted mask to torch but store the masked-out convention. Key-padding masks are (B, S), 1 = padding.
No case masks a whole query row (PyTorch gives NaN there; the engine gives zeros). For is_causal cases the explicit
causal mask (nn.Transformer.generate_square_subsequent_mask, float -inf above the diagonal) is passed too, as
PyTorch's modules require, and stored as in.<mask>.npy.

Outputs: MHA cases write "output" (B,L,E) and "weights" ((B,L,S) averaged or (B,H,L,S) per head); SDPA cases write
"output" only (PyTorch's SDPA does not return weights); layer/stack/Transformer cases write "output".
"""

import argparse
import copy
import json
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


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
    return module.eval()


def run_both(module, call):
    """call(module, cast) -> dict of outputs; runs the float32 module and a float64 copy on widened inputs."""
    with torch.no_grad():
        out32 = call(module, lambda t: t)
        m64 = copy.deepcopy(module).double().eval() if module is not None else None
        out64 = call(m64, lambda t: t.double() if t is not None and t.is_floating_point() else t)
    return out64, out32


def padding_mask(b, s):
    """(B,S) bool, batch i pads its last i positions (never all of them): True = padding."""
    m = torch.zeros(b, s, dtype=torch.bool)
    for i in range(b):
        if i:
            m[i, s - min(i, s - 1):] = True
    return m


def random_bool_mask(*shape, p=0.3):
    """Random bool mask, True = masked out, key column 0 always kept so no row is fully masked."""
    m = torch.rand(*shape) < p
    m[..., 0] = False
    return m


def causal_float(n):
    return nn.Transformer.generate_square_subsequent_mask(n)


def as_float(mask):
    return None if mask is None else mask.to(torch.float32)


def mask_kind(mask):
    return None if mask is None else ("bool" if mask.dtype == torch.bool else "float")


# ----------------------------------------------------------------------------------------------------------- cases

def mha_cases(out, index):
    specs = [
        # name, E, H, bias, B, L, S, self-attention, kpm, attn mask kind, causal, average weights
        ("mha_cross_avg", 16, 4, True, 2, 5, 7, False, False, None, False, True),
        ("mha_cross_perhead_nobias", 16, 4, False, 2, 5, 7, False, False, None, False, False),
        ("mha_self_kpm_boolmask", 16, 2, True, 3, 6, 6, True, True, "bool2d", False, True),
        ("mha_cross_floatmask3d", 8, 2, True, 2, 4, 5, False, False, "float3d", False, False),
        ("mha_self_causal", 16, 4, True, 2, 6, 6, True, False, "causal", True, False),
    ]
    for name, e, h, bias, b, l, s, self_attn, kpm, mk, causal, avg in specs:
        m = randomize(nn.MultiheadAttention(e, h, dropout=0.0, bias=bias, batch_first=True))
        q = torch.randn(b, l, e)
        kv = q if self_attn else torch.randn(b, s, e)
        v = q if self_attn else torch.randn(b, s, e)
        kpm_t = padding_mask(b, s) if kpm else None
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
            o, w = mod(c(q), c(kv), c(v), key_padding_mask=kpm_t, need_weights=True,
                       attn_mask=c(am) if am is not None else None, average_attn_weights=avg, is_causal=causal)
            return {"output": o, "weights": w}

        o64, o32 = run_both(m, call)
        inputs = {"query": q, "key": kv, "value": v}
        if kpm_t is not None:
            inputs["key_padding_mask"] = as_float(kpm_t)
        if am is not None:
            inputs["attn_mask"] = as_float(am)
        cfg = dict(module="MultiheadAttention", embed_dim=e, num_heads=h, bias=bias, batch_first=True, dropout=0.0,
                   forward=fwd)
        save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


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

        def call(_, c):
            tm = None if torch_mask is None else (torch_mask if torch_mask.dtype == torch.bool else c(torch_mask))
            return {"output": F.scaled_dot_product_attention(c(q), c(k), c(v), attn_mask=tm, dropout_p=0.0,
                                                            is_causal=causal, scale=scale)}

        o64, o32 = run_both(None, call)
        inputs = {"q": q, "k": k, "v": v}
        if stored is not None:
            inputs["attn_mask"] = stored
        cfg = dict(module="scaled_dot_product_attention",
                   forward=dict(attn_mask=mk, is_causal=causal, scale=scale,
                                note="bool attn_mask stored as 1 = masked out (inverted for torch)"))
        save_case(out, name, cfg, {}, inputs, o64, o32, index)


def layer_kwargs(e, h, f, act, norm_first, bias):
    return dict(d_model=e, nhead=h, dim_feedforward=f, dropout=0.0, activation=act, layer_norm_eps=1e-5,
                batch_first=True, norm_first=norm_first, bias=bias)


def encoder_layer_cases(out, index):
    b, l, e, h, f = 2, 6, 16, 4, 32
    for norm_first in (False, True):
        for act in ("relu", "gelu"):
            for variant in ("plain", "kpm", "causal", "nobias"):
                if variant == "nobias" and (norm_first or act == "gelu"):
                    continue
                bias = variant != "nobias"
                kw = layer_kwargs(e, h, f, act, norm_first, bias)
                m = randomize(nn.TransformerEncoderLayer(**kw))
                x = torch.randn(b, l, e)
                kpm = padding_mask(b, l) if variant == "kpm" else None
                causal = variant == "causal"
                mask = causal_float(l) if causal else None

                def call(mod, c):
                    return {"output": mod(c(x), src_mask=c(mask) if mask is not None else None,
                                          src_key_padding_mask=kpm, is_causal=causal)}

                o64, o32 = run_both(m, call)
                inputs = {"src": x}
                if kpm is not None:
                    inputs["src_key_padding_mask"] = as_float(kpm)
                if mask is not None:
                    inputs["src_mask"] = mask
                cfg = dict(module="TransformerEncoderLayer", **kw,
                           forward=dict(src_mask=mask_kind(mask), src_key_padding_mask=mask_kind(kpm),
                                        is_causal=causal))
                name = "enc_layer_%s_%s_%s" % ("pre" if norm_first else "post", act, variant)
                save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


def decoder_layer_cases(out, index):
    b, t, s, e, h, f = 2, 5, 7, 16, 4, 32
    for norm_first in (False, True):
        for act in ("relu", "gelu"):
            kw = layer_kwargs(e, h, f, act, norm_first, True)
            m = randomize(nn.TransformerDecoderLayer(**kw))
            tgt, mem = torch.randn(b, t, e), torch.randn(b, s, e)
            tgt_mask = causal_float(t)
            tkpm, mkpm = padding_mask(b, t), padding_mask(b, s)

            def call(mod, c):
                return {"output": mod(c(tgt), c(mem), tgt_mask=c(tgt_mask), tgt_key_padding_mask=tkpm,
                                      memory_key_padding_mask=mkpm, tgt_is_causal=True)}

            o64, o32 = run_both(m, call)
            inputs = {"tgt": tgt, "memory": mem, "tgt_mask": tgt_mask, "tgt_key_padding_mask": as_float(tkpm),
                      "memory_key_padding_mask": as_float(mkpm)}
            cfg = dict(module="TransformerDecoderLayer", **kw,
                       forward=dict(tgt_mask="float", tgt_is_causal=True, tgt_key_padding_mask="bool",
                                    memory_key_padding_mask="bool", memory_mask=None))
            name = "dec_layer_%s_%s_causal_kpm" % ("pre" if norm_first else "post", act)
            save_case(out, name, cfg, m.state_dict(), inputs, o64, o32, index)


def stack_cases(out, index):
    b, l, t, e, h, f, n = 2, 6, 5, 16, 4, 32, 2
    for norm_first, act in ((False, "relu"), (True, "gelu")):
        kw = layer_kwargs(e, h, f, act, norm_first, True)
        tag = "%s_%s" % ("pre" if norm_first else "post", act)

        enc = randomize(nn.TransformerEncoder(nn.TransformerEncoderLayer(**kw), num_layers=n,
                                              norm=nn.LayerNorm(e, eps=1e-5), enable_nested_tensor=False))
        x = torch.randn(b, l, e)
        kpm = padding_mask(b, l)
        o64, o32 = run_both(enc, lambda mod, c: {"output": mod(c(x), src_key_padding_mask=kpm)})
        cfg = dict(module="TransformerEncoder", num_layers=n, norm=True, encoder_layer=kw,
                   forward=dict(mask=None, src_key_padding_mask="bool", is_causal=False))
        save_case(out, "encoder_%s_kpm" % tag, cfg, enc.state_dict(), {"src": x, "src_key_padding_mask":
                                                                       as_float(kpm)}, o64, o32, index)

        dec = randomize(nn.TransformerDecoder(nn.TransformerDecoderLayer(**kw), num_layers=n,
                                              norm=nn.LayerNorm(e, eps=1e-5)))
        tgt, mem = torch.randn(b, t, e), torch.randn(b, l, e)
        tmask = causal_float(t)
        o64, o32 = run_both(dec, lambda mod, c: {"output": mod(c(tgt), c(mem), tgt_mask=c(tmask),
                                                               memory_key_padding_mask=kpm, tgt_is_causal=True)})
        cfg = dict(module="TransformerDecoder", num_layers=n, norm=True, decoder_layer=kw,
                   forward=dict(tgt_mask="float", tgt_is_causal=True, memory_key_padding_mask="bool"))
        save_case(out, "decoder_%s_causal" % tag, cfg, dec.state_dict(),
                  {"tgt": tgt, "memory": mem, "tgt_mask": tmask, "memory_key_padding_mask": as_float(kpm)},
                  o64, o32, index)


def transformer_cases(out, index):
    b, s, t, e, h, f = 2, 7, 5, 16, 4, 32
    for norm_first, act in ((False, "relu"), (True, "gelu")):
        kw = dict(d_model=e, nhead=h, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=f, dropout=0.0,
                  activation=act, layer_norm_eps=1e-5, batch_first=True, norm_first=norm_first, bias=True)
        m = randomize(nn.Transformer(**kw))
        # nn.Transformer builds its encoder with enable_nested_tensor=True; where the fast path cannot be switched
        # off (torch.backends.mha.set_fastpath_enabled only exists from about 2.3 on) the encoder would return zeros
        # at padded source positions instead of the math path's values. Force the plain path on every version.
        m.encoder.enable_nested_tensor = False
        m.encoder.use_nested_tensor = False
        src, tgt = torch.randn(b, s, e), torch.randn(b, t, e)
        tmask = causal_float(t)
        skpm, tkpm = padding_mask(b, s), padding_mask(b, t)

        def call(mod, c):
            return {"output": mod(c(src), c(tgt), tgt_mask=c(tmask), src_key_padding_mask=skpm,
                                  tgt_key_padding_mask=tkpm, memory_key_padding_mask=skpm, tgt_is_causal=True)}

        o64, o32 = run_both(m, call)
        cfg = dict(module="Transformer", **kw,
                   forward=dict(tgt_mask="float", tgt_is_causal=True, src_key_padding_mask="bool",
                                tgt_key_padding_mask="bool", memory_key_padding_mask="bool"))
        name = "transformer_%s_%s" % ("pre" if norm_first else "post", act)
        save_case(out, name, cfg, m.state_dict(),
                  {"src": src, "tgt": tgt, "tgt_mask": tmask, "src_key_padding_mask": as_float(skpm),
                   "tgt_key_padding_mask": as_float(tkpm), "memory_key_padding_mask": as_float(skpm)},
                  o64, o32, index)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="golden", help="output folder (created)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--only", default="", help="run only case groups whose name contains this (mha, sdpa, ...)")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    try:  # plain math path everywhere (no fused MHA / nested-tensor encoder fast path)
        torch.backends.mha.set_fastpath_enabled(False)
    except AttributeError:
        pass
    os.makedirs(args.out, exist_ok=True)
    index = []
    groups = [("mha", mha_cases), ("sdpa", sdpa_cases), ("enc_layer", encoder_layer_cases),
              ("dec_layer", decoder_layer_cases), ("stack", stack_cases), ("transformer", transformer_cases)]
    for gname, fn in groups:
        if args.only in gname:
            fn(args.out, index)
    with open(os.path.join(args.out, "index.json"), "w") as fh:
        json.dump({"torch": torch.__version__, "seed": args.seed, "cases": index}, fh, indent=1)
    print("%d cases in %s" % (len(index), args.out))


if __name__ == "__main__":
    main()
