// relax::Target: what the code generator compiles for and how.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace relax {

struct Target {
  /// "cpu" (the host, through the host C++ compiler; "llvm" is accepted as a
  /// synonym) or "cuda" (NVIDIA GPUs: kernels as CUDA C through NVRTC, launched
  /// by host-side launchers that the host compiler builds with the flags below).
  std::string kind = "cpu";
  /// The GPU architecture of the "cuda" kind ("sm_90", "sm_80", ...; `-arch=`
  /// in the text form). Ignored by "cpu".
  std::string cuda_arch = "sm_90";
  /// The host compiler to run; empty: $RELAX_CXX, else $CXX, else "c++".
  std::string compiler;
  /// Optimisation and ISA flags ("-march=native" by default; "-mavx2 -mfma", ...).
  /// `-march=<level>` names the ISA level: "native" (this machine; the JIT's
  /// default), or a portable one to export for: "x86-64", "x86-64-v2",
  /// "x86-64-v3", "x86-64-v4" (relax/support/cpu_features.h). Whatever the
  /// flags, a library records the features they enabled and the loader refuses
  /// it on a CPU that lacks one.
  std::vector<std::string> isa_flags = {"-march=native"};
  std::string opt_level = "-O3";
  /// Threads for `parallel` loops, the most one loop's team may have on the
  /// runtime's thread pool (relax/runtime/thread_pool.h): 0 = the process's
  /// kernel thread budget, 1 = serial (parallel loops compile as plain loops).
  int threads = 0;
  /// A parallel loop runs a serial copy of itself when its work -- iterations
  /// times the innermost statements per iteration, computed per call from the
  /// extents -- is below this, so that a small call does not pay a fork/join
  /// that costs more than the loop; 0 = always parallel. The default is about
  /// the work a one-thread elementwise add does in the time of one fork/join
  /// (docs/threads.md).
  int64_t parallel_min_work = 32768;
  /// Runtime checks of shapes, dtypes and ranks at function boundaries and
  /// match_casts (only a benchmark turns them off; match_casts that define
  /// variables still bind them).
  bool runtime_checks = true;
  /// Keep every product in float: no int8-quantised activations for int4 weights (the default
  /// CPU schedule's integer dot products, where the ISA has them; see
  /// transform::CpuScheduleOptions). `-exact-float` in the text form.
  bool exact_float = false;
  /// Where compiled shared objects are cached, keyed by a hash of the source and
  /// flags; empty: $RELAX_CACHE_DIR, else $XDG_CACHE_HOME/relax, else ~/.cache/relax.
  std::string cache_dir;
  /// Keep the generated source next to the cached object even on success.
  bool keep_source = false;
  /// The libraries that the dispatch-library pass may call ("onednn" on the
  /// cpu kind; "cublas", "cudnn" on cuda); by default those the runtime was
  /// built with for the kind (default_libraries(kind)).
  std::vector<std::string> libraries = default_libraries();

  /// Whether this is the "cuda" kind.
  bool is_cuda() const { return kind == "cuda"; }

  /// For "cpu": {"onednn"} when the runtime is built with oneDNN, else none.
  /// For "cuda": {"cublas", "cudnn"} when it is built with CUDA, else none.
  static std::vector<std::string> default_libraries(const std::string& kind = "cpu");

  /// Parses "cpu", "llvm", "cpu -mavx2 -threads=1 -O2", "cpu -march=x86-64-v3",
  /// "cuda -arch=sm_80": a kind followed by options (`-arch=sm_<digits>`, cuda only; (`-threads=N`, `-parallel-min-work=N`, `-O<n>`,
  /// `-no-runtime-checks`, `-exact-float`, `-libs=onednn` (a comma list; `-libs=none` for no
  /// library), any other `-...` is an ISA/compiler flag of the host part). Unknown
  /// kinds are an error. ISA flags in the text replace the default;
  /// `-no-isa-flags` asks for none. CPU names are checked here: on x86-64 a
  /// `-march=`/`-mtune=` value that is neither "native" nor a CPU GCC or Clang
  /// knows, or any `-mcpu=`, is InvalidArgument naming the flag and listing the
  /// valid names (on AArch64 the `-march=` architecture; docs/cpu.md).
  static absl::StatusOr<Target> parse(const std::string& text);
  /// The inverse of parse (the kind "llvm" reads back as "cpu"). compiler,
  /// cache_dir and keep_source are not part of the text.
  std::string to_string() const;
  /// The ISA level named by the last `-march=` flag ("native", "x86-64-v3",
  /// or any CPU name the compiler knows); empty when no flag names one.
  std::string isa_level() const;
};

}  // namespace relax
