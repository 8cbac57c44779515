#!/usr/bin/env bash
# Builds of attn side by side in one JVM on sentence embeddings (EmbedAB: each build in a class loader of its own,
# rounds alternating; prints ms per pass per build and the median ratio, > 1: the later build faster):
#   benchmarks/scripts/embed_ab_jvm.sh MODEL [threads] [batch] [rounds] [reps] LIB_A LIB_B [LIB_C ...]
# MODEL a model folder or .onnx file; batch 0 = all 60 texts of mixed.txt in one call, 1 = one text per call.
# A LIB folder is a build's cli/target/lib (copy it before rebuilding: `cp -r cli/target/lib /tmp/lib-old`); LIB#OPTIONS
# runs it with EmbedDriver's options (task=T,adapters=merge|share: a task LoRA model's adapter, merged or shared), so
# one build can face itself under two settings.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$ROOT/attn")
JDK="$(find_jdk)"
MODEL="$1"; THREADS="${2:-2}"; BATCH="${3:-0}"; ROUNDS="${4:-10}"; REPS="${5:-6}"; shift 5
OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/driver"
"$JDK/bin/javac" -d "$OUT/driver" -cp "${1%%#*}/*" "$ROOT/benchmarks/scripts/ab/EmbedDriver.java"
"$JDK/bin/javac" -d "$OUT" "$ROOT/benchmarks/scripts/ab/EmbedAB.java"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | xargs) model $(grep -m1 '^model' /proc/cpuinfo | cut -d: -f2 | xargs), $(grep -m1 -o avx512f /proc/cpuinfo || echo avx2), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  ${ATTN_JAVA_OPTS:-} -cp "$OUT" EmbedAB "$MODEL" "$ROOT/text/src/test/resources/io/attn/text/mixed.txt" \
  "$THREADS" "$BATCH" "$ROUNDS" "$REPS" "$OUT/driver" "$@" 2>&1 | grep -v '^WARNING'
