// Vector lanes through the C++ code generator and the host compiler: kernels
// with ramp/broadcast values, vector loads (contiguous and gathered), vector
// stores, lane-wise select, casts and intrinsics compile and compute what the
// same kernels as plain loops compute, at sizes that are and are not multiples
// of the lanes (the vectorize primitive's peeled tail).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "codegen_test_util.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/transform/schedule.h"

namespace relax {
namespace {

using testing::JitTest;
using testing::KernelArgs;

using VectorLanesTest = JitTest;

Expr kernel(const std::string& text, const std::string& name) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? mod->lookup(name) : Expr();
}

Expr ok_or_die(const absl::StatusOr<Expr>& f) {
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : Expr();
}

/// The schedule's last step: vectorized loops to vector lanes where they lower.
Expr lanes_of(const Expr& f) { return transform::schedule::lower_vectorized_loops(f); }

/// Within `relative` of `want` (the intrinsics of the vector and the scalar code
/// are one implementation, compiled twice; against libm a few ulps apart).
void expect_close(float got, float want, const std::string& where, float relative = 4e-7f) {
  const float tolerance = relative * std::max(1.0f, std::fabs(want));
  EXPECT_LE(std::fabs(got - want), tolerance) << where << ": " << got << " vs " << want;
}

constexpr const char* kHandWritten = R"(module {
  prim_func @lanes(X: Buffer[(n, 32), float32], M: Buffer[(32,), bool], Z: Buffer[(n, 32), float32], I: Buffer[(32,), int32], G: Buffer[(8,), float64], D: Buffer[(64,), float64], B: Buffer[(32,), bool]) {
    for i in range(n) parallel {
      for j in range(2) {
        Z[i, ramp(j * 16, 1, 16)] = select(M[ramp(j * 16, 1, 16)], X[i, ramp(j * 16, 1, 16)] * sigmoid(X[i, ramp(j * 16, 1, 16)]), min(X[i, ramp(j * 16, 1, 16)], broadcast(0f32, 16)))
      }
    }
    I[ramp(0, 1, 32)] = cast<int32x32>(ramp(100, -3, 32)) + cast<int32x32>(M[ramp(0, 1, 32)])
    G[ramp(0, 1, 8)] = D[ramp(3, 8, 8)] / broadcast(2f64, 8)
    B[ramp(0, 1, 32)] = !M[ramp(0, 1, 32)] || cast<int32x32>(ramp(0, 1, 32)) < broadcast(4i32, 32)
  }
})";

TEST_F(VectorLanesTest, HandWrittenVectorKernelMatchesPlainLoops) {
  Expr f = kernel(kHandWritten, "lanes");
  ASSERT_TRUE(f.defined());
  std::shared_ptr<const runtime::KernelLibrary> lib = jit({{"lanes", f}});
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(absl::StrContains(last_source_, "relax_vload<float, 16>(")) << last_source_;
  EXPECT_TRUE(absl::StrContains(last_source_, "relax_vgather<double, 8>(")) << last_source_;
  EXPECT_TRUE(absl::StrContains(last_source_, "relax_vstore<float, 16>(")) << last_source_;
  absl::StatusOr<RelaxKernelFn> fn = lib->find("lanes");
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t n : {1, 3}) {
    std::vector<float> x(static_cast<size_t>(n * 32)), z(x.size(), -7.0f);
    std::vector<uint8_t> m(32), b(32, 9);
    std::vector<int32_t> ii(32, 0);
    std::vector<double> g(8, 0.0), d(64);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k % 11) - 5) * 0.375f;
    for (size_t k = 0; k < 32; ++k) m[k] = k % 3 != 0 ? 1 : 0;
    for (size_t k = 0; k < 64; ++k) d[k] = static_cast<double>(k) * 1.5;
    KernelArgs args;
    args.buffer(x, {n, 32})
        .buffer(m.data(), DataType::boolean(), {32})
        .buffer(z, {n, 32})
        .buffer(ii, {32})
        .buffer(g, {8})
        .buffer(d, {64})
        .buffer(b.data(), DataType::boolean(), {32});
    ASSERT_EQ(args.call(*fn), "") << n;
    for (size_t k = 0; k < x.size(); ++k) {
      const float v = x[k];
      const float want = m[k % 32] != 0 ? v * (1.0f / (1.0f + std::exp(-v))) : std::min(v, 0.0f);
      expect_close(z[k], want, "Z[" + std::to_string(k) + "]", 4e-6f);
    }
    for (int k = 0; k < 32; ++k) EXPECT_EQ(ii[static_cast<size_t>(k)], 100 - 3 * k + m[static_cast<size_t>(k)]) << k;
    for (int k = 0; k < 8; ++k) EXPECT_EQ(g[static_cast<size_t>(k)], d[static_cast<size_t>(3 + 8 * k)] / 2) << k;
    for (int k = 0; k < 32; ++k) EXPECT_EQ(b[static_cast<size_t>(k)], (m[static_cast<size_t>(k)] == 0 || k < 4) ? 1 : 0) << k;
  }
}

constexpr const char* kScheduled = R"(module {
  prim_func @add(A: Buffer[(n, m), float32], B: Buffer[(n, m), float32], C: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        block add(vi = spatial(n, i), vj = spatial(m, j)) {
          C[vi, vj] = A[vi, vj] + B[vi, vj]
        }
      }
    }
  }
  prim_func @silu_mul(X: Buffer[(n, m), float32], Y: Buffer[(n, m), float32], Z: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        block silu(vi = spatial(n, i), vj = spatial(m, j)) {
          Z[vi, vj] = X[vi, vj] * sigmoid(X[vi, vj]) * Y[vi, vj]
        }
      }
    }
  }
})";

TEST_F(VectorLanesTest, VectorizedScheduleMatchesPlainLoopsAtEverySize) {
  for (const std::string name : {"add", "silu_mul"}) {
    Expr plain = kernel(kScheduled, name);
    Expr lanes = ok_or_die(transform::schedule::split(plain, "j", 16));
    lanes = ok_or_die(transform::schedule::parallel(lanes, "i"));
    lanes = lanes_of(ok_or_die(transform::schedule::vectorize(lanes, "j_i")));
    ASSERT_TRUE(absl::StrContains(to_text(lanes), "ramp(j_o * 16, 1, 16)")) << to_text(lanes);
    std::shared_ptr<const runtime::KernelLibrary> lib = jit({{"plain", plain}, {"lanes", lanes}});
    ASSERT_NE(lib, nullptr);
    RelaxKernelFn plain_fn = *lib->find("plain");
    RelaxKernelFn lanes_fn = *lib->find("lanes");
    // Widths that are and are not multiples of 16 (the scalar remainder runs).
    for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 16}, {3, 64}, {2, 17}, {5, 1}, {4, 100}}) {
      std::vector<float> a(static_cast<size_t>(n * m)), b(a.size()), want(a.size(), -1.0f), got(a.size(), -2.0f);
      for (size_t k = 0; k < a.size(); ++k) {
        a[k] = static_cast<float>(static_cast<int>(k % 13) - 6) * 0.25f;
        b[k] = static_cast<float>(static_cast<int>(k % 5) - 2) * 0.5f;
      }
      ASSERT_EQ(KernelArgs().buffer(a, {n, m}).buffer(b, {n, m}).buffer(want, {n, m}).call(plain_fn), "");
      ASSERT_EQ(KernelArgs().buffer(a, {n, m}).buffer(b, {n, m}).buffer(got, {n, m}).call(lanes_fn), "");
      for (size_t k = 0; k < a.size(); ++k) {
        expect_close(got[k], want[k], name + " n=" + std::to_string(n) + " m=" + std::to_string(m) + " k=" +
                                          std::to_string(k));
      }
    }
  }
}

TEST_F(VectorLanesTest, HalfFloatVectorsAreAnUnimplementedError) {
  Expr f = kernel(R"(module {
  prim_func @half(A: Buffer[(16,), float16], B: Buffer[(16,), float16]) {
    B[ramp(0, 1, 16)] = A[ramp(0, 1, 16)]
  }
})",
                  "half");
  absl::StatusOr<std::string> source = generate_cpp({{"half", f}}, target_);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(source.status().message(), "float16x16")) << source.status();
}

}  // namespace
}  // namespace relax
