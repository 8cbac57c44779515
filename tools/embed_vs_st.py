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

fp16 (gpu-run.sh's embed step): --half also times `model.half()` (st_half_sentences_per_s); --attn-npy-fp16 F compares
`attn embed --precision fp16`'s vectors with the fp32 reference (bound --min-cos-fp16, default 0.999); --attn-sps and
--attn-fp16-sps carry attn's own sentences/s (from `attn bench embed`) into the JSON, beside the ratios.
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
    ap.add_argument("--half", action="store_true", help="also time sentence-transformers with model.half()")
    ap.add_argument("--attn-npy-fp16", help="attn embed --precision fp16's vectors, compared with the fp32 reference")
    ap.add_argument("--min-cos-fp16", type=float, default=0.999)
    ap.add_argument("--attn-sps", type=float, default=0, help="attn's sentences/s (fp32), recorded")
    ap.add_argument("--attn-fp16-sps", type=float, default=0, help="attn's sentences/s with --precision fp16")
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
        if a.attn_sps:
            res.update(attn_sentences_per_s=a.attn_sps, ratio=a.attn_sps / res["st_sentences_per_s"])
        if a.attn_npy_fp16:
            o16 = np.load(a.attn_npy_fp16).astype(np.float64)
            if o16.shape != ref.shape:
                res["fp16_error"] = "shapes differ: attn fp16 %s, sentence-transformers %s" % (o16.shape, ref.shape)
                res["pass_"] = False
            else:
                c16 = (o16 * ref).sum(1) / (np.linalg.norm(o16, axis=1) * np.linalg.norm(ref, axis=1))
                res.update(fp16_min_cos=float(c16.min()), fp16_mean_cos=float(c16.mean()),
                           fp16_pass=bool(c16.min() >= a.min_cos_fp16))
                res["pass_"] = res["pass_"] and res["fp16_pass"]
            if a.attn_fp16_sps:
                res["attn_fp16_sentences_per_s"] = a.attn_fp16_sps
        if a.half:
            try:
                m.half()
                m.encode(texts[:8], batch_size=64)
                th = []
                for _ in range(3):
                    t = time.perf_counter()
                    h = m.encode(texts, batch_size=64, convert_to_numpy=True)
                    th.append(time.perf_counter() - t)
                th.sort()
                h = h.astype(np.float64)
                ch = (h * ref).sum(1) / (np.linalg.norm(h, axis=1) * np.linalg.norm(ref, axis=1))
                res.update(st_half_sentences_per_s=len(texts) / th[1], st_half_min_cos=float(ch.min()))
                if a.attn_fp16_sps:
                    res["ratio_fp16"] = a.attn_fp16_sps / res["st_half_sentences_per_s"]
            except Exception as e:  # noqa: BLE001 - recorded; the fp32 comparison stands
                res["half_error"] = "%s: %s" % (type(e).__name__, str(e).strip()[-300:])
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
