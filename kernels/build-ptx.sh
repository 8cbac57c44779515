#!/usr/bin/env bash
# Regenerates the committed PTX from the CUDA sources: one .ptx per .cu, same name. The .cu files include
# common.cuh (what they share) from their own directory; nvcc runs there.
#   kernels/src/main/cuda/<op>.cu  ->  kernels/src/main/resources/io/attn/kernels/<op>.ptx
# Needs nvcc (CUDA 12 or 13); no GPU. compute_75 is the lowest virtual architecture nvcc 13 accepts; the driver
# JIT-compiles the PTX for the actual GPU (sm_75 .. sm_90+) when the module is loaded. flash_attention_bf16.cu,
# flash_attention_fa2.cu (tensor cores, ldmatrix, cp.async) and flash_attention_tf32.cu (tf32 mma.sync, cp.async) use
# sm_80 instructions and are compiled for compute_80 (the host loads them only on such devices).
# PtxArtifactsTest checks that the committed files match a fresh compile (ignoring the leading // comment lines,
# which name the compiler build) and that ptxas accepts them for sm_80 and sm_90, and that no file declares a PTX ISA
# above 9.0 (what driver 580 reads).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/src/main/cuda"
out="$here/src/main/resources/io/attn/kernels"
NVCC="${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}"
PTXAS="${PTXAS:-$(command -v ptxas || echo "$(dirname "$NVCC")/ptxas")}"
MAX_ISA=90   # 9.0, as major * 10 + minor; PtxArtifactsTest checks every committed file against it
mkdir -p "$out"
for cu in "$src"/*.cu; do
  name="$(basename "$cu" .cu)"
  arch=compute_75
  case "$name" in flash_attention_bf16|flash_attention_fa2|flash_attention_tf32) arch=compute_80 ;; esac  # sm_80 instructions: keep in sync with Kernels.arch
  (cd "$src" && "$NVCC" -ptx -arch=$arch -O3 "$name.cu" -o "$out/$name.ptx")
  # driver 580 (CUDA 13.0) JIT-compiles PTX ISA up to 9.0; a newer nvcc writes a higher .version for the same code.
  # Pin it to 9.0 and prove with ptxas that the file still assembles (an instruction newer than 9.0 fails here).
  isa="$(sed -n 's/^\.version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' "$out/$name.ptx" | head -n1)"
  set -- $isa
  if [ "$(( $1 * 10 + $2 ))" -gt "$MAX_ISA" ]; then
    sed -i "s/^\.version [0-9]*\.[0-9]*/.version 9.0/" "$out/$name.ptx"
    sm="sm_${arch#compute_}"
    if ! "$PTXAS" -arch="$sm" "$out/$name.ptx" -o /dev/null; then
      echo "build-ptx: $name.ptx: nvcc wrote .version $1.$2 and ptxas rejects it pinned to 9.0 (above)" >&2; exit 1
    fi
    echo "$name.ptx (.version $1.$2 pinned to 9.0; ptxas -arch=$sm accepts it)"
  else
    echo "$name.ptx"
  fi
done
