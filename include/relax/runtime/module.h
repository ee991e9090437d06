// relax::runtime::Module: a compiled model, callable from C++.
//
//   absl::StatusOr<relax::runtime::Module> m = relax::runtime::load_module("model.so");
//   absl::StatusOr<relax::runtime::Value> y = (*m)["main"](x, w);   // tensors, shapes, scalars
//
// A Module pairs an Executable with the KernelLibrary its kernels come from
// and runs it on the VirtualMachine.
//
// Devices. A module compiled for the cuda target runs on a GPU (its
// Executable's device, cuda:0): the VM still runs on the host, but every
// tensor a call allocates lives in device memory, its constants were uploaded
// when the module was created, its kernels and library calls run on the calling
// thread's stream of the device, and a result is a device tensor (Tensor::to
// copies it to the host). Tensor arguments must be on the module's device: one
// elsewhere is an InvalidArgument naming the function, the argument and both
// devices. Builtins (data-dependent shapes: nonzero, unique, ...) compute on the
// host: their arguments are copied there and their results back. It is immutable once created and safe to
// call from several threads at once: every call gets its own frame
// (registers, symbolic slots) and runs on an ExecutionContext of its own
// (relax/runtime/execution_context.h), which keeps the storage the call
// allocated for the next call on it. A call without a context takes one from
// the Module's pool (created on demand, one per concurrent call, kept for
// later calls and destroyed with the Module); a caller may also pass its own:
//
//   relax::runtime::ExecutionContext ctx;
//   absl::StatusOr<relax::runtime::Value> y = (*m)["main"].call(ctx, {x, w});
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/kernel_library.h"
#include "relax/runtime/replay.h"
#include "relax/runtime/value.h"

namespace relax::runtime {

class Module;

/// A function of a Module. Calls check every argument (kind, dtype, rank,
/// symbolic relations between dims) and return InvalidArgument with a message
/// naming the function, the argument, the dimension, the expression, the
/// expected and the actual value when one does not match.
///
/// Strided arguments. A tensor argument need not be contiguous (a transposed or sliced
/// view, e.g. one imported through DLPack): a call copies each strided tensor argument
/// (through tuples) into a compact one on its device before any kernel sees it, so the
/// result is that of the compact values; the copy costs one allocation and one pass over the
/// argument per call, and contiguous arguments are never copied. Where no compact copy can be
/// made (a strided tensor in device memory), the call returns InvalidArgument naming the
/// function and the argument and saying it is not contiguous, with its shape and strides.
class Function {
 public:
  Function() = default;
  bool defined() const { return impl_ != nullptr; }
  const std::string& name() const;

  /// Calls the function on a context of the Module's pool (taken for the call and given
  /// back after it, so concurrent calls never share one).
  absl::StatusOr<Value> call(std::vector<Value> args) const;
  /// As above; `stats`, when not null, receives what the call did with storage (of the
  /// pool's context that ran it: its reserved_bytes are that context's).
  absl::StatusOr<Value> call(std::vector<Value> args, CallMemoryStats* stats) const;
  /// Calls the function on the caller's context: its storages are reused by the later calls
  /// on `ctx` (ctx.last_call_stats() tells what this one did). FailedPrecondition when `ctx`
  /// is running another call or serves another live module.
  absl::StatusOr<Value> call(ExecutionContext& ctx, std::vector<Value> args) const;
  template <typename... Args>
  absl::StatusOr<Value> operator()(Args&&... args) const {
    return call(std::vector<Value>{Value(std::forward<Args>(args))...});
  }

 private:
  friend class Module;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// Writes a Module as one shared object (see Module::export_library), given the module's
/// executable (serialized only then: a module keeps no second copy of its constants).
using LibraryExporter = std::function<absl::Status(const std::string& path, const Executable& exec)>;

class Module {
 public:
  Module() = default;

  /// Binds `exec` to `kernels` (may be null when the executable calls no
  /// kernel). Errors: a kernel or library function the executable names is
  /// missing, naming it. An executable for a CUDA device (Executable::device)
  /// needs the device now: without the driver or the device, FailedPrecondition
  /// naming what is missing ("Module::create: the executable runs on cuda:0: the
  /// CUDA driver libcuda.so.1 cannot be loaded: ..."); its constants are uploaded
  /// to the device here, once.
  static absl::StatusOr<Module> create(Executable exec,
                                       std::shared_ptr<const KernelLibrary> kernels);

  bool defined() const { return impl_ != nullptr; }
  /// The function called `name`, or NotFound listing the functions there are.
  absl::StatusOr<Function> get_function(const std::string& name) const;
  /// As get_function; an unknown name gives a Function whose calls return the NotFound.
  Function operator[](const std::string& name) const;
  std::vector<std::string> function_names() const;
  const Executable& executable() const;
  /// The kernel library, or null.
  const std::shared_ptr<const KernelLibrary>& kernels() const;

  /// Writes one shared object holding the kernels and the serialised
  /// executable, loadable by load_module in a process that links only the
  /// runtime. Works for modules made by relax::build (which attaches the
  /// exporter) and for loaded AOT modules (the file is copied); otherwise
  /// FailedPrecondition.
  absl::Status export_library(const std::string& path) const;
  /// Used by the code generator: how export_library writes this module.
  void set_exporter(LibraryExporter exporter);

  /// How calls replay recorded execution plans (relax/runtime/replay.h; on by default).
  /// Setting the options forgets the plans recorded so far and zeroes replay_stats(); calls
  /// may run meanwhile.
  void set_replay_options(const ReplayOptions& options);
  ReplayOptions replay_options() const;
  ReplayStats replay_stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// Loads an AOT library written by Module::export_library. `path` is a file
/// path (a bare name is a file of the working directory); the file is checked
/// before it is loaded (relax/runtime/library_file.h). Errors name the path: no
/// such file (NotFound), a truncated or corrupted file (DataLoss), a file
/// without relax's integrity trailer (FailedPrecondition), not a relax
/// library, no embedded executable, a corrupt executable, a missing kernel.
absl::StatusOr<Module> load_module(const std::string& path);

// ---------------------------------------------------------------------------
// Library functions for call_dps_library: registered by name, before modules
// that use them are created. Arguments arrive as Values (inputs, then the
// destination tensors); return OK after writing the destinations.
//
// Workspace. A call that declares scratch (`call_dps_library(f, (args...),
// prim(bytes), sinfo=...)`, bytes an int expression of the graph's variables)
// passes one more tensor after the destinations: a contiguous uint8 tensor of
// shape (bytes,), evaluated for this call, at least 64-byte aligned, contents
// unspecified on entry (not zeroed, not kept between calls), which the function
// may use freely until it returns. The compiler allocates it with the caller's
// other tensors (it joins the memory plan), so the function allocates nothing.
// A function registered for calls without a declared workspace gets none.
using LibraryFunction = std::function<absl::Status(const std::vector<Value>& args)>;

/// What the runtime knows of a library function beyond calling it.
struct LibraryFunctionTraits {
  /// On a CUDA device a call synchronises with the host (copies to the host, waits for the
  /// stream or allocates on it), so a CUDA-graph capture cannot hold it: replays on a device
  /// capture the work around such calls and run them directly (relax/runtime/replay.h).
  /// The runtime's "kv_cache.attention" is one.
  bool synchronises_host = false;
};

/// Registers `fn` as `name`, with its traits; an existing registration is replaced.
void register_library_function(const std::string& name, LibraryFunction fn, LibraryFunctionTraits traits = {});
/// The traits `name` is registered with: default ones for a family's name or an unknown name.
LibraryFunctionTraits library_function_traits(const std::string& name);
/// The function registered as `name` (exact names only, not families), or null.
/// Thread-safe. The pointer stays valid for the life of the process (a replaced
/// function is kept, not destroyed); Module::create copies the function, so
/// replacing it affects later modules only.
const LibraryFunction* find_library_function(const std::string& name);

/// Makes a new function object for a name of a family (the whole name, prefix
/// included, e.g. "onednn.linear+bias:packed"), or an error saying what is wrong
/// with the name. Every call returns a new object: state it keeps (caches, packed
/// weights) belongs to the Module that resolved it.
using LibraryFamilyResolver = std::function<absl::StatusOr<LibraryFunction>(const std::string& name)>;

/// Registers `resolver` for every name that starts with `prefix` and is not
/// registered exactly; the longest matching prefix wins; an existing registration
/// of the same prefix is replaced. The runtime registers the family "onednn."
/// itself when it is built with oneDNN (relax/runtime/onednn.h).
void register_library_family(const std::string& prefix, LibraryFamilyResolver resolver);

/// What Module::create binds to a call_dps_library name: a copy of the function
/// registered as `name` exactly, else the result of the resolver of the longest
/// registered prefix of `name` (its error as it is), else NotFound. Thread-safe.
absl::StatusOr<LibraryFunction> resolve_library_function(const std::string& name);

}  // namespace relax::runtime
