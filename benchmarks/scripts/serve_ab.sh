#!/usr/bin/env bash
# attn serve with dynamic batching against the same server with batching off, and against `attn bench embed` on the
# same texts (its batched rate, and its one-text rate with --batch-size 1), alternating in rounds (same-run ratios on
# a shared machine):
#   benchmarks/scripts/serve_ab.sh [MODEL_DIR] [texts.txt] [rounds] [seconds] [clients] [extra bench serve flags...]
# (WARMUP=S in the environment: seconds of load sent uncounted first, default 8: on a loaded machine the JIT takes
# that long to compile the kernels, and a batch run in uncompiled code takes seconds)
# (default: models/all-MiniLM-L6-v2, text/src/test/resources/io/attn/text/mixed.txt, 3 rounds of 15 s, 64 clients,
# 2 threads). One line per run, a JSON summary last (medians and ratios, the load average before and after each
# round). The goals of issue 36: batching_vs_embed >= 0.8; gain_vs_engine_gain (batching / no-batching, divided by
# embed / embed-one) >= 0.9.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-models/all-MiniLM-L6-v2}"; TEXTS="${2:-text/src/test/resources/io/attn/text/mixed.txt}"
ROUNDS="${3:-3}"; SECONDS_="${4:-15}"; CLIENTS="${5:-64}"; shift $(( $# < 5 ? $# : 5 )); EXTRA=("$@")
cd "$ROOT"
WARMUP="${WARMUP:-8}"
LOG="$(mktemp)"; trap 'rm -f "$LOG"' EXIT
for r in $(seq "$ROUNDS"); do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG"
  for mode in batching no-batching embed embed-one; do
    case $mode in
      batching) ./attn bench serve --model "$MODEL" --input "$TEXTS" --clients "$CLIENTS" --seconds "$SECONDS_" \
                  --warmup "$WARMUP" --threads 2 "${EXTRA[@]}" 2>/dev/null | tail -n1 ;;
      no-batching) ./attn bench serve --model "$MODEL" --input "$TEXTS" --clients "$CLIENTS" --seconds "$SECONDS_" \
                  --warmup "$WARMUP" --threads 2 --no-batching "${EXTRA[@]}" 2>/dev/null | tail -n1 ;;
      embed) ./attn bench embed --model "$MODEL" --input "$TEXTS" --threads 2 2>/dev/null | tail -n1 ;;
      embed-one) ./attn bench embed --model "$MODEL" --input "$TEXTS" --threads 2 --batch-size 1 2>/dev/null \
                  | tail -n1 ;;
    esac | sed "s/^/$mode /" | tee -a "$LOG"
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG"
python3 - "$LOG" <<'EOF'
import json, statistics as st, sys
runs, loads = {}, []
for line in open(sys.argv[1]):
    mode, rest = line.split(" ", 1)
    if mode == "load":
        loads.append(rest.split()[0])
        continue
    runs.setdefault(mode, []).append(json.loads(rest))
med = lambda mode, key: st.median(r[key] for r in runs[mode])
b, n, e, o = (med(m, "sentences_per_s") for m in ("batching", "no-batching", "embed", "embed-one"))
print(json.dumps({"bench": "serve_ab", "rounds": len(runs["batching"]), "cpu": runs["embed"][0].get("cpu"),
                  "batching_sent_per_s": [r["sentences_per_s"] for r in runs["batching"]],
                  "no_batching_sent_per_s": [r["sentences_per_s"] for r in runs["no-batching"]],
                  "embed_sent_per_s": [r["sentences_per_s"] for r in runs["embed"]],
                  "embed_one_sent_per_s": [r["sentences_per_s"] for r in runs["embed-one"]],
                  "batching_p50_ms": [r["p50_ms"] for r in runs["batching"]],
                  "batching_p99_ms": [r["p99_ms"] for r in runs["batching"]],
                  "errors": sum(r["errors"] for m in ("batching", "no-batching") for r in runs[m]),
                  "batching_vs_no_batching": round(b / n, 2), "batching_vs_embed": round(b / e, 2),
                  "engine_batched_vs_one": round(e / o, 2), "gain_vs_engine_gain": round((b / n) / (e / o), 2),
                  "load_avg_1min": loads}))
EOF
