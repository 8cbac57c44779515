#!/usr/bin/env bash
# Regenerates the committed PTX from the CUDA sources: one .ptx per .cu, same name.
#   kernels/src/main/cuda/<op>.cu  ->  kernels/src/main/resources/io/attn/kernels/<op>.ptx
# Needs nvcc (CUDA 12 or 13); no GPU. compute_75 is the lowest virtual architecture nvcc 13 accepts; the driver
# JIT-compiles the PTX for the actual GPU (sm_75 .. sm_90+) when the module is loaded. flash_attention_bf16.cu uses
# sm_80 tensor-core instructions and is compiled for compute_80 (the host loads it only on such devices).
# PtxArtifactsTest checks that the committed files match a fresh compile (ignoring the leading // comment lines,
# which name the compiler build) and that ptxas accepts them for sm_80 and sm_90.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/src/main/cuda"
out="$here/src/main/resources/io/attn/kernels"
NVCC="${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}"
mkdir -p "$out"
for cu in "$src"/*.cu; do
  name="$(basename "$cu" .cu)"
  arch=compute_75
  case "$name" in flash_attention_bf16) arch=compute_80 ;; esac  # bf16/f16 mma.sync: keep in sync with Kernels.arch
  (cd "$src" && "$NVCC" -ptx -arch=$arch -O3 "$name.cu" -o "$out/$name.ptx")
  echo "$name.ptx"
done
