#!/usr/bin/env bash
# EmbedJob on Spark against `attn embed` on the same short texts, whole processes (JVM start, Spark start, model load,
# reading and writing included), alternating; then EmbedJob on one executor JVM against two (local-cluster):
#   benchmarks/scripts/spark_vs_embed.sh MODEL_DIR [texts] [rounds] [threads]
# (default: 20000 generated short texts of 4-16 words, 2 rounds, 2 threads). Prints one line per run and a JSON
# summary last. Needs `./attn build` done (cli/target/lib, spark/target/lib).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODEL="$(realpath "${1:?usage: spark_vs_embed.sh MODEL_DIR [texts] [rounds] [threads]}")"; N="${2:-20000}"; ROUNDS="${3:-2}"
THREADS="${4:-2}"
source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$ROOT/attn")
JDK="$(find_jdk)"; export JAVA_HOME="$JDK"
cd "$ROOT"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
mvn -q -o -B dependency:build-classpath -pl spark -Dmdep.includeScope=test -Dmdep.outputFile="$WORK/cp" >/dev/null
CP="spark/target/classes:$(cat "$WORK/cp")"
FLAGS="$(sed -n 's:.*<spark.jvm.flags>\${attn.jvm.flags} \(.*\)</spark.jvm.flags>.*:\1:p' spark/pom.xml)"
# local-cluster starts executors from SPARK_HOME/jars: every jar of the class path, linked
mkdir -p "$WORK/spark-home/jars"; (cd spark/target/classes && "$JDK/bin/jar" cf "$WORK/spark-home/jars/attn-spark.jar" .)
tr ':' '\n' <"$WORK/cp" | while read -r j; do [ -f "$j" ] && ln -sf "$j" "$WORK/spark-home/jars/"; done
export SPARK_HOME="$WORK/spark-home" SPARK_SCALA_VERSION=2.13

/usr/bin/env python3 - "$N" "$WORK/texts.txt" <<'EOF'
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
words = ("the a of to and in is it that for on with as was at by be this from or have an they which one you were her"
         " all she there would their we him been has when who will more no if out so said what up its about into than"
         " them can only other new some could time these two may then do first any my now such like our over man me"
         " even most made after also did many before must through back years where much your way well down should"
         " because each just those people how too little state good very make world still own see men work long get"
         " here between both life being under never day same another know while last might us great old year off come"
         " since against go came right used take three sky blue river city music search engine model vector query"
         " document language learning attention server cluster java coffee weather train price market health").split()
r = random.Random(17)
with open(out, "w") as f:
    for i in range(n):
        f.write(" ".join(r.choice(words) for _ in range(r.randint(4, 16))).capitalize() + ".\n")
EOF

timed() { # label, command...: runs it, prints the seconds of the whole process
  local label="$1"; shift; local t0 t1
  t0=$(date +%s.%N); "$@" >"$WORK/$label.out" 2>"$WORK/$label.err" || { cat "$WORK/$label.err" >&2; exit 1; }
  t1=$(date +%s.%N); echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}
embed() { rm -f "$WORK/out.npy"; ./attn embed --model "$MODEL" --input "$WORK/texts.txt" --output "$WORK/out.npy" \
  --threads "$THREADS"; }
job() { rm -rf "$WORK/out.parquet"; "$JDK/bin/java" $FLAGS --add-modules jdk.incubator.vector \
  --enable-native-access=ALL-UNNAMED -Xmx4g -cp "$CP" io.attn.spark.EmbedJob --model "$MODEL" \
  --input "$WORK/texts.txt" --output "$WORK/out.parquet" --master "$1" --partitions 8 --threads "$2"; }

E=(); S=(); C1=(); C2=()
for r in $(seq "$ROUNDS"); do
  s=$(timed embed embed); E+=("$s"); echo "round $r attn embed (threads $THREADS): $s s"
  s=$(timed job job "local[$THREADS]" "$THREADS"); S+=("$s"); echo "round $r EmbedJob local[$THREADS]: $s s"
done
s=$(timed c1 job "local-cluster[1,$THREADS,3072]" "$THREADS"); C1+=("$s"); echo "EmbedJob 1 executor x $THREADS cores: $s s"
s=$(timed c2 job "local-cluster[$THREADS,1,3072]" 1); C2+=("$s"); echo "EmbedJob $THREADS executors x 1 core: $s s"
tail -n1 "$WORK/c2.out"
CPU="$(sed -n "s/^model name\s*: //p" /proc/cpuinfo | head -n1), family $(sed -n "s/^cpu family\s*: //p" /proc/cpuinfo | head -n1) model $(sed -n "s/^model\s*: //p" /proc/cpuinfo | head -n1), $(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)"
python3 - "$N" "$THREADS" "$CPU" "${E[*]}" "${S[*]}" "${C1[*]}" "${C2[*]}" <<'EOF'
import json, statistics as st, sys
n, t, cpu = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
e, s, c1, c2 = ([float(x) for x in a.split()] for a in sys.argv[4:8])
rate = lambda xs: round(n / st.median(xs), 1)
print(json.dumps({"bench": "spark_vs_embed", "texts": n, "threads": t, "cpu": cpu,
                  "attn_embed_s": e, "embedjob_local_s": s, "one_executor_s": c1, "two_executors_s": c2,
                  "attn_embed_rows_per_s": rate(e), "embedjob_local_rows_per_s": rate(s),
                  "embedjob_vs_embed": round(st.median(e) / st.median(s), 3),
                  "one_executor_rows_per_s": rate(c1), "two_executors_rows_per_s": rate(c2)}))
EOF
