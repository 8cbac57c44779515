#!/usr/bin/env bash
# The GEMM blocking on this CPU (issue 19, docs/performance.md "Per-CPU GEMM blocking"): `attn bench gemm` at 1 thread
# on 1024^3 and MiniLM's two FFN products under several settings, with NumPy (OpenBLAS) as the peer, each lane pinned
# to its own core (several lanes at once give more samples in the same time):
#   benchmarks/scripts/gemm_blocking.sh ATTN [ROUNDS] [CORES]     e.g. ./attn 2 "3 8 13"
# ATTN: ./attn or a bundle's launcher. Settings: the CFGS array below (JVM flags through ATTN_JAVA_OPTS; "" is the
# CPU's own choice, -Dattn.cpu.tuning=off the defaults). Prints one line per run (thread CPU time, ms) and per NumPy
# round. The table entry in engine-cpu's Tuning for the Intel Xeon family 6 model 207 came from this sweep. The bundle
# carries it as tools/gemm_blocking.sh (with gemm_numpy.py), and tools/gpu-run.sh runs it as its `cpu` step.
set -u
A="${1:?usage: gemm_blocking.sh ATTN [ROUNDS] [CORES]}"; ROUNDS="${2:-2}"; CORES="${3:-0}"
NP="$(cd "$(dirname "$0")" && pwd)/gemm_numpy.py"; W=400; MS=700   # beside this script (the repository and the bundle)
"$A" probe 2>&1 | grep '^cpu kernels'
CFGS=("" "-Dattn.cpu.tuning=off" "-Dattn.cpu.gemm.kc=256" "-Dattn.cpu.gemm.pack6=true"
  "-Dattn.cpu.gemm.kc=256 -Dattn.cpu.gemm.pack6=true -Dattn.cpu.gemm.mc=192 -Dattn.cpu.gemm.nc=1024")
SH=("--m 1024 --n 1024 --k 1024 --into" "--m 512 --n 1536 --k 384 --weights --into" "--m 2048 --n 384 --k 1536 --weights --into")
lane() {
  local core=$1 r cfg s
  for r in $(seq 1 "$ROUNDS"); do
    for cfg in "${CFGS[@]}"; do
      for s in "${SH[@]}"; do
        echo "core$core r$r [$cfg] [$s] $(ATTN_JAVA_OPTS="$cfg" taskset -c "$core" "$A" bench gemm $s --threads 1 --device cpu --warmup-ms $W --min-ms $MS 2>&1 | tail -n1 | grep -oE '"thread_cpu_ms":[0-9.]+')"
      done
    done
    echo "core$core r$r numpy $(OPENBLAS_NUM_THREADS=1 taskset -c "$core" python3 "$NP" --threads 1 --seconds 0.7 --shapes big1024,encoder 2>&1 | grep '^{' | grep -oE '"shape": "[^"]*"|"thread_cpu_ms": [0-9.]+' | paste -sd' ')"
  done
}
for c in $CORES; do lane "$c" > "${TMPDIR:-/tmp}/gemm_blocking.$c" 2>&1 & done
wait
for c in $CORES; do cat "${TMPDIR:-/tmp}/gemm_blocking.$c"; rm -f "${TMPDIR:-/tmp}/gemm_blocking.$c"; done
