#!/usr/bin/env bash
# GPU-host check, run from the unpacked bundle (./tools/gpu-check.sh [OUTDIR]) on a machine with an NVIDIA GPU.
# Needs no JDK (the bundle has its runtime). Writes logs to OUTDIR (default ./gpu-check-out):
#   env.txt       nvidia-smi, driver, where libcuda / libcublas are
#   probe.txt     attn probe
#   parity.txt    attn parity --device cuda and --device cpu (op and layer cases vs the double reference)
#   golden.txt    the bundle's golden cases from PyTorch 1.13 (golden/, the repository's tests/golden) on every backend,
#                 then fresh ones from this host's torch (tools/golden_torch.py, where torch is installed)
#   bench.txt     one attention shape and one encoder layer, CPU and GPU
#   bench-torch.txt, bench-gpu.json   attn vs PyTorch at issue 8's shapes (tools/bench_gpu_torch.py, where torch is)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$PWD/gpu-check-out}"; mkdir -p "$OUT"
A="$HERE/attn"
{
  nvidia-smi; echo
  ldconfig -p | grep -E 'libcuda\.so|libcublas' ; echo
  find / -name 'libcublas.so*' -not -path '*/proc/*' 2>/dev/null | head -20
} >"$OUT/env.txt" 2>&1
"$A" probe >"$OUT/probe.txt" 2>&1
{ "$A" parity --device cuda; echo "exit $?"; "$A" parity --device cpu | tail -1; } >"$OUT/parity.txt" 2>&1
{ "$A" golden "$HERE/golden"; echo "exit $?"; } >"$OUT/golden.txt" 2>&1
if python3 -c 'import torch' 2>/dev/null; then
  python3 "$HERE/tools/golden_torch.py" --out "$OUT/golden" >"$OUT/golden-gen.txt" 2>&1
  { "$A" golden "$OUT/golden"; echo "exit $?"; } >>"$OUT/golden.txt" 2>&1
else
  echo "torch not importable here: no fresh golden cases" >>"$OUT/golden.txt"
fi
{
  for d in cpu cuda; do
    "$A" bench attention --batch 8 --heads 8 --seq 512 --head-dim 64 --device "$d" | tail -1
    "$A" bench encoder-layer --batch 8 --seq 512 --d-model 512 --heads 8 --ffn 2048 --device "$d" | tail -1
  done
} >"$OUT/bench.txt" 2>&1
python3 -c 'import torch' 2>/dev/null && python3 "$HERE/tools/bench_gpu_torch.py" --attn "$A" --out "$OUT/bench-gpu.json" >"$OUT/bench-torch.txt" 2>&1
tail -n 3 "$OUT"/*.txt
