#!/usr/bin/env python3
"""tests/families/gte-ntk: the `gte` fixture's weights as the hub's remote-code GTE (`model_type` "new", Alibaba-NLP's
NewModel) with NTK rope scaling (`rope_theta` 20000, `rope_scaling` {"type": "ntk",
"factor": 8.0}), and what that model computes.

transformers has no `new` model (it is remote code that needs the network), so the judge is transformers' own GteModel
(the same architecture and weight names; transformers' port of gte-multilingual-base) with its rotary inverse
frequencies replaced by the ones the remote code's NTKScalingRotaryEmbedding computes, written out below in its own
torch float32 operations (Alibaba-NLP/new-impl modeling.py, `mixed_b` None): the remote code builds its cos/sin cache
for `max_position_embeddings * factor` positions, more than `max_position_embeddings`, so every sequence takes

    base = rope_theta * factor
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    inv_freq = inv_freq / factor ** (2 / dim)

Everything else (tokens, pooling, normalization) is sentence-transformers' on that patched model. The script checks
that the fixture can tell NTK apart: from the plain frequencies of rope_theta and from those of rope_theta * factor
alone (what a port that folded the factor into theta would compute), the hidden states must move by more than 1e-2.

usage: python3 tools/make_gte_ntk.py   (reads tests/families/gte, writes tests/families/gte-ntk; a few seconds)
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "families")
SRC, OUT = os.path.join(ROOT, "gte"), os.path.join(ROOT, "gte-ntk")
THETA, FACTOR = 20000, 8.0


def remote_ntk_inv_freq(dim, theta, factor):
    """NTKScalingRotaryEmbedding._set_cos_sin_cache (mixed_b None), as the remote code computes it."""
    base = theta * factor
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    return inv_freq / factor ** (2 / dim)


def plain_inv_freq(dim, theta):
    return 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))


def set_freq(model, inv):
    rot = model.rotary_emb
    rot.inv_freq.copy_(inv)
    rot.original_inv_freq.copy_(inv)


def main():
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    torch.manual_seed(0)
    x = json.load(open(os.path.join(SRC, "expected.json")))
    texts, msl = x["texts"], x["settings"]["max_seq_length"]
    st = SentenceTransformer(SRC, device="cpu")
    st.eval()
    model = st[0].auto_model
    model.eval()
    cfg = model.config
    dim = cfg.hidden_size // cfg.num_attention_heads
    tok = AutoTokenizer.from_pretrained(SRC)
    batch = tok(texts, padding=True, truncation=True, max_length=msl, return_tensors="pt")
    for k in ("input_ids", "attention_mask"):
        assert batch[k].tolist() == x["tokens"][k], k
    mask = batch["attention_mask"]
    inputs = {"input_ids": batch["input_ids"], "attention_mask": mask}

    def hidden_with(inv):
        set_freq(model, inv)
        with torch.no_grad():
            return model(**inputs).last_hidden_state.float()

    def masked_max(a, b):
        m = mask.bool().unsqueeze(-1).expand_as(a)
        return float((a.double() - b.double()).abs()[m].max())

    ntk = remote_ntk_inv_freq(dim, THETA, FACTOR)
    checks = {
        "inv_freq_ntk": ntk.tolist(),
        "hidden_vs_plain_theta_max_abs": masked_max(hidden_with(ntk), hidden_with(plain_inv_freq(dim, THETA))),
        "hidden_vs_theta_times_factor_only_max_abs": masked_max(
            hidden_with(ntk), hidden_with(plain_inv_freq(dim, THETA * FACTOR))),
    }
    assert checks["hidden_vs_plain_theta_max_abs"] > 1e-2, checks
    assert checks["hidden_vs_theta_times_factor_only_max_abs"] > 1e-2, checks
    hidden = hidden_with(ntk)
    # float32 noise floor: the same model in float64
    m64 = type(model)(cfg).double()
    m64.load_state_dict(model.state_dict())
    m64.rotary_emb.inv_freq.copy_(ntk.double())
    m64.eval()
    with torch.no_grad():
        h64 = m64(**inputs).last_hidden_state
    checks["hidden_fp32_vs_fp64_max_abs"] = masked_max(hidden, h64)
    # sentence-transformers on the patched model: what the hub model's users get
    emb = st.encode(texts, batch_size=len(texts), convert_to_numpy=True)
    cls = hidden.double()[:, 0]
    pooled = cls / cls.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    checks["pooled_hidden_vs_st_max_abs"] = float((pooled - torch.from_numpy(emb).double()).abs().max())
    assert checks["pooled_hidden_vs_st_max_abs"] < 1e-5, checks

    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    shutil.copytree(SRC, OUT)
    config = {
        "architectures": ["NewModel"],
        "auto_map": {"AutoConfig": "Alibaba-NLP/new-impl--configuration.NewConfig",
                     "AutoModel": "Alibaba-NLP/new-impl--modeling.NewModel"},
        "model_type": "new",
        "vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size, "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads, "intermediate_size": cfg.intermediate_size,
        "hidden_act": cfg.hidden_act, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": cfg.max_position_embeddings, "type_vocab_size": cfg.type_vocab_size,
        "initializer_range": 0.02, "layer_norm_type": "layer_norm", "layer_norm_eps": cfg.layer_norm_eps,
        "position_embedding_type": "rope", "rope_theta": THETA, "rope_scaling": {"factor": FACTOR, "type": "ntk"},
        "logn_attention_clip1": False, "logn_attention_scale": False, "pack_qkv": True, "unpad_inputs": False,
        "use_memory_efficient_attention": False, "pad_token_id": cfg.pad_token_id, "classifier_dropout": None,
        "torch_dtype": "float32", "transformers_version": "4.39.1",
    }
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    np.save(os.path.join(OUT, "hidden.npy"),
            (hidden * mask.unsqueeze(-1).to(hidden.dtype)).numpy().astype(np.float32))
    x["family"] = "gte-ntk"
    x["model_type"] = "new"
    x["judge"] = ("transformers' GteModel on the gte fixture's weights with the remote code's NTK inverse frequencies"
                  " (tools/make_gte_ntk.py): rope_theta %d, rope_scaling ntk factor %s" % (THETA, FACTOR))
    x["versions"]["torch"], x["versions"]["sentence_transformers"] = torch.__version__, __import__(
        "sentence_transformers").__version__
    x["versions"]["transformers"] = __import__("transformers").__version__
    x["encodings"] = [{"prompt_name": None, "prompt": None, "prompt_length": None,
                       "embeddings": emb.astype(np.float32).tolist()}]
    x["checks"] = checks
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(x, f, indent=1, ensure_ascii=False)
    print(json.dumps({k: v for k, v in checks.items() if k != "inv_freq_ntk"}))


if __name__ == "__main__":
    sys.exit(main())
