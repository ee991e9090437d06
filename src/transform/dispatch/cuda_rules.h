// The built-in dispatch rules of the cuda target: cuBLAS(Lt) and cuDNN (cuda_rules.cc).
#pragma once

#include <vector>

#include "relax/transform/dispatch_library.h"

namespace relax::transform {

/// The cuBLAS and cuDNN rules, in the order they are tried: cublas.linear, cublas.matmul
/// (library "cublas"), cudnn.conv2d (library "cudnn").
std::vector<DispatchRule> make_cuda_rules();

}  // namespace relax::transform
