// The resolvers of the families "cublas." and "cudnn." (registered by
// src/runtime/library_registry.cc when the runtime is built with CUDA; names in
// relax/runtime/cuda_library_call.h).
#pragma once

#if defined(RELAX_WITH_CUDA)

#include <string>

#include "absl/status/statusor.h"
#include "relax/runtime/module.h"

namespace relax::runtime::cuda {

/// A new function object for a "cublas." name (its own cache of cuBLASLt plans), or the
/// parse error of the name.
absl::StatusOr<LibraryFunction> resolve_cublas_function(const std::string& name);
/// A new function object for a "cudnn." name (its own cache of cuDNN plans), or the parse
/// error of the name.
absl::StatusOr<LibraryFunction> resolve_cudnn_function(const std::string& name);

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
