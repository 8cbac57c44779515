#!/usr/bin/env python3
"""tests/families/jina-bert: a seeded random-weight JinaBERT (jina-embeddings-v2's architecture: `model_type` "bert",
`position_embedding_type` "alibi", `feed_forward_type` "geglu"), saved as its hub folders are (config with
`auto_map` to Jina AI's remote code, safetensors under the remote code's names, sentence-transformers 6 modules), with
what that model computes.

transformers has no JinaBERT (it is remote code, jinaai/jina-bert-implementation, which needs the network), so the
judge is the forward below in torch, written from the architecture as text-embeddings-inference implements it
(backends/candle/src/models/jina.rs and alibi.rs) and as the remote code computes ALiBi:

    embeddings   LayerNorm(word[ids] + token_type[types])                      (no position table)
    each layer   a = LayerNorm_att(x + dense(attention(q, k, v)))              (BERT's post-norm block)
                 scores = q k^T / sqrt(D) + mask + alibi,  alibi[h, i, j] = -slope_h |j - i|
                 h = gated_layers(a) (2F, no bias);  x = LayerNorm_mlp(a + wo(act(h[:F]) * h[F:]))
    slopes       ALiBi's: for n a power of two start^(i+1), start = 2^(-2^-(log2 n - 3)); otherwise the largest power
                 of two's, then every other slope of twice that power (float64, then torch.Tensor: float32)

with geglu = the exact (erf) GELU (nn.GELU()), as the remote code's JinaBertGLUMLP. Pooling and normalization are
sentence-transformers' own Pooling and Normalize modules on those token vectors. The tokenizer, texts and tokens are
the `bert` fixture's (WordPiece). 6 heads, so the slopes take the not-a-power-of-two branch (jina-embeddings-v2-base
has 12). The script checks that the fixture tells ALiBi and the gate apart: without the bias, or with the other half
activated, the hidden states move by more than 1e-2.

tests/families/jina-bert-code is the remote code's other architecture, jina-bert-v2-qk-post-norm
(jina-embeddings-v2-base-code, named by its config's `_name_or_path`), written the same way (seed 72):

    each layer   q = LayerNorm_q(query(x)), k = LayerNorm_k(key(x))   (over the whole projection, before the heads)
                 a = LayerNorm_att(x + dense(attention(q, k, v)));  r = layer_norm_1(x + a)
                 h = up_gated_layer(r) (2F, no bias);  x = layer_norm_2(r + down_layer(h[:F] * act(h[F:])))

as text-embeddings-inference's jina_code.rs computes it and as a transformers port of the remote code's JinaBertLayer
writes it (act: nn.GELU() for geglu). Its checks add: without the q/k norms, and without layer_norm_1, the hidden
states move by more than 1e-2.

usage: python3 tools/make_jina.py   (reads tests/families/bert, writes tests/families/jina-bert and jina-bert-code)
"""
import json
import math
import os
import shutil

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "families")
SRC, OUT_V2, OUT_CODE = (os.path.join(ROOT, d) for d in ("bert", "jina-bert", "jina-bert-code"))
SEED = 71
E, H, F, LAYERS, VOCAB, TYPES, EPS = 48, 6, 64, 2, 600, 2, 1e-12


def alibi_slopes(n):
    """The remote code's (and ALiBi's paper's) _get_alibi_head_slopes, in float64."""
    def pow2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return pow2(n)
    closest = 2 ** math.floor(math.log2(n))
    return pow2(closest) + pow2(2 * closest)[0::2][: n - closest]


def alibi(n_heads, size, dtype):
    """The bias (H, L, L) as the remote code builds it: -slopes (float32) times |j - i|."""
    pos = torch.arange(size)
    rel = torch.abs(pos[None, :] - pos[:, None])[None, :, :].expand(n_heads, -1, -1)
    slopes = torch.Tensor(alibi_slopes(n_heads)) * -1
    return (slopes.unsqueeze(1).unsqueeze(1) * rel).to(dtype)


def weights(seed, code=False):
    g = torch.Generator().manual_seed(seed)
    w = {}
    def lin(name, out, inp, bias=True):
        w[name + ".weight"] = torch.randn(out, inp, generator=g) / math.sqrt(inp)
        if bias:
            w[name + ".bias"] = 0.1 * torch.randn(out, generator=g)
    def ln(name):
        w[name + ".weight"] = 1.0 + 0.1 * torch.randn(E, generator=g)
        w[name + ".bias"] = 0.05 * torch.randn(E, generator=g)
    w["embeddings.word_embeddings.weight"] = torch.randn(VOCAB, E, generator=g)
    w["embeddings.token_type_embeddings.weight"] = 0.5 * torch.randn(TYPES, E, generator=g)
    ln("embeddings.LayerNorm")
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for n in ("query", "key", "value"):
            lin(p + "attention.self." + n, E, E)
        if code:
            ln(p + "attention.self.layer_norm_q")
            ln(p + "attention.self.layer_norm_k")
        lin(p + "attention.output.dense", E, E)
        ln(p + "attention.output.LayerNorm")
        if code:
            ln(p + "layer_norm_1")
            lin(p + "mlp.up_gated_layer", 2 * F, E, bias=False)
            lin(p + "mlp.down_layer", E, F)
            ln(p + "layer_norm_2")
        else:
            lin(p + "mlp.gated_layers", 2 * F, E, bias=False)
            lin(p + "mlp.wo", E, F)
            ln(p + "mlp.layernorm")
    return w


def forward(w, ids, types, mask, dtype, use_alibi=True, gate_first=True, code=False, qk_norm=True, second_norm=True):
    """JinaBERT's last hidden state (B, L, E) in `dtype`; mask (B, L) 1 = token, 0 = padding. `code`: the
    jina-bert-v2-qk-post-norm variant (jina-embeddings-v2-base-code); qk_norm / second_norm off leave its q/k
    LayerNorms / its layer_norm_1 step out (to show the fixture tells them apart)."""
    w = {k: v.to(dtype) for k, v in w.items()}
    f = torch.nn.functional
    b, l = ids.shape
    d = E // H
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.token_type_embeddings.weight"][types]
    x = f.layer_norm(x, (E,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], EPS)
    ext = (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
    bias = alibi(H, l, dtype)[None] if use_alibi else 0.0
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        def lin(name, t):
            return f.linear(t, w[p + name + ".weight"], w.get(p + name + ".bias"))
        def heads(t):
            return t.view(b, l, H, d).permute(0, 2, 1, 3)
        def norm(name, t):
            return f.layer_norm(t, (E,), w[p + name + ".weight"], w[p + name + ".bias"], EPS)
        q, k, v = (lin("attention.self." + n, x) for n in ("query", "key", "value"))
        if code and qk_norm:   # JinaBertSelfAttention: layer_norm_q / layer_norm_k over the whole projection
            q, k = norm("attention.self.layer_norm_q", q), norm("attention.self.layer_norm_k", k)
        q, k, v = heads(q), heads(k), heads(v)
        s = q @ k.transpose(-1, -2) / math.sqrt(d) + ext + bias
        o = (s.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(b, l, E)
        a = norm("attention.output.LayerNorm", x + lin("attention.output.dense", o))
        if code:
            # JinaBertLayer: residual = layer_norm_1(residual + attention_output); the MLP's up * act(gated) from
            # up_gated_layer, down_layer; layer_norm_2(residual + mlp_output)
            if second_norm:
                a = norm("layer_norm_1", x + a)
            hgl = lin("mlp.up_gated_layer", a)
            g = hgl[..., :F] * f.gelu(hgl[..., F:]) if not gate_first else f.gelu(hgl[..., :F]) * hgl[..., F:]
            x = norm("layer_norm_2", a + lin("mlp.down_layer", g))
            continue
        hgl = lin("mlp.gated_layers", a)
        first, second = hgl[..., :F], hgl[..., F:]
        g = f.gelu(first) * second if gate_first else first * f.gelu(second)
        x = f.layer_norm(a + lin("mlp.wo", g), (E,), w[p + "mlp.layernorm.weight"], w[p + "mlp.layernorm.bias"], EPS)
    return x


def main():
    make(code=False)
    make(code=True)


def make(code):
    import safetensors.torch
    import sentence_transformers
    import tokenizers
    import transformers
    from sentence_transformers.base.modules.normalize import Normalize
    from sentence_transformers.sentence_transformer.modules.pooling import Pooling

    OUT = OUT_CODE if code else OUT_V2
    x = json.load(open(os.path.join(SRC, "expected.json")))
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "1_Pooling"))
    for f_ in ("tokenizer.json", "tokenizer_config.json", "modules.json", "sentence_bert_config.json",
               "config_sentence_transformers.json"):
        shutil.copy(os.path.join(SRC, f_), os.path.join(OUT, f_))
    shutil.copytree(os.path.join(SRC, "2_Normalize"), os.path.join(OUT, "2_Normalize"))
    json.dump({"embedding_dimension": E, "pooling_mode": "mean", "include_prompt": True},
              open(os.path.join(OUT, "1_Pooling", "config.json"), "w"), indent=4)
    impl = "jinaai/jina-bert-v2-qk-post-norm" if code else "jinaai/jina-bert-implementation"
    config = {
        "_name_or_path": impl,
        "architectures": ["JinaBertForMaskedLM"],
        "attention_probs_dropout_prob": 0.0,
        "auto_map": {
            "AutoConfig": impl + "--configuration_bert.JinaBertConfig",
            "AutoModel": impl + "--modeling_bert.JinaBertModel",
            "AutoModelForMaskedLM": impl + "--modeling_bert.JinaBertForMaskedLM",
        },
        "classifier_dropout": None,
        "emb_pooler": "mean",
        "feed_forward_type": "geglu",
        "gradient_checkpointing": False,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": E,
        "initializer_range": 0.02,
        "intermediate_size": F,
        "layer_norm_eps": EPS,
        "max_position_embeddings": 8192,
        "model_max_length": 8192,
        "model_type": "bert",
        "num_attention_heads": H,
        "num_hidden_layers": LAYERS,
        "pad_token_id": 0,
        "position_embedding_type": "alibi",
        "torch_dtype": "float32",
        "type_vocab_size": TYPES,
        "use_cache": True,
        "vocab_size": VOCAB,
    }
    json.dump(config, open(os.path.join(OUT, "config.json"), "w"), indent=2)
    w = weights(SEED + (1 if code else 0), code)
    safetensors.torch.save_file({k: v.contiguous() for k, v in w.items()}, os.path.join(OUT, "model.safetensors"))

    tok = x["tokens"]
    ids = torch.tensor(tok["input_ids"])
    types = torch.tensor(tok["token_type_ids"])
    mask = torch.tensor(tok["attention_mask"])
    gf = not code   # jina-bert-implementation activates the first half; qk-post-norm the second (up * act(gated))
    with torch.no_grad():
        h32 = forward(w, ids, types, mask, torch.float32, gate_first=gf, code=code)
        h64 = forward(w, ids, types, mask, torch.float64, gate_first=gf, code=code)
        no_alibi = forward(w, ids, types, mask, torch.float32, use_alibi=False, gate_first=gf, code=code)
        other_half = forward(w, ids, types, mask, torch.float32, gate_first=not gf, code=code)
        variants = {"without_alibi": no_alibi, "other_half_activated": other_half}
        if code:
            variants["without_qk_norms"] = forward(w, ids, types, mask, torch.float32, gate_first=gf, code=code,
                                                   qk_norm=False)
            variants["without_layer_norm_1"] = forward(w, ids, types, mask, torch.float32, gate_first=gf, code=code,
                                                       second_norm=False)
        single = 0.0
        for i in range(ids.shape[0]):
            n = int(mask[i].sum())
            hi = forward(w, ids[i:i + 1, :n], types[i:i + 1, :n], mask[i:i + 1, :n], torch.float32, gate_first=gf,
                         code=code)
            single = max(single, float((hi[0] - h32[i, :n]).abs().max()))
        m = mask[..., None].float()
        hidden = (h32 * m).numpy().astype(np.float32)
        pool = Pooling(E, pooling_mode="mean")
        feats = pool({"token_embeddings": h32, "attention_mask": mask})
        pooled = Normalize()(feats)["sentence_embedding"]
    moved = {k: float(((v - h32) * m).abs().max()) for k, v in variants.items()}
    for k, v in moved.items():
        assert v > 1e-2, (k, v)
    np.save(os.path.join(OUT, "hidden.npy"), hidden)
    settings = dict(x["settings"], hidden_size=E)
    expected = {
        "family": "jina-bert-code" if code else "jina-bert",
        "model_type": "bert",
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "sentence_transformers": sentence_transformers.__version__,
                     "tokenizers": tokenizers.__version__, "numpy": np.__version__},
        "seed": SEED + (1 if code else 0),
        "settings": settings,
        "texts": x["texts"],
        "tokens": x["tokens"],
        "hidden": {"file": "hidden.npy", "dtype": "float32", "shape": list(hidden.shape),
                   "what": "JinaBERT's last hidden state (tools/make_jina.py's torch forward) for tokens, zero where"
                           " attention_mask is 0"},
        "encodings": [{"prompt_name": None, "prompt": None, "prompt_length": None,
                       "embeddings": pooled.tolist()}],
        "default_encoding_prompt_name": None,
        "alibi_slopes": {str(n): alibi_slopes(n) for n in (1, 2, 6, 8, 12, 16, 24)},
        "checks": {"hidden_fp32_vs_fp64_max_abs": float(((h64 - h32.double()) * m).abs().max()),
                   "hidden_single_vs_batch_max_abs": single,
                   "hidden_moves_by": moved},
    }
    json.dump(expected, open(os.path.join(OUT, "expected.json"), "w"), indent=1, ensure_ascii=False)
    print(f"{expected['family']}: {OUT}, hidden {hidden.shape}, fp64 {expected['checks']['hidden_fp32_vs_fp64_max_abs']:.2g},"
          f" single {single:.2g}, moves {moved}")


if __name__ == "__main__":
    main()
