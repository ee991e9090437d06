// Reductions over an empty extent where the conformance rows (one call each) cannot reach:
// fused kernels, whose members' requirements must survive fuse-tir, and constant folding,
// which evaluates the legalized kernels with the loop-level evaluator. The rows
// (rows_reduce.cc, rows_linalg.cc, rows_conv.cc, rows_nn*.cc) check every reduction-like op
// at extent 0 on its own.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "harness.h"
#include "relax/codegen/build.h"
#include "relax/ir/parser.h"

namespace relax::ops_test {
namespace {

const DataType kF32 = DataType::float32();

Target cached_target() {
  Target t;
  t.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_ops_test_cache").string();
  return t;
}

HostTensor filled(std::vector<int64_t> shape, double value) { return HostTensor::filled(std::move(shape), kF32, value); }

absl::StatusOr<runtime::Module> build_text(const char* text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  if (!mod.ok()) return mod.status();
  return build(*mod, cached_target());
}

// exp fuses into the argmax after it (a reduction takes its elementwise producers): the fused
// kernel still rejects an empty axis, naming argmax and the dim.
TEST(EmptyExtentTest, FusedArgmaxRejectsAnEmptyAxisWhenItRuns) {
  absl::StatusOr<runtime::Module> m = build_text(R"(module {
  func @main(x: Tensor[(n, m), float32]) -> Tensor[(n,), int64] {
    dataflow {
      e = exp(x)
      output a = argmax(e, axis=1)
    }
    return a
  }
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Value> ok = (*m)["main"].call({to_runtime(filled({2, 3}, 0.5))});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(compare_results(result_of(*ok), HostTensor::filled({2}, DataType::int64(), 0), kDefaultTolerance), "");
  absl::StatusOr<runtime::Value> empty = (*m)["main"].call({to_runtime(filled({2, 0}, 0))});
  ASSERT_FALSE(empty.ok());
  const std::string message(empty.status().message());
  EXPECT_NE(message.find("kernel fused_exp_argmax"), std::string::npos) << message;
  EXPECT_NE(message.find("argmax: dim 1 of x (a reduced dim) is 0"), std::string::npos) << message;
  // An empty n leaves nothing to reduce: an empty result, no error.
  absl::StatusOr<runtime::Value> no_rows = (*m)["main"].call({to_runtime(filled({0, 3}, 0))});
  ASSERT_TRUE(no_rows.ok()) << no_rows.status();
  EXPECT_EQ(compare_results(result_of(*no_rows), HostTensor::filled({0}, DataType::int64()), kDefaultTolerance), "");
}

// The same fusion with a sum: an empty axis sums to 0, in a call after one with a nonempty
// axis that left other values in the (reused) output memory.
TEST(EmptyExtentTest, FusedSumOverAnEmptyAxisIsZero) {
  absl::StatusOr<runtime::Module> m = build_text(R"(module {
  func @main(x: Tensor[(n, m), float32]) -> Tensor[(n,), float32] {
    dataflow {
      e = exp(x)
      output s = sum(e, axis=1)
    }
    return s
  }
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Value> full = (*m)["main"].call({to_runtime(filled({4, 3}, 0))});
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(compare_results(result_of(*full), filled({4}, 3), kDefaultTolerance), "");
  absl::StatusOr<runtime::Value> empty = (*m)["main"].call({to_runtime(filled({4, 0}, 0))});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(compare_results(result_of(*empty), filled({4}, 0), kDefaultTolerance), "");
}

// Constant folding evaluates prod over the constant (3, 0) ones: the empty product is 1.
TEST(EmptyExtentTest, FoldedProductOverAnEmptyAxisIsOne) {
  absl::StatusOr<runtime::Module> m = build_text(R"(module {
  func @main(x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
    dataflow {
      z = ones(shape(3, 0), dtype=float32)
      p = prod(z, axis=[1])
      output r = add(x, p)
    }
    return r
  }
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<runtime::Value> out = (*m)["main"].call({to_runtime(filled({3}, 2))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(compare_results(result_of(*out), filled({3}, 3), kDefaultTolerance), "");
}

}  // namespace
}  // namespace relax::ops_test
