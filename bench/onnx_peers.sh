#!/usr/bin/env bash
# relax against ONNX Runtime on the real ONNX models (bench/onnx_bench.cc), at 1 and 2 threads,
# one JSON line per model, size and thread count. Fetches the models (tests/frontend/fetch_models.sh)
# and onnxruntime-node (into build/peers) when missing; builds the benchmark in build/dev.
#
#   bench/onnx_peers.sh [--reps N] [--out FILE]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reps=20
out="$root/onnx_peers.jsonl"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "onnx_peers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
"$root/tests/frontend/fetch_models.sh"
if [[ ! -d "$root/build/peers/node_modules/onnxruntime-node" ]]; then
  mkdir -p "$root/build/peers"
  (cd "$root/build/peers" && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node@1.31.1)
fi
cmake --preset dev -DRELAX_BUILD_BENCH=ON > /dev/null
cmake --build "$root/build/dev" --target relax_bench_onnx_bench
: > "$out"
for threads in 1 2; do
  RELAX_NUM_THREADS=$threads "$root/build/dev/bench/onnx_bench" --reps "$reps" --threads "$threads" | tee -a "$out"
done
