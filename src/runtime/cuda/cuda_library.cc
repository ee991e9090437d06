// Loading, argument checks and messages shared by the cuda target's library functions
// (cuda_library.h).
#if defined(RELAX_WITH_CUDA)

#include "cuda_library.h"

#include <dlfcn.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace relax::runtime::cuda {

absl::StatusOr<void*> open_library(const char* soname) {
  if (void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL); handle != nullptr) return handle;
  const char* first = ::dlerror();
  std::string first_error = first != nullptr ? first : "unknown error";
  const std::string fallback = absl::StrCat("/usr/local/cuda/lib64/", soname);
  if (void* handle = ::dlopen(fallback.c_str(), RTLD_NOW | RTLD_LOCAL); handle != nullptr) return handle;
  return absl::FailedPreconditionError(
      absl::StrCat("the CUDA library ", soname, " cannot be loaded: ", first_error,
                   " (install the CUDA toolkit's library or put its folder on LD_LIBRARY_PATH)"));
}

absl::StatusOr<void*> find_symbol(void* handle, const char* soname, const char* symbol) {
  if (void* fn = ::dlsym(handle, symbol); fn != nullptr) return fn;
  return absl::FailedPreconditionError(
      absl::StrCat("the CUDA library ", soname, " has no entry point ", symbol, " (an older version?)"));
}

absl::Status argument_error(const LibrarySpec& spec, size_t index, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(spec.name, ": ", argument_label(spec, index), ": ", what));
}

std::string dims_text(const std::vector<int64_t>& dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }

int64_t pointer_alignment(const void* pointer) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  int64_t alignment = 1;
  while (alignment < 256 && address % static_cast<uintptr_t>(alignment * 2) == 0) alignment *= 2;
  return alignment;
}

absl::StatusOr<CallTensors> check_call(const LibrarySpec& spec, const std::vector<Value>& args,
                                       const std::vector<DataType>& dtypes) {
  const size_t tensors = spec.num_inputs() + 1;
  if (args.size() != tensors && args.size() != tensors + 1) {
    std::vector<std::string> labels;
    for (size_t i = 0; i < tensors; ++i) labels.push_back(argument_label(spec, i));
    return absl::InvalidArgumentError(absl::StrCat(spec.name, ": expected ", tensors, " arguments (",
                                                   absl::StrJoin(labels, ", "), ") and an optional workspace, got ",
                                                   args.size()));
  }
  CallTensors call;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor()) return argument_error(spec, i, absl::StrCat("expected a tensor, got ", args[i].describe()));
    const Tensor& t = args[i].tensor_or_die();
    if (t.device().type != Device::Type::kCUDA) {
      return argument_error(spec, i,
                            absl::StrCat("expected a tensor on a CUDA device, got one on ", t.device().to_string(),
                                         " (", t.describe(), ")"));
    }
    if (i == 0) call.device = t.device();
    if (t.device() != call.device) {
      return argument_error(spec, i,
                            absl::StrCat("expected a tensor on ", call.device.to_string(), " (the device of ",
                                         argument_label(spec, 0), "), got one on ", t.device().to_string()));
    }
    if (!t.is_contiguous()) {
      return argument_error(spec, i, absl::StrCat("expected a compact row-major tensor, got strides ",
                                                  dims_text(t.strides()), " for shape ", dims_text(t.shape())));
    }
    if (i == tensors) {
      if (t.dtype() != DataType{DataType::Code::kUInt, 8, 1} || t.ndim() != 1) {
        return argument_error(spec, i, absl::StrCat("expected a uint8 tensor of rank 1, got ", t.describe()));
      }
      call.workspace = &t;
      continue;
    }
    if (i == 0) {
      if (std::find(dtypes.begin(), dtypes.end(), t.dtype()) == dtypes.end()) {
        std::vector<std::string> names;
        for (DataType d : dtypes) names.push_back(d.to_string());
        return argument_error(spec, i, absl::StrCat("expected ", absl::StrJoin(names, ", "), ", got ",
                                                    t.dtype().to_string()));
      }
      call.dtype = t.dtype();
    } else if (t.dtype() != call.dtype) {
      return argument_error(spec, i, absl::StrCat("expected ", call.dtype.to_string(), " (the dtype of ",
                                                  argument_label(spec, 0), "), got ", t.dtype().to_string()));
    }
    if (i < spec.num_inputs()) {
      call.inputs.push_back(&t);
    } else {
      call.output = &t;
    }
  }
  return call;
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
