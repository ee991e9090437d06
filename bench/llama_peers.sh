#!/bin/bash
# The peers of the language-model benchmark: the relax-llama model in PyTorch eager and in ONNX
# Runtime (CPU, the onnxruntime-node npm package), on the same parameter files, same cases.
# Not part of the build or the tests.
#
# Usage: bench/llama_peers.sh [options]
#   --params PATTERN   parameter files, {w} standing for the weight format
#                      (default /tmp/relax_llama_peers/tinyllama_{w}.safetensors); a missing file
#                      is written with random TinyLlama-shape weights (bench/peers/write_params.py;
#                      or write it with `relax-llama weights` first to use the project's own)
#   --weights LIST     weight formats, default f32,bf16,int4
#   --peers LIST       default pytorch,onnxruntime
#   --out FILE         JSON lines appended here (default llama_peers.jsonl)
#   --work DIR         exported ONNX graphs go here (default /tmp/relax_llama_peers)
#   --ort-int4 MODE    int4 in ONNX Runtime: nbits (default: its contrib MatMulNBits, the CPU int4
#                      kernel, on the file's nibbles and scales) or dequantize (float32 matrices)
#   --ort-int4-accuracy N  MatMulNBits accuracy_level: 4 (default, int8 activations) or 0 (f32)
#   --cleanup          delete the parameter files this script wrote and the ONNX graphs when done
#   --no-install       do not install anything; fail if something is missing
#   --prefill 128,512 --decode-context 128,1024 --decode-batch 1,4 --steps 8 --reps 3 --threads 2
#                      the cases, passed to both peers (these are the defaults)
#   --check            instead of benchmarking, run bench/peers/check_peers.py (small shapes:
#                      PyTorch against a numpy reference, ONNX Runtime against PyTorch)
#
# Each output line: {"peer": "pytorch"|"onnxruntime", "weights": ..., "compute": what the peer
# actually runs (int4: dequantised to f32 at load in PyTorch, MatMulNBits in ONNX Runtime; bf16:
# bf16 matmuls in PyTorch when not slower than f32, widened to f32 in ONNX Runtime),
# "case": "prefill"|"decode", "batch", "n" or "context",
# "tokens_per_s" (median of --reps), "best_tokens_per_s", "seconds", "load" (1-minute load average)}.
#
# Installs when missing: Debian's python3-torch, python3-onnx, python3-numpy and OpenBLAS
# (libopenblas0-openmp; without it Debian's torch calls the reference BLAS) with apt-get, and
# onnxruntime-node with `npm install --ignore-scripts` into build/peers. Python is
# /usr/bin/python3 on purpose: python3 on PATH may be another interpreter without torch.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers_dir="$root/bench/peers"
python=/usr/bin/python3
params="/tmp/relax_llama_peers/tinyllama_{w}.safetensors"
weights="f32,bf16,int4"
peers="pytorch,onnxruntime"
out="llama_peers.jsonl"
work="/tmp/relax_llama_peers"
cleanup=0
install=1
check=0
threads=2
ort_int4=nbits
ort_int4_accuracy=4
case_args=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --params) params="$2"; shift 2 ;;
    --weights) weights="$2"; shift 2 ;;
    --peers) peers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --ort-int4) ort_int4="$2"; shift 2 ;;
    --ort-int4-accuracy) ort_int4_accuracy="$2"; shift 2 ;;
    --cleanup) cleanup=1; shift ;;
    --no-install) install=0; shift ;;
    --check) check=1; shift ;;
    --threads) threads="$2"; case_args+=("$1" "$2"); shift 2 ;;
    --prefill|--decode-context|--decode-batch|--steps|--reps) case_args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "llama_peers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

missing_debs=()
for deb in python3-torch python3-onnx python3-numpy libopenblas0-openmp; do
  dpkg -s "$deb" >/dev/null 2>&1 || missing_debs+=("$deb")
done
if [[ ${#missing_debs[@]} -gt 0 ]]; then
  [[ $install -eq 1 ]] || { echo "llama_peers.sh: missing packages: ${missing_debs[*]}" >&2; exit 1; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing_debs[@]}"
fi
node_modules="$root/build/peers/node_modules"
if [[ ",$peers," == *,onnxruntime,* || $check -eq 1 ]] && [[ ! -d "$node_modules/onnxruntime-node" ]]; then
  [[ $install -eq 1 ]] || { echo "llama_peers.sh: no $node_modules/onnxruntime-node" >&2; exit 1; }
  mkdir -p "$root/build/peers"
  (cd "$root/build/peers" && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node)
fi

# OpenBLAS for torch whichever libblas the system selects; OpenMP and OpenBLAS at the bench's threads.
export LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS="$threads"
export NODE_PATH="$node_modules"

if [[ $check -eq 1 ]]; then
  exec "$python" "$peers_dir/check_peers.py" --node-path "$node_modules"
fi

echo "llama_peers.sh: $(date -u +%FT%TZ) load: $(uptime | sed 's/.*load average: //'), output: $out" >&2
mkdir -p "$work"
written=()
IFS=, read -r -a formats <<< "$weights"
for w in "${formats[@]}"; do
  file="${params//\{w\}/$w}"
  if [[ ! -f "$file" ]]; then
    echo "llama_peers.sh: writing random TinyLlama-shape $w weights to $file" >&2
    mkdir -p "$(dirname "$file")"
    "$python" "$peers_dir/write_params.py" "$file" --weights "$w" >/dev/null
    written+=("$file")
  fi
  if [[ ",$peers," == *,pytorch,* ]]; then
    "$python" "$peers_dir/llama_torch.py" "$file" "${case_args[@]}" --out "$out"
  fi
  if [[ ",$peers," == *,onnxruntime,* ]]; then
    graph="$work/onnx_$(basename "$file" .safetensors)"
    if [[ $w == int4 ]]; then graph+="_${ort_int4}${ort_int4_accuracy}"; fi
    if [[ ! -f "$graph/model.onnx" || "$graph/model.onnx" -ot "$file" ]]; then
      rm -rf "$graph"
      "$python" "$peers_dir/llama_onnx.py" "$file" "$graph" --int4 "$ort_int4" \
        --int4-accuracy "$ort_int4_accuracy" >/dev/null
    fi
    node "$peers_dir/ort_bench.js" "$graph" "${case_args[@]}" --out "$out"
    if [[ $cleanup -eq 1 ]]; then rm -rf "$graph"; fi
  fi
done
if [[ $cleanup -eq 1 && ${#written[@]} -gt 0 ]]; then
  rm -f "${written[@]}"
fi
echo "llama_peers.sh: done $(date -u +%FT%TZ) load: $(uptime | sed 's/.*load average: //')" >&2
