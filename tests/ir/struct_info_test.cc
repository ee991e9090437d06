// StructInfo: text form, base checks, join (lca), erasure, substitution, equality.
#include "relax/ir/struct_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace relax {
namespace {

const DataType kSinfoF32 = DataType::float32();
const DataType i32 = DataType::int32();

TEST(StructInfoText, LeavesAndShapes) {
  SymVar n("n");
  EXPECT_EQ(object_sinfo().to_string(), "Object");
  EXPECT_EQ(prim_sinfo(DataType::int64()).to_string(), "Prim[int64]");
  EXPECT_EQ(prim_sinfo(DataType::int64(), n + 1).to_string(), "Prim[int64, n + 1]");
  EXPECT_EQ(shape_sinfo({n, 4}).to_string(), "Shape[(n, 4)]");
  EXPECT_EQ(shape_sinfo({n}).to_string(), "Shape[(n,)]");
  EXPECT_EQ(shape_sinfo({}).to_string(), "Shape[()]");
  EXPECT_EQ(shape_sinfo_rank(2).to_string(), "Shape[ndim=2]");
  EXPECT_EQ(shape_sinfo_rank(kUnknownNDim).to_string(), "Shape[]");
}

TEST(StructInfoText, Tensors) {
  SymVar n("n");
  EXPECT_EQ(tensor_sinfo({n, 4096}, kSinfoF32).to_string(), "Tensor[(n, 4096), float32]");
  EXPECT_EQ(tensor_sinfo_rank(2, kSinfoF32).to_string(), "Tensor[ndim=2, float32]");
  EXPECT_EQ(tensor_sinfo({n}, std::nullopt).to_string(), "Tensor[(n,), ?]");
  EXPECT_EQ(tensor_sinfo_rank(kUnknownNDim, std::nullopt).to_string(), "Tensor[ndim=?, ?]");
  EXPECT_EQ(tensor_sinfo({n, 4}, kSinfoF32, Device::cuda(0)).to_string(),
            "Tensor[(n, 4), float32, cuda:0]");
  EXPECT_EQ(tensor_sinfo_rank(2, std::nullopt, Device::cpu()).to_string(),
            "Tensor[ndim=2, ?, cpu]");
}

TEST(StructInfoText, TuplesAndFunctions) {
  StructInfo a = tensor_sinfo({2}, kSinfoF32);
  StructInfo b = object_sinfo();
  EXPECT_EQ(tuple_sinfo({a, b}).to_string(), "Tuple[(Tensor[(2,), float32], Object)]");
  EXPECT_EQ(tuple_sinfo({b}).to_string(), "Tuple[(Object,)]");
  EXPECT_EQ(tuple_sinfo({}).to_string(), "Tuple[()]");
  EXPECT_EQ(func_sinfo({a, b}, b).to_string(), "Func[(Tensor[(2,), float32], Object) -> Object]");
  EXPECT_EQ(func_sinfo({b}, b).to_string(), "Func[(Object) -> Object]");
  EXPECT_EQ(func_sinfo({}, b, false).to_string(), "Func[() -> Object, impure]");
  EXPECT_EQ(opaque_func_sinfo(a).to_string(), "Func[opaque -> Tensor[(2,), float32], impure]");
  EXPECT_EQ(opaque_func_sinfo(a, true).to_string(), "Func[opaque -> Tensor[(2,), float32]]");
}

TEST(StructInfoBaseCheck, ObjectAcceptsEverythingAndKindsMustMatch) {
  Analyzer an;
  EXPECT_EQ(check_base_of(object_sinfo(), tensor_sinfo({2}, kSinfoF32), an), BaseCheck::kPass);
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, kSinfoF32), shape_sinfo({2}), an), BaseCheck::kFail);
  // A value known only as an Object might be a tensor: a run-time check.
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, kSinfoF32), object_sinfo(), an), BaseCheck::kRuntimeCheck);
}

TEST(StructInfoBaseCheck, DimsByProof) {
  Analyzer an;
  SymVar n("n");
  SymVar m("m");
  EXPECT_EQ(check_base_of(tensor_sinfo({n * 4}, kSinfoF32), tensor_sinfo({4 * n}, kSinfoF32), an),
            BaseCheck::kPass);
  EXPECT_EQ(check_base_of(tensor_sinfo({n + 1}, kSinfoF32), tensor_sinfo({n}, kSinfoF32), an),
            BaseCheck::kFail);
  EXPECT_EQ(check_base_of(tensor_sinfo({n}, kSinfoF32), tensor_sinfo({m}, kSinfoF32), an),
            BaseCheck::kRuntimeCheck);
  EXPECT_EQ(check_base_of(tensor_sinfo({3}, kSinfoF32), tensor_sinfo({4}, kSinfoF32), an), BaseCheck::kFail);
}

TEST(StructInfoBaseCheck, RankDtypeAndDevice) {
  Analyzer an;
  SymVar n("n");
  EXPECT_EQ(check_base_of(tensor_sinfo_rank(2, kSinfoF32), tensor_sinfo({n, 3}, kSinfoF32), an),
            BaseCheck::kPass);
  EXPECT_EQ(check_base_of(tensor_sinfo({n, 3}, kSinfoF32), tensor_sinfo_rank(2, kSinfoF32), an),
            BaseCheck::kRuntimeCheck);
  EXPECT_EQ(check_base_of(tensor_sinfo_rank(3, kSinfoF32), tensor_sinfo_rank(2, kSinfoF32), an),
            BaseCheck::kFail);
  EXPECT_EQ(check_base_of(tensor_sinfo_rank(kUnknownNDim, kSinfoF32), tensor_sinfo_rank(2, kSinfoF32), an),
            BaseCheck::kPass);
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, kSinfoF32), tensor_sinfo({2}, i32), an), BaseCheck::kFail);
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, std::nullopt), tensor_sinfo({2}, i32), an),
            BaseCheck::kPass);
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, kSinfoF32), tensor_sinfo({2}, std::nullopt), an),
            BaseCheck::kRuntimeCheck);
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, kSinfoF32, Device::cuda(0)),
                          tensor_sinfo({2}, kSinfoF32, Device::cpu()), an),
            BaseCheck::kFail);
  EXPECT_EQ(check_base_of(tensor_sinfo({2}, kSinfoF32), tensor_sinfo({2}, kSinfoF32, Device::cuda(1)), an),
            BaseCheck::kPass);
}

TEST(StructInfoBaseCheck, PrimShapeAndTuple) {
  Analyzer an;
  SymVar n("n");
  EXPECT_EQ(check_base_of(prim_sinfo(DataType::int64()), prim_sinfo(DataType::int64(), n), an),
            BaseCheck::kPass);
  EXPECT_EQ(check_base_of(prim_sinfo(DataType::int64(), n), prim_sinfo(DataType::int64()), an),
            BaseCheck::kRuntimeCheck);
  EXPECT_EQ(check_base_of(prim_sinfo(i32), prim_sinfo(DataType::int64()), an), BaseCheck::kFail);
  EXPECT_EQ(check_base_of(shape_sinfo({n, 2}), shape_sinfo({n, 2}), an), BaseCheck::kPass);
  EXPECT_EQ(check_base_of(shape_sinfo({n, 2}), shape_sinfo({n, 3}), an), BaseCheck::kFail);
  StructInfo t = tensor_sinfo({n}, kSinfoF32);
  EXPECT_EQ(check_base_of(tuple_sinfo({t, object_sinfo()}), tuple_sinfo({t, t}), an),
            BaseCheck::kPass);
  EXPECT_EQ(check_base_of(tuple_sinfo({t}), tuple_sinfo({t, t}), an), BaseCheck::kFail);
}

TEST(StructInfoBaseCheck, FunctionsAreContravariantInParams) {
  Analyzer an;
  StructInfo t2 = tensor_sinfo({2}, kSinfoF32);
  StructInfo any = object_sinfo();
  // A function taking anything fits where one taking a tensor is expected...
  EXPECT_EQ(check_base_of(func_sinfo({t2}, t2), func_sinfo({any}, t2), an), BaseCheck::kPass);
  // ...but not the other way round: it may be called with a non-tensor, which
  // only a run-time check can rule out...
  EXPECT_EQ(check_base_of(func_sinfo({any}, t2), func_sinfo({t2}, t2), an),
            BaseCheck::kRuntimeCheck);
  // ...and a function taking shapes never fits where tensors are passed.
  EXPECT_EQ(check_base_of(func_sinfo({t2}, t2), func_sinfo({shape_sinfo({2})}, t2), an),
            BaseCheck::kFail);
  // Returns are covariant.
  EXPECT_EQ(check_base_of(func_sinfo({t2}, any), func_sinfo({t2}, t2), an), BaseCheck::kPass);
  // An impure function does not fit a pure annotation.
  EXPECT_EQ(check_base_of(func_sinfo({t2}, t2), func_sinfo({t2}, t2, false), an), BaseCheck::kFail);
  EXPECT_EQ(check_base_of(opaque_func_sinfo(any, true), func_sinfo({t2}, t2), an),
            BaseCheck::kPass);
}

TEST(StructInfoLca, EqualDimsStayDifferentDimsDropToRank) {
  Analyzer an;
  SymVar n("n");
  SymVar m("m");
  StructInfo a = tensor_sinfo({n, 4}, kSinfoF32);
  EXPECT_TRUE(struct_info_equal(struct_info_lca(a, tensor_sinfo({n, 2 + 2}, kSinfoF32), an), a));
  EXPECT_EQ(struct_info_lca(a, tensor_sinfo({m, 4}, kSinfoF32), an).to_string(),
            "Tensor[ndim=2, float32]");
  EXPECT_EQ(struct_info_lca(a, tensor_sinfo({n}, kSinfoF32), an).to_string(), "Tensor[ndim=?, float32]");
  EXPECT_EQ(struct_info_lca(a, tensor_sinfo({n, 4}, i32), an).to_string(), "Tensor[(n, 4), ?]");
  EXPECT_EQ(struct_info_lca(shape_sinfo({n}), shape_sinfo({m}), an).to_string(), "Shape[ndim=1]");
}

TEST(StructInfoLca, KindsTuplesPrims) {
  Analyzer an;
  SymVar n("n");
  EXPECT_EQ(struct_info_lca(tensor_sinfo({2}, kSinfoF32), shape_sinfo({2}), an).to_string(), "Object");
  StructInfo t1 = tuple_sinfo({tensor_sinfo({2}, kSinfoF32), prim_sinfo(DataType::int64(), n)});
  StructInfo t2 = tuple_sinfo({tensor_sinfo({3}, kSinfoF32), prim_sinfo(DataType::int64(), n)});
  EXPECT_EQ(struct_info_lca(t1, t2, an).to_string(),
            "Tuple[(Tensor[ndim=1, float32], Prim[int64, n])]");
  EXPECT_EQ(struct_info_lca(t1, tuple_sinfo({object_sinfo()}), an).to_string(), "Object");
  EXPECT_EQ(struct_info_lca(prim_sinfo(DataType::int64(), n), prim_sinfo(DataType::int64(), 3), an)
                .to_string(),
            "Prim[int64]");
}

TEST(StructInfoErase, OutOfScopeVarsDropToRank) {
  SymVar n("n");
  SymVar m("m");
  auto only_n = [&](const SymVar& v) { return v.id() == n.id(); };
  StructInfo t = tuple_sinfo({tensor_sinfo({n, 4}, kSinfoF32), tensor_sinfo({m + 1, n}, kSinfoF32),
                              prim_sinfo(DataType::int64(), m), shape_sinfo({m})});
  EXPECT_EQ(erase_to_scope(t, only_n).to_string(),
            "Tuple[(Tensor[(n, 4), float32], Tensor[ndim=2, float32], Prim[int64], "
            "Shape[ndim=1])]");
  StructInfo kept = tensor_sinfo({n}, kSinfoF32);
  EXPECT_TRUE(erase_to_scope(kept, only_n).same_as(kept));
}

TEST(StructInfoErase, FunctionAnnotationsKeepTheirOwnVariables) {
  SymVar k("k");
  SymVar outer("outer");
  StructInfo f = func_sinfo({tensor_sinfo({k}, kSinfoF32)}, tensor_sinfo({k + outer}, kSinfoF32));
  auto nothing = [](const SymVar&) { return false; };
  EXPECT_EQ(erase_to_scope(f, nothing).to_string(),
            "Func[(Tensor[(k,), float32]) -> Tensor[ndim=1, float32]]");
  auto with_outer = [&](const SymVar& v) { return v.id() == outer.id(); };
  EXPECT_TRUE(erase_to_scope(f, with_outer).same_as(f));
}

TEST(StructInfoSubstitute, ReplacesAndSimplifies) {
  Analyzer an;
  SymVar n("n");
  SymVar m("m");
  SymVarMap<SymExpr> map;
  map[n] = SymExpr(10);
  map[m] = n;  // to a variable of the caller (here: n itself)
  StructInfo s = tuple_sinfo({tensor_sinfo({n + 2, m}, kSinfoF32), prim_sinfo(DataType::int64(), n * 3)});
  EXPECT_EQ(substitute_sinfo(s, map, an).to_string(),
            "Tuple[(Tensor[(12, n), float32], Prim[int64, 30])]");
  StructInfo untouched = tensor_sinfo({SymVar("q")}, kSinfoF32);
  EXPECT_TRUE(substitute_sinfo(untouched, map, an).same_as(untouched));
}

TEST(StructInfoEqual, ExactStructure) {
  SymVar n("n");
  SymVar other_n("n");
  EXPECT_TRUE(struct_info_equal(tensor_sinfo({n, 4}, kSinfoF32), tensor_sinfo({n, 4}, kSinfoF32)));
  EXPECT_FALSE(struct_info_equal(tensor_sinfo({n}, kSinfoF32), tensor_sinfo({other_n}, kSinfoF32)));
  EXPECT_FALSE(struct_info_equal(tensor_sinfo({n * 4}, kSinfoF32), tensor_sinfo({4 * n}, kSinfoF32)));
  EXPECT_FALSE(struct_info_equal(tensor_sinfo({n}, kSinfoF32), tensor_sinfo_rank(1, kSinfoF32)));
  EXPECT_FALSE(
      struct_info_equal(func_sinfo({}, object_sinfo()), func_sinfo({}, object_sinfo(), false)));
  EXPECT_TRUE(
      struct_info_equal(opaque_func_sinfo(object_sinfo()), opaque_func_sinfo(object_sinfo())));
}

TEST(StructInfoVars, DefinedAndUsed) {
  SymVar n("n");
  SymVar m("m");
  SymVar k("k");
  StructInfo s = tuple_sinfo({tensor_sinfo({n, m * m}, kSinfoF32), prim_sinfo(DataType::int64(), k),
                              func_sinfo({tensor_sinfo({k}, kSinfoF32)}, tensor_sinfo({k}, kSinfoF32))});
  std::vector<SymVar> defined = defined_sym_vars(s);
  ASSERT_EQ(defined.size(), 2u);
  EXPECT_EQ(defined[0].id(), n.id());
  EXPECT_EQ(defined[1].id(), k.id());
  std::vector<SymVar> used = used_sym_vars(s);
  ASSERT_EQ(used.size(), 3u);  // n, m, k (the Func's own k is not a use)
  EXPECT_EQ(used[1].id(), m.id());
  StructInfo f = func_sinfo({tensor_sinfo({k}, kSinfoF32)}, tensor_sinfo({k + m}, kSinfoF32));
  ASSERT_EQ(used_sym_vars(f).size(), 1u);
  EXPECT_EQ(used_sym_vars(f)[0].id(), m.id());
}

}  // namespace
}  // namespace relax
