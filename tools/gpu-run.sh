#!/usr/bin/env bash
# The GPU check in one call, run from the unpacked bundle (or the repository) on a machine with an NVIDIA GPU:
#
#   tools/gpu-run.sh [--out DIR] [--budget-s 540] [--dry-run] [--steps env,sweep,winners,bench,embed]
#
# Needs no JDK, Maven or network (the bundle has its Java runtime); python3 with torch (and sentence-transformers)
# first on PATH for the PyTorch comparisons. Every step runs under its own `timeout`, clipped to what is left of the
# budget (default 540 s = 9 minutes, the packing included), and the run goes on past a failed step. It writes three
# files to DIR (default $OUT, else ./gpu-run-out), never more than 7:
#   summary.md     one line per step: status (ok / failed / skipped), seconds, the key figure; then the totals
#   results.json   every figure, machine-readable (steps; the probe's lines; bench, sweep, winners, embed JSON)
#   logs.tar.gz    each step's full output
#   benchmarks/gpu/<date>-<gpu-slug>.json   {"gpu", "date", "driver", "torch", "cases": [{"name", "attn_ms",
#                  "torch_ms", "ratio"}]}: the sweep's, winners', bench's and embed's cases (not in a dry run)
# Steps: env (nvidia-smi, driver, GPU, where libcuda and cuBLAS are), probe (attn probe), gemm-path (cuBLAS must be
# used where one exists), locator (a planted fake libcublas.so.13 in a fake venv is found: needs cc), parity (fp32 on
# every configuration, --variants: flash, fused and unfused attention, cuBLAS, our GEMM kernel and JCublas;
# then tf32 / bf16 / fp16 when `attn parity` takes --precision), junit (the CUDA JUnit suite from the test bundle), golden
# (tests/golden, then fresh cases from this host's PyTorch), bench (tools/bench_gpu_torch.py), embed (a model folder
# under models/, against sentence-transformers), families (tools/gpu_families.py: every tests/families model on the
# GPU within the CPU suite's bounds of sentence-transformers'), serve (that model behind attn serve on the GPU, 64 clients, dynamic
# batching against batching off), cpu (the host CPU's GEMM blocking against NumPy, for engine-cpu's per-CPU table),
# sweep (tools/gpu_sweep.py: every attention_variants.json variant's correctness and time, PyTorch's SDPA backends
# beside them), winners (the sweep's fastest variants through `attn bench attention --resident --backend-opt ...`),
# parity-cudnn (the attention parity cases at bf16 / fp16 with every variant, attention=cudnn among them), cudnn
# (--backend-opt attention=cudnn beside attention=flash and PyTorch's SDPA FLASH / CUDNN; GPU_RUN_CUDNN_S, default 100).
# --steps a,b,c runs only those steps (env always runs; "parity" includes parity-tf32/bf16/fp16); the others are
# "skipped (not in --steps)". A focused 5-minute call: --steps env,sweep,winners,bench,embed (bench then times the
# encoder layer only: the attention cases are the sweep's and the winners'). GPU_RUN_SWEEP_S and GPU_RUN_WINNERS_S
# (seconds; default 200 and 150) cap those two steps.
# docs/gpu.md says what each proves and how to read the summary.
# --dry-run (CI, no GPU): runs every step that needs no device (env, probe: no driver, locator, junit's non-GPU
# tests, the Python tools' syntax) and marks the others "skipped (dry run)"; then checks that every step has a status
# line, the file count and the time budget. Exit 0 when no step failed. The dry run's sweep step is
# `gpu_sweep.py --dry-run`: every variant and converter of attention_variants.json must exist in its PTX with the
# argument list the JSON gives (a missing entry fails the step, the run and CI).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY=false; BUDGET=540; DEST="${OUT:-$PWD/gpu-run-out}"; SEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=true ;;
    --out) DEST="$2"; shift ;;
    --budget-s) BUDGET="$2"; shift ;;
    --steps) SEL=",$2,"; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "gpu-run: unknown option $1 (--out DIR, --budget-s N, --dry-run, --steps a,b,c)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$DEST" || { echo "gpu-run: cannot create $DEST" >&2; exit 2; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu-run.XXXXXX")"; LOGS="$WORK/logs"; mkdir -p "$LOGS"
trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s); RESERVE=20   # seconds kept for packing the results
A="$HERE/attn"
export ATTN_JAVA_OPTS="${ATTN_JAVA_OPTS:-}"
PY="$(command -v python3 || true)"

# one status line per step: name, status, seconds, figure (tab-separated, figures on one line)
STEPS="$WORK/steps.tsv"; : >"$STEPS"
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | tr '\t\n' '  ' | cut -c1-300)" >>"$STEPS"; }
left() { echo $(( BUDGET - RESERVE - ($(date +%s) - T0) )); }
# run_step NAME CAP_S CMD...: runs CMD under timeout (its output in logs/NAME.log); sets RC and SECS
run_step() {
  local name="$1" cap="$2"; shift 2
  local t; t=$(left); [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 5 ]; then RC=125; SECS=0; echo "no time left in the budget" >"$LOGS/$name.log"; return; fi
  local s; s=$(date +%s)
  { echo "\$ $* (timeout ${t}s)"; timeout -k 10 "$t" "$@"; } >>"$LOGS/$name.log" 2>&1
  RC=$?; SECS=$(( $(date +%s) - s ))
  [ "$RC" = 124 ] || [ "$RC" = 137 ] && echo "gpu-run: timed out after ${t}s" >>"$LOGS/$name.log"
}
status_of() { # RC -> ok | failed (...)
  case "$RC" in 0) echo ok ;; 124|137) echo "failed (timed out)" ;; 125) echo "skipped (time budget)" ;; *) echo "failed (exit $RC)" ;; esac
}
skip() { record "$1" "skipped ($2)" 0 "${3:-}"; }
# sel NAME: whether --steps selected step NAME (no --steps: every step; env always; parity-* with parity)
sel() { [ -z "$SEL" ] || [ "$1" = env ] || [[ "$SEL" == *",$1,"* ]] || { [[ "$1" == parity-* ]] && [[ "$SEL" == *",parity,"* ]]; }; }

# ---- env: the machine, the driver, where libcuda and cuBLAS are -------------------------------------------------
env_report() {
  echo "== host"; uname -a; date -u +%FT%TZ; nproc; echo "bundle: $HERE"
  echo "== nvidia-smi"; nvidia-smi || echo "nvidia-smi: not available"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>/dev/null \
    | head -n1 >"$WORK/gpu.csv"
  echo "== libcuda.so.1"
  { ldconfig -p 2>/dev/null | grep -E 'libcuda\.so\.1 ' | sed 's/.*=> //'
    for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/wsl/lib; do
      [ -e "$d/libcuda.so.1" ] && echo "$d/libcuda.so.1"; done; } | awk '!seen[$0]++' | tee "$WORK/libcuda.txt"
  echo "== python3: ${PY:-none}"
  if [ -n "$PY" ]; then
    timeout 60 "$PY" - <<'EOF' 2>&1 | tee "$WORK/python.txt"
import site, sys
print("python", sys.version.split()[0], sys.prefix)
for d in site.getsitepackages() + [site.getusersitepackages()]:
    print("site", d)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
except Exception as e:
    print("torch none", type(e).__name__)
try:
    import sentence_transformers
    print("sentence_transformers", sentence_transformers.__version__)
except Exception as e:
    print("sentence_transformers none", type(e).__name__)
EOF
  fi
  echo "== libcublas files"
  { ldconfig -p 2>/dev/null | grep -E 'libcublas\.so\.1[23] ' | sed 's/.*=> //'
    for d in $(sed -n 's/^site //p' "$WORK/python.txt" 2>/dev/null) /usr/local/cuda/lib64 /usr/local/cuda-*/lib64; do
      ls "$d"/nvidia/cu13/lib/libcublas.so.13 "$d"/nvidia/cublas/lib/libcublas.so.12 \
         "$d"/libcublas.so.13 "$d"/libcublas.so.12 2>/dev/null; done; } | awk '!seen[$0]++' | tee "$WORK/cublas.txt"
  echo "== libcudnn.so.9 (attention=cudnn)"
  for d in $(sed -n 's/^site //p' "$WORK/python.txt" 2>/dev/null); do
    ls "$d"/nvidia/cudnn/lib/libcudnn.so.9 2>/dev/null; done | awk '!seen[$0]++' | tee "$WORK/cudnn.txt"
}
export -f env_report; export PY WORK HERE
run_step env 60 bash -c env_report
GPU="$(cat "$WORK/gpu.csv" 2>/dev/null)"
fig="gpu: ${GPU:-none}; libcuda: $(head -n1 "$WORK/libcuda.txt" 2>/dev/null || true); cuBLAS files: $(wc -l <"$WORK/cublas.txt" 2>/dev/null || echo 0) ($(head -n1 "$WORK/cublas.txt" 2>/dev/null || true)); cuDNN: $(head -n1 "$WORK/cudnn.txt" 2>/dev/null || true); $(grep -E '^torch ' "$WORK/python.txt" 2>/dev/null || echo 'torch: none')"
if $DRY; then record env "ok" "$SECS" "$fig"
elif [ -n "$GPU" ]; then record env "$(status_of)" "$SECS" "$fig"
else record env "failed (nvidia-smi shows no GPU)" "$SECS" "$fig"; fi
HAS_TORCH=false; grep -q '^torch [0-9]' "$WORK/python.txt" 2>/dev/null && HAS_TORCH=true
# the torch venv's cuDNN, named for every step (the engine would find it there too) and for FfmCudnnTest in junit
CUDNN_LIB="$(head -n1 "$WORK/cudnn.txt" 2>/dev/null || true)"
[ -n "${ATTN_CUDNN:-}" ] || { [ -n "$CUDNN_LIB" ] && export ATTN_CUDNN="$(dirname "$CUDNN_LIB")"; }
HAS_ST=false; grep -q '^sentence_transformers [0-9]' "$WORK/python.txt" 2>/dev/null && HAS_ST=true

# ---- probe -------------------------------------------------------------------------------------------------------
PROBE_CUDA=""; PROBE_CUBLAS=""
if ! sel probe; then skip probe "not in --steps"; : >"$WORK/probe.txt"
else
run_step probe 90 "$A" probe
PROBE_CUDA="$(grep '^cuda: ' "$LOGS/probe.log" | head -n1)"; PROBE_CUBLAS="$(grep '^cuda cublas: ' "$LOGS/probe.log" | head -n1)"
cp "$LOGS/probe.log" "$WORK/probe.txt"
if $DRY; then
  if [ -n "$PROBE_CUDA" ] && [ -n "$PROBE_CUBLAS" ] && grep -q '^cuda driver: ' "$LOGS/probe.log" && [ "$RC" = 0 ]; then
    record probe ok "$SECS" "dry run: ${PROBE_CUDA}"
  else record probe "failed (exit $RC, or no cuda / cuda driver / cuda cublas line)" "$SECS" "$PROBE_CUDA"; fi
elif [[ "$PROBE_CUDA" == "cuda: available"* ]]; then record probe "$(status_of)" "$SECS" "$PROBE_CUDA"
else record probe "failed (cuda not available)" "$SECS" "${PROBE_CUDA:-no cuda line; see logs/probe.log}"; fi
fi

# ---- gemm-path: a host with cuBLAS must not run the built-in GEMM ---------------------------------------------------
if ! sel gemm-path; then skip gemm-path "not in --steps"
elif $DRY; then skip gemm-path "dry run" "${PROBE_CUBLAS}"
elif [[ "$PROBE_CUDA" != "cuda: available"* ]]; then skip gemm-path "cuda not available"
elif [[ "$PROBE_CUDA" == *"gemm: cuBLAS"* ]]; then record gemm-path ok 0 "${PROBE_CUDA##*gemm: }"
elif [ -s "$WORK/cublas.txt" ]; then
  record gemm-path "failed (built-in GEMM kernel although cuBLAS exists)" 0 "found $(head -n1 "$WORK/cublas.txt"); ${PROBE_CUBLAS}"
else record gemm-path "failed (no cuBLAS on this host: GEMMs take the slow built-in kernel)" 0 "$PROBE_CUBLAS"; fi

# ---- locator: a fake libcublas.so.13 in a fake venv, first on PATH, is found (no device needed) ---------------------
plant() {
  local v="$WORK/fakevenv" lib="$WORK/fakevenv/lib/python3.12/site-packages/nvidia/cu13/lib"
  mkdir -p "$lib" "$v/bin"; echo "home = /usr/bin" >"$v/pyvenv.cfg"; printf '#!/bin/sh\nexit 1\n' >"$v/bin/python3"
  chmod +x "$v/bin/python3"
  echo 'int fakeLt(int x) { return x; }' >"$WORK/lt.c"
  echo 'int fakeLt(int); int cublasSgemmStridedBatched(void) { return fakeLt(0); }' >"$WORK/cublas.c"
  cc -shared -fPIC -Wl,-soname,libcublasLt.so.13 -o "$lib/libcublasLt.so.13" "$WORK/lt.c" &&
    cc -shared -fPIC -o "$lib/libcublas.so.13" "$WORK/cublas.c" -L"$lib" -l:libcublasLt.so.13
}
if ! sel locator; then skip locator "not in --steps"
elif ! command -v cc >/dev/null; then skip locator "no C compiler (cc) to build the fake libcublas.so.13"
elif ! plant >"$LOGS/locator.log" 2>&1; then record locator "failed (building the fake cuBLAS)" 0 "see logs/locator.log"
else
  run_step locator 60 env PATH="$WORK/fakevenv/bin:$PATH" ATTN_CUBLAS= "$A" probe
  want="cuda cublas: $WORK/fakevenv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13 (Python environment $WORK/fakevenv, first python3 on PATH); libcublasLt.so.13 from the same directory"
  if grep -qxF "$want" "$LOGS/locator.log"; then record locator ok "$SECS" "fake venv's libcublas.so.13 found, its Lt loaded first"
  else record locator "failed (the probe did not name the planted library)" "$SECS" "$(grep '^cuda cublas' "$LOGS/locator.log" | cut -c1-200)"; fi
fi

# ---- parity: every op and layer case on the GPU ----------------------------------------------------------------------
parity_fig() { tail -n 1 "$LOGS/$1.log" | grep -E 'passed' || grep -m1 -E 'FAIL|skipped' "$LOGS/$1.log" || echo "see logs/$1.log"; }
if ! sel parity; then skip parity "not in --steps"
elif $DRY; then skip parity "dry run"
else run_step parity 180 "$A" parity --device cuda --variants; record parity "$(status_of)" "$SECS" "fp32 (TF32 off), every attention and GEMM path: $(parity_fig parity)"; fi
PREC_OK=false; sel parity && "$A" parity --help 2>/dev/null | grep -q -- '--precision' && PREC_OK=true
for p in tf32 bf16 fp16; do
  if ! sel "parity-$p"; then skip "parity-$p" "not in --steps"
  elif $DRY; then skip "parity-$p" "dry run"
  elif ! $PREC_OK; then skip "parity-$p" "attn parity has no --precision option yet"
  else run_step "parity-$p" 120 "$A" parity --device cuda --precision "$p"; record "parity-$p" "$(status_of)" "$SECS" "$(parity_fig "parity-$p")"; fi
done

# ---- junit: the CUDA JUnit suite from the test bundle (tests/) or the repository's build -----------------------------
JAR="$(ls "$HERE"/tests/junit-platform-console-standalone-*.jar 2>/dev/null | head -n1)"
jars() { local j out=""; for j in "$1"/*.jar; do out="$out$j:"; done; printf '%s' "$out"; } # the console takes no lib/*
if [ -x "$HERE/runtime/bin/java" ]; then JAVA="$HERE/runtime/bin/java"; CP="$(jars "$HERE/lib")$HERE/tests/engine-cuda-tests.jar"
else # the repository: the JDK >= 25 the ./attn launcher finds (the java on PATH may be older, as on CI)
  JAVA=""; source <(sed -n '/^java_major()/,/^}/p;/^find_jdk()/,/^}/p' "$HERE/attn")
  if JDK="$(find_jdk)"; then JAVA="$JDK/bin/java"; fi
  CP="$(jars "$HERE/cli/target/lib")$HERE/engine-cuda/target/test-classes"
  [ -n "$JAR" ] || JAR="$(ls ~/.m2/repository/org/junit/platform/junit-platform-console-standalone/*/junit-platform-console-standalone-*.jar 2>/dev/null | sort -V | tail -n1)"
fi
if ! sel junit; then skip junit "not in --steps"
elif [ -z "$JAR" ] || [ -z "$JAVA" ]; then skip junit "no test bundle: build it with ./attn dist --tests and unpack it beside the bundle"
else
  # dry run: the launcher, runtime and class path, the no-driver tests and the GPU suite's skip (seconds, not minutes)
  SELECT=(--select-package io.attn.cuda); $DRY && SELECT=(--select-class io.attn.cuda.CudaProviderTest --select-class io.attn.cuda.CudaOpsGpuTest)
  # the classes tagged fake-natives load fake libcublas/libcublasLt.so.13 files: each runs in a JVM of its own, after
  # the rest (a process keeps the first library of each soname: a real cuBLAS loaded after a fake Lt ends the JVM)
  junit_run() { "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar "$JAR" execute \
    --disable-banner --details=summary --details-theme=ascii --class-path "$CP" --exclude-tag long "$@"; }
  junit_all() {
    local rc=0 c
    junit_run "${SELECT[@]}" --exclude-tag fake-natives --reports-dir "$LOGS/junit-reports" || rc=$?
    for c in CublasLocatorTest FfmCublasTest; do
      junit_run --select-class "io.attn.cuda.$c" --reports-dir "$LOGS/junit-reports/$c" || rc=$?
    done
    return $rc
  }
  export -f junit_run junit_all; export JAVA JAR CP LOGS; export SELECT_STR="${SELECT[*]}"
  run_step junit 200 bash -c 'read -ra SELECT <<<"$SELECT_STR"; junit_all'
  # the summary lines of the JVMs, summed: "N tests successful, ..."
  jf="$(grep -E '^\[? *[0-9]+ tests (successful|failed|skipped|aborted)' "$LOGS/junit.log" | sed 's/[][|]//g' \
    | awk '{n[$3]+=$1} END {printf "%d tests successful, %d tests failed, %d tests skipped, %d tests aborted", n["successful"], n["failed"], n["skipped"], n["aborted"]}')"
  gpu_skipped=$(grep -rc 'no usable GPU' "$LOGS/junit-reports" --include='*.xml' 2>/dev/null | awk -F: '{s+=$NF} END {print s+0}')
  ran=$(printf '%s' "$jf" | grep -oE '^[0-9]+')
  if [ "${ran:-0}" = 0 ]; then record junit "failed (no test ran: exit $RC)" "$SECS" "$jf"
  elif $DRY; then record junit "$( [ "$RC" = 0 ] && echo ok || status_of)" "$SECS" "dry run, GPU cases skipped: $jf"
  elif [ "$RC" = 0 ] && [ "$gpu_skipped" -gt 0 ]; then record junit "failed (GPU cases skipped: no usable GPU)" "$SECS" "$jf"
  else record junit "$(status_of)" "$SECS" "$jf"; fi
fi

# ---- golden: PyTorch's outputs (committed from 1.13, then fresh from this host's torch) through the GPU -----------------
GOLDEN="$HERE/golden"; [ -d "$GOLDEN" ] || GOLDEN="$HERE/tests/golden"
if ! sel golden; then skip golden "not in --steps"
elif $DRY; then
  if [ -n "$PY" ]; then run_step golden 60 "$PY" -m py_compile "$HERE/tools/golden_torch.py" "$HERE/tools/bench_gpu_torch.py" "$HERE/tools/embed_vs_st.py" "$HERE/tools/gpu_sweep.py" "$HERE/tools/gpu_cases.py" "$HERE/tools/gpu_families.py"
    record golden "skipped (dry run)" "$SECS" "the Python tools compile: $( [ "$RC" = 0 ] && echo yes || echo "NO (exit $RC)")"
    [ "$RC" = 0 ] || record python-tools "failed (py_compile)" "$SECS" "see logs/golden.log"
  else skip golden "dry run"; fi
else
  run_step golden 100 "$A" golden "$GOLDEN" --device cuda
  gfig="committed (torch 1.13): $(grep -E 'passed' "$LOGS/golden.log" | tail -n1)"; grc=$RC; gs=$SECS
  if $HAS_TORCH; then
    run_step golden-torch 100 "$PY" "$HERE/tools/golden_torch.py" --out "$WORK/golden-host"
    if [ -f "$WORK/golden-host/index.json" ]; then
      run_step golden 100 "$A" golden "$WORK/golden-host" --device cuda; grc=$(( grc | RC )); gs=$(( gs + SECS ))
      gfig="$gfig; fresh ($(grep -E '^torch ' "$WORK/python.txt" | cut -d' ' -f2)): $(grep -E 'passed' "$LOGS/golden.log" | tail -n1)"
    else grc=1; gfig="$gfig; golden_torch.py wrote no cases (logs/golden-torch.log)"; fi
  else gfig="$gfig; no torch here: no fresh cases"; fi
  RC=$grc; record golden "$(status_of)" "$gs" "$gfig"
fi

# ---- sweep: every attention kernel variant (attention_variants.json) beside PyTorch's SDPA backends, one process -----
# the dry run checks the JSON against the PTX (every variant's and converter's entry, its 16 parameters): CI's check
if ! sel sweep; then skip sweep "not in --steps"
elif [ -z "$PY" ]; then record sweep "failed (no python3)" 0 ""
elif $DRY; then
  run_step sweep 30 "$PY" "$HERE/tools/gpu_sweep.py" --dry-run
  record sweep "$( [ "$RC" = 0 ] && echo ok || echo "failed (attention_variants.json against the PTX: exit $RC)")" "$SECS" \
    "dry run: $(grep -E '^(dry run ok|DRY RUN FAILED)' "$LOGS/sweep.log" | tail -n1); $(grep -m3 '^PROBLEM' "$LOGS/sweep.log" | tr '\n' ' ')"
elif ! $HAS_TORCH || ! grep -q 'available True' "$WORK/python.txt"; then skip sweep "no torch with CUDA"
else
  SW=${GPU_RUN_SWEEP_S:-200}; t=$(left); t=$(( t > SW ? SW : t ))
  run_step sweep "$SW" "$PY" "$HERE/tools/gpu_sweep.py" --out "$WORK/sweep.json" --budget-s $(( t > 50 ? t - 40 : 10 ))
  sfig="$("$PY" - "$WORK/sweep.json" <<'PYEOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
v = d.get("variants", [])
ok = sum(1 for x in v if x.get("status") == "ok")
best = {}
for c in d.get("cases", []):
    if c.get("ratio") and "B=64" not in c["name"] and "with converters" not in c["name"]:
        k = c["name"].split(" [")[0]
        best[k] = max(best.get(k, 0), c["ratio"])
print("%d of %d variants ok, %d errors; winners %s; best ratio %s" % (ok, len(v), len(d.get("errors", [])),
      json.dumps(d.get("winners", {})), "; ".join("%s %.2fx" % (k.replace("attention ", ""), r) for k, r in best.items())))
PYEOF
)"
  record sweep "$(status_of)" "$SECS" "${sfig:-no results (logs/sweep.log)}"
fi

# ---- winners: the sweep's fastest variants through the engine (attn bench attention --resident --backend-opt) --------
if ! sel winners; then skip winners "not in --steps"
elif $DRY; then skip winners "dry run"
elif [ -z "$PY" ]; then record winners "failed (no python3)" 0 ""
else
  WS=${GPU_RUN_WINNERS_S:-150}; t=$(left); t=$(( t > WS ? WS : t ))
  run_step winners "$WS" "$PY" "$HERE/tools/gpu_cases.py" winners --sweep "$WORK/sweep.json" --attn "$A" --out "$WORK/winners.json" --budget-s $(( t > 30 ? t - 25 : 5 ))
  wfig="$("$PY" - "$WORK/winners.json" <<'PYEOF' 2>/dev/null
import json, sys
r = json.load(open(sys.argv[1]))["rows"]
t = [x for x in r if "attn_ms" in x]
print("%d of %d timed; %s; %d option errors" % (len(t), len(r), "; ".join("%s %.2fx" % (x["name"].replace("attention ", ""), x["ratio"]) for x in t if x.get("ratio"))[:200], sum(1 for x in r if x.get("error"))))
PYEOF
)"
  record winners "$(status_of)" "$SECS" "${wfig:-no results (logs/winners.log)}"
fi

# ---- cudnn: --backend-opt attention=cudnn (cuDNN's fused SDPA through FFM) beside the flash path and PyTorch's SDPA ------
# parity-cudnn judges its results (the attention cases at bf16 and fp16, every variant incl. attention=cudnn, against
# the float64 reference at the 16-bit bounds); cudnn times it (tools/gpu_cases.py cudnn: bf16, B=8 H=16 L=S=4096,
# D=64 / 128, causal and not; "attention D=64 bf16 cudnn" and "... flash" beside the sweep's SDPA FLASH / CUDNN).
if ! sel parity-cudnn; then skip parity-cudnn "not in --steps"
elif $DRY; then skip parity-cudnn "dry run"
else
  run_step parity-cudnn 90 bash -c '"$0" parity --device cuda --precision bf16 --variants --filter attention && "$0" parity --device cuda --precision fp16 --variants --filter attention' "$A"
  record parity-cudnn "$(status_of)" "$SECS" "bf16 then fp16, attention cases, every variant incl. attention=cudnn: $(grep -c 'attention: cudnn (cuDNN' "$LOGS/parity-cudnn.log") cudnn backend lines, $(grep -c 'no cuDNN plan' "$LOGS/parity-cudnn.log") refused plans; $(grep -m1 'attention=cudnn unavailable' "$LOGS/parity-cudnn.log" | cut -c1-160)$(parity_fig parity-cudnn)"
fi
if ! sel cudnn; then skip cudnn "not in --steps"
elif $DRY; then skip cudnn "dry run"
elif [ -z "$PY" ]; then record cudnn "failed (no python3)" 0 ""
else
  CS=${GPU_RUN_CUDNN_S:-100}; t=$(left); t=$(( t > CS ? CS : t ))
  run_step cudnn "$CS" "$PY" "$HERE/tools/gpu_cases.py" cudnn --sweep "$WORK/sweep.json" --attn "$A" --out "$WORK/cudnn.json" --budget-s $(( t > 30 ? t - 25 : 5 ))
  cfig="$("$PY" - "$WORK/cudnn.json" <<'PYEOF' 2>/dev/null
import json, sys
r = json.load(open(sys.argv[1]))["rows"]
print("; ".join("%s%s %.3f ms%s" % (x["name"].replace("attention ", ""), " (FELL BACK)" if x.get("fallback") else "", x["attn_ms"], " %.2fx" % x["ratio"] if x.get("ratio") else "") for x in r if "attn_ms" in x)[:300] + "; %d errors" % sum(1 for x in r if x.get("error")))
PYEOF
)"
  record cudnn "$(status_of)" "$SECS" "${cfig:-no results (logs/cudnn.log)}"
fi

# ---- bench: attn vs PyTorch on the same GPU ----------------------------------------------------------------------------
if ! sel bench; then skip bench "not in --steps"
elif $DRY; then skip bench "dry run"
elif ! $HAS_TORCH || ! grep -q 'available True' "$WORK/python.txt"; then
  run_step bench 90 "$A" bench attention --batch 8 --heads 16 --seq 4096 --head-dim 64 --device cuda --resident
  record bench "$(status_of)" "$SECS" "no torch with CUDA: attn alone, $(grep '^{' "$LOGS/bench.log" | tail -n1 | cut -c1-200)"
else
  t=$(left); t=$(( t > 240 ? 240 : t ))
  # with the sweep selected by --steps, the attention cases are its and the winners': the encoder layer alone here
  BCASES=(); [ -n "$SEL" ] && sel sweep && BCASES=(--cases encoder)
  run_step bench 240 "$PY" "$HERE/tools/bench_gpu_torch.py" --attn "$A" --out "$WORK/bench-gpu.json" --budget-s $(( t > 60 ? t - 50 : 10 )) "${BCASES[@]}"
  bfig="$("$PY" - "$WORK/bench-gpu.json" <<'EOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["rows"] if "ratio" in x]
met = sum(x["ratio"] >= x["goal"] for x in r)
print("%d cases, %d errors, goal met %d/%d; %s" % (len(d["rows"]), len(d["errors"]), met, len(r),
      "; ".join("%s %.2fx" % (x["case"].replace("attention ", "").split(" (")[0], x["ratio"]) for x in r[:4])))
EOF
)"
  record bench "$(status_of)" "$SECS" "${bfig:-no results (logs/bench.log)}"
fi

# ---- embed: a real encoder on the GPU against sentence-transformers --------------------------------------------------
MODEL="${ATTN_GPU_MODEL:-$(ls -d "$HERE"/models/*/ 2>/dev/null | while read -r d; do [ -f "$d/config.json" ] && echo "${d%/}" && break; done)}"
if ! sel embed; then skip embed "not in --steps"
elif $DRY; then skip embed "dry run" "${MODEL:-no model folder under models/}"
elif [ -z "$MODEL" ]; then skip embed "no model folder: carry one as models/<name>/ in the bundle (docs/gpu.md)"
else
  { for i in $(seq 1 256); do echo "sentence $i: the quick brown fox jumps over the lazy dog number $((i * 7 % 13)) $([ $((i % 5)) = 0 ] && printf 'and keeps running across the long green field for a while %.0s' 1 2 3)"; done; } >"$WORK/texts.txt"
  run_step embed 90 "$A" embed --model "$MODEL" --input "$WORK/texts.txt" --output "$WORK/attn.npy" --device cuda; erc=$RC; es=$SECS
  run_step embed 90 "$A" bench embed --model "$MODEL" --input "$WORK/texts.txt" --device cuda; erc=$(( erc | RC )); es=$(( es + SECS ))
  sps32="$(grep '^{' "$LOGS/embed.log" | tail -n1 | grep -oE '"sentences_per_s":[0-9.]+' | cut -d: -f2)"
  wb32="$(grep '^{' "$LOGS/embed.log" | tail -n1 | grep -oE '"weights_bytes":-?[0-9]+' | cut -d: -f2)"
  # fp16: attn --precision fp16 against sentence-transformers fp32 (vectors) and model.half() (speed)
  run_step embed 90 "$A" embed --model "$MODEL" --input "$WORK/texts.txt" --output "$WORK/attn16.npy" --device cuda --precision fp16; erc=$(( erc | RC )); es=$(( es + SECS ))
  run_step embed 90 "$A" bench embed --model "$MODEL" --input "$WORK/texts.txt" --device cuda --precision fp16; erc=$(( erc | RC )); es=$(( es + SECS ))
  sps16=""; wb16=""; [ "$RC" = 0 ] && sps16="$(grep '^{' "$LOGS/embed.log" | tail -n1 | grep -oE '"sentences_per_s":[0-9.]+' | cut -d: -f2)" \
    && wb16="$(grep '^{' "$LOGS/embed.log" | tail -n1 | grep -oE '"weights_bytes":-?[0-9]+' | cut -d: -f2)"
  # weights on the device: fp16 holds the Linear weights in 16 bits (about half of fp32's bytes for an encoder)
  efig="attn fp32 ${sps32:-?} sentences/s (weights ${wb32:-?} bytes), fp16 ${sps16:-?} (weights ${wb16:-?} bytes)"
  if $HAS_ST && [ -f "$WORK/attn.npy" ]; then
    E16=(); [ -f "$WORK/attn16.npy" ] && E16=(--attn-npy-fp16 "$WORK/attn16.npy" --attn-fp16-sps "${sps16:-0}")
    run_step embed 150 "$PY" "$HERE/tools/embed_vs_st.py" --model "$MODEL" --texts "$WORK/texts.txt" --attn-npy "$WORK/attn.npy" --out "$WORK/embed.json" \
      --attn-sps "${sps32:-0}" --half "${E16[@]}"
    erc=$(( erc | RC )); es=$(( es + SECS )); efig="$efig; vs sentence-transformers: $(tail -n1 "$LOGS/embed.log" | cut -c1-220)"
  else efig="$efig; no sentence-transformers comparison"; fi
  RC=$erc; record embed "$(status_of)" "$es" "$(basename "$MODEL"): $efig"
fi

# ---- families: every model family of tests/families on the GPU against sentence-transformers (issue 35) ---------------
# tools/gpu_families.py: each family's vectors from `attn embed --device cuda` within the CPU suite's bounds of
# expected.json's (cosine 0.99999, 1e-4 x norm); the dry run checks the same pipeline on the CPU with two families
FAM="${GPU_RUN_FAMILIES:-}"
for d in "$HERE/tests/families" "$HERE/families" "$HERE/../../tests/families"; do [ -z "$FAM" ] && [ -d "$d" ] && FAM="$d"; done
if ! sel families; then skip families "not in --steps"
elif [ -z "$PY" ]; then record families "failed (no python3)" 0 ""
elif [ -z "$FAM" ]; then skip families "no tests/families folder (run from the repository, or set GPU_RUN_FAMILIES)"
elif $DRY; then
  run_step families 60 "$PY" "$HERE/tools/gpu_families.py" --attn "$A" --device cpu --families "$FAM" --only bert,qwen3 --budget-s 50
  record families "$(status_of)" "$SECS" "dry run on the cpu: $(tail -n1 "$LOGS/families.log")"
else
  t=$(left); t=$(( t > 180 ? 180 : t ))
  run_step families 180 "$PY" "$HERE/tools/gpu_families.py" --attn "$A" --device cuda --families "$FAM" --out "$WORK/families.json" --budget-s $(( t > 20 ? t - 10 : 5 ))
  record families "$(status_of)" "$SECS" "$(tail -n1 "$LOGS/families.log"); $(grep -c FAILED "$LOGS/families.log") failed"
fi

# ---- serve: the embedding server on the GPU, dynamic batching against batching off (issue 20's goal: >= 2.5x) ----------
if ! sel serve; then skip serve "not in --steps"
elif $DRY; then skip serve "dry run"
elif [ -z "$MODEL" ]; then skip serve "no model folder (see embed)"
else
  sv() { "$A" bench serve --model "$MODEL" --input "$WORK/texts.txt" --clients 64 --seconds 5 --device cuda "$@" 2>&1 | tail -n1; }
  export -f sv; export A MODEL
  run_step serve 60 bash -c 'sv; sv --no-batching'
  sfig="$(grep '^{"bench"' "$LOGS/serve.log" | "${PY:-python3}" -c '
import json, sys
r = [json.loads(l) for l in sys.stdin]
if len(r) == 2:
    b, n = r
    print("batching %.0f sentences/s (p99 %.0f ms), off %.0f: %.2fx; errors %d" % (b["sentences_per_s"], b["p99_ms"],
          n["sentences_per_s"], b["sentences_per_s"] / max(n["sentences_per_s"], 1e-9), b["errors"] + n["errors"]))
' 2>/dev/null)"
  [ -n "$sfig" ] || { [ "$RC" = 0 ] && RC=1; }
  record serve "$(status_of)" "$SECS" "${sfig:-no summary lines (logs/serve.log)}"
fi

# ---- cpu: the host CPU's GEMM blocking (issue 19: the per-CPU table in engine-cpu's Tuning grows from such runs) --------
# 1 thread, three lanes pinned to cores 1-3 at once, one round of tools/gemm_blocking.sh's settings against NumPy; last,
# so that the GPU steps have the budget first
GB="$HERE/tools/gemm_blocking.sh"; [ -f "$GB" ] || GB="$HERE/benchmarks/scripts/gemm_blocking.sh"   # bundle, or repository
if ! sel cpu; then skip cpu "not in --steps"
elif $DRY; then
  run_step cpu 10 bash -n "$GB"
  record cpu "skipped (dry run)" "$SECS" "gemm_blocking.sh parses: $( [ "$RC" = 0 ] && echo yes || echo "NO (exit $RC)")"
elif ! command -v taskset >/dev/null || [ "$(nproc)" -lt 4 ]; then skip cpu "needs taskset and 4 cores"
else
  run_step cpu 100 bash "$GB" "$A" 1 "1 2 3"
  cfig="$(grep -E '^core|^cpu kernels' "$LOGS/cpu.log" | "${PY:-python3}" -c '
import re, statistics, sys
ms, npy, own = {}, [], ""
for l in sys.stdin:
    m = re.match(r"core\d+ r\d+ \[(.*?)\] \[--m 1024 .*\"thread_cpu_ms\":([0-9.]+)", l)
    if m: ms.setdefault(m.group(1) or "own", []).append(float(m.group(2)))
    m = re.search(r"numpy \"shape\": \"batch=1 m=1024 n=1024 k=1024\" \"thread_cpu_ms\": ([0-9.]+)", l)
    if m: npy.append(float(m.group(1)))
    m = re.search(r"GEMM blocks: (.*)", l)
    if m: own = m.group(1)
n = statistics.median(npy) if npy else None
print("1024^3, 1 thread, ms (NumPy/attn): " + "; ".join("%s %.1f%s" % (k.replace("-Dattn.cpu.", ""), statistics.median(v),
      " (%.2fx)" % (n / statistics.median(v)) if n else "") for k, v in ms.items()) + ("; NumPy %.1f" % n if n else "")
      + "; own: " + own[:120])
' 2>/dev/null)"
  [ -n "$cfig" ] || { [ "$RC" = 0 ] && RC=1; }
  record cpu "$(status_of)" "$SECS" "${cfig:-no runs (logs/cpu.log)}"
fi

# ---- pack: summary.md, results.json, logs.tar.gz ------------------------------------------------------------------------
TOTAL=$(( $(date +%s) - T0 ))
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\000-\037')"; }
failed=$(awk -F'\t' '$2 ~ /^failed/' "$STEPS" | wc -l)
EXPECTED="env probe gemm-path locator parity parity-tf32 parity-bf16 parity-fp16 junit golden sweep winners parity-cudnn cudnn bench embed families serve cpu"
missing=""; for s in $EXPECTED; do awk -F'\t' -v s="$s" '$1 == s {f=1} END {exit !f}' "$STEPS" || missing="$missing $s"; done
{
  echo "# attn GPU run$($DRY && echo ' (dry run)')"
  echo
  echo "$(date -u +%FT%TZ) on $(uname -n); GPU: ${GPU:-none}; bundle $(basename "$HERE"); budget ${BUDGET}s"
  echo
  echo "| step | status | s | key figure |"
  echo "|---|---|---:|---|"
  awk -F'\t' '{ gsub(/\|/, "/", $4); printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$STEPS"
  echo
  echo "total ${TOTAL}s of ${BUDGET}s; $failed failed; $(awk -F'\t' '$2 ~ /^skipped/' "$STEPS" | wc -l) skipped; logs in logs.tar.gz"
  [ -z "$missing" ] || echo "MISSING STEP LINES:$missing"
} >"$DEST/summary.md"
{
  echo "{"
  echo " \"dry_run\": $DRY, \"budget_s\": $BUDGET, \"total_s\": $TOTAL, \"failed\": $failed, \"gpu\": $(json_str "$GPU"), \"host\": $(json_str "$(uname -n)"),"
  echo " \"probe\": ["; sed '/^\$ /d' "$WORK/probe.txt" 2>/dev/null | while IFS= read -r l; do echo "  $(json_str "$l"),"; done; echo "  null],"
  echo " \"steps\": ["
  while IFS=$'\t' read -r n s t f; do echo "  {\"name\": $(json_str "$n"), \"status\": $(json_str "$s"), \"seconds\": $t, \"figure\": $(json_str "$f")},"; done <"$STEPS"
  echo "  null],"
  for k in bench-gpu sweep winners cudnn embed families; do
    if [ -f "$WORK/$k.json" ] && { [ -z "$PY" ] || "$PY" -m json.tool "$WORK/$k.json" >/dev/null 2>&1; }; then echo " \"${k%-gpu}\": $(cat "$WORK/$k.json"),"
    else echo " \"${k%-gpu}\": null,"; fi
  done
  echo " \"version\": 1"
  echo "}"
} >"$DEST/results.json"
cp "$STEPS" "$LOGS/steps.tsv"; for k in bench-gpu sweep winners cudnn embed families; do [ -f "$WORK/$k.json" ] && cp "$WORK/$k.json" "$LOGS/"; done
# the run's cases in one file (issue 38): benchmarks/gpu/<date>-<gpu-slug>.json
if ! $DRY && [ -n "$PY" ]; then
  BJ="$DEST/benchmarks/gpu/$(date -u +%F)-$("$PY" "$HERE/tools/gpu_cases.py" slug --gpu "$GPU").json"
  "$PY" "$HERE/tools/gpu_cases.py" collect --gpu "$GPU" --sweep "$WORK/sweep.json" --winners "$WORK/winners.json" \
    --bench "$WORK/bench-gpu.json" --embed "$WORK/embed.json" --cudnn "$WORK/cudnn.json" --out "$BJ" >>"$LOGS/pack.log" 2>&1 \
    || echo "gpu-run: writing $BJ failed" >>"$DEST/summary.md"
fi
[ -f "$WORK/golden-host/index.json" ] && cp "$WORK/golden-host/index.json" "$LOGS/golden-host-index.json"
tar -C "$WORK" -czf "$DEST/logs.tar.gz" logs
nfiles=$(find "$DEST" -type f | wc -l)
END=$(( $(date +%s) - T0 ))
checks="files in $DEST: $nfiles (at most 7); time: ${END}s (budget ${BUDGET}s)"
ok=true; [ "$nfiles" -le 7 ] || ok=false; [ "$END" -le "$BUDGET" ] || ok=false; [ -z "$missing" ] || ok=false
echo "$checks; $($ok && echo 'checks pass' || echo 'CHECKS FAIL')" >>"$DEST/summary.md"
cat "$DEST/summary.md"
$ok && [ "$failed" = 0 ]
