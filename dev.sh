#!/usr/bin/env bash
# Developer entry point of relax. Usage: ./dev.sh <command> [args...]
#
#   demo    build and run examples/mlp_demo: a model with symbolic batch and sequence length,
#           compiled once, run at several sizes, exported AOT and run in a fresh process
#           (examples/shape_demo and examples/ir_demo show the shape and IR layers alone)
#   test    build everything with g++ (preset dev, build/dev) and run every test
#   clang   the same as test with clang++ (preset clang, build/clang)
#   asan    the same as test with ASan+UBSan (preset asan, build/asan)
#   bench   build and run every benchmark in bench/ (args go to each benchmark)
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
)

usage() {
  sed -n '2,14s/^# \{0,1\}//p' "$0" >&2
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

# configure_and_build <preset> [targets...]: configure the preset and build the targets (all
# when none is named).
configure_and_build() {
  local preset="$1"
  shift
  cmake --preset "$preset"
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
    configure_and_build dev relax_example_mlp_demo relax_example_aot_runner
    build/dev/examples/mlp_demo "$@"
    ;;
  test) setup; check dev ;;
  clang) setup; check clang ;;
  asan) setup; check asan ;;
  bench)
    setup
    mapfile -t names < <(bench_names)
    if ((${#names[@]} == 0)); then
      echo "dev.sh: no benchmarks in bench/" >&2
      exit 0
    fi
    configure_and_build dev "${names[@]/#/relax_bench_}"
    for name in "${names[@]}"; do
      echo "== bench/$name"
      "build/dev/bench/$name" "$@"
    done
    ;;
  *) usage ;;
esac
