// The manipulation operators through their C++ constructors and the builder, end to end:
// a concat whose tuple is a variable (not a literal), a split's tuple result taken apart
// again, and an embedding lookup; the conformance rows (rows_manipulate.cc) cover each op
// through the text format.
#include <filesystem>

#include <gtest/gtest.h>

#include "harness.h"
#include "reference/reference_manipulate.h"
#include "relax/codegen/build.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/struct_info.h"

namespace relax::ops_test {
namespace {

const DataType kF32 = DataType::float32();

Target cached_target() {
  Target t;
  t.cache_dir = (std::filesystem::path(::testing::TempDir()) / "relax_ops_test_cache").string();
  return t;
}

HostTensor iota(std::vector<int64_t> shape, DataType dtype, double start = 0) {
  HostTensor t = HostTensor::filled(std::move(shape), dtype);
  for (int64_t i = 0; i < t.numel(); ++i) t.values[i] = start + static_cast<double>(i);
  return t;
}

TEST(ManipulateTest, ConcatOfATupleVariableLegalizesAndRuns) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  func @main(x: Tensor[(n, 2), float32], y: Tensor[(n, k), float32]) -> Tensor[(n, k + 2), float32] {
    t = (x, y)
    c = concat(t, axis=1)
    return c
  }
}
)");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Module> built = build(*mod, cached_target());
  ASSERT_TRUE(built.ok()) << built.status();
  for (int64_t n : {1, 5, 33}) {
    const HostTensor x = iota({n, 2}, kF32);
    const HostTensor y = iota({n, 3}, kF32, 1000);
    absl::StatusOr<runtime::Value> out = (*built)["main"].call({to_runtime(x), to_runtime(y)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(compare_results(result_of(*out), concat({x, y}, 1), kDefaultTolerance), "") << "n = " << n;
  }
}

TEST(ManipulateTest, ConstructorsBuildAndRunSplitOfConcat) {
  ModuleBuilder mb;
  SymVar n("n");
  auto f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({n, 4}, kF32));
  Var y = f.param("y", tensor_sinfo({n, 2}, kF32));
  Var ids = f.param("ids", tensor_sinfo({3}, DataType::int32()));
  Var c = f.emit(op::concat({x, y}, 1));
  EXPECT_EQ(c.struct_info().to_string(), "Tensor[(n, 6), float32]");
  Var parts = f.emit(op::split(c, {4}, 1));
  EXPECT_EQ(parts.struct_info().to_string(), "Tuple[(Tensor[(n, 4), float32], Tensor[(n, 2), float32])]");
  Var thirds = f.emit(op::split(c, int64_t{3}, 1));
  EXPECT_EQ(thirds.struct_info().to_string(),
            "Tuple[(Tensor[(n, 2), float32], Tensor[(n, 2), float32], Tensor[(n, 2), float32])]");
  Var second = f.emit(make_tuple_get_item(parts, 1));
  Var rows = f.emit(op::take(x, ids, 0));
  EXPECT_EQ(rows.struct_info().to_string(), "Tensor[(3, 4), float32]");
  Var hot = f.emit(op::one_hot(ids, 1.0, 0.0, 4));
  EXPECT_EQ(hot.struct_info().to_string(), "Tensor[(3, 4), float64]");
  Var sliced = f.emit(op::strided_slice(x, {1}, {1}, {SymExpr(-1)}));
  EXPECT_EQ(sliced.struct_info().to_string(), "Tensor[(n, 2), float32]");
  Var expanded = f.emit(op::squeeze(op::expand_dims(second, 0), std::vector<int64_t>{0}));
  f.ret(make_tuple({expanded, rows, hot, sliced}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<runtime::Module> built = build(*mod, cached_target());
  ASSERT_TRUE(built.ok()) << built.status();
  for (int64_t size : {1, 7}) {
    const HostTensor hx = iota({size, 4}, kF32);
    const HostTensor hy = iota({size, 2}, kF32, 500);
    HostTensor hids = HostTensor::filled({3}, DataType::int32());
    hids.values = {0, static_cast<double>(size - 1), 2};
    absl::StatusOr<runtime::Value> out =
        (*built)["main"].call({to_runtime(hx), to_runtime(hy), to_runtime(hids)});
    ASSERT_TRUE(out.ok()) << out.status();
    const RefResult want = RefResult::tuple({hy, take(hx, hids, 0, false),
                                             one_hot(hids, 4, -1, 1, 0, DataType::float64()),
                                             strided_slice(hx, {1}, {1}, {-1}, {1})});
    EXPECT_EQ(compare_results(result_of(*out), want, kDefaultTolerance), "") << "n = " << size;
  }
}

}  // namespace
}  // namespace relax::ops_test
