// The default GPU schedule (schedule::schedule_gpu and the schedule-gpu pass):
// every example operator computes the same after it (run through the
// loop-level evaluator at several sizes); the loop shapes the CUDA code
// generator maps (schedule_gpu.cc's contract): elementwise nests one
// parallel loop, row reductions one parallel row loop with local
// accumulators and parallel inner loops and no vector lanes, matmul nests
// untouched, conv2d's spatial loops one parallel loop around its reduction;
// the pass by name with its statistic.
#include <gtest/gtest.h>

#include <filesystem>
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
#include "relax/transform/passes.h"
#include "relax/transform/schedule.h"
#include "schedule_test_util.h"

namespace relax::transform {
namespace {

using schedule_test::kernels_of;
using schedule_test::parse_or_fail;

Expr schedule_gpu_kernel(const IRModule& mod, const std::string& prefix) {
  Expr found = mod.lookup(prefix);
  for (const auto& [name, f] : mod.functions()) {
    if (!found.defined() && f.as<PrimFuncNode>() != nullptr && absl::StartsWith(name, prefix)) found = f;
  }
  EXPECT_TRUE(found.defined()) << prefix << " in\n" << to_text(mod);
  return found;
}

size_t schedule_gpu_count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

TEST(ScheduleGpuTest, EveryExampleOperatorKeepsItsValues) {
  const std::filesystem::path dir = std::filesystem::path(RELAX_SOURCE_DIR) / "examples" / "ops";
  int scheduled = 0, compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".relax") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (bool fuse : {false, true}) {
      IRModule mod = kernels_of(parse_or_fail(text.str()), fuse);
      for (const auto& [name, f] : mod.functions()) {
        if (f.as<PrimFuncNode>() == nullptr) continue;
        Expr g = schedule::schedule_gpu(f);
        if (g.same_as(f)) continue;
        ++scheduled;
        IRModule one;
        one.add(name, g);
        absl::Status wf = well_formed(one);
        EXPECT_TRUE(wf.ok()) << name << ": " << wf << "\n" << to_text(g);
        EXPECT_FALSE(absl::StrContains(to_text(g), "vectorized")) << to_text(g);
        const std::string what = entry.path().filename().string() + ": " + name;
        compared += schedule_test::expect_same_results(f, g, {1, 6}, what);
      }
    }
  }
  EXPECT_GE(scheduled, 60);
  EXPECT_GE(compared, 130);
}

constexpr const char* kScheduleGpuModels = R"(module {
  func @add3(x: Tensor[(n, m, k), float32], y: Tensor[(n, m, k), float32]) -> Tensor[(n, m, k), float32] {
    r = add(x, y)
    return r
  }
  func @softmax(x: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {
    r = softmax(x)
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
  func @conv(x: Tensor[(1, 2, 6, 6), float32], k: Tensor[(3, 2, 3, 3), float32]) -> Tensor[(1, 3, 4, 4), float32] {
    r = conv2d(x, k)
    return r
  }
})";

TEST(ScheduleGpuTest, ElementwiseNestIsOneParallelLoop) {
  IRModule mod = kernels_of(parse_or_fail(kScheduleGpuModels), /*fuse=*/true);
  Expr f = schedule_gpu_kernel(mod, "add");
  Expr g = schedule::schedule_gpu(f);
  const std::string text = to_text(g);
  EXPECT_EQ(schedule::loop_names(g).size(), 1u) << text;
  EXPECT_EQ(schedule_gpu_count(text, " parallel"), 1u) << text;
  EXPECT_EQ(schedule_test::expect_same_results(f, g, {1, 3, 17}, "add3", true), 6);
}

TEST(ScheduleGpuTest, RowReductionIsParallelRowsWithLocalAccumulators) {
  IRModule mod = kernels_of(parse_or_fail(kScheduleGpuModels), /*fuse=*/true);
  // Softmax: its row loops merged into one parallel loop (the blocks); max and
  // sum accumulated in one-element locals (split over the threads by the code
  // generator); the exponentials and the normalisation parallel inner loops
  // (the threads); no vector lanes.
  Expr f = schedule_gpu_kernel(mod, "softmax_1");
  Expr g = schedule::schedule_gpu(f);
  const std::string text = to_text(g);
  EXPECT_TRUE(absl::StrContains(text, "_acc: Buffer[(1,), float32, local]")) << text;
  EXPECT_FALSE(absl::StrContains(text, "_rf")) << text;
  EXPECT_FALSE(absl::StrContains(text, "vectorized")) << text;
  EXPECT_FALSE(absl::StrContains(text, "init {")) << text;
  const std::vector<std::string> loops = schedule::loop_names(g);
  ASSERT_FALSE(loops.empty());
  EXPECT_TRUE(absl::StrContains(text, "range(n) parallel")) << text;
  // One row loop, then per row: max, exponentials, sum, normalisation.
  EXPECT_EQ(schedule_gpu_count(text, " parallel"), 3u) << text;
  EXPECT_TRUE(absl::StrContains(text, "softmax_inv[0] = 1f32 / exp_sum[0]")) << text;
  EXPECT_EQ(schedule_test::expect_close_results(f, g, {1, 3, 17, 40}, "softmax", 1e-5, true), 8);
  // A reduction to one element: no rows, its loops fused and accumulated locally.
  Expr a = schedule_gpu_kernel(mod, "sum");
  Expr b = schedule::schedule_gpu(a);
  EXPECT_TRUE(absl::StrContains(to_text(b), "_acc")) << to_text(b);
  EXPECT_FALSE(absl::StrContains(to_text(b), "parallel")) << to_text(b);
  EXPECT_EQ(schedule_test::expect_close_results(a, b, {1, 3, 17}, "total", 1e-5, true), 6);
}

TEST(ScheduleGpuTest, MatmulIsLeftForTheCodeGenerator) {
  IRModule mod = kernels_of(parse_or_fail(kScheduleGpuModels), /*fuse=*/true);
  Expr f = schedule_gpu_kernel(mod, "matmul");
  EXPECT_TRUE(schedule::schedule_gpu(f).same_as(f)) << to_text(schedule::schedule_gpu(f));
}

TEST(ScheduleGpuTest, ConvSpatialLoopsAreOneParallelLoopAroundTheReduction) {
  IRModule mod = kernels_of(parse_or_fail(kScheduleGpuModels), /*fuse=*/true);
  Expr f = schedule_gpu_kernel(mod, "conv2d");
  Expr g = schedule::schedule_gpu(f);
  const std::string text = to_text(g);
  EXPECT_EQ(schedule_gpu_count(text, " parallel"), 1u) << text;
  EXPECT_TRUE(absl::StrContains(text, "range(48) parallel")) << text;  // 1 * 3 * 4 * 4 outputs
  EXPECT_EQ(schedule_test::expect_same_results(f, g, {1}, "conv2d"), 2);
}

TEST(ScheduleGpuTest, ThePassRunsByNameAndCountsKernels) {
  IRModule mod = kernels_of(parse_or_fail(kScheduleGpuModels), /*fuse=*/true);
  PassManager pm;
  ASSERT_TRUE(pm.add("schedule-gpu").ok());
  PassContext ctx;
  absl::StatusOr<IRModule> out = pm.run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  // add3, softmax, total and conv2d change; the matmul does not.
  EXPECT_EQ(ctx.statistics().at("schedule-gpu").at("scheduled_kernels"), 4);
  EXPECT_TRUE(absl::StrContains(to_text(schedule_gpu_kernel(*out, "add")), "parallel"));
}

}  // namespace
}  // namespace relax::transform
