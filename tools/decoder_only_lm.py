"""The PyTorch definition of attn's DecoderOnlyLM (`attn generate`), for training or exporting a model attn can run.

    from decoder_only_lm import DecoderOnlyLM
    lm = DecoderOnlyLM(vocab_size=1000, d_model=256, nhead=4, num_layers=4, dim_feedforward=1024, max_len=512,
                       positional="sinusoidal", norm_first=True, activation="gelu", tied_embeddings=True)
    ... train ...
    from export_torch import export; export(lm, "lm.safetensors")

x = embed(ids) + pos(0..L-1)   (sinusoidal table, or the learned pos.weight; the embedding is not scaled)
x = layers.N(x) with a causal mask  (nn.TransformerEncoderLayer, batch_first, dropout 0 at inference)
x = norm(x) when final_norm;  logits = lm_head(x)  (lm_head.weight is embed.weight when tied_embeddings)

state_dict names: embed.weight, pos.weight (learned only), layers.N.*, norm.*, lm_head.weight, lm_head.bias.
Runs on torch 1.13 and later: bias=False (a 2.1 argument of the layers and LayerNorm) is applied by removing the
biases where the constructors lack it, and the is_causal hint (2.0) is passed only where the forward has it.
"""

import inspect
import math

import torch
import torch.nn as nn


def sinusoidal_table(n, d):
    """PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i), w_i = exp(-ln(10000) 2i / d), computed in float64."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    w = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w)[:, : d // 2]
    return pe.to(torch.float32)


def with_bias(cls, bias, **kw):
    """cls(bias=bias, **kw) where the constructor has the argument (torch >= 2.1), else cls(**kw) with the biases of
    every Linear, MultiheadAttention and LayerNorm inside removed when bias is False (what the argument does)."""
    if "bias" in inspect.signature(cls.__init__).parameters:
        return cls(bias=bias, **kw)
    m = cls(**kw)
    if not bias:
        for sub in m.modules():
            if isinstance(sub, nn.MultiheadAttention):
                sub.in_proj_bias = None
            if isinstance(sub, (nn.Linear, nn.LayerNorm)) and sub.bias is not None:
                sub.bias = None
    return m


class DecoderOnlyLM(nn.Module):
    def __init__(self, vocab_size, d_model=512, nhead=8, num_layers=6, dim_feedforward=2048, max_len=1024,
                 positional="sinusoidal", norm_first=False, activation="relu", tied_embeddings=False,
                 final_norm=True, layer_norm_eps=1e-5, bias=True, lm_head_bias=True):
        super().__init__()
        if positional not in ("sinusoidal", "learned"):
            raise ValueError("positional must be 'sinusoidal' or 'learned'")
        if activation not in ("relu", "gelu"):
            raise ValueError("activation must be 'relu' or 'gelu'")
        self.cfg = dict(module="DecoderOnlyLM", vocab_size=vocab_size, d_model=d_model, nhead=nhead,
                        num_layers=num_layers, dim_feedforward=dim_feedforward, max_len=max_len,
                        positional=positional, norm_first=norm_first, activation=activation,
                        tied_embeddings=tied_embeddings, final_norm=final_norm, layer_norm_eps=layer_norm_eps,
                        bias=bias)
        self.embed = nn.Embedding(vocab_size, d_model)
        if positional == "learned":
            self.pos = nn.Embedding(max_len, d_model)
        else:
            self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)
        self.layers = nn.ModuleList([
            with_bias(nn.TransformerEncoderLayer, bias, d_model=d_model, nhead=nhead,
                       dim_feedforward=dim_feedforward, dropout=0.0, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=True, norm_first=norm_first)
            for _ in range(num_layers)])
        self.norm = with_bias(nn.LayerNorm, bias, normalized_shape=d_model, eps=layer_norm_eps) if final_norm else None
        self.lm_head = nn.Linear(d_model, vocab_size, bias=lm_head_bias)
        if tied_embeddings:
            self.lm_head.weight = self.embed.weight

    def attn_config(self):
        """The config attn reads (the "config" entry of the safetensors metadata)."""
        return dict(self.cfg)

    def forward(self, ids):
        """ids (B, L) int64 -> logits (B, L, V)."""
        n = ids.shape[1]
        if n > self.cfg["max_len"]:
            raise ValueError(f"{n} tokens exceed max_len {self.cfg['max_len']}")
        positions = torch.arange(n, device=ids.device)
        x = self.embed(ids) + (self.pos(positions) if self.cfg["positional"] == "learned" else self.pe[:n])
        mask = torch.full((n, n), float("-inf"), device=ids.device).triu(1)
        for layer in self.layers:
            hint = {"is_causal": True} if "is_causal" in inspect.signature(layer.forward).parameters else {}
            x = layer(x, src_mask=mask, **hint)
        if self.norm is not None:
            x = self.norm(x)
        return self.lm_head(x)

    @torch.no_grad()
    def greedy(self, ids, max_new_tokens, eos=None):
        """Greedy decoding by full recomputation (no cache): the reference for `attn generate --temperature 0`."""
        out = []
        seq = torch.as_tensor(ids, dtype=torch.long)[None, :]
        for _ in range(max_new_tokens):
            nxt = int(self.forward(seq)[0, -1].argmax())
            out.append(nxt)
            if nxt == eos:
                break
            seq = torch.cat([seq, torch.tensor([[nxt]])], dim=1)
        return out
