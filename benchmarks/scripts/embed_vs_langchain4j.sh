#!/usr/bin/env bash
# attn's Embedder against langchain4j's stock in-process embedding model, alternating in one JVM:
#   benchmarks/scripts/embed_vs_langchain4j.sh [minilm|minilm-q|bge] [texts.txt] [rounds] [seconds] [attn threads] [batch|single]
# (default: all-MiniLM-L6-v2 on text/src/test/resources/io/attn/text/mixed.txt, 7 rounds of 3 s per side, all texts in
# one call; single: one text per call, as a service embedding each request as it comes). minilm-q: langchain4j's int8
# all-minilm-l6-v2-q (ONNX Runtime's dynamic quantization) against attn running the same .onnx file (QMATMUL).
# Builds the text module and its test classes first; the class path is Maven's (test scope: langchain4j, ONNX Runtime).
# Extra JVM flags: ATTN_JAVA_OPTS, e.g. -Dbench.warmup-s=20 (both sides alternate for 20 s before the rounds, so that
# the JIT's compiler threads are done and no longer take cores from the measured threads: the steady state).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$ROOT/attn")
JDK="$(find_jdk)"; export JAVA_HOME="$JDK"
cd "$ROOT"
mvn -q -B -DskipTests install -pl text -am >/dev/null
mvn -q -B test-compile -pl text >/dev/null
CP_FILE="$(mktemp)"; trap 'rm -f "$CP_FILE"' EXIT
mvn -q -B dependency:build-classpath -pl text -Dmdep.includeScope=test -Dmdep.outputFile="$CP_FILE" >/dev/null
exec "$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED ${ATTN_JAVA_OPTS:-} \
  -cp "text/target/test-classes:text/target/classes:$(cat "$CP_FILE")" io.attn.text.bench.EmbedVsLangchain4j "$@"
