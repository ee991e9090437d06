#!/usr/bin/env bash
# Peak memory of one call of each real ONNX model: relax (relax-run, weights as constants, its
# memory plan's arena and the process's peak RSS) against ONNX Runtime (tests/frontend/ort_run.js,
# the process's peak RSS), both through /usr/bin/time on the same inputs. The inputs are the
# largest size of each reference set (tests/frontend/fetch_models.sh makes them) or, for the image
# and audio models, generated here. Prints one line per model.
#
#   bench/onnx_memory.sh        (after ./dev.sh test, which builds relax-run and fetches the models)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="$root/build/models"
run="$root/build/dev/tools/relax-run"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export NODE_PATH="$root/build/peers/node_modules"

measure() {  # measure NAME MODEL RELAX_FLAGS... -- INPUTS...
  local name="$1" model="$2"
  shift 2
  local flags=() inputs=()
  while [[ "$1" != "--" ]]; do flags+=("$1"); shift; done
  shift
  inputs=("$@")
  local args=()
  for i in "${inputs[@]}"; do args+=("--input=@$i"); done
  /usr/bin/time -f "%M" -o "$tmp/relax_rss" "$run" "$model" "${flags[@]}" "${args[@]}" --memory-stats > "$tmp/relax_out" 2>&1
  local arena
  arena="$(grep -o 'arena_bytes=[0-9]*' "$tmp/relax_out" | tail -1 | cut -d= -f2)"
  mkdir -p "$tmp/ort"
  /usr/bin/time -f "%M" -o "$tmp/ort_rss" node "$root/tests/frontend/ort_run.js" "$model" "$tmp/ort" "${inputs[@]}" 2> /dev/null
  printf '%-22s relax arena %8.1f MB   relax peak RSS %7.1f MB   ONNX Runtime peak RSS %7.1f MB\n' "$name" \
    "$(echo "$arena / 1048576" | bc -l)" "$(echo "$(cat "$tmp/relax_rss") / 1024" | bc -l)" \
    "$(echo "$(cat "$tmp/ort_rss") / 1024" | bc -l)"
}

/usr/bin/python3 - "$tmp" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
r = np.random.RandomState(0)
np.save(f"{d}/rec.npy", r.uniform(-1, 1, (1, 3, 48, 320)).astype(np.float32))
np.save(f"{d}/det.npy", r.uniform(-1, 1, (1, 3, 640, 480)).astype(np.float32))
np.save(f"{d}/audio.npy", r.uniform(-0.5, 0.5, (1, 1536)).astype(np.float32))
np.save(f"{d}/sr.npy", np.array(16000, dtype=np.int64))
np.save(f"{d}/state.npy", np.zeros((2, 1, 64), np.float32))
PY
ocr="$models/ocr-models/package/assets"
measure ppocr_v4_rec "$ocr/ch_PP-OCRv4_rec_infer.onnx" -- "$tmp/rec.npy"
measure ppocr_v4_det "$ocr/ch_PP-OCRv4_det_infer.onnx" --dim-multiple=p2o.DynamicDimension.1=32 \
  --dim-multiple=p2o.DynamicDimension.2=32 -- "$tmp/det.npy"
measure silero_vad "$models/vad-node/package/dist/silero_vad.onnx" -- "$tmp/audio.npy" "$tmp/sr.npy" "$tmp/state.npy" "$tmp/state.npy"
for m in bert gpt2 whisper_encoder whisper_decoder; do
  inputs=()
  for f in $(ls "$models/torch_small/$m.2.in"*.npy | sort -V); do inputs+=("$f"); done
  measure "$m" "$models/torch_small/$m.onnx" -- "${inputs[@]}"
done
