#!/usr/bin/env bash
# Developer entry point of relax. Usage: ./dev.sh <command> [args...]
#
#   demo    build and run examples/llama_demo: a small Llama-architecture model with random
#           weights written to a safetensors file, compiled once (the passes shown with their
#           timings and the memory plan's figures), prefill at two prompt lengths and decode
#           steps over a KV cache, tokens/s, every logit checked against a plain C++ reference;
#           args: the weight format, f32 (default), bf16, int4 or f16. (examples/mlp_demo shows AOT
#           export; examples/shape_demo and examples/ir_demo the shape and IR layers alone)
#   test    what CI runs: build everything but the benchmarks with g++ (preset dev, build/dev)
#           and run every test (ONNX Runtime, the reference of the ONNX importer's tests, is
#           installed with npm into build/peers when missing, and the real models they run are
#           fetched into build/models by tests/frontend/fetch_models.sh);
#           then build the clang ASan+UBSan tree (preset asan, build/asan) and run in it the
#           support, runtime, shape, transform, codegen and e2e tests and each fuzz target's bounded
#           run, which executes its whole corpus first (test preset asan-ci; see below)
#   clang   build everything with clang++ (preset clang, build/clang) and run every test
#   asan    build the ASan+UBSan tree (preset asan, build/asan) and run every test in it
#   fuzz [seconds]
#           build the fuzz targets (tests/fuzz, in build/asan) and fuzz each for the given time
#           (default 60 s), growing a work corpus under build/asan/tests/fuzz/work-corpus/;
#           prints the executions of each. A crash stops with the input under
#           build/asan/tests/fuzz/artifacts/ (add it to tests/fuzz/corpus/ once fixed)
#   tsan    build with ThreadSanitizer (preset tsan, build/tsan) and run the concurrency tests
#   bench   build and run every benchmark in bench/ (args go to each benchmark)
#
# The test presets run each test process's kernels on one thread (RELAX_NUM_THREADS=1; the
# thread tests set their own budgets, and `tsan` keeps the threads): CTest runs two tests at a
# time on two cores, and two processes' 2-thread OpenMP teams spin against each other (a test of
# 10,000 small calls took 80 s instead of 2.4 s).
#
# Each command first checks that the Debian packages the build needs are installed and
# installs the missing ones (only then does it touch apt). RELAX_JOBS sets the build and test
# parallelism (default 2). Compiles go through ccache when it is installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

jobs="${RELAX_JOBS:-2}"
packages=(
  cmake ninja-build ccache g++ clang
  libabsl-dev libeigen3-dev nlohmann-json3-dev libdlpack-dev
  libdnnl-dev ocl-icd-opencl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libprotobuf-dev
)

usage() {
  sed -n '2,/^set /s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

# Installs whichever of the packages are missing; silent when none is.
setup() {
  local missing=() package
  for package in "${packages[@]}"; do
    if [[ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" != installed ]]; then
      missing+=("$package")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return
  fi
  echo "dev.sh: installing ${missing[*]}" >&2
  local sudo=()
  if ((EUID != 0)); then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

# ONNX Runtime, the reference of the ONNX importer's tests: the onnxruntime-node npm package
# under build/peers (where bench/llama_peers.sh puts it too), installed when missing with node's
# npm (Debian's nodejs and npm when there is no npm at all). Offline, the tests that need it say
# so and skip.
setup_onnxruntime() {
  if [[ -d build/peers/node_modules/onnxruntime-node ]]; then
    return
  fi
  if ! command -v npm > /dev/null; then
    local sudo=()
    if ((EUID != 0)); then
      sudo=(sudo)
    fi
    echo "dev.sh: installing nodejs npm (for ONNX Runtime)" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm || return 0
  fi
  echo "dev.sh: installing onnxruntime-node into build/peers" >&2
  mkdir -p build/peers
  (cd build/peers && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node@1.31.1) ||
    echo "dev.sh: onnxruntime-node could not be installed; the ONNX Runtime comparisons will skip" >&2
}

# Debian's python3-torch, which exports the transformer-shaped models of the importer's tests
# (tests/frontend/export_torch_models.py, run by tests/frontend/fetch_models.sh), installed when
# missing for `test` only. Without it those tests skip, saying so.
setup_torch() {
  if /usr/bin/python3 -c 'import torch, numpy' > /dev/null 2>&1; then
    return
  fi
  local sudo=()
  if ((EUID != 0)); then
    sudo=(sudo)
  fi
  echo "dev.sh: installing python3-torch python3-numpy (to export the ONNX test models)" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-numpy ||
    echo "dev.sh: python3-torch could not be installed; the exported models' tests will skip" >&2
}

# configure_and_build <preset> [targets...]: configure the preset and build the targets (all
# when none is named).
# Extra cache settings for the next configure (the test command leaves the benchmarks out of the
# g++ tree, the bench command puts them back).
configure_args=()

configure_and_build() {
  local preset="$1"
  shift
  cmake --preset "$preset" "${configure_args[@]}"
  local targets=()
  if (($# > 0)); then
    targets=(--target "$@")
  fi
  cmake --build --preset "$preset" -j "$jobs" "${targets[@]}"
}

# check <preset>: build everything and run all the tests.
check() {
  configure_and_build "$1"
  ctest --preset "$1" -j "$jobs"
}

# The targets of the ASan+UBSan part of `test`: the unit tests of the support, runtime, shape,
# transform and codegen layers and the end-to-end tests (these reuse the kernels the g++ run put in the JIT
# cache) and the fuzz targets with their seeds and regression inputs. Left to `./dev.sh asan`
# (every test under the sanitizers): the ir tests, whose readers the ir_text and ir_json fuzz
# targets exercise here, and whose build would take a clean CI run past its 30-minute budget.
#
# The test preset asan-ci runs those layers' tests as 6 GoogleTest shard processes per binary
# (RELAX_TEST_SHARDS in the asan preset; `./dev.sh asan` runs one process per test, as the other
# trees do): a sanitized test binary takes 0.2-0.4 CPU-seconds to start, which 1,266 processes
# paid each. The shards leave out the value tests at scale whose values the g++ tree checks and
# whose code other tests of the subset reach under the sanitizers (RELAX_TEST_SHARD_FILTER:
# ScheduleCpuTest's every example operator, two ScheduleMatmulTest panels, VMLivenessTest's very
# long chains: 46, 19, 17 and 37 s under ASan; the CUDA kernels on the host emulator, generated
# ones and the KV attention's, thousands of threads each, whose code is not sanitized anyway).
# Of the fuzz targets it runs the bounded runs only: each executes every corpus input before it
# fuzzes (libFuzzer's INITED line), and fuzz.passes.bounded never got past its corpus within its
# 5 seconds, so the two were one run twice (37 s each).
asan_ci_targets=(relax_support_tests relax_runtime_tests relax_shape_tests relax_transform_tests relax_codegen_tests
                 relax_e2e_tests relax_fuzz)

# The fuzz targets of tests/fuzz (relax_fuzz_<name>).
fuzz_targets=(symexpr ir_text ir_json executable library npy passes safetensors onnx)

# fuzz <seconds>: runs each fuzz target for <seconds>, from its committed corpus and seeds,
# writing new inputs to its work corpus; prints the executions of each.
fuzz() {
  local seconds="$1" name dir=build/asan/tests/fuzz summary=() failed=()
  configure_and_build asan relax_fuzz
  for name in "${fuzz_targets[@]}"; do
    local work="$dir/work-corpus/$name" log="$dir/fuzz-$name.log" dict=()
    mkdir -p "$work" "$dir/artifacts/$name"
    if [[ -e "tests/fuzz/dict/$name.dict" ]]; then
      dict=(-dict="tests/fuzz/dict/$name.dict")
    fi
    local corpus=()
    for source in "tests/fuzz/corpus/$name" "$dir/seeds/$name"; do
      [[ -d "$source" ]] && corpus+=("$source")
    done
    echo "== fuzz $name for ${seconds}s (log: $log)"
    # -fork would use more cores; one process per target keeps the figures comparable.
    if ! "$dir/relax_fuzz_$name" "${dict[@]}" -max_total_time="$seconds" -timeout=60 \
        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name/" \
        "$work" "${corpus[@]}" >"$log" 2>&1; then
      tail -n 40 "$log" >&2
      echo "dev.sh: fuzz $name failed; the input is under $dir/artifacts/$name/" >&2
      failed+=("$name")
      continue
    fi
    local runs
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    summary+=("$(printf '%-11s %12s executions in %ss (%s/s)' "$name" "$runs" "$seconds" \
      "$((runs / seconds))")")
  done
  printf '%s\n' "${summary[@]}"
  if ((${#failed[@]} > 0)); then
    echo "dev.sh: failed: ${failed[*]}" >&2
    exit 1
  fi
}

# The name of each bench/<name>.cc, one per line.
bench_names() {
  local source
  for source in bench/*.cc; do
    [[ -e "$source" ]] || continue
    source="${source##*/}"
    echo "${source%.cc}"
  done
}

command="${1:-}"
if (($# > 0)); then shift; fi
case "$command" in
  demo)
    setup
    configure_and_build dev relax_example_llama_demo
    build/dev/examples/llama_demo "$@"
    ;;
  test)
    setup
    setup_onnxruntime
    setup_torch
    tests/frontend/fetch_models.sh  # the real ONNX models of tests/frontend/onnx_models_test.cc
    # The benchmarks are not built here (`./dev.sh bench` builds them): 12 programs that no
    # test runs, about two minutes of a clean CI build on 2 cores.
    configure_args=(-DRELAX_BUILD_BENCH=OFF)
    check dev
    configure_args=()
    configure_and_build asan "${asan_ci_targets[@]}"
    ctest --preset asan-ci -j "$jobs"
    ;;
  clang) setup; check clang ;;
  asan) setup; check asan ;;
  fuzz)
    seconds="${1:-60}"
    if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
      echo "dev.sh: fuzz takes a number of seconds, not '$seconds'" >&2
      exit 2
    fi
    setup
    fuzz "$seconds"
    ;;
  tsan)
    setup
    configure_and_build tsan relax_runtime_tests relax_codegen_tests relax_e2e_tests
    ctest --preset tsan -j "$jobs"
    ;;
  bench)
    setup
    mapfile -t names < <(bench_names)
    if ((${#names[@]} == 0)); then
      echo "dev.sh: no benchmarks in bench/" >&2
      exit 0
    fi
    configure_args=(-DRELAX_BUILD_BENCH=ON)
    configure_and_build dev "${names[@]/#/relax_bench_}"
    for name in "${names[@]}"; do
      echo "== bench/$name"
      "build/dev/bench/$name" "$@"
    done
    ;;
  *) usage ;;
esac
