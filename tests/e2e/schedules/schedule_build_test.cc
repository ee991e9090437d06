// Scheduled kernels compiled end to end through relax::build: the default
// pipeline (with schedule-cpu) and one with a user's schedule directives give
// what plain C++ loops give, at several sizes of each symbolic dim from one
// compilation; the generated C++ carries the OpenMP loops the schedule asked
// for, and the schedule does not make lower-alloc zero the outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "codegen_test_util.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pipeline.h"
#include "relax/transform/schedule.h"

namespace relax {
namespace {

using runtime::Tensor;

std::vector<float> floats(const Tensor& t) {
  const float* p = t.data_as_or_die<float>();
  return std::vector<float>(p, p + t.numel());
}

void expect_close(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f * std::fabs(want[i]) + 1e-6f)) {
      if (++wrong <= 5) ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " of " << want.size() << " differ";
}

/// A target compiling afresh into its own cache, keeping the generated C++.
Target source_keeping_target(const testing::TempDir& dir) {
  Target t = testing::build_test_target();
  t.cache_dir = dir.path();
  t.keep_source = true;
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr const char* kModule = R"(module {
  func @silu_mul(x: Tensor[(n, m), float32], z: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {
    a = silu(x)
    b = multiply(a, z)
    return b
  }
  func @softmax(x: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {
    r = softmax(x)
    return r
  }
  func @row_sum(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    r = sum(x, axis=[1])
    return r
  }
  func @add1(x: Tensor[(k,), float32], y: Tensor[(k,), float32]) -> Tensor[(k,), float32] {
    r = add(x, y)
    return r
  }
})";

std::vector<float> ref_silu_mul(const std::vector<float>& x, const std::vector<float>& z) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] / (1.0f + std::exp(-x[i])) * z[i];
  return out;
}

std::vector<float> ref_softmax(const std::vector<float>& x, int64_t n, int64_t m) {
  std::vector<float> out(x.size());
  for (int64_t i = 0; i < n; ++i) {
    float mx = -INFINITY;
    for (int64_t j = 0; j < m; ++j) mx = std::max(mx, x[i * m + j]);
    double sum = 0;
    for (int64_t j = 0; j < m; ++j) sum += std::exp(x[i * m + j] - mx);
    for (int64_t j = 0; j < m; ++j) out[i * m + j] = static_cast<float>(std::exp(x[i * m + j] - mx) / sum);
  }
  return out;
}

std::vector<float> ref_row_sum(const std::vector<float>& x, int64_t n, int64_t m) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < m; ++j) s += x[i * m + j];
    out[i] = static_cast<float>(s);
  }
  return out;
}

void check_module(const runtime::Module& module, const std::string& what) {
  for (int64_t n : {1, 7, 33}) {
    for (int64_t m : {5, 64, 100}) {
      const std::string at = what + " at (" + std::to_string(n) + ", " + std::to_string(m) + ")";
      Tensor x = testing::random_tensor({n, m}, 1);
      Tensor z = testing::random_tensor({n, m}, 2);
      absl::StatusOr<runtime::Value> y = module["silu_mul"](x, z);
      ASSERT_TRUE(y.ok()) << y.status();
      expect_close(ref_silu_mul(floats(x), floats(z)), floats(y->tensor_or_die()), "silu_mul" + at);
      y = module["softmax"](x);
      ASSERT_TRUE(y.ok()) << y.status();
      expect_close(ref_softmax(floats(x), n, m), floats(y->tensor_or_die()), "softmax" + at);
      y = module["row_sum"](x);
      ASSERT_TRUE(y.ok()) << y.status();
      // A float32 sum in order against a double one: a looser bound.
      std::vector<float> want = ref_row_sum(floats(x), n, m), got = floats(y->tensor_or_die());
      ASSERT_EQ(want.size(), got.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << "row_sum" << at << " row " << i;
    }
  }
  for (int64_t k : {1, 15, 16, 1000, 4099}) {
    Tensor x = testing::random_tensor({k}, 3);
    Tensor y = testing::random_tensor({k}, 4);
    absl::StatusOr<runtime::Value> r = module["add1"](x, y);
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<float> want = floats(x);
    const std::vector<float> b = floats(y);
    for (size_t i = 0; i < want.size(); ++i) want[i] += b[i];
    expect_close(want, floats(r->tensor_or_die()), what + " add1 at " + std::to_string(k));
  }
}

TEST(ScheduleBuildTest, TheDefaultScheduleComputesWhatPlainLoopsDo) {
  absl::StatusOr<IRModule> mod = parse_module(kModule);
  ASSERT_TRUE(mod.ok()) << mod.status();
  transform::PassContext ctx;
  BuildInfo info;
  testing::TempDir cache;
  const Target target = source_keeping_target(cache);
  absl::StatusOr<runtime::Module> module = build(*mod, target, transform::default_pipeline(target), ctx, &info);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_GE(ctx.statistics().at("schedule-cpu").at("scheduled_kernels"), 4);
  // The schedule leaves every output provably written: nothing zeroed.
  EXPECT_EQ(ctx.statistics().at("lower-alloc").at("zeroed_outputs"), 0);
  const std::string source = read_file(info.source_path);
  EXPECT_TRUE(absl::StrContains(source, "#pragma omp simd")) << source;
  EXPECT_TRUE(absl::StrContains(source, "if (relax_parallel_for(")) << source;
  check_module(*module, "default schedule");
}

TEST(ScheduleBuildTest, UserDirectivesCompileAndComputeTheSame) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @sum_rows(A: Buffer[(n, m), float32], B: Buffer[(n,), float32]) {
    for i in range(n) {
      for k in range(m) {
        block sum(vi = spatial(n, i), vk = reduce(m, k)) {
          init {
            B[vi] = 0f32
          }
          B[vi] = B[vi] + A[vi, vk]
        }
      }
    }
  }
  prim_func @scale(A: Buffer[(n, m), float32], B: Buffer[(n, m), float32]) {
    for i in range(n) {
      for j in range(m) {
        block scale(vi = spatial(n, i), vj = spatial(m, j)) {
          B[vi, vj] = A[vi, vj] * 3f32
        }
      }
    }
  }
  func @main(x: Tensor[(n, m), float32]) -> Tuple[(Tensor[(n,), float32], Tensor[(n, m), float32])] {
    s = call_tir(@sum_rows, (x,), sinfo=Tensor[(n,), float32])
    t = call_tir(@scale, (x,), sinfo=Tensor[(n, m), float32])
    r = (s, t)
    return r
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  testing::TempDir cache;
  const Target target = source_keeping_target(cache);
  transform::PassManager pm = transform::default_pipeline(target);
  ASSERT_TRUE(pm.remove("schedule-cpu").ok());
  ASSERT_TRUE(pm.insert_after("simplify-loops",
                              transform::create_schedule_pass(
                                  "sum_rows.cache_local(k); sum_rows.parallel(i); sum_rows.split(k, 4);"
                                  "sum_rows.unroll(k_i); scale.fuse(i, j); scale.split(i_j, 8);"
                                  "scale.parallel(i_j_o); scale.vectorize(i_j_i)"))
                  .ok());
  transform::PassContext ctx;
  BuildInfo info;
  absl::StatusOr<runtime::Module> module = build(*mod, target, pm, ctx, &info);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(ctx.statistics().at("schedule").at("applied"), 8);
  const std::string source = read_file(info.source_path);
  EXPECT_TRUE(absl::StrContains(source, "#pragma GCC unroll 4")) << source;
  for (int64_t n : {1, 6, 31}) {
    for (int64_t m : {1, 9, 64}) {
      Tensor x = testing::random_tensor({n, m}, 5);
      absl::StatusOr<runtime::Value> y = (*module)["main"](x);
      ASSERT_TRUE(y.ok()) << y.status();
      const auto fields = y->fields_or_die();
      const std::vector<float> a = floats(x), s = floats(fields[0].tensor_or_die()),
                               t = floats(fields[1].tensor_or_die());
      std::vector<float> want_t(a.size());
      for (size_t i = 0; i < a.size(); ++i) want_t[i] = a[i] * 3.0f;
      expect_close(want_t, t, "scale");
      std::vector<float> want_s = ref_row_sum(a, n, m);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(s[i], want_s[i], 1e-4) << "sum_rows row " << i;
    }
  }
}

}  // namespace
}  // namespace relax
