#!/usr/bin/env python3
"""A BERT model folder with seeded random weights, for machines a real model cannot reach (tools/gpu-run.sh's
embed step on a GPU host whose upload limit leaves no room for 87 MB of weights):

    python3 tools/random_bert.py --from DIR --out OUT [--seed 1] [--std 0.05]

Copies every file of DIR except its weights (config.json, tokenizer.json, modules.json, 1_Pooling/, ...) into OUT and
writes OUT/model.safetensors (F32) under BertModel's names, with the shapes config.json gives: matrices and embeddings
N(0, std), biases N(0, std / 2), LayerNorm weights 1 + N(0, 0.1) and biases N(0, 0.05). The default std of 0.05
(BERT's own init is 0.02) keeps attention from being uniform, so the comparison it serves exercises real softmax
weights. The numbers are not a trained model's: such a folder proves that two engines compute the same function of
the same weights and tokens, not what the model means. Needs only numpy.
"""
import argparse
import json
import os
import shutil
import struct
import sys


def tensors(cfg, rng, std):
    import numpy as np

    h, ffn, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    out = {}

    def normal(shape, s):
        return rng.normal(0.0, s, size=shape).astype(np.float32)

    def layer_norm(prefix):
        out[prefix + ".weight"] = (1.0 + normal((h,), 0.1)).astype(np.float32)
        out[prefix + ".bias"] = normal((h,), 0.05)

    def linear(prefix, n_out, n_in):
        out[prefix + ".weight"] = normal((n_out, n_in), std)
        out[prefix + ".bias"] = normal((n_out,), std / 2)

    out["embeddings.word_embeddings.weight"] = normal((cfg["vocab_size"], h), std)
    out["embeddings.position_embeddings.weight"] = normal((cfg["max_position_embeddings"], h), std)
    out["embeddings.token_type_embeddings.weight"] = normal((cfg.get("type_vocab_size", 2), h), std)
    layer_norm("embeddings.LayerNorm")
    for i in range(layers):
        p = "encoder.layer.%d." % i
        for n in ("query", "key", "value"):
            linear(p + "attention.self." + n, h, h)
        linear(p + "attention.output.dense", h, h)
        layer_norm(p + "attention.output.LayerNorm")
        linear(p + "intermediate.dense", ffn, h)
        linear(p + "output.dense", h, ffn)
        layer_norm(p + "output.LayerNorm")
    return out


def write_safetensors(path, ts):
    header, offset = {}, 0
    for name in sorted(ts):
        a = ts[name]
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    header["__metadata__"] = {"format": "pt", "made_by": "tools/random_bert.py"}
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for name in sorted(ts):
            f.write(ts[name].tobytes(order="C"))
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="src", required=True, help="a model folder; its config.json gives the shapes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--std", type=float, default=0.05)
    a = ap.parse_args()
    import numpy as np

    try:
        with open(os.path.join(a.src, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("random_bert: %s/config.json: %s" % (a.src, e))
    if cfg.get("model_type") != "bert":
        sys.exit("random_bert: %s/config.json: model_type is %r, not bert" % (a.src, cfg.get("model_type")))
    os.makedirs(a.out, exist_ok=True)
    weights = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "model.onnx", "onnx")
    for name in os.listdir(a.src):
        if name in weights or name.startswith("model-"):
            continue
        s, d = os.path.join(a.src, name), os.path.join(a.out, name)
        if os.path.isdir(s):
            shutil.copytree(s, d, dirs_exist_ok=True)
        else:
            shutil.copyfile(s, d)
    ts = tensors(cfg, np.random.default_rng(a.seed), a.std)
    write_safetensors(os.path.join(a.out, "model.safetensors"), ts)
    n = sum(t.size for t in ts.values())
    print("random_bert: %s: %d tensors, %.1fM parameters (seed %d, std %g)" % (a.out, len(ts), n / 1e6, a.seed, a.std))


if __name__ == "__main__":
    main()
