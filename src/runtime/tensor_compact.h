// A compact (row-major, contiguous) form of a tensor that may be strided: the tensor itself
// when it is contiguous already, else a copy on its device. For runtime code that needs the
// elements in order (serialisers, views of DLPack-imported arguments). Defined in tensor.cc.
#pragma once

#include "absl/status/statusor.h"
#include "relax/runtime/tensor.h"

namespace relax::runtime {

absl::StatusOr<Tensor> compact(const Tensor& tensor);

}  // namespace relax::runtime
