#!/usr/bin/env bash
# tests/cuda/device_check.sh [report.md]: the CUDA checks that need a GPU, as one script of a few
# minutes for a machine with an NVIDIA GPU, its driver and the CUDA toolkit (the project's own
# machines have no GPU: there the same tests are built and skipped, visibly, by ./dev.sh test).
#
#   1. builds the project (preset dev, build/dev) with the device tests and the CUDA benchmark,
#      using every core;
#   2. runs the CTest label cuda-device (tests/cuda/: generated kernels of every operator family
#      against the CPU path at several sizes, the library calls against plain loops, the VM on
#      the device and CUDA-graph replay, the decoder layer, and the language model's prefill and
#      decode against the CPU logits) -- a skipped test is a failure here, since a device is
#      expected;
#   3. runs bench/cuda_bench (matmul against cuBLAS called directly, the decode matvec against
#      the GPU's memory bandwidth, tokens/s of the TinyLlama-shape model, graph replay against
#      none);
#   4. writes the report (default: $OUT/device_report.md when $OUT is set, else
#      build/dev/device_report.md): the GPU, the test summary and the benchmark table.
# Exit status: 0 when every device test passed (the benchmark figures are reported either way).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

report="${1:-${OUT:-build/dev}/device_report.md}"
mkdir -p "$(dirname "$report")" build/dev
log=build/dev/device_check.log
jobs="$(nproc 2>/dev/null || echo 4)"
: >"$log"

section() { printf '\n## %s\n\n' "$1" >>"$report"; }
fail() {
  echo "device_check: $*" >&2
  printf '\n**FAILED:** %s\n' "$*" >>"$report"
  exit 1
}

{
  echo "# relax CUDA device check"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
  echo "- CUDA toolkit: $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -n 1 || echo 'not found')"
} >"$report"

for tool in cmake ninja g++; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (./dev.sh test installs the build's packages)"
done

section "Build"
start=$(date +%s)
if ! { cmake --preset dev -DRELAX_BUILD_BENCH=ON &&
       cmake --build --preset dev -j "$jobs" --target relax_cuda_device_tests relax_bench_cuda_bench; } >>"$log" 2>&1; then
  tail -n 40 "$log" >&2
  fail "the build failed (see $log)"
fi
echo "built in $(( $(date +%s) - start )) s with $jobs jobs" >>"$report"

section "Device tests (CTest label cuda-device)"
ctest_out=build/dev/device_ctest.txt
ctest --test-dir build/dev -L cuda-device -j 4 --output-on-failure >"$ctest_out" 2>&1
ctest_status=$?
{
  echo '```'
  grep -E "tests passed|tests failed|Skipped|\*\*\*Failed|Not Run" "$ctest_out" | tail -n 40
  echo '```'
} >>"$report"
skipped=$(grep -c "Skipped" "$ctest_out" || true)

section "Benchmarks (bench/cuda_bench)"
bench_json=build/dev/cuda_bench.json
if build/dev/bench/cuda_bench --benchmark_format=console --benchmark_out="$bench_json" \
     --benchmark_out_format=json >>"$log" 2>&1; then
  {
    echo '| benchmark | time | counters |'
    echo '|---|---|---|'
    python3 - "$bench_json" <<'EOF' 2>/dev/null || echo "(python3 missing: see $bench_json)"
import json, sys
data = json.load(open(sys.argv[1]))
skip = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
        "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index"}
for b in data["benchmarks"]:
    extra = ", ".join(f"{k} {v:.4g}" for k, v in b.items() if k not in skip and isinstance(v, (int, float)))
    err = b.get("error_message", "")
    print(f"| {b['name']} | {b.get('real_time', 0):.4g} {b.get('time_unit', '')} | {err or extra} |")
EOF
  } >>"$report"
else
  echo "the benchmark failed; see $log" >>"$report"
fi

cat "$report"
[[ $ctest_status -eq 0 ]] || fail "device tests failed (see $ctest_out)"
[[ $skipped -eq 0 ]] || fail "$skipped device tests were skipped on a machine that should have a device"
exit 0
