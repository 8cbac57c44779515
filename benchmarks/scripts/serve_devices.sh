#!/usr/bin/env bash
# The server against batching off and attn embed, per device (issue 20's goal): the engine on 2 CPU threads (on a
# many-core host the 64 clients run on the other cores), then on the GPU; alternating, one line per run:
#   benchmarks/scripts/serve_devices.sh ATTN MODEL_DIR TEXTS [rounds=3] [seconds=10] ["cpu cuda"]
# ATTN is the launcher (./attn, or a bundle's); each line is "<device> <mode> <json>"
A="$1"; M="$2"; T="$3"; ROUNDS="${4:-3}"; S="${5:-10}"; DEVS="${6:-cpu cuda}"
for dev in $DEVS; do
  for r in $(seq "$ROUNDS"); do
    for mode in batching no-batching embed; do
      case $mode in
        batching) ATTN_DEVICE=$dev "$A" bench serve --model "$M" --input "$T" --clients 64 --seconds "$S" --threads 2 --device $dev 2>/dev/null | tail -n1 ;;
        no-batching) ATTN_DEVICE=$dev "$A" bench serve --model "$M" --input "$T" --clients 64 --seconds "$S" --threads 2 --device $dev --no-batching 2>/dev/null | tail -n1 ;;
        embed) ATTN_DEVICE=$dev "$A" bench embed --model "$M" --input "$T" --threads 2 --device $dev 2>/dev/null | tail -n1 ;;
      esac | sed "s/^/$dev $mode /"
    done
  done
done
