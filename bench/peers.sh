#!/usr/bin/env bash
# memsight against likwid-bench, STREAM 5.10 and multichase, alternating, in one command
# (a benchmark, not a test: it prints machine-dependent timings).
#
# Installs likwid with apt when missing, builds memsight, builds multichase and STREAM from their
# sources in PEERS_DIR (a folder holding multichase/, a clone of github.com/google/multichase, and
# stream/, a clone of github.com/jeffhammond/STREAM; their code is not part of this repository),
# then runs bench/peers.py: every class ROUNDS times (default 5), memsight and the peer
# alternately, and a table of medians and ratios.
# Both tools run one vector width: the widest here, or LIKWID_ISA (avx512, avx or sse; memsight
# runs avx512, avx2 or sse2 to match).
# Usage: PEERS_DIR=DIR [ROUNDS=5] [ONLY=latency,L1] [LIKWID_ISA=avx] bench/peers.sh
set -euo pipefail
peers=${PEERS_DIR:-}
if [[ -z $peers || ! -f $peers/multichase/multichase.c || ! -f $peers/stream/stream.c ]]; then
  echo "bench/peers.sh: set PEERS_DIR to a folder holding multichase/ (github.com/google/multichase) and stream/ (github.com/jeffhammond/STREAM)" >&2
  exit 2
fi
peers=$(cd "$peers" && pwd)
cd "$(dirname "$0")/.."
need=()
command -v likwid-bench >/dev/null || need+=(likwid)
command -v gcc >/dev/null || need+=(build-essential)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  if [[ $(id -u) == 0 ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "bench/peers.sh: install ${need[*]} first: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
fi
cargo build --release --locked -q -p memsight
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp -r "$peers/multichase" "$peers/stream" "$build/"
make -s -C "$build/multichase" multichase >/dev/null
# STREAM 5.10 as its README builds it; -fno-tree-loop-distribute-patterns keeps gcc from turning
# Copy into a call to glibc memcpy (non-temporal stores for large arrays).
gcc -O3 -march=native -fopenmp -mcmodel=medium -fno-tree-loop-distribute-patterns \
  -DSTREAM_ARRAY_SIZE=80000000 -DNTIMES=20 "$build/stream/stream.c" -o "$build/stream.80M"
isa=$(target/release/memsight env --json | python3 -c 'import json,sys; f=json.load(sys.stdin)["environment"]["cpu"]["features"]; print("avx512" if f["avx512f"] else "avx" if f["avx2"] else "sse")')
PEERS_BUILD=$build LIKWID_ISA=${LIKWID_ISA:-$isa} python3 bench/peers.py
