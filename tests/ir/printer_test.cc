// The IR text printer (relax/ir/printer.h): the exact text of small modules,
// name disambiguation, every node kind's spelling, constants and attributes.
#include "relax/ir/printer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "text_corpus.h"

namespace relax {
namespace {

using namespace text_corpus;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;
using ::testing::Not;

// A module of one function `f(x: Tensor[(n,), float32])` whose body binds `values` in order.
IRModule one_function(const std::function<std::vector<Binding>(const Var& x)>& values,
                      bool dataflow_block = false) {
  SymVar n("n");
  Var x("x", t32({n}));
  std::vector<Binding> bindings = values(x);
  Expr result = bindings.empty() ? Expr(x) : Expr(bindings.back().var);
  IRModule mod;
  mod.add("f", function({x}, {BindingBlock{bindings, dataflow_block}}, result));
  return mod;
}

// The line of `text` that contains `needle` (trimmed), or "" when none does.
std::string line_with(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  while (text[begin] == ' ') ++begin;
  size_t end = text.find('\n', at);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

TEST(PrinterTest, PrintsTheDocumentedExampleExactly) {
  EXPECT_EQ(to_text(example_module()),
            "module {\n"
            "  prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32], "
            "C: Buffer[(n, 4), float32]) {\n"
            "    for i in range(n) parallel {\n"
            "      for j in range(4) {\n"
            "        block add(vi = spatial(n, i), vj = spatial(4, j)) {\n"
            "          C[vi, vj] = A[vi, vj] + B[vi, vj]\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "  func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32]) -> "
            "Tensor[ndim=2, float32] upper_bounds {n: 4096} {\n"
            "    dataflow {\n"
            "      lv: Tensor[(n, 4), float32] = call_tir(@add, (x, y), sinfo=Tensor[(n, 4), float32])\n"
            "      output gv: Tensor[(n, 4), float32] = add(lv, x)\n"
            "    }\n"
            "    z: Tensor[(m, 4), float32] = match_cast(gv, Tensor[(m, 4), float32])\n"
            "    return z\n"
            "  }\n"
            "}\n");
}

TEST(PrinterTest, PrintsAnEmptyModule) { EXPECT_EQ(to_text(IRModule()), "module {\n}\n"); }

TEST(PrinterTest, PrintsTheBuilderExample) {
  const std::string text = to_text(builder_module());
  EXPECT_THAT(text, HasSubstr("func @main(x: Tensor[(n, 4096), float32], w: Tensor[(4096, 4096), "
                              "float32]) -> Tensor[ndim=2, float32] upper_bounds {n: 4096} {"));
  EXPECT_THAT(text, HasSubstr("= match_cast("));
  EXPECT_THAT(text, HasSubstr("    return zm\n"));
}

TEST(PrinterTest, MakesVarNamesUniqueWithSuffixes) {
  const std::string text = to_text(names_module());
  // lv, lv (another Var), and a Var hinted lv_1: three distinct names.
  EXPECT_THAT(text, HasSubstr("    lv: Tensor[(n, n_1), float32] = add(x, x)\n"));
  EXPECT_THAT(text, HasSubstr("    lv_1: Tensor[(n, n_1), float32] = multiply(lv, lv)\n"));
  EXPECT_THAT(text, HasSubstr("    lv_1_1: Tensor[(n, n_1), float32] = add(lv_1, lv)\n"));
}

TEST(PrinterTest, MakesSymVarNamesUniqueAndPrintable) {
  const std::string text = to_text(names_module());
  EXPECT_THAT(text, HasSubstr("func @f(x: Tensor[(n, n_1), float32], w: Tensor[(my_dim,), float32])"));
}

TEST(PrinterTest, RenamesVarsThatLookLikeOpsOrKeywords) {
  const std::string text = to_text(names_module());
  EXPECT_THAT(text, HasSubstr("add_1: Tensor[(n, n_1), float32] = lv_1_1\n"));
  EXPECT_THAT(text, HasSubstr("if_1: Tensor[(n, n_1), float32] = add_1\n"));
  EXPECT_THAT(text, HasSubstr("a_b: Tensor[(n, n_1), float32] = if_1\n"));
  EXPECT_THAT(text, HasSubstr("v: Tensor[(n, n_1), float32] = a_b\n"));
  EXPECT_THAT(text, HasSubstr("return v\n"));
}

TEST(PrinterTest, MakesBufferAndLoopNamesUniqueInAKernel) {
  const std::string text = to_text(names_module());
  EXPECT_THAT(text, HasSubstr("prim_func @\"weird name\"(A: Buffer[(8,), float32], "
                              "A_1: Buffer[(8,), float32]) {"));
  EXPECT_THAT(text, HasSubstr("for i in range(8) {\n      A_1[i] = A[i]\n"));
  EXPECT_THAT(text, HasSubstr("for i_1 in range(8) {\n      let for_1 = i_1 + 1 {\n"
                              "        A[i_1] = cast<float32>(for_1)\n"));
}

TEST(PrinterTest, PrintsFloatConstantsExactlyAndShort) {
  const std::string text = to_text(constants_module());
  EXPECT_EQ(line_with(text, "c0:"),
            "c0: Tensor[(2, 2), float32, cpu] = const(float32, (2, 2), [1, -2.5, 0.1, 3.4028235e+38])");
  EXPECT_EQ(line_with(text, "c1:"),
            "c1: Tensor[(3,), float32, cpu] = const(float32, (3,), [inf, -inf, nan])");
  EXPECT_EQ(line_with(text, "c2:"), "c2: Tensor[(2,), float32, cpu] = const(float32, (2,), [-0, 1e-45])");
  EXPECT_EQ(line_with(text, "c3:"), "c3: Tensor[(), float64, cpu] = const(float64, (), [0.1])");
}

TEST(PrinterTest, PrintsIntegerBoolAndHalfConstants) {
  const std::string text = to_text(constants_module());
  EXPECT_THAT(line_with(text, "c4:"), HasSubstr("const(int32, (3,), [-2147483648, 0, 7])"));
  EXPECT_THAT(line_with(text, "c5:"), HasSubstr("const(int64, (2,), [-9223372036854775808, 42])"));
  EXPECT_THAT(line_with(text, "c6:"), HasSubstr("const(uint8, (2,), [0, 255])"));
  EXPECT_THAT(line_with(text, "c7:"), HasSubstr("const(uint64, (1,), [18446744073709551615])"));
  EXPECT_THAT(line_with(text, "c8:"), HasSubstr("const(bool, (2,), [true, false])"));
  // float16 1, the smallest subnormal, the largest finite; bfloat16 1 and -123.5.
  EXPECT_THAT(line_with(text, "c9:"), HasSubstr("const(float16, (3,), [1, 6e-08, 65504])"));
  EXPECT_THAT(line_with(text, "c10:"), HasSubstr("const(bfloat16, (2,), [1, -123.5])"));
}

TEST(PrinterTest, PrintsUnprintableConstantsAsBytes) {
  const std::string text = to_text(constants_module());
  // A NaN with a payload keeps its bits; empty is fine.
  EXPECT_THAT(line_with(text, "c11:"), HasSubstr("const(float32, (1,), bytes \"0100c07f\")"));
  EXPECT_THAT(line_with(text, "c12:"), HasSubstr("const(float32, (0, 3), [])"));
  EXPECT_THAT(line_with(text, "c13:"), HasSubstr("const(int16, (2,), [-1, 2])"));
}

TEST(PrinterTest, PrintsPrimValuesStringsAndShapes) {
  const std::string text = to_text(constants_module());
  EXPECT_EQ(line_with(text, "c14:"), "c14: Prim[int64, n + 1] = prim(n + 1)");
  EXPECT_EQ(line_with(text, "c15:"), "c15: Prim[float32, 1.5f32] = prim(1.5f32)");
  EXPECT_EQ(line_with(text, "c16:"), "c16: Prim[bool, true] = prim(true)");
  EXPECT_EQ(line_with(text, "c17:"),
            "c17: Object = \"text with \\\"quotes\\\", a \\\\ and a\\nnewline\"");
  EXPECT_EQ(line_with(text, "c18:"), "c18: Shape[(n, 4, n * 2)] = shape(n, 4, n * 2)");
  EXPECT_EQ(line_with(text, "c19:"), "c19: Shape[()] = shape()");
}

TEST(PrinterTest, PrintsTuplesAndTupleItems) {
  const std::string text = to_text(calls_module());
  EXPECT_EQ(line_with(text, "pair:"),
            "pair: Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] = (x, y)");
  EXPECT_EQ(line_with(text, "single:"), "single: Tuple[(Tensor[(n, 4), float32],)] = (x,)");
  EXPECT_EQ(line_with(text, "empty:"), "empty: Tuple[()] = ()");
  EXPECT_EQ(line_with(text, "first:"), "first: Tensor[(n, 4), float32] = pair[1]");
  EXPECT_EQ(line_with(text, "nested:"),
            "nested: Tuple[(Tensor[(n, 4), float32],)] = (single, pair)[0]");
}

TEST(PrinterTest, PrintsCallAttributesOfEveryKind) {
  const std::string text = to_text(calls_module());
  EXPECT_EQ(line_with(text, "perm:"), "perm: Tensor[(4, n), float32] = permute_dims(first, axes=[1, 0])");
  EXPECT_EQ(line_with(text, "rev:"), "rev: Tensor[(4, n), float32] = permute_dims(first)");
  EXPECT_EQ(line_with(text, "ext_call:"),
            "ext_call: Tensor[(4, n), float32] = @ext(x, big=1e+300, d=0.1, dt=bfloat16, "
            "flag=true, i=-3, inf=-inf, ints=[], s=\"a \\\"b\\\"\", \"sinfo\"=1, "
            "syms=sym[n, n + 1, 7], \"weird key\"=false, whole=2.0)");
}

TEST(PrinterTest, PrintsSinfoArgsAndExternFunctions) {
  const std::string text = to_text(calls_module());
  EXPECT_EQ(line_with(text, "lib:"),
            "lib: Tensor[(n, 4), float32] = call_dps_library(extern_func(\"my_lib\"), (x, y), "
            "sinfo=Tensor[(n, 4), float32])");
  EXPECT_EQ(line_with(text, "gemm:"),
            "gemm: Tensor[(n,), float32] = extern_func(\"raw\", Func[(Tensor[(n, 4), float32]) -> "
            "Tensor[(n,), float32]])(x)");
  EXPECT_THAT(text, HasSubstr("  extern_func @ext = \"cblas_sgemm\" : Func[(Tensor[(k, 4), float32]) "
                              "-> Tensor[(4, k), float32], impure]\n"));
  EXPECT_THAT(text, HasSubstr("  extern_func @opaque : Func[opaque -> Object, impure]\n"));
}

TEST(PrinterTest, PrintsOpsAsValues) {
  const std::string text = to_text(calls_module());
  EXPECT_THAT(line_with(text, "op_value:"), HasSubstr("= (add, call_tir)"));
}

TEST(PrinterTest, PrintsModuleAndFunctionAttributesAndPurity) {
  const std::string text = to_text(calls_module());
  EXPECT_THAT(text, HasSubstr("module attrs {target = \"llvm\", version = 3} {\n"));
  EXPECT_THAT(text, HasSubstr("impure attrs {global_symbol = \"main\"} {\n"));
}

TEST(PrinterTest, PrintsIfWithNestedBindingsAndResults) {
  const std::string text = to_text(control_module());
  EXPECT_THAT(text, HasSubstr("    r: Tensor[ndim=1, float32] = if c {\n"
                              "      a: Tensor[(n,), float32] = add(x, x)\n"
                              "      a\n"
                              "    } else {\n"
                              "      mv: Tensor[(m,), float32] = match_cast(x, Tensor[(m,), float32])\n"
                              "      b: Tensor[(m,), float32] = add(mv, mv)\n"
                              "      b\n"
                              "    }\n"));
}

TEST(PrinterTest, PrintsNestedFunctionsAndSeqValues) {
  const std::string text = to_text(control_module());
  EXPECT_THAT(text, HasSubstr("f: Func[(Tensor[(k,), float32]) -> Tensor[(k,), float32]] = "
                              "func(p: Tensor[(k,), float32]) -> Tensor[(k,), float32] {\n"
                              "        return p\n"
                              "      }\n"));
  EXPECT_THAT(text, HasSubstr("fx: Tensor[(n,), float32] = f(x)\n"));
  EXPECT_THAT(text, HasSubstr("s: Tensor[(n,), float32] = seq {\n      y\n    }\n"));
}

TEST(PrinterTest, PrintsBlocksThatWouldMergeExplicitly) {
  const std::string text = to_text(control_module());
  EXPECT_THAT(text, HasSubstr("    bindings {\n      f: "));
  EXPECT_THAT(text, HasSubstr("    dataflow {\n    }\n    bindings {\n    }\n    dataflow {\n"
                              "      d: Tensor[(n,), float32] = multiply(x, x)\n"
                              "      output e: Tensor[(n,), float32] = add(d, x)\n    }\n"));
}

TEST(PrinterTest, PrintsEveryStatementKind) {
  const std::string text = to_text(loops_module());
  EXPECT_THAT(text, HasSubstr(
      "  prim_func @kernel(A: Buffer[(n, k), float32, strides=(s0, 1)], Out: Buffer[(n,), float32], "
      "scale_n: int32) attrs {tag = \"reduce\"} {\n"
      "    seq {\n"
      "      for i in range(n) parallel {\n"
      "        for r in range(k) {\n"
      "          block sum(vi = spatial(n, i), vr = reduce(k, r)) {\n"
      "            init {\n"
      "              Out[vi] = 0f32\n"
      "            }\n"
      "            Out[vi] = Out[vi] + A[vi, vr]\n"
      "          }\n"
      "        }\n"
      "      }\n"
      "      alloc tmp: Buffer[(16,), float32, local] {\n"
      "        alloc ws: Buffer[(n,), int32, workspace] {\n"
      "          seq {\n"
      "            for j in range(16) vectorized {\n"
      "              tmp[j] = cast<float32>(j)\n"
      "            }\n"
      "            seq {\n"
      "              for u in range(2, extent=4) unrolled {\n"
      "                let t: float32 = tmp[u] * 2f32 {\n"
      "                  if t > 1f32 {\n"
      "                    tmp[u] = exp(t)\n"
      "                  } else {\n"
      "                    seq {\n"
      "                      evaluate t + t\n"
      "                    }\n"
      "                  }\n"
      "                }\n"
      "              }\n"
      "              for q: int32 in range(scale_n) {\n"
      "                if q < 3i32 {\n"
      "                  ws[cast<int64>(q)] = q\n"
      "                }\n"
      "              }\n"
      "            }\n"
      "          }\n"
      "        }\n"
      "      }\n"
      "      seq {\n"
      "      }\n"
      "    }\n"
      "  }\n"));
}

TEST(PrinterTest, PrintsASingletonSeqStmtExplicitly) {
  const std::string text = to_text(loops_module());
  EXPECT_THAT(text, HasSubstr("  prim_func @single(Z: Buffer[(4,), float32]) {\n"
                              "    for z in range(4) {\n"
                              "      seq {\n"
                              "        Z[z] = 0.5f32\n"
                              "      }\n"
                              "    }\n"
                              "  }\n"));
}

TEST(PrinterTest, AnnotationsMatchStructInfoToString) {
  // Without name collisions the printer's annotations are StructInfo::to_string exactly.
  SymVar n("n");
  std::vector<StructInfo> sinfos = {
      object_sinfo(),
      prim_sinfo(DataType::int64(), n + 1),
      prim_sinfo(DataType::float32()),
      shape_sinfo({n, 4}),
      shape_sinfo({n}),
      shape_sinfo_rank(2),
      shape_sinfo_rank(kUnknownNDim),
      tensor_sinfo({n, 4096}, DataType::float32()),
      tensor_sinfo({n}, std::nullopt),
      tensor_sinfo_rank(2, DataType::float16()),
      tensor_sinfo_rank(kUnknownNDim, std::nullopt, Device::cpu()),
      tensor_sinfo({n, 4}, DataType::float32(), Device::cuda(1)),
      tuple_sinfo({}),
      tuple_sinfo({object_sinfo()}),
      func_sinfo({tensor_sinfo({n}, DataType::float32())}, object_sinfo()),
      func_sinfo({}, object_sinfo(), false),
      opaque_func_sinfo(tuple_sinfo({})),
  };
  for (const StructInfo& s : sinfos) {
    Var x("x", s);
    IRModule mod;
    mod.add("f", function({x}, {}, x));
    EXPECT_THAT(to_text(mod), HasSubstr("func @f(x: " + s.to_string() + ") -> ")) << s.to_string();
  }
}

TEST(PrinterTest, ToTextOfExpressions) {
  SymVar n("n");
  Var x("x", t32({n}));
  Expr f = function({x}, {}, x);
  EXPECT_EQ(to_text(f), "func(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {\n  return x\n}");
  EXPECT_EQ(to_text(norm(make_tuple({x, make_prim_value(n)}))), "(x, prim(n))");
  EXPECT_EQ(to_text(make_op_or_die("matmul")), "matmul");
  EXPECT_EQ(to_text(Expr()), "<undefined>");
  EXPECT_THAT(to_text(add_kernel()), HasSubstr("prim_func(A: Buffer[(n, 4), float32], "));
}

TEST(PrinterTest, PrintsBrokenIrWithoutCrashing) {
  // Unnormalised values, a binding without a variable, an undefined body.
  SymVar n("n");
  Var x("x", t32({n}));
  Var unannotated("u", StructInfo());
  Expr call = make_call(make_op_or_die("add"), {x, x});
  Expr body = make_seq_expr({plain({bind(unannotated, call), Binding{}})}, Expr());
  Expr f = make_function({x}, body, object_sinfo());
  const std::string text = to_text(f);
  EXPECT_THAT(text, HasSubstr("u = add(x, x)"));
  EXPECT_THAT(text, HasSubstr("<undefined>"));
}

TEST(PrinterTest, DataflowVarsCarryNoMarker) {
  IRModule mod = one_function(
      [](const Var& x) {
        Expr v = op_call("add", {x, x});
        return std::vector<Binding>{bind(DataflowVar("lv", v.struct_info()), v),
                                    bind(Var("gv", v.struct_info()), v)};
      },
      /*dataflow_block=*/true);
  const std::string text = to_text(mod);
  EXPECT_THAT(text, HasSubstr("\n      lv: Tensor[(n,), float32] = add(x, x)\n"));
  EXPECT_THAT(text, HasSubstr("\n      output gv: Tensor[(n,), float32] = add(x, x)\n"));
  EXPECT_THAT(text, Not(HasSubstr("output lv")));
}

}  // namespace
}  // namespace relax

namespace relax {
namespace {

TEST(PrinterOptions, LongConstantsAreElidedOnRequest) {
  runtime::Tensor t = *runtime::Tensor::empty({2, 3}, DataType::float32());
  ModuleBuilder mb;
  FunctionBuilder f = mb.function("main");
  f.ret(make_constant(t));
  absl::StatusOr<IRModule> mod = mb.build();
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string full = to_text(*mod);
  EXPECT_NE(full.find("const(float32, (2, 3), ["), std::string::npos) << full;
  EXPECT_EQ(full.find("..."), std::string::npos) << full;
  EXPECT_EQ(to_text(*mod, {.max_constant_elements = 6}), full);
  EXPECT_NE(to_text(*mod, {.max_constant_elements = 5}).find("const(float32, (2, 3), ...)"),
            std::string::npos);
}

}  // namespace
}  // namespace relax
