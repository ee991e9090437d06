// The "before" modules of the fuse-tir cases: groups written by hand in the form
// fuse-ops produces (FUSION.md, Interface 2: primitive graph functions calling
// legalized kernels). tests/transform/fuse_tir_test.cc runs fuse-tir on them and
// compares the result with the expected kernels; tests/e2e/fusion/fusion_build_test.cc
// compiles them with and without fuse-tir and runs both against a plain-loop
// reference. A case the two files write differently takes the differing part as
// a parameter.
#pragma once

#include <string>

namespace relax::testing {

/// A module of `functions`.
inline std::string module(const std::string& functions) { return "module {\n" + functions + "}\n"; }

/// Kernels over (n, 4) float32 as legalize-ops writes them.
inline constexpr const char* kLegalizedAdd = R"(
  prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32], C: Buffer[(n, 4), float32]) attrs {global_symbol = "add"} {
    for i0 in range(n) parallel {
      for i1 in range(4) {
        block add(vi0 = spatial(n, i0), vi1 = spatial(4, i1)) {
          C[vi0, vi1] = A[vi0, vi1] + B[vi0, vi1]
        }
      }
    }
  }
)";
inline constexpr const char* kLegalizedExp = R"(
  prim_func @exp(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32]) attrs {global_symbol = "exp"} {
    for i0 in range(n) parallel {
      for i1 in range(4) {
        block exp(vi0 = spatial(n, i0), vi1 = spatial(4, i1)) {
          B[vi0, vi1] = exp(A[vi0, vi1])
        }
      }
    }
  }
)";
inline constexpr const char* kLegalizedMultiply = R"(
  prim_func @multiply(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32], C: Buffer[(n, 4), float32]) attrs {global_symbol = "multiply"} {
    for i0 in range(n) parallel {
      for i1 in range(4) {
        block multiply(vi0 = spatial(n, i0), vi1 = spatial(4, i1)) {
          C[vi0, vi1] = A[vi0, vi1] * B[vi0, vi1]
        }
      }
    }
  }
)";

/// add -> exp -> multiply(exp, add) over (n, 4): one group of spatial kernels.
inline std::string elementwise_chain_module() {
  return module(std::string(R"(
  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output gv: Tensor[(n, 4), float32] = @fused_add_exp_multiply(x, y)
    }
    return gv
  }
  func @fused_add_exp_multiply(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n, 4), float32] = call_tir(@add, (x, y), sinfo=Tensor[(n, 4), float32])
      lv1: Tensor[(n, 4), float32] = call_tir(@exp, (lv0,), sinfo=Tensor[(n, 4), float32])
      output gv: Tensor[(n, 4), float32] = call_tir(@multiply, (lv1, lv0), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
)") + kLegalizedAdd + kLegalizedExp + kLegalizedMultiply);
}

/// matmul -> add (a bias along rows) -> relu over (b, 32): one group whose
/// first member is a reduction.
inline std::string matmul_add_relu_module() {
  return module(R"(
  func @main(x: Tensor[(b, 16), float32], w: Tensor[(16, 32), float32], c: Tensor[(32,), float32]) -> Tensor[(b, 32), float32] {
    dataflow {
      output gv: Tensor[(b, 32), float32] = @fused_matmul_add_relu(x, w, c)
    }
    return gv
  }
  func @fused_matmul_add_relu(x: Tensor[(b, 16), float32], w: Tensor[(16, 32), float32], c: Tensor[(32,), float32]) -> Tensor[(b, 32), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(b, 32), float32] = call_tir(@matmul, (x, w), sinfo=Tensor[(b, 32), float32])
      lv1: Tensor[(b, 32), float32] = call_tir(@add, (lv0, c), sinfo=Tensor[(b, 32), float32])
      output gv: Tensor[(b, 32), float32] = call_tir(@relu, (lv1,), sinfo=Tensor[(b, 32), float32])
    }
    return gv
  }
  prim_func @matmul(A: Buffer[(n, 16), float32], B: Buffer[(16, 32), float32], C: Buffer[(n, 32), float32]) attrs {global_symbol = "matmul"} {
    for i in range(n) parallel {
      for j in range(32) {
        for k in range(16) {
          block matmul(vi = spatial(n, i), vj = spatial(32, j), vk = reduce(16, k)) {
            init {
              C[vi, vj] = 0f32
            }
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
          }
        }
      }
    }
  }
  prim_func @add(A: Buffer[(n, 32), float32], B: Buffer[(32,), float32], C: Buffer[(n, 32), float32]) attrs {global_symbol = "add"} {
    for i0 in range(n) parallel {
      for i1 in range(32) {
        block add(vi0 = spatial(n, i0), vi1 = spatial(32, i1)) {
          C[vi0, vi1] = A[vi0, vi1] + B[vi1]
        }
      }
    }
  }
  prim_func @relu(A: Buffer[(n, 32), float32], B: Buffer[(n, 32), float32]) attrs {global_symbol = "relu"} {
    for i0 in range(n) parallel {
      for i1 in range(32) {
        block relu(vi0 = spatial(n, i0), vi1 = spatial(32, i1)) {
          B[vi0, vi1] = max(A[vi0, vi1], 0f32)
        }
      }
    }
  }
)");
}

/// The group @fused_exp_sum(x: (n, m)): exp, then a sum over the last axis,
/// with its kernels @exp2 and @sum. No @main: each test calls it its own way.
inline std::string exp_sum_group() {
  return R"(
  func @fused_exp_sum(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n, m), float32] = call_tir(@exp2, (x,), sinfo=Tensor[(n, m), float32])
      output gv: Tensor[(n,), float32] = call_tir(@sum, (lv0,), sinfo=Tensor[(n,), float32])
    }
    return gv
  }
  prim_func @exp2(A: Buffer[(a, b), float32], B: Buffer[(a, b), float32]) attrs {global_symbol = "exp2"} {
    for i0 in range(a) parallel {
      for i1 in range(b) {
        block exp(vi0 = spatial(a, i0), vi1 = spatial(b, i1)) {
          B[vi0, vi1] = exp(A[vi0, vi1])
        }
      }
    }
  }
  prim_func @sum(A: Buffer[(a, b), float32], B: Buffer[(a,), float32]) attrs {global_symbol = "sum"} {
    for i0 in range(a) parallel {
      for k in range(b) {
        block sum(v0 = spatial(a, i0), vk = reduce(b, k)) {
          init {
            B[v0] = 0f32
          }
          B[v0] = B[v0] + A[v0, vk]
        }
      }
    }
  }
)";
}

/// A rotary-style kernel reading positions[m + i], m in no buffer shape, then
/// an add: the group gets m as a trailing Shape parameter.
inline std::string rotary_index_only_variable_module() {
  return module(R"(
  func @main(x: Tensor[(n, 8), float32], pos: Tensor[(t,), int64], y: Tensor[(n, 8), float32], past: Tensor[(m,), float32]) -> Tensor[(n, 8), float32] {
    dataflow {
      output gv: Tensor[(n, 8), float32] = @fused_rotary_add(x, pos, y, shape(m))
    }
    return gv
  }
  func @fused_rotary_add(x: Tensor[(n, 8), float32], pos: Tensor[(t,), int64], y: Tensor[(n, 8), float32], s: Shape[(m,)]) -> Tensor[(n, 8), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n, 8), float32] = call_tir(@rotary, (x, pos), shape(m), sinfo=Tensor[(n, 8), float32])
      output gv: Tensor[(n, 8), float32] = call_tir(@add8, (lv0, y), sinfo=Tensor[(n, 8), float32])
    }
    return gv
  }
  prim_func @rotary(X: Buffer[(a, 8), float32], P: Buffer[(p,), int64], Y: Buffer[(a, 8), float32], off: int64) attrs {global_symbol = "rotary"} {
    for i in range(a) parallel {
      for j in range(8) {
        block rotary(vi = spatial(a, i), vj = spatial(8, j)) {
          Y[vi, vj] = X[vi, vj] * cos(cast<float32>(P[off + vi]))
        }
      }
    }
  }
  prim_func @add8(A: Buffer[(a, 8), float32], B: Buffer[(a, 8), float32], C: Buffer[(a, 8), float32]) attrs {global_symbol = "add8"} {
    for i0 in range(a) parallel {
      for i1 in range(8) {
        block add(vi0 = spatial(a, i0), vi1 = spatial(8, i1)) {
          C[vi0, vi1] = A[vi0, vi1] + B[vi0, vi1]
        }
      }
    }
  }
)");
}

/// Buffers of extent n - 1 in two groups, the second knowing n only through
/// its trailing Shape; the kernels take k as an extra_sym_arg.
inline std::string expression_dims_module() {
  return module(R"(
  func @main(x: Tensor[(n,), float32]) -> Tensor[(n - 1,), float32] {
    dataflow {
      lv: Tensor[(n - 1,), float32] = @fused_diff_exp(x)
      output gv: Tensor[(n - 1,), float32] = @fused_exp_multiply(lv, shape(n))
    }
    return gv
  }
  func @fused_diff_exp(x: Tensor[(n,), float32]) -> Tensor[(n - 1,), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n - 1,), float32] = call_tir(@diff, (x,), sinfo=Tensor[(n - 1,), float32])
      output gv: Tensor[(n - 1,), float32] = call_tir(@exp, (lv0,), shape(n), sinfo=Tensor[(n - 1,), float32])
    }
    return gv
  }
  func @fused_exp_multiply(d: Tensor[(n - 1,), float32], s: Shape[(n,)]) -> Tensor[(n - 1,), float32] attrs {primitive = true, private = true} {
    dataflow {
      lv0: Tensor[(n - 1,), float32] = call_tir(@exp, (d,), shape(n), sinfo=Tensor[(n - 1,), float32])
      output gv: Tensor[(n - 1,), float32] = call_tir(@multiply, (lv0, d), shape(n), sinfo=Tensor[(n - 1,), float32])
    }
    return gv
  }
  prim_func @diff(A: Buffer[(k,), float32], B: Buffer[(k - 1,), float32]) attrs {global_symbol = "diff"} {
    for i in range(k - 1) parallel {
      block diff(vi = spatial(k - 1, i)) {
        B[vi] = A[vi + 1] - A[vi]
      }
    }
  }
  prim_func @exp(A: Buffer[(k - 1,), float32], B: Buffer[(k - 1,), float32], k: int64) attrs {global_symbol = "exp"} {
    for i in range(k - 1) parallel {
      block exp(vi = spatial(k - 1, i)) {
        B[vi] = exp(A[vi])
      }
    }
  }
  prim_func @multiply(A: Buffer[(k - 1,), float32], B: Buffer[(k - 1,), float32], C: Buffer[(k - 1,), float32], k: int64) attrs {global_symbol = "multiply"} {
    for i in range(k - 1) parallel {
      block multiply(vi = spatial(k - 1, i)) {
        C[vi] = A[vi] * B[vi]
      }
    }
  }
)");
}

/// The group @fused_add_add(x, y) returning both of its results (a tuple),
/// its kernel @add and @multiply, called by `main`.
inline std::string tuple_result_module(const std::string& main) {
  return module(main + R"(
  func @fused_add_add(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] attrs {primitive = true, private = true} {
    dataflow {
      output lv0: Tensor[(n, 4), float32] = call_tir(@add, (x, y), sinfo=Tensor[(n, 4), float32])
      output gv: Tensor[(n, 4), float32] = call_tir(@add, (lv0, y), sinfo=Tensor[(n, 4), float32])
    }
    return (lv0, gv)
  }
)" + kLegalizedAdd + kLegalizedMultiply);
}

}  // namespace relax::testing
