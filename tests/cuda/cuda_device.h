// The guard of every CUDA device test (tests/cuda/): without a GPU and its driver the test is
// skipped with the reason (CTest shows it as "Skipped"), never passed silently.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "relax/runtime/cuda.h"

/// Skips the calling test unless a CUDA device is usable, naming what is missing.
#define RELAX_REQUIRE_CUDA_DEVICE()                                                        \
  do {                                                                                     \
    if (absl::Status relax_cuda_status = ::relax::runtime::cuda::check_available();       \
        !relax_cuda_status.ok()) {                                                         \
      GTEST_SKIP() << "needs a CUDA device: " << std::string(relax_cuda_status.message()); \
    }                                                                                      \
  } while (0)
