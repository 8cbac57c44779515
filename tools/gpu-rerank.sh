#!/usr/bin/env bash
# The rerank / classify check on a GPU host: the sequence-classification head (graph ops, issue 36) on --device cuda
# and cpu from the dist bundle, against the scores tools/make_rerankers.py committed in tests/rerankers.
# Run from the repository root with dist/attn-*-linux-x86_64.tar.gz built (./attn dist) and $OUT a folder:
#   OUT=/tmp/out bash tools/gpu-rerank.sh
set -e
OUT="${OUT:-/tmp/gpu-rerank}"; mkdir -p "$OUT"
ls tests/rerankers/bert-reranker >/dev/null 2>&1 || { echo "no tests/rerankers here: $(git log --oneline -1 2>/dev/null)"; exit 9; }
B=$(mktemp -d) && tar xzf dist/attn-*-linux-x86_64.tar.gz -C "$B"
A=$(ls -d "$B"/attn-*/)
nvidia-smi -L || true
"$A/attn" probe 2>&1 | head -5
python3 - "$OUT" "$A" <<'PY'
import json, subprocess, sys, os
out = sys.argv[1]; attn = os.path.join(sys.argv[2], "attn")
for dev in ["cuda", "cpu"]:
    for m in ["bert-reranker", "xlm-roberta-reranker"]:
        e = json.load(open(f"tests/rerankers/{m}/expected.json"))
        q = e["pairs"][0][0]; passages = [p[1] for p in e["pairs"][:5]]
        args = [attn, "rerank", "--model", f"tests/rerankers/{m}", "--device", dev, "--query", q,
                "--output", f"{out}/{m}-{dev}.jsonl"]
        for p in passages: args += ["--text", p]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode: print(dev, m, "exit", r.returncode, r.stderr.strip()[-300:]); continue
        got = [json.loads(l) for l in open(f"{out}/{m}-{dev}.jsonl")]
        diff = max(abs(g["score"] - e["scores"][g["index"]]) for g in got)
        order = [g["index"] for g in got] == [x["corpus_id"] for x in e["rank"]] if m == "bert-reranker" else "-"
        print(f"{dev} {m}: max |score - CrossEncoder.predict| {diff:.2e} (bound 2e-6), rank as CrossEncoder.rank: {order}")
PY
