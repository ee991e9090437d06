// Compiled kernels compute what their PrimFuncs say: each test builds a
// PrimFunc, runs it through generate_cpp -> compile_shared_object ->
// KernelLibrary, calls it on std::vector storage and compares with plain C++
// loops written here. Covered: every statement kind, every intrinsic (float32
// and float64), integer floor division and modulo with negative operands, a
// reduction block with init, parallel / vectorized / unrolled loops, Allocate
// on the stack and on the heap, symbolic shapes (one compiled kernel called at
// several sizes), scalar parameters, bool and int8 buffers, and IR names that
// are not C++ identifiers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "codegen_test_util.h"

namespace relax {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::JitTest;
using testing::KernelArgs;

constexpr DataType kF32 = DataType::float32();
constexpr DataType kF64 = DataType::float64();
constexpr DataType kI32 = DataType::int32();
constexpr DataType kI64 = DataType::int64();
constexpr DataType kBool = DataType::boolean();
constexpr DataType kI8{DataType::Code::kInt, 8, 1};

using KernelTest = JitTest;

/// C[i, j] = A[i, j] + B[i, j] over (n, 4): parallel rows, vectorized columns.
PrimFuncBuilder add_kernel() {
  SymVar n("n");
  PrimFuncBuilder b("add");
  Buffer A = b.buffer_param("A", {n, 4}, kF32);
  Buffer B = b.buffer_param("B", {n, 4}, kF32);
  Buffer C = b.buffer_param("C", {n, 4}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, 4, ForKind::kVectorized, [&](SymVar j) {
      b.block("add", {b.spatial(n, i), b.spatial(4, j)}, [&](const std::vector<SymVar>& v) {
        b.store(C, {v[0], v[1]}, buffer_load(A, {v[0], v[1]}) + buffer_load(B, {v[0], v[1]}));
      });
    });
  });
  return b;
}

TEST_F(KernelTest, SymbolicShapeOneKernelManySizes) {
  RelaxKernelFn add = jit_one(add_kernel(), "add");
  ASSERT_NE(add, nullptr);
  for (int64_t n : {1, 7, 64, 300}) {
    std::vector<float> a(static_cast<size_t>(n * 4)), b(a.size()), c(a.size(), -1.0f);
    for (size_t k = 0; k < a.size(); ++k) {
      a[k] = static_cast<float>(k) * 0.5f;
      b[k] = 3.0f - static_cast<float>(k);
    }
    EXPECT_EQ(KernelArgs().buffer(a, {n, 4}).buffer(b, {n, 4}).buffer(c, {n, 4}).call(add), "") << n;
    for (size_t k = 0; k < a.size(); ++k) ASSERT_EQ(c[k], a[k] + b[k]) << "n=" << n << " k=" << k;
  }
}

TEST_F(KernelTest, ReductionBlockWithInit) {
  // C[i, j] = sum_r A[i, r] * B[r, j]; C starts as garbage, so init must run.
  SymVar n("n"), m("m"), k("k");
  PrimFuncBuilder b("matmul");
  Buffer A = b.buffer_param("A", {n, k}, kF64);
  Buffer B = b.buffer_param("B", {k, m}, kF64);
  Buffer C = b.buffer_param("C", {n, m}, kF64);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    b.for_("j", 0, m, [&](SymVar j) {
      b.for_("r", 0, k, [&](SymVar r) {
        b.block(
            "matmul", {b.spatial(n, i), b.spatial(m, j), b.reduce(k, r)},
            [&](const std::vector<SymVar>& v) { b.store(C, {v[0], v[1]}, 0); },
            [&](const std::vector<SymVar>& v) {
              b.store(C, {v[0], v[1]},
                      buffer_load(C, {v[0], v[1]}) + buffer_load(A, {v[0], v[2]}) * buffer_load(B, {v[2], v[1]}));
            });
      });
    });
  });
  RelaxKernelFn fn = jit_one(b, "matmul");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("if (vr == 0)"));
  for (auto [N, M, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 5, 3}, {16, 9, 33}}) {
    std::vector<double> a(static_cast<size_t>(N * K)), bb(static_cast<size_t>(K * M));
    std::vector<double> c(static_cast<size_t>(N * M), 1e9);
    for (size_t x = 0; x < a.size(); ++x) a[x] = static_cast<double>(x % 7) - 3.0;
    for (size_t x = 0; x < bb.size(); ++x) bb[x] = static_cast<double>(x % 5) * 0.5;
    ASSERT_EQ(KernelArgs().buffer(a, {N, K}).buffer(bb, {K, M}).buffer(c, {N, M}).call(fn), "");
    for (int64_t i = 0; i < N; ++i) {
      for (int64_t j = 0; j < M; ++j) {
        double want = 0;
        for (int64_t r = 0; r < K; ++r) want += a[static_cast<size_t>(i * K + r)] * bb[static_cast<size_t>(r * M + j)];
        ASSERT_DOUBLE_EQ(c[static_cast<size_t>(i * M + j)], want) << i << "," << j;
      }
    }
  }
}

/// Y[f, i] = intrinsic f of X[i] (and Z, W for pow, fma), f = 0..10.
PrimFuncBuilder intrinsics_kernel(DataType t) {
  SymVar n("n");
  PrimFuncBuilder b("intrinsics");
  Buffer X = b.buffer_param("X", {n}, t);
  Buffer Z = b.buffer_param("Z", {n}, t);
  Buffer W = b.buffer_param("W", {n}, t);
  Buffer Y = b.buffer_param("Y", {11, n}, t);
  b.for_("i", 0, n, [&](SymVar i) {
    SymExpr x = buffer_load(X, {i}), z = buffer_load(Z, {i}), w = buffer_load(W, {i});
    const std::vector<SymExpr> values = {exp(x),     log(x),      sqrt(x),      rsqrt(x),
                                         tanh(x),    erf(x - 1.0), sigmoid(x - 1.0), pow(x, z),
                                         abs(x - 1.0), fma(x, z, w), x / z};
    for (size_t f = 0; f < values.size(); ++f) b.store(Y, {static_cast<int64_t>(f), i}, values[f]);
  });
  return b;
}

template <typename T>
std::vector<T> intrinsic_reference(T x, T z, T w) {
  return {std::exp(x),  std::log(x),         std::sqrt(x),          T(1) / std::sqrt(x),
          std::tanh(x), std::erf(x - T(1)),  T(1) / (T(1) + std::exp(-(x - T(1)))), std::pow(x, z),
          std::fabs(x - T(1)), std::fma(x, z, w), x / z};
}

template <typename T>
void check_intrinsics(RelaxKernelFn fn, double tolerance) {
  const int64_t n = 9;
  std::vector<T> x(n), z(n), w(n), y(static_cast<size_t>(11 * n), T(-7));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = T(0.25) + T(0.4) * static_cast<T>(i);
    z[static_cast<size_t>(i)] = T(1.55) - T(0.3) * static_cast<T>(i);
    w[static_cast<size_t>(i)] = T(0.125) * static_cast<T>(i);
  }
  ASSERT_EQ(KernelArgs().buffer(x, {n}).buffer(z, {n}).buffer(w, {n}).buffer(y, {11, n}).call(fn), "");
  for (int64_t i = 0; i < n; ++i) {
    const size_t s = static_cast<size_t>(i);
    const std::vector<T> want = intrinsic_reference<T>(x[s], z[s], w[s]);
    for (size_t f = 0; f < want.size(); ++f) {
      const T got = y[f * static_cast<size_t>(n) + s];
      EXPECT_NEAR(got, want[f], tolerance * (1 + std::fabs(want[f]))) << "intrinsic #" << f << " at x=" << x[s];
    }
  }
}

TEST_F(KernelTest, IntrinsicsFloat32) {
  RelaxKernelFn fn = jit_one(intrinsics_kernel(kF32), "intrinsics");
  ASSERT_NE(fn, nullptr);
  // Float versions: no double literal may sneak into float32 arithmetic.
  EXPECT_THAT(last_source_, HasSubstr("1.0f / std::sqrt("));
  EXPECT_THAT(last_source_, HasSubstr("std::fma("));
  check_intrinsics<float>(fn, 2e-6);
}

TEST_F(KernelTest, IntrinsicsFloat64) {
  RelaxKernelFn fn = jit_one(intrinsics_kernel(kF64), "intrinsics");
  ASSERT_NE(fn, nullptr);
  check_intrinsics<double>(fn, 1e-14);
}

/// Q = floordiv(X, D), R = floormod(X, D), M = abs(X) for one integer dtype.
PrimFuncBuilder divmod_kernel(DataType t) {
  SymVar n("n");
  PrimFuncBuilder b("divmod");
  Buffer X = b.buffer_param("X", {n}, t);
  Buffer D = b.buffer_param("D", {n}, t);
  Buffer Q = b.buffer_param("Q", {n}, t);
  Buffer R = b.buffer_param("R", {n}, t);
  Buffer M = b.buffer_param("M", {n}, t);
  b.for_("i", 0, n, [&](SymVar i) {
    SymExpr x = buffer_load(X, {i}), d = buffer_load(D, {i});
    b.store(Q, {i}, floordiv(x, d));
    b.store(R, {i}, floormod(x, d));
    b.store(M, {i}, abs(x));
  });
  return b;
}

template <typename T>
void check_divmod(RelaxKernelFn fn) {
  std::vector<T> x, d;
  for (T a : {-9, -8, -7, -1, 0, 1, 5, 7, 8, 9}) {
    for (T c : {-4, -3, -2, -1, 1, 2, 3, 4}) {
      x.push_back(a);
      d.push_back(c);
    }
  }
  const auto n = static_cast<int64_t>(x.size());
  std::vector<T> q(x.size()), r(x.size()), m(x.size());
  ASSERT_EQ(KernelArgs().buffer(x, {n}).buffer(d, {n}).buffer(q, {n}).buffer(r, {n}).buffer(m, {n}).call(fn), "");
  for (size_t k = 0; k < x.size(); ++k) {
    // The reference rounds the exact quotient down, through double.
    const auto want_q = static_cast<T>(std::floor(static_cast<double>(x[k]) / static_cast<double>(d[k])));
    EXPECT_EQ(q[k], want_q) << "floordiv(" << x[k] << ", " << d[k] << ")";
    EXPECT_EQ(r[k], static_cast<T>(x[k] - d[k] * want_q)) << "floormod(" << x[k] << ", " << d[k] << ")";
    EXPECT_EQ(m[k], x[k] < 0 ? -x[k] : x[k]);
  }
}

TEST_F(KernelTest, FloorDivModRoundTowardNegativeInfinityInt64) {
  RelaxKernelFn fn = jit_one(divmod_kernel(kI64), "divmod");
  ASSERT_NE(fn, nullptr);
  check_divmod<int64_t>(fn);
}

TEST_F(KernelTest, FloorDivModRoundTowardNegativeInfinityInt32) {
  RelaxKernelFn fn = jit_one(divmod_kernel(kI32), "divmod");
  ASSERT_NE(fn, nullptr);
  check_divmod<int32_t>(fn);
}

TEST_F(KernelTest, FloorDivModOfIndexExpressions) {
  // Y[i] = X[floordiv(i - 3, 2) + 2] + floormod(i - 3, 4): negative dividends in indices.
  SymVar n("n");
  PrimFuncBuilder b("gather");
  Buffer X = b.buffer_param("X", {n}, kI64);
  Buffer Y = b.buffer_param("Y", {n}, kI64);
  b.for_("i", 0, n, [&](SymVar i) {
    b.store(Y, {i}, buffer_load(X, {floordiv(i - 3, 2) + 2}) * 10 + floormod(i - 3, 4));
  });
  RelaxKernelFn fn = jit_one(b, "gather");
  ASSERT_NE(fn, nullptr);
  std::vector<int64_t> x = {100, 200, 300, 400, 500, 600}, y(6);
  ASSERT_EQ(KernelArgs().buffer(x, {6}).buffer(y, {6}).call(fn), "");
  const std::vector<int64_t> want = {100 * 10 + 1, 200 * 10 + 2, 200 * 10 + 3, 300 * 10 + 0, 300 * 10 + 1,
                                     400 * 10 + 2};
  EXPECT_EQ(y, want);
}

TEST_F(KernelTest, LetIfSelectMinMaxCastsLogicAndEvaluate) {
  SymVar n("n");
  PrimFuncBuilder b("mixed");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  Buffer C = b.buffer_param("C", {n}, kF32);
  Buffer I = b.buffer_param("I", {n}, kI32);
  Buffer M = b.buffer_param("M", {n}, kBool);
  Buffer S = b.buffer_param("S", {n}, kF64);
  b.for_("i", 0, n, [&](SymVar i) {
    SymExpr a = buffer_load(A, {i});
    b.evaluate(a);
    SymVar t = b.let("t", a * 2.0);
    b.if_then_else(
        t > 1.0, [&] { b.store(B, {i}, t); }, [&] { b.store(B, {i}, -t); });
    b.if_then_else(i == 0, [&] { b.store(B, {i}, SymExpr::float_imm(42.0, kF32)); });
    b.store(C, {i}, select(a < 0.5, min(a, 0.25), max(a, 0.75)));
    b.store(I, {i}, cast(kI32, a * 10.0) + cast(kI32, i));
    b.store(M, {i}, (a >= 0.25 && a <= 0.75) || !(a != 1.0) || a == -2.0);
    b.store(S, {i}, cast(kF64, a) + cast(kF64, buffer_load(M, {i})));
  });
  RelaxKernelFn fn = jit_one(b, "mixed");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("(void)(A["));
  std::vector<float> a = {-2.0f, -0.3f, 0.1f, 0.3f, 0.6f, 0.8f, 1.0f, 1.7f}, bb(8), c(8);
  std::vector<int32_t> ii(8);
  std::vector<uint8_t> m(8, 7);
  std::vector<double> s(8);
  ASSERT_EQ(KernelArgs()
                .buffer(a, {8})
                .buffer(bb, {8})
                .buffer(c, {8})
                .buffer(ii, {8})
                .buffer(m.data(), kBool, {8})
                .buffer(s, {8})
                .call(fn),
            "");
  for (size_t k = 0; k < a.size(); ++k) {
    const float t = a[k] * 2.0f;
    EXPECT_EQ(bb[k], k == 0 ? 42.0f : (t > 1.0f ? t : -t)) << k;
    EXPECT_EQ(c[k], a[k] < 0.5f ? std::min(a[k], 0.25f) : std::max(a[k], 0.75f)) << k;
    EXPECT_EQ(ii[k], static_cast<int32_t>(a[k] * 10.0f) + static_cast<int32_t>(k)) << k;
    const bool want_m = (a[k] >= 0.25f && a[k] <= 0.75f) || a[k] == 1.0f || a[k] == -2.0f;
    EXPECT_EQ(m[k], want_m ? 1 : 0) << k;
    EXPECT_EQ(s[k], static_cast<double>(a[k]) + (want_m ? 1.0 : 0.0)) << k;
  }
}

TEST_F(KernelTest, NarrowIntegersWrapLikeTheirDtype) {
  PrimFuncBuilder b("int8");
  Buffer A = b.buffer_param("A", {4}, kI8);
  Buffer B = b.buffer_param("B", {4}, kI8);
  Buffer C = b.buffer_param("C", {4}, kI8);
  Buffer D = b.buffer_param("D", {4}, kBool);
  b.for_("i", 0, 4, [&](SymVar i) {
    SymExpr a = buffer_load(A, {i}), c = buffer_load(B, {i});
    b.store(C, {i}, a + c);
    // Compared before the store: 100 + 100 wraps to -56 in int8, which is < 0.
    b.store(D, {i}, a + c < SymExpr::int_imm(0, kI8));
  });
  RelaxKernelFn fn = jit_one(b, "int8");
  ASSERT_NE(fn, nullptr);
  std::vector<int8_t> a = {100, -100, 1, 127}, c = {100, -100, 2, 1}, out(4);
  std::vector<uint8_t> d(4);
  ASSERT_EQ(KernelArgs().buffer(a, {4}).buffer(c, {4}).buffer(out, {4}).buffer(d.data(), kBool, {4}).call(fn), "");
  EXPECT_EQ(out, (std::vector<int8_t>{-56, 56, 3, -128}));
  EXPECT_EQ(d, (std::vector<uint8_t>{1, 0, 0, 1}));
}

TEST_F(KernelTest, AllocateOnStackAndHeap) {
  // Per row: a stack temporary of 4 floats (reversed copy) and a heap one of
  // n floats (prefix sums) inside a parallel loop; plus a workspace buffer of
  // constant size, which lives on the heap.
  SymVar n("n");
  PrimFuncBuilder b("temps");
  Buffer A = b.buffer_param("A", {n, 4}, kF32);
  Buffer B = b.buffer_param("B", {n, 4}, kF32);
  Buffer P = b.buffer_param("P", {n, n}, kF32);
  Buffer W = b.buffer_param("W", {2}, kF32);
  b.for_("i", 0, n, ForKind::kParallel, [&](SymVar i) {
    Buffer tmp = b.allocate("tmp", {4}, kF32);
    b.for_("j", 0, 4, [&](SymVar j) { b.store(tmp, {j}, buffer_load(A, {i, j}) * 2.0); });
    b.for_("j", 0, 4, [&](SymVar j) { b.store(B, {i, j}, buffer_load(tmp, {3 - j})); });
    Buffer row = b.allocate("row", {n}, kF32);
    b.for_("j", 0, n, [&](SymVar j) {
      b.store(row, {j}, buffer_load(A, {j, 0}) + select(j > 0, buffer_load(row, {max(j - 1, 0)}), SymExpr::float_imm(0.0, kF32)));
    });
    b.for_("j", 0, n, [&](SymVar j) { b.store(P, {i, j}, buffer_load(row, {j}) + cast(kF32, i)); });
  });
  Buffer ws = b.allocate("ws", {2}, kF32, BufferScope::kWorkspace);
  b.store(ws, {0}, SymExpr::float_imm(1.5, kF32));
  b.store(ws, {1}, buffer_load(ws, {0}) * 2.0);
  b.for_("k", 0, 2, [&](SymVar k) { b.store(W, {k}, buffer_load(ws, {k})); });
  RelaxKernelFn fn = jit_one(b, "temps");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("alignas(64) float tmp[4];"));
  EXPECT_THAT(last_source_, HasSubstr("relax_heap_block row_block("));
  EXPECT_THAT(last_source_, HasSubstr("relax_heap_block ws_block("));
  for (int64_t n_value : {1, 5, 40}) {
    const auto N = static_cast<size_t>(n_value);
    std::vector<float> a(N * 4), out(N * 4), p(N * N), w(2);
    for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k % 11) - 4.0f;
    ASSERT_EQ(KernelArgs()
                  .buffer(a, {n_value, 4})
                  .buffer(out, {n_value, 4})
                  .buffer(p, {n_value, n_value})
                  .buffer(w, {2})
                  .call(fn),
              "");
    for (size_t i = 0; i < N; ++i) {
      for (size_t j = 0; j < 4; ++j) ASSERT_EQ(out[i * 4 + j], a[i * 4 + 3 - j] * 2.0f);
      float prefix = 0;
      for (size_t j = 0; j < N; ++j) {
        prefix += a[j * 4];
        ASSERT_EQ(p[i * N + j], prefix + static_cast<float>(i)) << i << "," << j;
      }
    }
    EXPECT_EQ(w, (std::vector<float>{1.5f, 3.0f}));
  }
}

TEST_F(KernelTest, ParallelLoopsWithAndWithoutThreads) {
  Target two = target_;
  two.threads = 2;
  two.parallel_min_work = 0;  // fork even for this small call
  RelaxKernelFn fn2 = jit_one(add_kernel(), "add", two);
  ASSERT_NE(fn2, nullptr);
  EXPECT_THAT(last_source_, HasSubstr(", 2, i_body) != 0) return 1;"));
  Target serial = target_;
  serial.threads = 1;
  RelaxKernelFn fn1 = jit_one(add_kernel(), "add", serial);
  ASSERT_NE(fn1, nullptr);
  EXPECT_THAT(last_source_, Not(HasSubstr("if (relax_parallel_for(")));
  EXPECT_THAT(last_source_, HasSubstr("#pragma omp simd"));
  for (RelaxKernelFn fn : {fn1, fn2}) {
    const int64_t n = 1000;
    std::vector<float> a(4 * n, 1.5f), b(4 * n), c(4 * n);
    for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<float>(k);
    ASSERT_EQ(KernelArgs().buffer(a, {n, 4}).buffer(b, {n, 4}).buffer(c, {n, 4}).call(fn), "");
    for (size_t k = 0; k < c.size(); ++k) ASSERT_EQ(c[k], 1.5f + static_cast<float>(k));
  }
}

TEST_F(KernelTest, UnrolledLoopAndNonZeroStart) {
  SymVar n("n");
  PrimFuncBuilder b("shifted");
  Buffer A = b.buffer_param("A", {n, 4}, kI64);
  b.for_("i", 1, n - 1, [&](SymVar i) {
    b.for_("j", 0, 4, ForKind::kUnrolled, [&](SymVar j) { b.store(A, {i, j}, i * 10 + j); });
  });
  RelaxKernelFn fn = jit_one(b, "shifted");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("#pragma GCC unroll 4"));
  std::vector<int64_t> a(5 * 4, -1);
  ASSERT_EQ(KernelArgs().buffer(a, {5, 4}).call(fn), "");
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(a[static_cast<size_t>(i * 4 + j)], i >= 1 ? i * 10 + j : -1) << i << "," << j;
    }
  }
}

TEST_F(KernelTest, ScalarParameters) {
  // B[i] = A[i] * alpha + k for i < m (m, k integers, alpha a float32 scalar).
  SymVar n("n");
  PrimFuncBuilder b("axpb");
  Buffer A = b.buffer_param("A", {n}, kF32);
  Buffer B = b.buffer_param("B", {n}, kF32);
  SymVar alpha = b.scalar_param("alpha", kF32);
  SymVar k = b.scalar_param("k", kI32);
  SymVar m = b.scalar_param("m");
  b.for_("i", 0, min(m, n), [&](SymVar i) { b.store(B, {i}, buffer_load(A, {i}) * alpha + cast(kF32, k)); });
  RelaxKernelFn fn = jit_one(b, "axpb");
  ASSERT_NE(fn, nullptr);
  std::vector<float> a = {1, 2, 3, 4, 5}, out(5, 0.0f);
  ASSERT_EQ(KernelArgs().buffer(a, {5}).buffer(out, {5}).real(0.5).integer(-3).integer(3).call(fn), "");
  EXPECT_EQ(out, (std::vector<float>{-2.5f, -2.0f, -1.5f, 0.0f, 0.0f}));
}

TEST_F(KernelTest, IrNamesBecomeUniqueIdentifiers) {
  // Names that are keywords, macros, reserved or duplicated, and a kernel name
  // with characters a C++ identifier cannot hold.
  SymVar n1("n"), n2("n");
  PrimFuncBuilder b("my-kernel/1");
  Buffer A = b.buffer_param("a b", {n1}, kF32);
  Buffer B = b.buffer_param("int", {n2}, kF32);
  Buffer C = b.buffer_param("NULL", {n1}, kF32);
  Buffer D = b.buffer_param("relax_fail", {n1}, kF32);
  b.for_("error", 0, min(n1, n2), [&](SymVar i) {
    SymVar t = b.let("a_b", buffer_load(A, {i}) + buffer_load(B, {i}));
    b.store(C, {i}, t);
    b.store(D, {i}, t * 2.0);
  });
  RelaxKernelFn fn = jit_one(b, "my-kernel/1");
  ASSERT_NE(fn, nullptr);
  EXPECT_THAT(last_source_, HasSubstr("{\"my-kernel/1\", &relax_kernel_my_kernel_1}"));
  std::vector<float> a = {1, 2, 3}, bb = {10, 20}, c(3), d(3);
  ASSERT_EQ(KernelArgs().buffer(a, {3}).buffer(bb, {2}).buffer(c, {3}).buffer(d, {3}).call(fn), "");
  EXPECT_EQ(c, (std::vector<float>{11, 22, 0}));
  EXPECT_EQ(d, (std::vector<float>{22, 44, 0}));
}

TEST_F(KernelTest, SpecialAndExtremeConstants) {
  constexpr DataType kU8{DataType::Code::kUInt, 8, 1};
  PrimFuncBuilder b("constants");
  Buffer F = b.buffer_param("F", {4}, kF32);
  Buffer G = b.buffer_param("G", {2}, kF64);
  Buffer I = b.buffer_param("I", {3}, kI64);
  Buffer J = b.buffer_param("J", {1}, kI32);
  Buffer U = b.buffer_param("U", {2}, kU8);
  const double inf = std::numeric_limits<double>::infinity();
  b.store(F, {0}, SymExpr::float_imm(inf, kF32));
  b.store(F, {1}, SymExpr::float_imm(-inf, kF32));
  b.store(F, {2}, SymExpr::float_imm(std::nan(""), kF32));
  b.store(F, {3}, SymExpr::float_imm(0.1, kF32));
  b.store(G, {0}, SymExpr::float_imm(0.1, kF64));
  b.store(G, {1}, SymExpr::float_imm(-inf, kF64));
  b.store(I, {0}, SymExpr(std::numeric_limits<int64_t>::min()));
  b.store(I, {1}, SymExpr(std::numeric_limits<int64_t>::max()));
  b.store(I, {2}, SymExpr(3000000000) * SymExpr(3));
  b.store(J, {0}, SymExpr::int_imm(std::numeric_limits<int32_t>::min(), kI32));
  b.store(U, {0}, SymExpr::int_imm(255, kU8));
  b.store(U, {1}, SymExpr::int_imm(200, kU8) + SymExpr::int_imm(100, kU8));
  RelaxKernelFn fn = jit_one(b, "constants");
  ASSERT_NE(fn, nullptr);
  std::vector<float> f(4);
  std::vector<double> g(2);
  std::vector<int64_t> i(3);
  std::vector<int32_t> j(1);
  std::vector<uint8_t> u(2);
  ASSERT_EQ(KernelArgs()
                .buffer(f, {4})
                .buffer(g, {2})
                .buffer(i, {3})
                .buffer(j, {1})
                .buffer(u.data(), kU8, {2})
                .call(fn),
            "");
  EXPECT_EQ(f[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], 0.1f);
  EXPECT_EQ(g[0], 0.1);
  EXPECT_EQ(g[1], -inf);
  EXPECT_EQ(i, (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                     9000000000}));
  EXPECT_EQ(j[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(u, (std::vector<uint8_t>{255, 44}));
}

TEST_F(KernelTest, ManyKernelsInOneUnitAndModule) {
  IRModule module;
  module.add("add", build(add_kernel()));
  module.add("divmod", build(divmod_kernel(kI64)));
  absl::StatusOr<std::string> source = generate_cpp(module, target_);
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<CompiledLibrary> compiled = compile_shared_object(*source, target_);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto lib = runtime::KernelLibrary::open(compiled->library_path);
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ((*lib)->kernel_names(), (std::vector<std::string>{"add", "divmod"}));
  absl::StatusOr<RelaxKernelFn> divmod = (*lib)->find("divmod");
  ASSERT_TRUE(divmod.ok());
  check_divmod<int64_t>(*divmod);
}

}  // namespace
}  // namespace relax
