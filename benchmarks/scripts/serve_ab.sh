#!/usr/bin/env bash
# attn serve with dynamic batching against the same server with batching off, and against `attn bench embed` on the
# same texts, alternating in rounds (same-run ratios on a shared machine):
#   benchmarks/scripts/serve_ab.sh [MODEL_DIR] [texts.txt] [rounds] [seconds] [clients] [extra bench serve flags...]
# (default: models/all-MiniLM-L6-v2, text/src/test/resources/io/attn/text/mixed.txt, 3 rounds of 15 s, 64 clients,
# 2 threads). One line per run, a JSON summary last (medians and ratios).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-models/all-MiniLM-L6-v2}"; TEXTS="${2:-text/src/test/resources/io/attn/text/mixed.txt}"
ROUNDS="${3:-3}"; SECONDS_="${4:-15}"; CLIENTS="${5:-64}"; shift $(( $# < 5 ? $# : 5 )); EXTRA=("$@")
cd "$ROOT"
LOG="$(mktemp)"; trap 'rm -f "$LOG"' EXIT
for r in $(seq "$ROUNDS"); do
  for mode in batching no-batching embed; do
    case $mode in
      batching) ./attn bench serve --model "$MODEL" --input "$TEXTS" --clients "$CLIENTS" --seconds "$SECONDS_" \
                  --threads 2 "${EXTRA[@]}" 2>/dev/null | tail -n1 ;;
      no-batching) ./attn bench serve --model "$MODEL" --input "$TEXTS" --clients "$CLIENTS" --seconds "$SECONDS_" \
                  --threads 2 --no-batching "${EXTRA[@]}" 2>/dev/null | tail -n1 ;;
      embed) ./attn bench embed --model "$MODEL" --input "$TEXTS" --threads 2 2>/dev/null | tail -n1 ;;
    esac | sed "s/^/$mode /" | tee -a "$LOG"
  done
done
python3 - "$LOG" <<'EOF'
import json, statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    mode, js = line.split(" ", 1)
    runs.setdefault(mode, []).append(json.loads(js))
med = lambda mode, key: st.median(r[key] for r in runs[mode])
b, n, e = (med(m, "sentences_per_s") for m in ("batching", "no-batching", "embed"))
print(json.dumps({"bench": "serve_ab", "rounds": len(runs["batching"]), "cpu": runs["embed"][0].get("cpu"),
                  "batching_sent_per_s": [r["sentences_per_s"] for r in runs["batching"]],
                  "no_batching_sent_per_s": [r["sentences_per_s"] for r in runs["no-batching"]],
                  "embed_sent_per_s": [r["sentences_per_s"] for r in runs["embed"]],
                  "batching_p50_ms": [r["p50_ms"] for r in runs["batching"]],
                  "batching_p99_ms": [r["p99_ms"] for r in runs["batching"]],
                  "errors": sum(r["errors"] for m in ("batching", "no-batching") for r in runs[m]),
                  "batching_vs_no_batching": round(b / n, 2), "batching_vs_embed": round(b / e, 2)}))
EOF
