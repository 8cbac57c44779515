#!/usr/bin/env bash
# Same-session comparison for docs/performance.md: attn vs ONNX Runtime (interleaved in one JVM by
# io.attn.benchmarks.Compare) and attn vs NumPy/OpenBLAS GEMM (alternating processes, ROUNDS rounds).
# Needs: mvn -Pbench -pl cli,benchmarks -am package -DskipTests (builds cli/target/lib and benchmarks/target/benchmarks.jar).
# usage: benchmarks/scripts/compare_all.sh [THREADS...]   (default: 1 2); every result line is JSON.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
FLAGS=(--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC)
ROUNDS="${ROUNDS:-3}"
SECONDS_PER="${SECONDS_PER:-8}"
THREADS=("$@"); [ ${#THREADS[@]} -eq 0 ] && THREADS=(1 2)
compare() { "$JAVA" "${FLAGS[@]}" -cp "$ROOT/benchmarks/target/benchmarks.jar" io.attn.benchmarks.Compare "$@" 2>/dev/null; }
bench() { "$JAVA" "${FLAGS[@]}" -cp "$ROOT/cli/target/lib/*" io.attn.cli.Main bench "$@" 2>/dev/null | tail -1; }
echo "# $(date -u +%FT%TZ) $(uptime)"
echo "# cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-), family $(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model' /proc/cpuinfo | grep -v name | cut -d: -f2 | tr -d ' '), flags:$(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f' | tr '\n' ' ')"
for t in "${THREADS[@]}"; do
  compare attention --batch 8 --heads 8 --seq 512 --head-dim 64 --threads "$t" --seconds "$SECONDS_PER"
  compare attention --batch 8 --heads 8 --seq 512 --head-dim 64 --causal --threads "$t" --seconds "$SECONDS_PER"
  compare encoder-layer --batch 8 --seq 512 --d-model 512 --heads 8 --ffn 2048 --threads "$t" --seconds "$SECONDS_PER"
  # the small shapes of sentence encoders (MiniLM: hidden 384, 12 heads of 32, FFN 1536)
  compare attention --batch 32 --heads 12 --seq 64 --head-dim 32 --threads "$t" --seconds "$SECONDS_PER"
  compare encoder-layer --batch 32 --seq 64 --d-model 384 --heads 12 --ffn 1536 --threads "$t" --seconds "$SECONDS_PER"
  for r in $(seq "$ROUNDS"); do
    python3 "$ROOT/benchmarks/scripts/gemm_numpy.py" --threads "$t" --seconds 2 --shapes big,attention,encoder 2>/dev/null
    for sh in "--m 1024 --n 1024 --k 1024" "--m 2048 --n 2048 --k 2048" \
              "--batch 64 --m 512 --n 512 --k 64 --trans-b" "--batch 64 --m 512 --n 64 --k 512"; do
      bench gemm $sh --threads "$t" --warmup-ms 500 --min-ms 2000
      bench gemm $sh --threads "$t" --warmup-ms 500 --min-ms 2000 --into   # output allocated once, as NumPy's out=
    done
    for sh in "--m 512 --n 1536 --k 384" "--m 2048 --n 384 --k 1536"; do # a Linear's weight, packed once
      bench gemm $sh --weights --threads "$t" --warmup-ms 500 --min-ms 2000 --into
    done
  done
  echo "# $(date -u +%FT%TZ) $(uptime)"
done
if [ -z "${SKIP_LONG:-}" ]; then # fused vs --weights (unfused), and long causal vs unmasked, on the most threads asked
  t="${THREADS[-1]}"
  # fused vs weights with a long warm-up: with the default one the heap is still growing and the fresh 67 MB weights
  # array of every call meets page faults (medians 20-27 ms at 2 threads where 3 s of warm-up gives 18-19)
  bench attention --batch 8 --heads 8 --seq 512 --head-dim 64 --threads "$t" --warmup-ms 3000 --min-ms 4000
  bench attention --batch 8 --heads 8 --seq 512 --head-dim 64 --weights --threads "$t" --warmup-ms 3000 --min-ms 4000
  bench attention --batch 1 --heads 8 --seq 16384 --head-dim 64 --causal --threads "$t" --warmup-ms 0 --min-ms 0 --min-runs 3
  bench attention --batch 1 --heads 8 --seq 16384 --head-dim 64 --threads "$t" --warmup-ms 0 --min-ms 0 --min-runs 3
  echo "# $(date -u +%FT%TZ) $(uptime)"
fi
