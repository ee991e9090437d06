// The matmul modules the benchmarks compile (matvec_bench on the CPU, cuda_bench on a GPU),
// as text with a symbolic row count. Header-only: each bench/<name>.cc is its own program.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace relax_bench {

/// The weight of y = x @ W: float32, bfloat16 (widened in the kernel), group-wise int4 or
/// int8 (dequantised in the kernel), or float32 through `linear` with W marked as weights (the
/// library path: oneDNN on the CPU, cuBLASLt on a GPU).
enum class MatmulKind { kF32, kBf16, kInt4, kInt8, kOneDnn };

/// The module of `kind` at K = N = k with a symbolic row count m: y[m, k] = x[m, k] @ W.
/// The int4 weight is two 4-bit values per byte q[K/2, N], low nibble first, and a float
/// scale per 32 rows s[K/32, N] (the layout of examples/models/dequant_matmul.relax); the int8
/// weight one signed byte q[K, N] per value and the same scales (dequantize's bits=8 layout).
inline std::string matmul_module_text(MatmulKind kind, int64_t k) {
  const int64_t n = k;
  switch (kind) {
    case MatmulKind::kF32:
      return absl::StrFormat(R"(module {
  func @main(x: Tensor[(m, %d), float32], w: Tensor[(%d, %d), float32]) -> Tensor[(m, %d), float32] {
    r = matmul(x, w)
    return r
  }
})",
                             k, k, n, n);
    case MatmulKind::kBf16:
      return absl::StrFormat(R"(module {
  func @main(x: Tensor[(m, %d), float32], w: Tensor[(%d, %d), bfloat16]) -> Tensor[(m, %d), float32] {
    dataflow {
      v = astype(w, dtype=float32)
      output r = matmul(x, v)
    }
    return r
  }
})",
                             k, k, n, n);
    case MatmulKind::kInt4:
      return absl::StrFormat(R"(module {
  prim_func @dequantize_int4(Q: Buffer[(%d, %d), uint8], S: Buffer[(%d, %d), float32], W: Buffer[(%d, %d), float32]) {
    for k in range(%d) {
      for j in range(%d) {
        block dequantize(vk = spatial(%d, k), vj = spatial(%d, j)) {
          W[vk, vj] = (cast<float32>(bitwise_and(shift_right(Q[floordiv(vk, 2), vj], cast<uint8>(4 * floormod(vk, 2))), cast<uint8>(15))) - 8f32) * S[floordiv(vk, 32), vj]
        }
      }
    }
  }
  func @main(x: Tensor[(m, %d), float32], q: Tensor[(%d, %d), uint8], s: Tensor[(%d, %d), float32]) -> Tensor[(m, %d), float32] {
    dataflow {
      w = call_tir(@dequantize_int4, (q, s), sinfo=Tensor[(%d, %d), float32])
      output r = matmul(x, w)
    }
    return r
  }
})",
                             k / 2, n, k / 32, n, k, n, k, n, k, n, k, k / 2, n, k / 32, n, n, k, n);
    case MatmulKind::kInt8:
      return absl::StrFormat(R"(module {
  func @main(x: Tensor[(m, %d), float32], q: Tensor[(%d, %d), int8], s: Tensor[(%d, %d), float32]) -> Tensor[(m, %d), float32] {
    dataflow {
      w = dequantize(q, s, group_size=32, axis=0, bits=8)
      output r = matmul(x, w)
    }
    return r
  }
})",
                             k, k, n, k / 32, n, n);
    case MatmulKind::kOneDnn:
      return absl::StrFormat(R"(module {
  func @main(x: Tensor[(m, %d), float32], w: Tensor[(%d, %d), float32]) -> Tensor[(m, %d), float32] attrs {weights = "w"} {
    dataflow {
      output y = linear(x, w)
    }
    return y
  }
})",
                             k, n, k, n);
  }
  return "";
}

}  // namespace relax_bench
