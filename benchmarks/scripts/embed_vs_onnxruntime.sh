#!/usr/bin/env bash
# attn's Embedder against ONNX Runtime Java on the same model exported with torch.onnx, alternating in one JVM:
#   benchmarks/scripts/embed_vs_onnxruntime.sh [batch|single|sorted] [rounds] [seconds] [threads] [texts.txt] [MODEL]
# (default: batch, 7 rounds of 4 s per side, 2 threads, text/src/test/resources/io/attn/text/mixed.txt, and a random-
# weight XLM-RoBERTa of multilingual-e5-small's shape: 12 layers, 384 wide, 250k vocab). MODEL: a folder, or a shape
# of tools/make_families.py made on first use: multilingual-e5-small (the default), modernbert-base (22 layers, 768
# wide, GeGLU 1152, global attention every 3rd layer, the others a 128-token window; 149M parameters) or
# all-mpnet-base-v2 (MPNet: 12 layers, 768 wide, a relative position bias; 110M parameters) or embeddinggemma-300m
# (Gemma 3's text model, bidirectional: 24 layers, 768 wide, 3 heads of 256 over 1 key/value head, a 512 window in 5 of
# every 6 layers; 303M parameters, 201M of them the 262k-token table; its Dense projections left out) or
# jina-embeddings-v3 (24 layers, 1024 wide, rotary; 559M parameters; its ONNX weights in onnx/model.onnx.data). batch: all texts in one call,
# ONNX Runtime given them as one padded batch; single: one text per call; sorted: ONNX Runtime in length-sorted batches
# of 32 (as sentence-transformers' encode). io.attn.text.bench.EmbedVsOnnxRuntime says what each side does.
# The model is made once with tools/make_families.py --shape SHAPE (a sentence-transformers folder and its
# onnx/model.onnx: 470 MB each for e5-small, 600 MB for modernbert-base) into $ATTN_BENCH_CACHE (default /tmp/attn-bench), with $PYTHON (default: the venv
# at /work/venv-hf when there, else python3; it needs torch, transformers, sentence-transformers, onnx, onnxscript,
# onnxruntime: see the script's header). Builds the text module and its test classes in one reactor run (nothing is
# installed into ~/.m2); the class path is Maven's (test scope: ONNX Runtime Java; ORT_VERSION=1.29.0 picks another
# onnxruntime than the parent pom's). Extra JVM flags: ATTN_JAVA_OPTS (e.g. -Dort.spin=true:
# ONNX Runtime's pool spinning, off by default).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$ROOT/attn")
JDK="$(find_jdk)"; export JAVA_HOME="$JDK"
MODE="${1:-batch}"; ROUNDS="${2:-7}"; SECONDS_PER="${3:-4}"; THREADS="${4:-2}"; TEXTS="${5:-}"; MODEL="${6:-}"
cd "$ROOT"
[ -z "$MODEL" ] && MODEL=multilingual-e5-small
if [ ! -d "$MODEL" ] && { [ "$MODEL" = multilingual-e5-small ] || [ "$MODEL" = modernbert-base ] || [ "$MODEL" = all-mpnet-base-v2 ] || [ "$MODEL" = embeddinggemma-300m ] || [ "$MODEL" = jina-embeddings-v3 ]; }; then
  SHAPE="$MODEL"
  MODEL="${ATTN_BENCH_CACHE:-/tmp/attn-bench}/$SHAPE"
  if [ ! -f "$MODEL/onnx/model.onnx" ]; then
    PY="${PYTHON:-}"; [ -z "$PY" ] && { [ -x /work/venv-hf/bin/python ] && PY=/work/venv-hf/bin/python || PY=python3; }
    echo "making $MODEL with tools/make_families.py (a few minutes)..." >&2
    rm -rf "$MODEL.tmp"; mkdir -p "$(dirname "$MODEL")"
    "$PY" tools/make_families.py --shape "$SHAPE" --out "$MODEL.tmp" >&2
    rm -rf "$MODEL"; mv "$MODEL.tmp" "$MODEL"
  fi
fi
ORT=(); [ -n "${ORT_VERSION:-}" ] && ORT=(-Donnxruntime.version="$ORT_VERSION")
CP_FILE="$(mktemp)"; trap 'rm -f "$CP_FILE"' EXIT
# one reactor run: the sibling modules resolve to their target/classes, never to a stale ~/.m2 snapshot; each module
# writes its class path to the file in turn, text (the last) stays
mvn -q -B -DskipTests "${ORT[@]}" test-compile dependency:build-classpath -pl text -am -Dmdep.includeScope=test \
  -Dmdep.outputFile="$CP_FILE" >/dev/null
echo "load before: $(uptime)" >&2
exec "$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  ${ATTN_JAVA_OPTS:-} -cp "text/target/test-classes:text/target/classes:$(cat "$CP_FILE")" \
  io.attn.text.bench.EmbedVsOnnxRuntime "$MODEL" "$TEXTS" "$ROUNDS" "$SECONDS_PER" "$THREADS" "$MODE"
