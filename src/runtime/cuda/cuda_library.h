// What the cuda target's library functions share (cublas_*.cc, cudnn_*.cc): loading a
// library of the toolkit with dlopen into a table of function pointers, the argument checks
// of a call, and a bounded cache of per-shape plans.
//
// Loading. Each library's entry points are one X-macro list (cublas_api.h, cudnn_api.h);
// the table has one member per entry, typed with decltype from the toolkit's header, so a
// signature cannot drift from the library's. load_library_table opens the soname (then the
// toolkit's lib64 folder), resolves every entry and keeps the library open for the life of
// the process; a library or an entry that is missing is a FailedPrecondition naming it.
//
// Checks. Every tensor argument must be a compact tensor of one CUDA device; the messages
// name the function, the argument (argument_label) and what it was.
#pragma once

#if defined(RELAX_WITH_CUDA)

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/cuda_library_call.h"
#include "lru_cache.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"

namespace relax::runtime::cuda {

/// dlopen of `soname`, then of /usr/local/cuda/lib64/`soname`; FailedPrecondition naming the
/// library and dlerror's text when neither loads. The handle is never closed.
absl::StatusOr<void*> open_library(const char* soname);

/// dlsym of `symbol` in `handle`; FailedPrecondition naming both when it is missing.
absl::StatusOr<void*> find_symbol(void* handle, const char* soname, const char* symbol);

/// Loads `soname` and fills an Api table (one function pointer per entry point):
/// for_each(table, resolve) calls resolve(table.member, "member") once per row of the
/// table's X-macro. The first library or entry point missing is the error.
template <typename Api, typename ForEach>
absl::StatusOr<Api> load_library_table(const char* soname, ForEach&& for_each) {
  absl::StatusOr<void*> handle = open_library(soname);
  if (!handle.ok()) return handle.status();
  Api table;
  absl::Status status;
  for_each(table, [&](auto& member, const char* symbol) {
    if (!status.ok()) return;
    absl::StatusOr<void*> fn = find_symbol(*handle, soname, symbol);
    if (!fn.ok()) {
      status = fn.status();
      return;
    }
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(*fn);
  });
  if (!status.ok()) return status;
  return table;
}

/// The tensors of one call, checked: the inputs, the output, the workspace (null when none).
struct CallTensors {
  std::vector<const Tensor*> inputs;
  const Tensor* output = nullptr;
  const Tensor* workspace = nullptr;
  Device device;
  DataType dtype;
};

/// Checks the arguments of a call of `spec` (count, tensors, one dtype of `dtypes` for all
/// of the inputs and the output, one CUDA device, compact; the workspace a compact uint8
/// tensor of rank 1 on that device). InvalidArgument naming the function and the argument.
absl::StatusOr<CallTensors> check_call(const LibrarySpec& spec, const std::vector<Value>& args,
                                       const std::vector<DataType>& dtypes);

/// InvalidArgument "<function>: <argument label>: <what>".
absl::Status argument_error(const LibrarySpec& spec, size_t index, const std::string& what);

/// "[2, 3]".
std::string dims_text(const std::vector<int64_t>& dims);

/// The largest power of two (at most 256) that divides `pointer`'s address: the alignment a
/// library may assume of an operand.
int64_t pointer_alignment(const void* pointer);


}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
