#!/usr/bin/env bash
# Which GEMM K step and tile set on this CPU, 1 thread, alternating, with NumPy (OpenBLAS) as the peer (issue 19):
#   benchmarks/scripts/cpu_settings.sh ATTN REPO_ROOT   (ATTN: ./attn or a bundle's launcher; the settings through
#   ATTN_JAVA_OPTS: -Dattn.cpu.gemm.kc, -Dattn.cpu.tiles)
A="$1"; R="$2"
grep -m1 'model name' /proc/cpuinfo; grep -m1 -oE 'avx512f|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' '; grep -m1 'cache size' /proc/cpuinfo; lscpu | grep -E 'L1d|L2|MHz' 
S1="--m 1024 --n 1024 --k 1024 --into"; S2="--m 512 --n 1536 --k 384 --weights --into"; S3="--m 2048 --n 384 --k 1536 --weights --into"
for r in 1 2; do
  for cfg in "" "-Dattn.cpu.gemm.kc=256" "-Dattn.cpu.gemm.kc=512" "-Dattn.cpu.tiles=16" "-Dattn.cpu.tiles=16 -Dattn.cpu.gemm.kc=256"; do
    for s in "$S1" "$S2" "$S3"; do
      echo "cfg=[$cfg] $s $(ATTN_JAVA_OPTS="$cfg" "$A" bench gemm $s --threads 1 --device cpu --warmup-ms 400 --min-ms 800 2>&1 | tail -n1 | grep -oE '"median_ms":[0-9.]+,"gflops":[0-9.]+')"
    done
  done
  python3 "$R/benchmarks/scripts/gemm_numpy.py" --threads 1 --seconds 0.8 --shapes big,encoder 2>&1 | grep '^{' | grep -oE '"shape": "[^"]*"|"median_ms": [0-9.]+|"gflops": [0-9.]+' | paste -sd' '
  for cfg in "" "-Dattn.cpu.tiles=16"; do
    echo "attention cfg=[$cfg] $(ATTN_JAVA_OPTS="$cfg" "$A" bench attention --batch 8 --heads 8 --seq 512 --head-dim 64 --threads 1 --device cpu --warmup-ms 400 --min-ms 1000 2>&1 | tail -n1 | grep -oE '"median_ms":[0-9.]+')"
    echo "attention32 cfg=[$cfg] $(ATTN_JAVA_OPTS="$cfg" "$A" bench attention --batch 32 --heads 12 --seq 64 --head-dim 32 --threads 1 --device cpu --warmup-ms 400 --min-ms 800 2>&1 | tail -n1 | grep -oE '"median_ms":[0-9.]+')"
  done
done
