#!/usr/bin/env bash
# serve_ab.sh against two long-running `attn serve` processes instead of a fresh in-process server per run: one with
# dynamic batching, one with batching off (--max-batch-tokens 1 --max-wait 0: one request per forward pass), both on
# 2 threads, each warmed by WARMUP seconds of 64 clients (default 60) before any round, so that every run measures the
# server after the JIT has compiled the kernels for the batch shapes it sees (on a loaded machine the first minute of
# a fresh server runs deoptimized, uncompiled Vector API code: docs/server.md). Then rounds of: 64 clients on each
# server (`attn bench serve --url`), `attn bench embed` and `attn bench embed --batch-size 1` on the same texts:
#   benchmarks/scripts/serve_ab_running.sh [MODEL_DIR] [texts.txt] [rounds] [seconds] [clients]
# One line per run, a JSON summary last (medians, the goal ratios of issue 36, the 1-minute load average per round).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="${1:-models/all-MiniLM-L6-v2}"; TEXTS="${2:-text/src/test/resources/io/attn/text/mixed.txt}"
ROUNDS="${3:-3}"; SECONDS_="${4:-15}"; CLIENTS="${5:-64}"; WARMUP="${WARMUP:-60}"
PB="${PORT_BASE:-18611}"; PN=$((PB + 1))
cd "$ROOT"
LOG="$(mktemp)"; PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$LOG"; }
trap cleanup EXIT
./attn --version >/dev/null
./attn serve --model "$MODEL" --port "$PB" --threads 2 >/dev/null 2>&1 & PIDS+=($!)
./attn serve --model "$MODEL" --port "$PN" --threads 2 --max-batch-tokens 1 --max-wait 0 >/dev/null 2>&1 & PIDS+=($!)
for port in "$PB" "$PN"; do
  for _ in $(seq 200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] && break; sleep 1
  done
  ./attn bench serve --url "http://127.0.0.1:$port" --input "$TEXTS" --clients "$CLIENTS" --seconds 1 \
    --warmup "$WARMUP" >/dev/null 2>&1
done
for r in $(seq "$ROUNDS"); do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG"
  for mode in batching no-batching embed embed-one; do
    case $mode in
      batching) ./attn bench serve --url "http://127.0.0.1:$PB" --input "$TEXTS" --clients "$CLIENTS" \
                  --seconds "$SECONDS_" --warmup 2 2>/dev/null | tail -n1 ;;
      no-batching) ./attn bench serve --url "http://127.0.0.1:$PN" --input "$TEXTS" --clients "$CLIENTS" \
                  --seconds "$SECONDS_" --warmup 2 2>/dev/null | tail -n1 ;;
      embed) ./attn bench embed --model "$MODEL" --input "$TEXTS" --threads 2 2>/dev/null | tail -n1 ;;
      embed-one) ./attn bench embed --model "$MODEL" --input "$TEXTS" --threads 2 --batch-size 1 2>/dev/null \
                  | tail -n1 ;;
    esac | sed "s/^/$mode /" | tee -a "$LOG"
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG"
python3 - "$LOG" <<'PY'
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
print(json.dumps({"bench": "serve_ab_running", "rounds": len(runs["batching"]), "cpu": runs["embed"][0].get("cpu"),
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
PY
