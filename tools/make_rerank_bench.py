#!/usr/bin/env python3
"""A MiniLM-L6-sized cross-encoder with seeded random weights, for speed comparisons (never committed), and its ONNX
export:

    /work/venv-hf/bin/python tools/make_rerank_bench.py --out /tmp/rr-bench/minilm-l6-reranker \\
        [--tokenizer /tmp/minilm/tokenizer.json]

The shape of cross-encoder/ms-marco-MiniLM-L6-v2: BertForSequenceClassification, 6 layers, 384 wide, 12 heads, FFN
1536, vocab 30522, 512 positions, 2 token types, 1 label, max length 512. The tokenizer is a bert-base-uncased-style
WordPiece: all-MiniLM-L6-v2's tokenizer.json (tools/fetch_model.sh all-minilm-l6-v2 /tmp/minilm fetches it), its fixed
truncation and padding dropped (CrossEncoder sets its own). The weights are drawn by tools/make_families.py's
randomize() from a generator seeded with SEED. The folder is what sentence-transformers 6's CrossEncoder.save writes,
plus

  onnx/model.onnx  torch.onnx.export (dynamo) of the BertForSequenceClassification: inputs input_ids, attention_mask,
                   token_type_ids (int64, dynamic batch and sequence), output logits (batch, 1)
  bench.json       what the script checked: ONNX Runtime (Python) vs transformers logits on a padded batch, the
                   versions
  expected.json    for the benchmark's 100 pairs (QUERY, each line of PASSAGES): the input_ids and token_type_ids
                   transformers' tokenizer gives each pair (as CrossEncoder.predict calls it), and CrossEncoder's raw
                   logits (activation_fn=Identity, batch_size 32); RerankVsOnnxRuntime holds attn's tokens to them

PASSAGES (text/src/test/resources/io/attn/text/rerank-passages.txt, committed) is written by --write-passages: 100
passages of 10 to 200 words (a seeded draw), each cut from the sentences of mixed.txt (its lines of 5 words or more)
read on from a drawn line, cyclically.

Run in the venv tools/make_families.py describes (torch, transformers, sentence-transformers, onnx, onnxscript,
onnxruntime from local wheels). benchmarks/scripts/rerank_vs_onnxruntime.sh runs it when the folder is missing.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_families as mf  # noqa: E402

SEED = 3636
MAX_LENGTH = 512
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RES = os.path.join(ROOT, "text", "src", "test", "resources", "io", "attn", "text")
PASSAGES = os.path.join(RES, "rerank-passages.txt")
QUERY = "how do transformer models use attention to rank search results?"  # RerankVsOnnxRuntime.QUERY


def write_passages():
    import random
    with open(os.path.join(RES, "mixed.txt"), encoding="utf-8") as f:
        lines = [x.strip() for x in f if len(x.split()) >= 5]
    rng = random.Random(SEED)
    out = []
    for _ in range(100):
        n = rng.randint(10, 200)
        at = rng.randrange(len(lines))
        words = []
        while len(words) < n:
            words += lines[at % len(lines)].split()
            at += 1
        out.append(" ".join(words[:n]))
    with open(PASSAGES, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(PASSAGES, "written:", len(out), "passages,", sum(len(p.split()) for p in out), "words")


def tokenizer(path):
    from transformers import BertTokenizerFast
    with open(path, encoding="utf-8") as f:
        t = json.load(f)
    t["truncation"] = None
    t["padding"] = None
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "tokenizer.json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(t, f, ensure_ascii=False)
        return BertTokenizerFast(tokenizer_file=p, do_lower_case=True, model_max_length=MAX_LENGTH)


def export_onnx(model, path, sample):
    """torch.onnx.export (dynamo): input_ids, attention_mask, token_type_ids -> logits, dynamic batch/sequence."""
    os.makedirs(os.path.dirname(path), exist_ok=True)

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    w = Wrap(model).eval()
    batch = torch.export.Dim("batch")
    seq = torch.export.Dim("sequence")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(w, tuple(sample[n] for n in names), path, input_names=names, output_names=["logits"],
                          dynamo=True, external_data=False, dynamic_shapes={n: {0: batch, 1: seq} for n in names},
                          verbose=False, report=False)
    import onnx
    m = onnx.load(path)
    for node in m.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    for v in list(m.graph.input) + list(m.graph.output):
        del v.metadata_props[:]
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the folder to write (replaced)")
    ap.add_argument("--tokenizer", default="/tmp/minilm/tokenizer.json", help="a bert-base-uncased WordPiece")
    ap.add_argument("--write-passages", action="store_true", help="rewrite the committed passages file first")
    a = ap.parse_args()
    if a.write_passages:
        write_passages()
    torch.set_num_threads(2)
    from sentence_transformers import CrossEncoder
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig

    tok = tokenizer(a.tokenizer)
    config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                        intermediate_size=1536, hidden_act="gelu", max_position_embeddings=512, type_vocab_size=2,
                        layer_norm_eps=1e-12, pad_token_id=tok.pad_token_id, num_labels=1,
                        architectures=["BertForSequenceClassification"])
    assert len(tok) == config.vocab_size, len(tok)
    torch.manual_seed(SEED)
    model = AutoModelForSequenceClassification.from_config(config)
    mf.randomize(model, SEED)
    model.eval()
    out = os.path.abspath(a.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        CrossEncoder(tmp, max_length=MAX_LENGTH).save(out)
    if os.path.exists(os.path.join(out, "README.md")):
        os.remove(os.path.join(out, "README.md"))
    # reload as users load it, export, check ONNX Runtime against transformers on a padded batch of pairs
    hf_tok = AutoTokenizer.from_pretrained(out)
    hf = AutoModelForSequenceClassification.from_pretrained(out).eval()
    q = "how does attention let a transformer read a whole sentence at once?"
    passages = ["Attention lets every token look at every other token.", "",
                " ".join(["The quick brown fox jumps over the lazy dog."] * 40), "Zürich, naïve résumé 中文"]
    batch = hf_tok([q] * len(passages), passages, truncation=True, padding=True, max_length=MAX_LENGTH,
                   return_tensors="pt")
    with torch.no_grad():
        logits = hf(**batch).logits
    path = os.path.join(out, "onnx", "model.onnx")
    export_onnx(hf, path, batch)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    got = sess.run(["logits"], {k: batch[k].numpy().astype(np.int64)
                                for k in ("input_ids", "attention_mask", "token_type_ids")})[0]
    diff = float(np.abs(got.astype(np.float64) - logits.double().numpy()).max())
    ce = CrossEncoder(out)
    raw = ce.predict([[q, p] for p in passages], activation_fn=torch.nn.Identity())
    ce_diff = float(np.abs(np.asarray(raw, dtype=np.float64) - logits.double().numpy()[:, 0]).max())
    info = {"seed": SEED, "lengths": batch["attention_mask"].sum(1).tolist(), "logits": logits[:, 0].tolist(),
            "onnxruntime_vs_transformers_max_abs": diff, "crossencoder_vs_transformers_max_abs": ce_diff,
            "ce_max_length": ce.max_seq_length, "activation": type(ce.activation_fn).__name__,
            "parameters": sum(p.numel() for p in hf.parameters()),
            "versions": dict(mf.versions(), onnx=__import__("onnx").__version__)}
    with open(PASSAGES, encoding="utf-8") as f:
        passages = f.read().splitlines()
    items = []
    for p in passages:
        enc = hf_tok([QUERY], [p], truncation=True, max_length=ce.max_seq_length)
        items.append({"input_ids": enc["input_ids"][0], "token_type_ids": enc["token_type_ids"][0]})
    raw = ce.predict([[QUERY, p] for p in passages], batch_size=32, activation_fn=torch.nn.Identity())
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"query": QUERY, "passages": passages, "items": items,
                   "raw_scores": np.asarray(raw, dtype=np.float64).tolist()}, f, ensure_ascii=False)
        f.write("\n")
    info["pair_tokens"] = sum(len(i["input_ids"]) for i in items)
    with open(os.path.join(out, "bench.json"), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{out}: {info['parameters'] / 1e6:.1f}M parameters, lengths {info['lengths']}, logits "
          f"{[round(x, 4) for x in info['logits']]}, onnxruntime vs transformers max abs {diff:.3g}, CrossEncoder vs "
          f"transformers {ce_diff:.3g}; the benchmark's 100 pairs: {info['pair_tokens']} tokens")
    assert diff <= 1e-4, f"ONNX differs from transformers by {diff}"


if __name__ == "__main__":
    main()
