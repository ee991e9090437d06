// The operator constructors as C++ users call them: numbers of every C++
// type as operands, braced lists for optional axes and conv lists, conv with
// a bias, flatten with start/end dims, and names the builder refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "relax/ir/builder.h"
#include "relax/ir/json.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"

namespace relax {
namespace {

using ::testing::HasSubstr;

const DataType kApiF32 = DataType::float32();

// The text of a Prim constant operand ("3", "0.5f64").
std::string operand_text(const op::Operand& o) {
  const auto* prim = o.expr().as<PrimValueNode>();
  if (prim == nullptr) return "<not a PrimValue>";
  return prim->value.to_string() + ":" + prim->value.dtype().to_string();
}

TEST(OpApiTest, OperandTakesEveryIntegralAndFloatingType) {
  const std::vector<int> v = {1, 2, 3};
  EXPECT_EQ(operand_text(v.size()), "3:int64");                          // size_t
  EXPECT_EQ(operand_text(3u), "3:int64");                                // unsigned
  EXPECT_EQ(operand_text(3ll), "3:int64");                               // long long
  EXPECT_EQ(operand_text(3ull), "3:int64");                              // unsigned long long
  EXPECT_EQ(operand_text(static_cast<short>(-3)), "-3:int64");           // short
  EXPECT_EQ(operand_text(static_cast<uint8_t>(200)), "200:int64");       // uint8_t (unsigned char)
  EXPECT_EQ(operand_text(int64_t{-7}), "-7:int64");
  EXPECT_EQ(operand_text(int32_t{-7}), "-7:int64");
  EXPECT_EQ(operand_text(std::numeric_limits<int64_t>::min()),
            std::to_string(std::numeric_limits<int64_t>::min()) + ":int64");
  EXPECT_THAT(operand_text(0.5f), HasSubstr(":float64"));
  EXPECT_THAT(operand_text(0.5L), HasSubstr(":float64"));
  // Above INT64_MAX an unsigned value is a float64, as numpy promotes uint64 with int64.
  EXPECT_THAT(operand_text(std::numeric_limits<uint64_t>::max()), HasSubstr(":float64"));
}

TEST(OpApiTest, BinaryOpsTakeSizesAndUnsignedNumbers) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({4}, DataType::int64()));
  const std::vector<float> v(5);
  Var a = f.emit(op::multiply(x, v.size()));
  Var b = f.emit(op::add(x, 2u));
  Var c = f.emit(op::subtract(x, 1ll));
  Var d = f.emit(op::maximum(x, static_cast<unsigned short>(1)));
  Var e = f.emit(op::multiply(v.size(), 2ul));  // two Prims give a Prim of known value
  f.ret(make_tuple({a, b, c, d, e}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(a.struct_info().to_string(), "Tensor[(4,), int64]");
  EXPECT_EQ(b.struct_info().to_string(), "Tensor[(4,), int64]");
  EXPECT_EQ(e.struct_info().to_string(), "Prim[int64, 10]");
}

TEST(OpApiTest, OptionalAxesTakeBracedLists) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  SymVar n("n");
  Var k = f.param("k", tensor_sinfo({n, 8}, kApiF32));
  Var e = f.param("e", tensor_sinfo({2, 3, 4}, kApiF32));
  Var kt = f.emit(op::permute_dims(k, {1, 0}));
  Var s = f.emit(op::sum(e, {-1}));
  Var m = f.emit(op::mean(e, {1, 2}, true));
  Var mx = f.emit(op::max(e, std::vector<int64_t>{0}));
  Var all = f.emit(op::prod(e));                  // absent: every axis
  Var none = f.emit(op::min(e, std::nullopt));    // nullopt: every axis
  std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{0, 2};
  Var opt = f.emit(op::variance(e, axes));        // a std::optional still works
  Var sq = f.emit(op::squeeze(f.emit(op::expand_dims(e, 0)), {0}));
  Var sl = f.emit(op::strided_slice(e, {2}, {0}, {4}, {2}));
  Var st = f.emit(op::std(e, std::vector<int64_t>{}));  // an empty list: no axis
  f.ret(make_tuple({kt, s, m, mx, all, none, opt, sq, sl, st}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(kt.struct_info().to_string(), "Tensor[(8, n), float32]");
  EXPECT_EQ(s.struct_info().to_string(), "Tensor[(2, 3), float32]");
  EXPECT_EQ(m.struct_info().to_string(), "Tensor[(2, 1, 1), float32]");
  EXPECT_EQ(mx.struct_info().to_string(), "Tensor[(3, 4), float32]");
  EXPECT_EQ(all.struct_info().to_string(), "Tensor[(), float32]");
  EXPECT_EQ(none.struct_info().to_string(), "Tensor[(), float32]");
  EXPECT_EQ(opt.struct_info().to_string(), "Tensor[(3,), float32]");
  EXPECT_EQ(sq.struct_info().to_string(), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(sl.struct_info().to_string(), "Tensor[(2, 3, 2), float32]");
  EXPECT_EQ(st.struct_info().to_string(), "Tensor[(2, 3, 4), float32]");
}

TEST(OpApiTest, ConvAndPoolListsTakeBracedLists) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({1, 3, 8, 8}, kApiF32));
  Var w = f.param("w", tensor_sinfo({4, 3, 3, 3}, kApiF32));
  Var c = f.emit(op::conv2d(x, w, {2, 2}, {1, 1}, {1, 1}));
  Var p = f.emit(op::adaptive_avg_pool2d(x, {2, 2}));
  f.ret(make_tuple({c, p}));
  ASSERT_TRUE(mb.build().ok());
  EXPECT_EQ(c.struct_info().to_string(), "Tensor[(1, 4, 4, 4), float32]");
  EXPECT_EQ(p.struct_info().to_string(), "Tensor[(1, 3, 2, 2), float32]");
}

TEST(OpApiTest, ConvTakesABias) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  SymVar n("n"), h("h"), o("o");
  Var x = f.param("x", tensor_sinfo({n, 3, h, 16}, kApiF32));
  Var w = f.param("w", tensor_sinfo({o, 3, 3, 3}, kApiF32));
  Var b = f.param("b", tensor_sinfo({o}, kApiF32));
  Var x1 = f.param("x1", tensor_sinfo({n, 4, 10}, kApiF32));
  Var w1 = f.param("w1", tensor_sinfo({6, 4, 3}, kApiF32));
  Var b1 = f.param("b1", tensor_sinfo({6}, kApiF32));
  Var wt = f.param("wt", tensor_sinfo({4, 2, 3}, kApiF32));
  Var bt = f.param("bt", tensor_sinfo({2}, kApiF32));
  Var c2 = f.emit(op::conv2d(x, w, b, {1, 1}, {1, 1}));
  Var c1 = f.emit(op::conv1d(x1, w1, b1, {2}));
  Var ct = f.emit(op::conv1d_transpose(x1, wt, bt, {2}));
  f.ret(make_tuple({c2, c1, ct}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(c2.struct_info().to_string(), "Tensor[(n, o, h, 16), float32]");
  EXPECT_EQ(c1.struct_info().to_string(), "Tensor[(n, 6, 4), float32]");
  EXPECT_EQ(ct.struct_info().to_string(), "Tensor[(n, 2, 21), float32]");
  // The bias is an argument of the call: the text shows it.
  EXPECT_THAT(to_text(*mod), HasSubstr("conv2d(x, w, b, padding=[1, 1])"));
}

TEST(OpApiTest, AWrongConvBiasNamesTheExpectedAndActualShape) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({1, 3, 8, 8}, kApiF32));
  Var w = f.param("w", tensor_sinfo({4, 3, 3, 3}, kApiF32));
  Var b5 = f.param("b5", tensor_sinfo({5}, kApiF32));
  Var b2 = f.param("b2", tensor_sinfo({4, 1}, kApiF32));
  Var bi = f.param("bi", tensor_sinfo({4}, DataType::int32()));
  f.emit(op::conv2d(x, w, b5));
  f.emit(op::conv2d(x, w, b2));
  f.emit(op::conv2d(x, w, bi));
  f.ret(x);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_FALSE(mod.ok());
  const std::string error(mod.status().message());
  EXPECT_THAT(error, HasSubstr("conv2d: argument 2 (bias): expected a tensor of shape (4,) (one "
                               "value per out channel), got Tensor[(5,), float32]"));
  EXPECT_THAT(error, HasSubstr("conv2d: argument 2 (bias): expected a tensor of rank 1 (O), got "
                               "Tensor[(4, 1), float32]"));
  EXPECT_THAT(error, HasSubstr("int32"));
}

TEST(OpApiTest, FlattenTakesStartAndEndDims) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  SymVar b("b"), n("n");
  Var x = f.param("x", tensor_sinfo({b, n, 4, 8}, kApiF32));
  Var r = f.param("r", tensor_sinfo_rank(4, kApiF32));
  Var all = f.emit(op::flatten(x));
  Var tail = f.emit(op::flatten(x, 1));
  Var mid = f.emit(op::flatten(x, 1, 2));
  Var neg = f.emit(op::flatten(x, -2, -1));
  Var one = f.emit(op::flatten(x, 2, 2));
  Var rank = f.emit(op::flatten(r, 1, 2));
  f.ret(make_tuple({all, tail, mid, neg, one, rank}));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(all.struct_info().to_string(), "Tensor[(b * n * 32,), float32]");
  EXPECT_EQ(tail.struct_info().to_string(), "Tensor[(b, n * 32), float32]");
  EXPECT_EQ(mid.struct_info().to_string(), "Tensor[(b, n * 4, 8), float32]");
  EXPECT_EQ(neg.struct_info().to_string(), "Tensor[(b, n, 32), float32]");
  EXPECT_EQ(one.struct_info().to_string(), "Tensor[(b, n, 4, 8), float32]");
  EXPECT_EQ(rank.struct_info().to_string(), "Tensor[ndim=3, float32]");
}

TEST(OpApiTest, FlattenDimsOutOfRangeAreErrors) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  Var x = f.param("x", tensor_sinfo({2, 3, 4}, kApiF32));
  f.emit(op::flatten(x, 3));
  f.emit(op::flatten(x, 0, -4));
  f.emit(op::flatten(x, 2, 1));
  f.ret(x);
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_FALSE(mod.ok());
  const std::string error(mod.status().message());
  EXPECT_THAT(error, HasSubstr("flatten: axis 3 is out of range for rank 3"));
  EXPECT_THAT(error, HasSubstr("flatten: axis -4 is out of range for rank 3"));
  EXPECT_THAT(error,
              HasSubstr("flatten: start_dim 2 (dim 2) comes after end_dim 1 (dim 1) for rank 3"));
}

TEST(OpApiTest, ConvBiasAndFlattenDimsRoundTripThroughTextAndJson) {
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  SymVar n("n");
  Var x = f.param("x", tensor_sinfo({n, 3, 8, 8}, kApiF32));
  Var w = f.param("w", tensor_sinfo({4, 3, 3, 3}, kApiF32));
  Var b = f.param("b", tensor_sinfo({4}, kApiF32));
  Var c = f.emit(op::conv2d(x, w, b, {1, 1}, {1, 1}));
  f.ret(f.emit(op::flatten(c, 1, -2)));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = to_text(*mod);
  EXPECT_THAT(text, HasSubstr("conv2d(x, w, b, padding=[1, 1])")) << text;
  EXPECT_THAT(text, HasSubstr("start_dim=1")) << text;
  EXPECT_THAT(text, HasSubstr("end_dim=-2")) << text;
  absl::StatusOr<IRModule> parsed = parse_module(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(structural_equal(*parsed, *mod)) << to_text(*parsed);
  absl::StatusOr<IRModule> read = from_json(to_json(*mod));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(structural_equal(*read, *mod)) << to_text(*read);
  EXPECT_THAT(to_text(*read), HasSubstr("Tensor[(n, 32, 8), float32]"));
}

TEST(OpApiTest, AnEmptyFunctionNameIsAnErrorOfTheCallThatGivesIt) {
  ModuleBuilder mb;
  const int line = __LINE__ + 1;
  FunctionBuilder f = mb.function("");
  Var x = f.param("x", tensor_sinfo({4}, kApiF32));
  EXPECT_FALSE(f.ret(x).defined());  // never added to the module
  mb.declare_function("", func_sinfo({tensor_sinfo({4}, kApiF32)}, tensor_sinfo({4}, kApiF32)));
  mb.add_extern_func("", "symbol");
  mb.add_extern_func("ext", "");
  ASSERT_EQ(mb.errors().size(), 4u);
  EXPECT_EQ(mb.errors()[0], std::string(__FILE__) + ":" + std::to_string(line) +
                                ": function: the function name is empty");
  EXPECT_THAT(mb.errors()[1], HasSubstr("declare_function: the function name is empty"));
  EXPECT_THAT(mb.errors()[2], HasSubstr("add_extern_func: the function name is empty"));
  EXPECT_THAT(mb.errors()[3], HasSubstr("add_extern_func(`ext`): the symbol is empty"));
  EXPECT_FALSE(mb.build().ok());
}

}  // namespace
}  // namespace relax
