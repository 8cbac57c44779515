#!/usr/bin/env bash
# attn's Reranker against ONNX Runtime Java on the same cross-encoder exported with torch.onnx, taking turns in one JVM:
#   benchmarks/scripts/rerank_vs_onnxruntime.sh [variants] [rounds] [seconds] [threads] [passages.txt] [MODEL_DIR]
# (default: all four ONNX Runtime variants padded,plan,sorted,each; 5 rounds of 3 s per side; 2 threads; one query
# and the 100 passages of text/src/test/resources/io/attn/text/rerank-passages.txt; a random-weight cross-encoder of
# ms-marco-MiniLM-L6-v2's shape: BERT, 6 layers, 384 wide, 12 heads, FFN 1536, vocab 30522). Every call scores all
# the pairs. io.attn.text.bench.RerankVsOnnxRuntime says what each side and variant does.
# The model is made once with tools/make_rerank_bench.py (a CrossEncoder.save folder and its onnx/model.onnx, 90 MB
# each) into $ATTN_BENCH_CACHE (default /tmp/attn-bench)/minilm-l6-reranker, with $PYTHON (default: the venv at
# /work/venv-hf when there, else python3; torch, transformers, sentence-transformers, onnx, onnxscript, onnxruntime)
# and the WordPiece tokenizer.json of all-MiniLM-L6-v2 ($MINILM_TOKENIZER, default /tmp/minilm/tokenizer.json,
# fetched with tools/fetch_model.sh all-minilm-l6-v2 /tmp/minilm when missing). Builds the text module and its test
# classes in one reactor run (nothing installed into ~/.m2); ORT_VERSION picks another onnxruntime than the parent
# pom's; extra JVM flags: ATTN_JAVA_OPTS (e.g. -Dort.spin=true).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$ROOT/attn")
JDK="$(find_jdk)"; export JAVA_HOME="$JDK"
VARIANTS="${1:-all}"; ROUNDS="${2:-5}"; SECONDS_PER="${3:-3}"; THREADS="${4:-2}"; PASSAGES="${5:-}"; MODEL="${6:-}"
cd "$ROOT"
if [ -z "$MODEL" ]; then
  MODEL="${ATTN_BENCH_CACHE:-/tmp/attn-bench}/minilm-l6-reranker"
  if [ ! -f "$MODEL/onnx/model.onnx" ] || [ ! -f "$MODEL/expected.json" ]; then
    PY="${PYTHON:-}"; [ -z "$PY" ] && { [ -x /work/venv-hf/bin/python ] && PY=/work/venv-hf/bin/python || PY=python3; }
    TOK="${MINILM_TOKENIZER:-/tmp/minilm/tokenizer.json}"
    [ -f "$TOK" ] || tools/fetch_model.sh all-minilm-l6-v2 "$(dirname "$TOK")" >&2
    echo "making $MODEL with tools/make_rerank_bench.py (a few minutes)..." >&2
    rm -rf "$MODEL.tmp"; mkdir -p "$(dirname "$MODEL")"
    "$PY" tools/make_rerank_bench.py --tokenizer "$TOK" --out "$MODEL.tmp" >&2
    rm -rf "$MODEL"; mv "$MODEL.tmp" "$MODEL"
  fi
fi
ORT=(); [ -n "${ORT_VERSION:-}" ] && ORT=(-Donnxruntime.version="$ORT_VERSION")
CP_FILE="$(mktemp)"; trap 'rm -f "$CP_FILE"' EXIT
mvn -q -B -o -DskipTests -Dspotless.check.skip=true "${ORT[@]}" test-compile dependency:build-classpath -pl text -am \
  -Dmdep.includeScope=test -Dmdep.outputFile="$CP_FILE" >/dev/null
echo "load before: $(uptime)" >&2
"$JDK/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  ${ATTN_JAVA_OPTS:-} -cp "text/target/test-classes:text/target/classes:$(cat "$CP_FILE")" \
  io.attn.text.bench.RerankVsOnnxRuntime "$MODEL" "$PASSAGES" "$ROUNDS" "$SECONDS_PER" "$THREADS" "$VARIANTS"
echo "load after: $(uptime)" >&2
