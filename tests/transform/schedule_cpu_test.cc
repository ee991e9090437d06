// The default CPU schedule (schedule::schedule_cpu and the schedule-cpu pass)
// and the schedule pass: every legalized (and fused) example operator computes
// the same after its default schedule, run through the loop-level evaluator at
// several sizes; the shapes chosen for elementwise kernels and row reductions;
// kernels of other patterns untouched; the passes from pipeline text.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"
#include "relax/transform/instrument.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/passes.h"
#include "relax/transform/schedule.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

using schedule_test::expect_same_results;
using schedule_test::kernels_of;
using schedule_test::parse_or_fail;
using schedule_test::run_verified;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every operator of examples/ops/, alone and fused as its functions allow:
// the scheduled kernel gives the same bytes as the plain one (reductions: the
// same up to the rounding of reassociated float sums).
TEST(ScheduleCpuTest, EveryExampleOperatorKeepsItsValues) {
  const std::filesystem::path dir = std::filesystem::path(RELAX_SOURCE_DIR) / "examples" / "ops";
  int scheduled = 0, compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".relax") continue;
    for (bool fuse : {false, true}) {
      IRModule mod = kernels_of(parse_or_fail(read_file(entry.path())), fuse);
      for (const auto& [name, f] : mod.functions()) {
        if (f.as<PrimFuncNode>() == nullptr) continue;
        Expr g = schedule::schedule_cpu(f);
        if (g.same_as(f)) continue;
        ++scheduled;
        IRModule one;
        one.add(name, g);
        absl::Status wf = well_formed(one);
        EXPECT_TRUE(wf.ok()) << name << ": " << wf << "\n" << to_text(g);
        // Reductions are split into vector lanes: float sums are reassociated.
        const std::string what = entry.path().filename().string() + ": " + name;
        const auto* node = f.as<PrimFuncNode>();
        compared += op_pattern_of(*node).value_or(analyze_op_pattern(*node)) == OpPattern::kReduction
                        ? schedule_test::expect_close_results(f, g, {1, 5, 17}, what)
                        : expect_same_results(f, g, {1, 5, 17}, what);
      }
    }
  }
  std::cout << "scheduled " << scheduled << " kernels, compared " << compared << " runs\n";
  EXPECT_GE(scheduled, 60);
  EXPECT_GE(compared, 200);
}

constexpr const char* kModels = R"(module {
  func @silu_mul(x: Tensor[(n, 64), float32], z: Tensor[(n, 64), float32]) -> Tensor[(n, 64), float32] {
    dataflow {
      a = silu(x)
      output b = multiply(a, z)
    }
    return b
  }
  func @add3(x: Tensor[(n, m, k), float32], y: Tensor[(n, m, k), float32]) -> Tensor[(n, m, k), float32] {
    r = add(x, y)
    return r
  }
  func @vec(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
    r = exp(x)
    return r
  }
  func @softmax(x: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {
    r = softmax(x)
    return r
  }
  func @sum(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    r = sum(x, axis=[1])
    return r
  }
  func @total(x: Tensor[(n, m), float32]) -> Tensor[(), float32] {
    r = sum(x)
    return r
  }
  func @mm(x: Tensor[(n, 8), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 4), float32] {
    r = matmul(x, w)
    return r
  }
})";

Expr only_kernel(const IRModule& mod, const std::string& prefix) {
  Expr found = mod.lookup(prefix);
  for (const auto& [name, f] : mod.functions()) {
    if (!found.defined() && f.as<PrimFuncNode>() != nullptr && absl::StartsWith(name, prefix)) found = f;
  }
  EXPECT_TRUE(found.defined()) << prefix << " in\n" << to_text(mod);
  return found;
}

TEST(ScheduleCpuTest, ElementwiseNestsGetParallelRowsAndVectorLanes) {
  IRModule mod = kernels_of(parse_or_fail(kModels), /*fuse=*/true);
  // Two loops: rows parallel, the row of 64 split into 4 vectors of 16, no tail check.
  Expr f = only_kernel(mod, "fused_silu");
  Expr g = schedule::schedule_cpu(f);
  std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "range(n) parallel")) << text;
  EXPECT_TRUE(absl::StrContains(text, "range(4) {")) << text;
  EXPECT_TRUE(absl::StrContains(text, "range(16) vectorized")) << text;
  EXPECT_FALSE(absl::StrContains(text, "if ")) << text;
  EXPECT_EQ(expect_same_results(f, g, {1, 3, 17}, "silu_mul"), 6);
  // Three loops: the outer two fused; the symbolic inner one split with a tail check.
  Expr a = only_kernel(mod, "add");
  Expr b = schedule::schedule_cpu(a);
  text = to_text(b);
  EXPECT_EQ(schedule::loop_names(b).size(), 3u) << text;
  EXPECT_TRUE(absl::StrContains(text, "parallel")) << text;
  EXPECT_TRUE(absl::StrContains(text, "range(16) vectorized")) << text;
  EXPECT_TRUE(absl::StrContains(text, "if ")) << text;
  EXPECT_EQ(expect_same_results(a, b, {1, 3, 17}, "add3", true), 6);
  // One loop: split, outer parallel, inner vectorized.
  Expr v = only_kernel(mod, "exp");
  Expr w = schedule::schedule_cpu(v);
  text = to_text(w);
  EXPECT_TRUE(absl::StrContains(text, "16)) parallel")) << text;
  EXPECT_TRUE(absl::StrContains(text, "range(16) vectorized")) << text;
  EXPECT_EQ(expect_same_results(v, w, {1, 16, 33}, "exp"), 6);
}

TEST(ScheduleCpuTest, RowReductionsGetParallelRowsAndVectorLanes) {
  IRModule mod = kernels_of(parse_or_fail(kModels), /*fuse=*/true);
  // Softmax: its four row loops merged into one parallel loop; max and sum
  // split into 16 vectorized lanes; the exponentials and the normalisation
  // vectorized.
  Expr f = only_kernel(mod, "softmax_1");
  Expr g = schedule::schedule_cpu(f);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "_rf: Buffer[(16,), float32, local]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "_acc: Buffer[(1,), float32, local]")) << text;
  EXPECT_FALSE(absl::StrContains(text, "init {")) << text;
  size_t parallel = 0;
  for (size_t at = text.find(" parallel"); at != std::string::npos; at = text.find(" parallel", at + 1)) ++parallel;
  EXPECT_EQ(parallel, 1u) << text;
  size_t vectorized = 0;
  for (size_t at = text.find("range(16) vectorized"); at != std::string::npos;
       at = text.find("range(16) vectorized", at + 1)) {
    ++vectorized;
  }
  EXPECT_EQ(vectorized, 6u) << "two lane inits, two lane loops, the exponentials, the normalisation: " << text;
  // The row's reciprocal of the sum computed once per row, before the
  // normalisation, which multiplies by it.
  EXPECT_TRUE(absl::StrContains(text, "softmax_inv[0] = 1f32 / exp_sum[0]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "] * softmax_inv[0]")) << text;
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 17, 40}, "softmax", 1e-5, true), 8);
  Expr s = only_kernel(mod, "sum_1");
  Expr t = schedule::schedule_cpu(s);
  EXPECT_TRUE(absl::StrContains(to_text(t), "parallel")) << to_text(t);
  EXPECT_TRUE(absl::StrContains(to_text(t), "range(16) vectorized")) << to_text(t);
  EXPECT_EQ(schedule_test::expect_close_results(s, t, {1, 3, 17, 40}, "sum", 1e-5, true), 8);
  // A reduction to one element: no rows; its two loops fused, then split into lanes.
  Expr a = only_kernel(mod, "sum_2");
  Expr b = schedule::schedule_cpu(a);
  EXPECT_TRUE(absl::StrContains(to_text(b), "_rf")) << to_text(b);
  EXPECT_EQ(schedule_test::expect_close_results(a, b, {1, 3, 17}, "total", 1e-5, true), 6);
}

// (The matmul schedule's own tests are in schedule_matmul_test.cc.)
TEST(ScheduleCpuTest, MatmulGetsTheMatmulSchedule) {
  IRModule mod = kernels_of(parse_or_fail(kModels), /*fuse=*/true);
  Expr f = only_kernel(mod, "matmul");
  Expr g = schedule::schedule_cpu(f);
  EXPECT_TRUE(absl::StrContains(to_text(g), "_acc")) << to_text(g);
  EXPECT_EQ(expect_same_results(f, g, {1, 5, 17}, "mm"), 6);
}

TEST(ScheduleCpuTest, ThePassSchedulesEveryKernelItCan) {
  IRModule mod = kernels_of(parse_or_fail(kModels), /*fuse=*/true);
  PassContext ctx;
  IRModule out = run_verified(mod, {create_schedule_cpu_pass()}, ctx);
  EXPECT_EQ(ctx.statistics().at("schedule-cpu").at("scheduled_kernels"), 7);
  // vector-lanes from the options.
  PassContext eight;
  eight.set_option("schedule-cpu.vector-lanes", int64_t{8});
  IRModule out8 = run_verified(mod, {create_schedule_cpu_pass()}, eight);
  EXPECT_TRUE(absl::StrContains(to_text(only_kernel(out8, "exp")), "range(8) vectorized"));
}

TEST(ScheduleCpuTest, TheSchedulePassTakesDirectivesFromItsOption) {
  IRModule mod = kernels_of(parse_or_fail(kModels), /*fuse=*/false);
  absl::StatusOr<PassManager> pm = parse_pipeline("schedule");
  ASSERT_TRUE(pm.ok()) << pm.status();
  PassContext ctx;
  ASSERT_TRUE(ctx.set_option_text("schedule.directives", "exp.split(i0, 8); exp.vectorize(i0_i)").ok());
  absl::StatusOr<IRModule> out = pm->run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(absl::StrContains(to_text(out->lookup("exp")), "for i0_i in range(8) vectorized"))
      << to_text(out->lookup("exp"));
  PassContext bad;
  ASSERT_TRUE(bad.set_option_text("schedule.directives", "nothing.split(i0, 8)").ok());
  absl::StatusOr<IRModule> missing = pm->run(mod, bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "schedule: no prim_func @nothing")) << missing.status();
  PassContext wrong;
  ASSERT_TRUE(wrong.set_option_text("schedule.directives", "exp.parallel(k)").ok());
  absl::StatusOr<IRModule> no_loop = pm->run(mod, wrong);
  ASSERT_FALSE(no_loop.ok());
  EXPECT_TRUE(absl::StrContains(no_loop.status().message(), "no loop `k`")) << no_loop.status();
}

}  // namespace
}  // namespace relax::transform
