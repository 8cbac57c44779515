#!/usr/bin/env python3
"""Seeded random-weight cross-encoders and a classifier, saved as sentence-transformers 6 / transformers save them,
with the scores the Java tests hold attn's Reranker and Classifier to (tests/rerankers/README.md says what each holds).

Run from the repository root in the venv tools/make_families.py describes (local wheels, no network):

    /work/venv-hf/bin/python tools/make_rerankers.py        # rewrites tests/rerankers/<name>/

Deterministic: the tokenizers are tools/make_families.py's (trained tie-free on its corpus), the weights are drawn
by its randomize() from a generator seeded per model.

  bert-reranker         BertForSequenceClassification, num_labels 1, token types; CrossEncoder(...).save(dir)
  xlm-roberta-reranker  XLMRobertaForSequenceClassification, num_labels 1, no token types; CrossEncoder save
  distilbert-reranker   DistilBertForSequenceClassification (pre_classifier + ReLU), num_labels 1; CrossEncoder save
  mpnet-reranker        MPNetForSequenceClassification (dense + tanh + out_proj), num_labels 1; CrossEncoder save
  gte-reranker          GteForSequenceClassification (pooler dense + tanh, classifier), num_labels 1; CrossEncoder save
  nomic-bert-reranker   NomicBertForSequenceClassification (the same head), num_labels 1; CrossEncoder save
  modernbert-reranker   ModernBertForSequenceClassification, classifier_pooling mean (head.dense, GELU, head.norm,
                        classifier), num_labels 1; CrossEncoder save
  modernbert-cls-reranker  the same with classifier_pooling cls and classifier_bias true
  qwen3-reranker        Qwen3ForSequenceClassification (score on the last non-pad token), num_labels 1; CrossEncoder
                        save
  bert-classifier       BertForSequenceClassification, num_labels 3 with id2label; model.save_pretrained(dir) and
                        tokenizer.save_pretrained(dir) (a plain transformers folder, no sentence-transformers files);
                        its expected.json adds "left": the ids, logits and softmax with truncation_side="left",
                        and "pairs": the ids, token types, logits and softmax of sentence pairs (TEI's /predict takes
                        a pair [a, b] as one input)

Each folder's expected.json holds the pairs (or texts), the token ids and token type ids transformers' tokenizer
gives each pair alone (truncation=True: 'longest_first' at the model's max length), transformers' logits for the
batch, CrossEncoder.predict's scores with the model's default activation and with activation_fn=Identity (raw), and
the versions that wrote it.
"""
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

SEED = 3600
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "tests", "rerankers")

QUERY = "how do transformers read a sentence?"
LONG = ("Transformers read every token of a sentence at once, and attention lets each word look at all the others; "
        "this passage keeps going well past the limit on tokens so that truncation has to cut it short before its "
        "end, which a careful engine must do exactly as the tokenizer does.")
PAIRS = [
    [QUERY, "Attention lets every token look at every other token of the sentence at once."],
    [QUERY, "The quick brown fox jumps over the lazy dog."],
    [QUERY, ""],
    [QUERY, "中文文本处理和日本語のテキスト。"],
    [QUERY, LONG],
    ["中文", "Zürich, 東京 and 北京 — a naïve résumé!"],
    [LONG, "short passage"],
    [LONG, LONG + " again"],
    ["", "hello"],
    ["Café crème brûlée", "über Größe, niño y señor mañana 🚀"],
]
TEXTS = ["The quick brown fox jumps over the lazy dog.", "", "中文文本处理和日本語のテキスト。", LONG,
         "Embeddings make search fun 🚀🙂", "hello"]

MODELS = {
    "bert-reranker": dict(tok=mf.tok_bert, cfg=mf.cfg_bert, labels=1, msl=32, save="cross-encoder"),
    "xlm-roberta-reranker": dict(tok=mf.tok_xlmr, cfg=mf.cfg_xlmr, labels=1, msl=32, save="cross-encoder"),
    "bert-classifier": dict(tok=mf.tok_bert, cfg=mf.cfg_bert, labels=3, msl=24, save="transformers",
                            id2label={0: "negative", 1: "neutral", 2: "positive"}),
    "distilbert-reranker": dict(tok=mf.tok_distilbert, cfg=mf.cfg_distilbert, labels=1, msl=32, save="cross-encoder"),
    "mpnet-reranker": dict(tok=mf.tok_mpnet, cfg=mf.cfg_mpnet, labels=1, msl=32, save="cross-encoder"),
    "gte-reranker": dict(tok=mf.tok_xlmr, cfg=mf.cfg_gte, labels=1, msl=32, save="cross-encoder"),
    "nomic-bert-reranker": dict(tok=mf.tok_bert, cfg=mf.cfg_nomic, labels=1, msl=32, save="cross-encoder"),
    # gte-reranker-modernbert-base style: the mean of the tokens, local window 8 (cfg_modernbert)
    "modernbert-reranker": dict(tok=mf.tok_modernbert, cfg=mf.cfg_modernbert, labels=1, msl=32,
                                save="cross-encoder", extra=dict(classifier_pooling="mean")),
    # transformers' default pooling (the first token), with the head's optional bias
    "modernbert-cls-reranker": dict(tok=mf.tok_modernbert, cfg=mf.cfg_modernbert, labels=1, msl=32,
                                    save="cross-encoder", extra=dict(classifier_pooling="cls", classifier_bias=True)),
    # Qwen3-Reranker in its sequence-classification form (tomaarsen/Qwen3-Reranker-0.6B-seq-cls): a causal decoder,
    # score (1, E) without bias on the last token that is not the pad token (transformers' rule; this tokenizer
    # appends <|endoftext|>, which is also the pad token, so the score reads the token before it), left padding
    "qwen3-reranker": dict(tok=mf.tok_qwen, cfg=mf.cfg_qwen3, labels=1, msl=48, save="cross-encoder"),
}


def make(name, idx):
    from sentence_transformers import CrossEncoder
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    spec = MODELS[name]
    out = os.path.join(OUT, name)
    tok = spec["tok"](spec["msl"])
    config = spec["cfg"](tok)
    config.num_labels = spec["labels"]
    for k, v in spec.get("extra", {}).items():
        setattr(config, k, v)
    if "id2label" in spec:
        config.id2label = spec["id2label"]
        config.label2id = {v: k for k, v in spec["id2label"].items()}
    config.architectures = [type(config).__name__.replace("Config", "ForSequenceClassification")]
    seed = SEED + idx
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config)
    mf.randomize(model, seed)
    model.eval()
    if os.path.exists(out):
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if spec["save"] == "cross-encoder":
            ce = CrossEncoder(tmp, max_length=spec["msl"])
            ce.save(out)
            os.remove(os.path.join(out, "README.md"))  # the model card: not read by anyone
        else:
            shutil.copytree(tmp, out)
    # the references, from the saved folder, loaded as users load it
    hf_tok = AutoTokenizer.from_pretrained(out)
    hf = AutoModelForSequenceClassification.from_pretrained(out).eval()
    pairs = spec["save"] == "cross-encoder"
    inputs = PAIRS if pairs else TEXTS
    items = []
    for it in inputs:
        # as lists, as CrossEncoder.predict calls the tokenizer: a lone pair (a, "") would drop the empty passage
        enc = (hf_tok([it[0]], [it[1]], truncation=True, max_length=spec["msl"]) if pairs
               else hf_tok([it], truncation=True, max_length=spec["msl"]))
        items.append({"input_ids": enc["input_ids"][0],
                      "token_type_ids": enc["token_type_ids"][0] if "token_type_ids" in enc else None})
    with torch.no_grad():
        batch = (hf_tok([p[0] for p in inputs], [p[1] for p in inputs], truncation=True, padding=True,
                        max_length=spec["msl"], return_tensors="pt") if pairs
                 else hf_tok(inputs, truncation=True, padding=True, max_length=spec["msl"], return_tensors="pt"))
        logits = hf(**batch).logits.double().numpy()
    expected = {"max_length": spec["msl"], "num_labels": spec["labels"], "logits": logits.tolist(), "items": items,
                "versions": mf.versions()}
    if pairs:
        ce = CrossEncoder(out)
        expected["pairs"] = inputs
        expected["activation"] = type(ce.activation_fn).__name__
        expected["scores"] = np.asarray(ce.predict(inputs, batch_size=4), dtype=np.float64).tolist()
        expected["raw_scores"] = np.asarray(ce.predict(inputs, batch_size=4, activation_fn=torch.nn.Identity()),
                                            dtype=np.float64).tolist()
        expected["rank"] = ce.rank(QUERY, [p[1] for p in inputs[:5]], return_documents=False)
        for r in expected["rank"]:
            r["score"] = float(r["score"])
        expected["ce_max_length"] = ce.max_seq_length
        # TEI's truncation_direction "left" on pairs: transformers' truncation_side="left" (longest first, the first
        # tokens of the longer text dropped), sigmoid of the logits
        left_tok = AutoTokenizer.from_pretrained(out, truncation_side="left")
        left_items = []
        for a, b in inputs:
            enc = left_tok([a], [b], truncation=True, max_length=spec["msl"])
            left_items.append({"input_ids": enc["input_ids"][0],
                               "token_type_ids": enc["token_type_ids"][0] if "token_type_ids" in enc else None})
        with torch.no_grad():
            lb = left_tok([p[0] for p in inputs], [p[1] for p in inputs], truncation=True, padding=True,
                          max_length=spec["msl"], return_tensors="pt")
            left_logits = hf(**lb).logits.double()
        expected["left"] = {"items": left_items, "logits": left_logits.tolist(),
                            "scores": torch.sigmoid(left_logits)[:, 0].tolist()}
    else:
        expected["texts"] = inputs
        expected["id2label"] = {str(k): v for k, v in hf.config.id2label.items()}
        expected["softmax"] = torch.softmax(torch.tensor(logits), dim=-1).tolist()
        # TEI's truncation_direction "left": transformers' truncation_side="left" (the first tokens dropped)
        left_tok = AutoTokenizer.from_pretrained(out, truncation_side="left")
        left_ids = [left_tok([t], truncation=True, max_length=spec["msl"])["input_ids"][0] for t in inputs]
        with torch.no_grad():
            lb = left_tok(inputs, truncation=True, padding=True, max_length=spec["msl"], return_tensors="pt")
            left_logits = hf(**lb).logits.double()
        expected["left"] = {"input_ids": left_ids, "logits": left_logits.tolist(),
                            "softmax": torch.softmax(left_logits, dim=-1).tolist()}
        expected["sigmoid"] = torch.sigmoid(torch.tensor(logits)).tolist()
        # sentence pairs through the classifier (tokenized together, longest first, token types 0 and 1)
        pair_items = []
        for a, b in PAIRS:
            enc = hf_tok([a], [b], truncation=True, max_length=spec["msl"])
            pair_items.append({"input_ids": enc["input_ids"][0], "token_type_ids": enc["token_type_ids"][0]})
        with torch.no_grad():
            pb = hf_tok([p[0] for p in PAIRS], [p[1] for p in PAIRS], truncation=True, padding=True,
                        max_length=spec["msl"], return_tensors="pt")
            pair_logits = hf(**pb).logits.double()
        expected["pairs"] = {"pairs": PAIRS, "items": pair_items, "logits": pair_logits.tolist(),
                             "softmax": torch.softmax(pair_logits, dim=-1).tolist()}
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(name, "written:", sorted(os.listdir(out)))


def main():
    only = sys.argv[1:] or list(MODELS)
    for i, name in enumerate(MODELS):
        if name in only:
            make(name, i)


if __name__ == "__main__":
    main()
