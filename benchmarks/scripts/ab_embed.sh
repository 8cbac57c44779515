#!/usr/bin/env bash
# A/B of two attn checkouts on the same machine, alternating, each command a fresh process: `attn bench embed` (a real
# model folder, the mixed sentence set, 2 threads) and `attn bench encoder-layer` (d 512). Used to check that a change
# meant to change no behaviour changed no speed either (issue 34). Prints each round's figures and the medians.
#   benchmarks/scripts/ab_embed.sh OLD_CHECKOUT NEW_CHECKOUT MODEL_DIR [ROUNDS]
set -euo pipefail
OLD="$1"; NEW="$2"; MODEL="$3"; ROUNDS="${4:-5}"
TEXTS="$(cd "$(dirname "$0")/../.." && pwd)/text/src/test/resources/io/attn/text/mixed.txt"
figure() { # checkout, bench args...: the JSON line's figure
  local dir="$1"; shift
  "$dir/attn" bench "$@" 2>/dev/null | tail -n1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d.get("sentences_per_s", d.get("median_ms")))'
}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(grep -m1 -o avx512f /proc/cpuinfo || echo avx2), load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -a eo en lo ln
for r in $(seq 1 "$ROUNDS"); do
  eo+=("$(figure "$OLD" embed --model "$MODEL" --input "$TEXTS" --threads 2)")
  en+=("$(figure "$NEW" embed --model "$MODEL" --input "$TEXTS" --threads 2)")
  ln+=("$(figure "$NEW" encoder-layer --batch 8 --seq 128 --d-model 512 --heads 8 --ffn 2048 --threads 2)")
  lo+=("$(figure "$OLD" encoder-layer --batch 8 --seq 128 --d-model 512 --heads 8 --ffn 2048 --threads 2)")
  echo "round $r: embed sentences/s old ${eo[-1]} new ${en[-1]}; encoder layer ms old ${lo[-1]} new ${ln[-1]}"
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median embed sentences/s: old $(med "${eo[@]}") new $(med "${en[@]}")"
echo "median encoder-layer ms:  old $(med "${lo[@]}") new $(med "${ln[@]}")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
