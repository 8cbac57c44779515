#!/usr/bin/env python3
"""Export a torch.nn attention module for `attn run` (runs wherever PyTorch is installed; attn itself needs no Python).

Writes MODEL.safetensors holding the module's state_dict() (float32, PyTorch names) with the config attn needs as a
JSON string under __metadata__["config"]: {"module": ..., plus the constructor arguments}. Supported modules:
nn.MultiheadAttention (kdim = vdim = embed_dim), nn.TransformerEncoderLayer, nn.TransformerDecoderLayer,
nn.TransformerEncoder, nn.TransformerDecoder, nn.Transformer, and the decoder-only language model of
tools/decoder_only_lm.py (DecoderOnlyLM, for `attn generate`; tied lm_head.weight is not written twice).
The config records the module's batch_first: attn takes and returns (B, L, E) when it is true, (L, B, E) when false
(PyTorch's default), as the module does. Runs on torch 1.13 and later.

As a library:
    import sys; sys.path.insert(0, "tools")
    from export_torch import export
    export(model, "model.safetensors", example={"input": x})   # also writes input.npy and output.npy beside it

From the command line:
    python3 tools/export_torch.py --module model.pt --out model.safetensors [--example-shape 2,10,64]
        model.pt: a whole module saved with torch.save(module, "model.pt")
    python3 tools/export_torch.py --random '{"module":"TransformerEncoderLayer","d_model":64,"nhead":4}' \\
        --out model.safetensors --example-shape 2,10,64
        a randomly initialised module from a config (handy to try attn run)
    python3 tools/export_torch.py --random '{"module":"DecoderOnlyLM","vocab_size":100,"d_model":64,"nhead":4,
        "num_layers":2,"dim_feedforward":128,"max_len":64}' --out lm.safetensors --example-shape 2,10
        a decoder-only LM: the example input is token ids (B, L), the output the logits (B, L, V)

With --example-shape, a random input of that shape (seeded) is written as <out>.input.npy and the module's own output
as <out>.output.npy (eval mode, no mask), so `attn run --model OUT --input OUT.input.npy --output y.npy` can be
compared with it.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_torch import write_safetensors  # noqa: E402  (the shared, spec-following writer)
from decoder_only_lm import DecoderOnlyLM, with_bias  # noqa: E402


def _activation(layer):
    a = layer.activation
    if a is F.relu or isinstance(a, nn.ReLU):
        return "relu"
    if a is F.gelu or (isinstance(a, nn.GELU) and a.approximate == "none"):
        return "gelu"
    raise ValueError(f"activation {a!r} is not supported by attn (relu or exact gelu)")


def _layer_config(layer):
    return {
        "d_model": layer.self_attn.embed_dim,
        "nhead": layer.self_attn.num_heads,
        "dim_feedforward": layer.linear1.out_features,
        "activation": _activation(layer),
        "layer_norm_eps": layer.norm1.eps,
        "norm_first": bool(layer.norm_first),
        "bias": layer.linear1.bias is not None,
        "batch_first": bool(layer.self_attn.batch_first),
    }


def config_of(module):
    """The attn config dict for a supported module."""
    if isinstance(module, DecoderOnlyLM):
        return module.attn_config()
    if isinstance(module, nn.MultiheadAttention):
        if not module._qkv_same_embed_dim:
            raise ValueError("MultiheadAttention with kdim/vdim != embed_dim is not supported by attn")
        return {"module": "MultiheadAttention", "embed_dim": module.embed_dim, "num_heads": module.num_heads,
                "bias": module.in_proj_bias is not None, "batch_first": bool(module.batch_first)}
    if isinstance(module, nn.TransformerEncoderLayer):
        return {"module": "TransformerEncoderLayer", **_layer_config(module)}
    if isinstance(module, nn.TransformerDecoderLayer):
        return {"module": "TransformerDecoderLayer", **_layer_config(module)}
    if isinstance(module, nn.TransformerEncoder):
        return {"module": "TransformerEncoder", **_layer_config(module.layers[0]),
                "num_layers": len(module.layers), "final_norm": module.norm is not None}
    if isinstance(module, nn.TransformerDecoder):
        return {"module": "TransformerDecoder", **_layer_config(module.layers[0]),
                "num_layers": len(module.layers), "final_norm": module.norm is not None}
    if isinstance(module, nn.Transformer):
        c = _layer_config(module.encoder.layers[0])
        del c["bias"]
        return {"module": "Transformer", **c, "num_encoder_layers": len(module.encoder.layers),
                "num_decoder_layers": len(module.decoder.layers)}
    raise ValueError(f"{type(module).__name__} is not supported by attn")


def module_from_config(cfg):
    """A freshly initialised module (eval mode) for an attn config dict; batch_first as the config says (default
    true, as attn reads a config without it)."""
    c = dict(cfg)
    kind = c.pop("module")
    if kind == "DecoderOnlyLM":
        return DecoderOnlyLM(**c)
    if kind == "MultiheadAttention":
        return nn.MultiheadAttention(c["embed_dim"], c["num_heads"], bias=c.get("bias", True),
                                     batch_first=c.get("batch_first", True))
    bias = c.get("bias", True)
    layer_keys = dict(d_model=c.get("d_model", 512), nhead=c.get("nhead", 8),
                      dim_feedforward=c.get("dim_feedforward", 2048), activation=c.get("activation", "relu"),
                      layer_norm_eps=c.get("layer_norm_eps", 1e-5), norm_first=c.get("norm_first", False),
                      batch_first=c.get("batch_first", True), dropout=0.0)
    if kind == "TransformerEncoderLayer":
        return with_bias(nn.TransformerEncoderLayer, bias, **layer_keys)
    if kind == "TransformerDecoderLayer":
        return with_bias(nn.TransformerDecoderLayer, bias, **layer_keys)
    norm = lambda: with_bias(nn.LayerNorm, bias, normalized_shape=layer_keys["d_model"],  # noqa: E731
                             eps=layer_keys["layer_norm_eps"])
    if kind == "TransformerEncoder":
        return nn.TransformerEncoder(with_bias(nn.TransformerEncoderLayer, bias, **layer_keys), c["num_layers"],
                                     norm=norm() if c.get("final_norm") else None, enable_nested_tensor=False)
    if kind == "TransformerDecoder":
        return nn.TransformerDecoder(with_bias(nn.TransformerDecoderLayer, bias, **layer_keys), c["num_layers"],
                                     norm=norm() if c.get("final_norm") else None)
    if kind == "Transformer":
        return nn.Transformer(num_encoder_layers=c.get("num_encoder_layers", 6),
                              num_decoder_layers=c.get("num_decoder_layers", 6), **layer_keys)
    raise ValueError(f"unknown module {kind!r}")


@torch.no_grad()
def _forward(module, x):
    if isinstance(module, nn.MultiheadAttention):
        return module(x, x, x, need_weights=False)[0]
    if isinstance(module, (nn.TransformerDecoderLayer, nn.TransformerDecoder)):
        return module(x, x)  # memory = the input itself, for a self-contained example
    if isinstance(module, nn.Transformer):
        return module(x, x)
    return module(x)


def export(module, path, example=None):
    """Writes path (.safetensors with the config in its metadata); with example={"input": tensor}, also
    <path stem>.input.npy and <path stem>.output.npy (decoders and Transformer use the input as memory / target)."""
    module = module.eval()
    cfg = config_of(module)
    sd = module.state_dict()
    if isinstance(module, DecoderOnlyLM) and cfg["tied_embeddings"]:
        sd = {k: v for k, v in sd.items() if k != "lm_head.weight"}  # the same tensor as embed.weight
    write_safetensors(path, sd, {"config": json.dumps(cfg)})
    if example is not None and isinstance(module, DecoderOnlyLM):
        ids = example["input"].detach().to(torch.long)
        with torch.no_grad():
            logits = module(ids)
        stem = os.path.splitext(path)[0]
        np.save(stem + ".input.npy", ids.cpu().numpy().astype(np.float32))
        np.save(stem + ".output.npy", logits.cpu().numpy().astype(np.float32))
    elif example is not None:
        x = example["input"].detach().to(torch.float32)
        y = _forward(module, x)
        stem = os.path.splitext(path)[0]
        np.save(stem + ".input.npy", x.cpu().numpy())
        np.save(stem + ".output.npy", y.detach().cpu().numpy().astype(np.float32))
    return cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--module", help="a whole module saved with torch.save(module, PATH)")
    src.add_argument("--random", help="an attn config JSON: export a freshly initialised module")
    ap.add_argument("--out", required=True, help="output .safetensors path")
    ap.add_argument("--example-shape", help="e.g. 2,10,64: also write a random example input and its output")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    module = torch.load(a.module, weights_only=False) if a.module else module_from_config(json.loads(a.random))
    example = None
    if a.example_shape:
        shape = [int(d) for d in a.example_shape.split(",")]
        if isinstance(module, DecoderOnlyLM):
            example = {"input": torch.randint(0, module.cfg["vocab_size"], shape)}
        else:  # in the module's layout: (L, B, E) for batch_first=False
            example = {"input": torch.randn(*shape)}
    cfg = export(module, a.out, example)
    print(f"wrote {a.out}: {json.dumps(cfg)}")


if __name__ == "__main__":
    main()
