#!/usr/bin/env bash
# Fuzzes every parser with Jazzer for a while each (fuzzing mode; `mvn test` only replays the committed corpus).
#   tools/fuzz.sh                # 5 minutes per parser
#   tools/fuzz.sh 30s npy json   # 30 seconds, only these
# New inputs that reach new code go to engine-core/.cifuzz-corpus/ (not committed). A finding (an exception other than
# a one-line BAD_INPUT/SHAPE_MISMATCH AttnException, an OutOfMemoryError, a timeout) is written as crash-<hash> into
# engine-core/src/test/resources/io/attn/io/ParserFuzzTestInputs/<parser>/: fix the bug and commit the file, and every
# later `mvn test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5m}"
shift || true
parsers=("$@")
[ ${#parsers[@]} -gt 0 ] || parsers=(npy npz safetensors wordVectors json modelConfig)
if [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"2[5-9]'; then
  for j in /usr/lib/jvm/*25*; do [ -x "$j/bin/java" ] && export JAVA_HOME="$j" && break; done
fi
failed=0
log="$(mktemp)"
for p in "${parsers[@]}"; do
  echo "== fuzzing ParserFuzzTest#$p for $duration"
  # engine-core depends on no other module: no install needed
  if JAZZER_FUZZ=1 mvn -B -pl engine-core test -Dspotless.apply.skip=true \
      -Dtest="ParserFuzzTest#$p" -Djazzer.max_duration="$duration" >"$log" 2>&1; then
    grep -E '^Done [0-9]+ runs' "$log" || true
  else
    failed=1
    grep -E 'Done [0-9]+ runs|Tests run:.*Fail|crash-|==[0-9]+== |Exception|Error' "$log" | head -20
    echo "   FINDING in $p (full log: $log)"
  fi
done
exit $failed
