#!/usr/bin/env bash
# What a steady state allocates: `attn bench embed` on MODEL runs, a JFR recording of RECORD_S seconds starts WAIT_S
# seconds in (after the warm-up and the JIT), and the allocation samples are summed by class and first attn frame.
# The program's arenas are reused, so a steady state should allocate only each call's output (Executor.execute);
# float[] or Float*Vector samples from a kernel are vectors boxed where C2 did not inline a call
# (docs/performance.md, "Vectors boxed in a steady state").
#   benchmarks/scripts/steady_alloc.sh MODEL [batch] [wait_s] [record_s] [more attn bench embed options]
# batch: texts per call (1 = one text per call); the texts are text/src/test/resources/io/attn/text/mixed.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$ROOT/attn")
JDK="$(find_jdk)"
MODEL="$1"; BATCH="${2:-1}"; WAIT="${3:-30}"; RECORD="${4:-15}"; shift $(( $# < 4 ? $# : 4 ))
OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
"$ROOT/attn" bench embed --model "$MODEL" --input "$ROOT/text/src/test/resources/io/attn/text/mixed.txt" \
  --batch-size "$BATCH" --min-ms $(( (WAIT + RECORD + 10) * 1000 )) --warmup-ms 3000 "$@" > "$OUT/run.log" 2>&1 &
RUN=$!
sleep "$WAIT"
PID="$(pgrep -f "io.attn.cli.Main bench embed" | head -1)"
[ -n "$PID" ] || { cat "$OUT/run.log" >&2; echo "steady_alloc: the bench is not running" >&2; exit 1; }
"$JDK/bin/jcmd" "$PID" JFR.start name=steady settings=profile duration="${RECORD}s" filename="$OUT/steady.jfr" >/dev/null
sleep $(( RECORD + 2 ))
wait "$RUN" || true
"$JDK/bin/jfr" print --stack-depth 12 --events jdk.ObjectAllocationSample "$OUT/steady.jfr" | python3 -c '
import re, sys, collections
total = collections.Counter(); n = 0; cls = frame = None; w = 0.0
def flush():
    if cls is not None: total[(cls, frame or "(no attn frame)")] += w
for line in map(str.strip, sys.stdin):
    if line.startswith("jdk.ObjectAllocationSample"):
        flush(); n += 1; cls = frame = None; w = 0.0
    elif line.startswith("objectClass"): cls = line.split("=", 1)[1].split("(")[0].strip()
    elif line.startswith("weight"):
        v, u = line.split("=", 1)[1].split()
        w = float(v) * {"bytes": 1e-6, "kB": 1e-3, "MB": 1.0, "GB": 1e3}[u]
    elif frame is None and line.startswith("io.attn"): frame = re.sub(r"\(.*\)", "", line)
flush()
print(f"{n} allocation samples in the recording")
for (c, f), v in total.most_common(12): print(f"{v:10.1f} MB (sampled weight)  {c}  {f}")
'
tail -2 "$OUT/run.log" | head -1
