// Hand-written kernels over rows of 4 (each with its own n), one per loop-pattern class the
// fusion tests need, annotated by hand (fuse-ops reads the annotation; annotate-op-pattern has
// its own tests). Shared by tests/transform/fuse_ops_test.cc and
// tests/e2e/fusion/fuse_ops_build_test.cc.
#pragma once

namespace relax::testing {

inline constexpr const char* kFusionTestKernels = R"(
  prim_func @exp(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32]) attrs {op_pattern = "elementwise"} {
    for i in range(n) {
      for j in range(4) {
        block exp(vi = spatial(n, i), vj = spatial(4, j)) {
          B[vi, vj] = exp(A[vi, vj])
        }
      }
    }
  }
  prim_func @relu(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32]) attrs {op_pattern = "elementwise"} {
    for i in range(n) {
      for j in range(4) {
        block relu(vi = spatial(n, i), vj = spatial(4, j)) {
          B[vi, vj] = max(A[vi, vj], 0f32)
        }
      }
    }
  }
  prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32], C: Buffer[(n, 4), float32]) attrs {op_pattern = "elementwise"} {
    for i in range(n) {
      for j in range(4) {
        block add(vi = spatial(n, i), vj = spatial(4, j)) {
          C[vi, vj] = A[vi, vj] + B[vi, vj]
        }
      }
    }
  }
  prim_func @bias_add(A: Buffer[(n, 4), float32], B: Buffer[(4,), float32], C: Buffer[(n, 4), float32]) attrs {op_pattern = "broadcast"} {
    for i in range(n) {
      for j in range(4) {
        block bias_add(vi = spatial(n, i), vj = spatial(4, j)) {
          C[vi, vj] = A[vi, vj] + B[vj]
        }
      }
    }
  }
  prim_func @matmul(A: Buffer[(n, 4), float32], W: Buffer[(4, 4), float32], C: Buffer[(n, 4), float32]) attrs {op_pattern = "output-elementwise-fusible"} {
    for i in range(n) {
      for j in range(4) {
        for k in range(4) {
          block matmul(vi = spatial(n, i), vj = spatial(4, j), vk = reduce(4, k)) {
            init {
              C[vi, vj] = 0f32
            }
            C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]
          }
        }
      }
    }
  }
  prim_func @rowsum(A: Buffer[(n, 4), float32], B: Buffer[(n,), float32]) attrs {op_pattern = "reduction"} {
    for i in range(n) {
      for k in range(4) {
        block rowsum(vi = spatial(n, i), vk = reduce(4, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
  }
  prim_func @negate(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) attrs {op_pattern = "elementwise"} {
    for i in range(n) {
      block negate(vi = spatial(n, i)) {
        B[vi] = 0f32 - A[vi]
      }
    }
  }
  prim_func @reverse(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32]) {
    for i in range(n) {
      for j in range(4) {
        block reverse(vi = spatial(n, i), vj = spatial(4, j)) {
          B[vi, vj] = A[n - 1 - vi, vj]
        }
      }
    }
  }
  prim_func @scale_inplace(A: Buffer[(n, 4), float32]) attrs {op_pattern = "opaque"} {
    for i in range(n) {
      for j in range(4) {
        block scale(vi = spatial(n, i), vj = spatial(4, j)) {
          A[vi, vj] = A[vi, vj] * 2f32
        }
      }
    }
  }
  prim_func @dequant(Q: Buffer[(4, 4), int8], S: Buffer[(4,), float32], W: Buffer[(4, 4), float32]) attrs {op_pattern = "injective"} {
    for i in range(4) {
      for j in range(4) {
        block dequant(vi = spatial(4, i), vj = spatial(4, j)) {
          W[vi, vj] = cast<float32>(Q[vi, vj]) * S[vj]
        }
      }
    }
  }
  prim_func @rotary(X: Buffer[(n, 4), float32], P: Buffer[(k,), float32], Y: Buffer[(n, 4), float32], m: int64) attrs {op_pattern = "injective"} {
    for i in range(n) {
      for j in range(4) {
        block rotary(vi = spatial(n, i), vj = spatial(4, j)) {
          Y[vi, vj] = X[vi, vj] * P[m + vi]
        }
      }
    }
  }
)";

}  // namespace relax::testing
