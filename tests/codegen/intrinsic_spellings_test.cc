// Every intrinsic of relax/shape/intrinsics.h has a spelling in each code generator for each
// dtype class it takes: the C++ generator (scalar and vector lanes) and the CUDA generator's
// device overloads. The tables themselves are checked for one row per enumerator at compile
// time; this checks that the rows hold what each intrinsic's dtypes need.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/codegen/cuda_codegen.h"
#include "relax/ir/builder.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/shape/intrinsics.h"

namespace relax {
namespace {

// Y[i] = op(X[i], ...) over (n,) of `dtype`.
Expr intrinsic_kernel(Intrinsic op, DataType dtype) {
  SymVar n("n");
  PrimFuncBuilder b("f");
  Buffer x = b.buffer_param("X", {n}, dtype);
  const DataType out = intrinsic_result_dtype(op, dtype);
  Buffer y = b.buffer_param("Y", {n}, out);
  b.for_("i", 0, n, [&](SymVar i) {
    std::vector<SymExpr> operands(intrinsic_info(op).arity, buffer_load(x, {i}));
    b.store(y, {i}, call(op, std::move(operands)));
  });
  absl::StatusOr<Expr> f = b.build();
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : Expr();
}

TEST(IntrinsicSpellings, EveryIntrinsicIsSpelledForEveryDtypeItTakes) {
  int checked = 0;
  for (const IntrinsicInfo& row : intrinsic_table()) {
    for (DataType dtype : {DataType::float32(), DataType::int32()}) {
      if (!intrinsic_takes(row.op, dtype)) continue;
      const std::string what = absl::StrCat(std::string(row.name), " over ", dtype.to_string());
      const Expr f = intrinsic_kernel(row.op, dtype);
      absl::StatusOr<std::string> cpp = generate_cpp({{"f", f}}, Target());
      EXPECT_TRUE(cpp.ok()) << what << ": " << cpp.status();
      ModuleBuilder mb;
      mb.add_prim_func("f", f);
      absl::StatusOr<IRModule> mod = mb.build();
      ASSERT_TRUE(mod.ok()) << mod.status();
      absl::StatusOr<Target> cuda = Target::parse("cuda -arch=sm_80");
      ASSERT_TRUE(cuda.ok()) << cuda.status();
      absl::StatusOr<CudaUnit> unit = generate_cuda(*mod, *cuda);
      EXPECT_TRUE(unit.ok()) << what << ": " << unit.status();
      if (unit.ok() && dtype.is_float()) {
        // The device overload the kernel calls is defined in the prelude.
        EXPECT_NE(unit->device_source.find(absl::StrCat(" relax_", std::string(row.name), "(float ")), std::string::npos) << what;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, static_cast<int>(kNumIntrinsics));
}

}  // namespace
}  // namespace relax
