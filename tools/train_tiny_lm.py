#!/usr/bin/env python3
"""Trains the tiny language model shipped in examples/models for `attn generate` (needs torch; attn does not).

    python3 tools/train_tiny_lm.py [--out examples/models]

Writes tiny-lm.safetensors (a DecoderOnlyLM of tools/decoder_only_lm.py: 2 pre-norm layers, d_model 32, 4 heads,
sinusoidal positions, tied embeddings; about 20 thousand parameters) and tiny-lm.vocab.txt (one word a line). It has
learnt a few nursery rhymes (public domain) by heart, so a prompt from one of them continues it:

    ./attn generate --model examples/models/tiny-lm.safetensors --vocab examples/models/tiny-lm.vocab.txt \\
        --prompt "twinkle twinkle" --temperature 0

Deterministic on CPU (seeded); a few seconds.
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decoder_only_lm import DecoderOnlyLM  # noqa: E402
from export_torch import export  # noqa: E402

RHYMES = [
    "twinkle twinkle little star , how i wonder what you are .",
    "up above the world so high , like a diamond in the sky .",
    "mary had a little lamb , its fleece was white as snow .",
    "humpty dumpty sat on a wall , humpty dumpty had a great fall .",
    "jack and jill went up the hill to fetch a pail of water .",
    "jack fell down and broke his crown , and jill came tumbling after .",
    "hey diddle diddle , the cat and the fiddle , the cow jumped over the moon .",
    "baa baa black sheep , have you any wool ?",
    "row row row your boat , gently down the stream .",
    "the itsy bitsy spider climbed up the water spout .",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="examples/models")
    ap.add_argument("--steps", type=int, default=600)
    a = ap.parse_args()
    torch.manual_seed(7)
    words = sorted({w for line in RHYMES for w in line.split()})
    vocab = ["<unk>", "<bos>", "<eos>"] + words
    ids = {w: i for i, w in enumerate(vocab)}
    seqs = [[ids["<bos>"]] + [ids[w] for w in line.split()] + [ids["<eos>"]] for line in RHYMES]
    n = max(len(s) for s in seqs)
    x = torch.full((len(seqs), n), ids["<eos>"], dtype=torch.long)
    for i, s in enumerate(seqs):
        x[i, : len(s)] = torch.tensor(s)
    lm = DecoderOnlyLM(len(vocab), d_model=32, nhead=4, num_layers=2, dim_feedforward=64, max_len=64,
                       norm_first=True, activation="gelu", tied_embeddings=True)
    opt = torch.optim.Adam(lm.parameters(), lr=3e-3)
    lm.train()
    for step in range(a.steps):
        logits = lm(x[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == a.steps - 1:
            print("step %d: loss %.4f" % (step, loss.item()))
    lm.eval()
    os.makedirs(a.out, exist_ok=True)
    export(lm, os.path.join(a.out, "tiny-lm.safetensors"))
    with open(os.path.join(a.out, "tiny-lm.vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    prompt = [ids["<bos>"], ids["twinkle"], ids["twinkle"]]
    print("twinkle twinkle ->", " ".join(vocab[i] for i in lm.greedy(prompt, 12, eos=ids["<eos>"])))


if __name__ == "__main__":
    main()
