// relax::build: from an IRModule to a callable Module, in one call.
//
//   absl::StatusOr<relax::runtime::Module> m = relax::build(mod, "cpu");
//   absl::StatusOr<relax::runtime::Value> y = (*m)["main"](x);
//   absl::Status s = m->export_library("model.so");   // AOT: load with runtime::load_module
//
// The steps, in order (each error comes back as the Status of build):
//   1. run the pass pipeline (the default one, transform/pipeline.h, or the
//      caller's PassManager), which legalizes the operators into PrimFuncs,
//      and check the result is well formed;
//   2. compile the graph functions into a VM Executable (compile_to_executable);
//   3. emit every PrimFunc as C++ (generate_cpp), compile it with the host
//      compiler into a shared object in the JIT cache (a cache hit when the
//      same source and flags were compiled before) and load it; for the cuda
//      target, emit CUDA C and host launchers instead (generate_cuda), compile
//      the CUDA C with NVRTC into a cubin (cached alike) and embed the cubin in
//      the launchers' shared object, so the JIT and the AOT library carry it;
//   4. bind the executable to the kernels (runtime::Module::create) and attach
//      the exporter that writes the AOT library: the same kernels plus the
//      serialised executable, embedded into one shared object.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "relax/support/target.h"
#include "relax/ir/module.h"
#include "relax/runtime/module.h"
#include "relax/transform/pass_manager.h"

namespace relax {

/// What build did, for tests and tools that look inside.
struct BuildInfo {
  /// The module after the pass pipeline: what was compiled.
  IRModule lowered;
  /// The kernel shared object and its C++ source.
  std::string library_path;
  std::string source_path;
  /// Whether the kernel library came from the JIT cache.
  bool cache_hit = false;
};

/// Compiles `mod` for `target`. `info`, when given, receives what build did.
absl::StatusOr<runtime::Module> build(const IRModule& mod, const Target& target = Target(),
                                      BuildInfo* info = nullptr);
/// Compiles `mod` for `target` through the passes of `passes` instead of the
/// default pipeline (e.g. the default one edited: transform::default_pipeline
/// then insert_after("legalize-ops", ...)). The pipeline must leave no
/// operator call for the code generator (legalize-ops does that).
absl::StatusOr<runtime::Module> build(const IRModule& mod, const Target& target,
                                      const transform::PassManager& passes, BuildInfo* info = nullptr);
/// As above, in the caller's PassContext (options, instruments, statistics).
/// When the environment variable RELAX_VERIFY_PASSES is set (the test suites
/// set it), a transform::VerifyInstrument is added to `ctx` unless it has one.
absl::StatusOr<runtime::Module> build(const IRModule& mod, const Target& target,
                                      const transform::PassManager& passes, transform::PassContext& ctx,
                                      BuildInfo* info = nullptr);
/// Compiles `mod` for `target` through the default pipeline and writes the AOT
/// library to `path` without loading it: the way to build for a device this
/// machine lacks (a CUDA library made on a machine without a GPU, loaded with
/// runtime::load_module where one is).
absl::Status export_library(const IRModule& mod, const Target& target, const std::string& path,
                            BuildInfo* info = nullptr);
/// As above with the target given as text (see Target::parse): "cpu", "cpu -threads=1",
/// "cuda -arch=sm_90". A cuda module needs a GPU and its driver to load: without
/// them build fails with runtime::cuda::check_available()'s message.
absl::StatusOr<runtime::Module> build(const IRModule& mod, const std::string& target,
                                      BuildInfo* info = nullptr);

}  // namespace relax
