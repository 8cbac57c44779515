#!/usr/bin/env python3
"""Sentence embeddings from attn against sentence-transformers on the same texts and device (tools/gpu-run.sh's
embed step):

    python3 tools/embed_vs_st.py --model DIR --texts T.txt --attn-npy E.npy [--device cuda] [--out embed.json]

E.npy is `attn embed --model DIR --input T.txt --output E.npy`'s output (float32 (N, dim)). Loads DIR with
sentence-transformers on --device, encodes the texts (batch 64, as attn's defaults cut them: the model's own
max_seq_length), times the encode (median of 3 after one warm-up) and compares: per text the cosine between the two
vectors, the same after subtracting sentence-transformers' mean vector from both (>= 0.999: a difference cannot hide
in what every text shares), and the max abs difference. Writes one JSON object; exit 1 when any cosine is below 0.9999 or the shapes
differ. Runs on any sentence-transformers that loads the folder; an error is reported in the JSON and exit 2.
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--texts", required=True)
    ap.add_argument("--attn-npy", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default="embed.json")
    ap.add_argument("--min-cos", type=float, default=0.9999)
    a = ap.parse_args()
    res = {"model": a.model, "device": a.device}
    try:
        import numpy as np
        from sentence_transformers import SentenceTransformer

        texts = open(a.texts, encoding="utf-8").read().splitlines()
        ours = np.load(a.attn_npy)
        m = SentenceTransformer(a.model, device=a.device)
        m.encode(texts[:8], batch_size=64)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            ref = m.encode(texts, batch_size=64, convert_to_numpy=True)
            times.append(time.perf_counter() - t)
        times.sort()
        res.update(texts=len(texts), st_sentences_per_s=len(texts) / times[1], max_seq_length=m.max_seq_length)
        if ours.shape != ref.shape:
            res["error"] = "shapes differ: attn %s, sentence-transformers %s" % (ours.shape, ref.shape)
        else:
            ref = ref.astype(np.float64)
            o = ours.astype(np.float64)
            cos = (o * ref).sum(1) / (np.linalg.norm(o, axis=1) * np.linalg.norm(ref, axis=1))
            # the same comparison after removing what every text shares (the reference's mean vector): texts
            # that all embed alike (random weights, near-identical texts) cannot hide a difference there
            mu = ref.mean(0)
            rc, oc = ref - mu, o - mu
            ccos = (oc * rc).sum(1) / (np.linalg.norm(oc, axis=1) * np.linalg.norm(rc, axis=1) + 1e-30)
            n = ref / np.linalg.norm(ref, axis=1, keepdims=True)
            pair = n @ n.T
            res.update(min_cos=float(cos.min()), mean_cos=float(cos.mean()), max_abs=float(np.abs(o - ref).max()),
                       centered_min_cos=float(ccos.min()),
                       ref_mean_pair_cos=float(pair[np.triu_indices(len(n), 1)].mean()) if len(n) > 1 else None,
                       worst_text=int(cos.argmin()), pass_=bool(cos.min() >= a.min_cos and ccos.min() >= 0.999))
    except Exception as e:  # noqa: BLE001 - one line into the JSON, exit 2
        res["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1:] or "")
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res))
    if "error" in res:
        sys.exit(2 if "shapes" not in res["error"] else 1)
    sys.exit(0 if res.get("pass_") else 1)


if __name__ == "__main__":
    main()
