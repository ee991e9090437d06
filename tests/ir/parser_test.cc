// The IR text parser (relax/ir/parser.h): print -> parse round trips over a
// corpus covering every node kind, hand-written text, error messages with
// line:column, and inputs that must never crash it.
#include "relax/ir/parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <regex>

#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/ir/well_formed.h"
#include "text_corpus.h"

namespace relax {
namespace {

using namespace text_corpus;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;
using ::testing::StartsWith;

// print -> parse is structurally equal, and printing again gives the same text.
void expect_round_trip(const IRModule& mod) {
  const std::string text = to_text(mod);
  absl::StatusOr<IRModule> parsed = parse_module(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\nin:\n" << text;
  RELAX_EXPECT_STRUCTURAL_EQ(mod, *parsed);
  EXPECT_EQ(to_text(*parsed), text);
}

std::string error_of(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  if (mod.ok()) return "<parsed>";
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(mod.status().message());
}

// A module with one function f(x: Tensor[(n,), float32]) whose body is `body`
// (lines indented by four spaces; the body starts on line 3).
std::string in_function(const std::string& body) {
  return "module {\n  func @f(x: Tensor[(n,), float32]) -> Object {\n" + body + "\n  }\n}\n";
}

// ---------------------------------------------------------------------------
// Round trips.

TEST(ParserTest, RoundTripsTheDocumentedExample) { expect_round_trip(example_module()); }
TEST(ParserTest, RoundTripsConstantsAndLeaves) { expect_round_trip(constants_module()); }
TEST(ParserTest, RoundTripsCallsTuplesAttrsAndExternFunctions) { expect_round_trip(calls_module()); }
TEST(ParserTest, RoundTripsIfNestedFunctionsAndBlocks) { expect_round_trip(control_module()); }
TEST(ParserTest, RoundTripsCollidingAndUnusualNames) { expect_round_trip(names_module()); }
TEST(ParserTest, RoundTripsEveryStatementKind) { expect_round_trip(loops_module()); }
TEST(ParserTest, RoundTripsABuilderModule) { expect_round_trip(builder_module()); }

TEST(ParserTest, ParsedCorpusModulesAreWellFormed) {
  for (const auto& [name, make] : all_modules()) {
    IRModule mod = make();
    absl::StatusOr<IRModule> parsed = parse_module(to_text(mod));
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().message();
    EXPECT_EQ(well_formed_violations(*parsed).size(), well_formed_violations(mod).size()) << name;
    EXPECT_TRUE(well_formed(*parsed).ok()) << name << ": " << well_formed(*parsed).message();
  }
}

TEST(ParserTest, RoundTripsRandomFloatConstantsBitForBit) {
  std::mt19937 rng(7);
  std::vector<uint32_t> f32_bits;
  std::vector<uint64_t> f64_bits;
  std::vector<uint16_t> f16_bits;
  while (f32_bits.size() < 300) {
    uint32_t b = rng();
    if (!std::isnan(std::bit_cast<float>(b))) f32_bits.push_back(b);
  }
  while (f64_bits.size() < 300) {
    uint64_t b = (uint64_t{rng()} << 32) | rng();
    if (!std::isnan(std::bit_cast<double>(b))) f64_bits.push_back(b);
  }
  for (uint32_t b = 0; b < 0x10000; b += 7) {
    if ((b & 0x7c00) != 0x7c00 || (b & 0x3ff) == 0) f16_bits.push_back(static_cast<uint16_t>(b));
  }
  SymVar n("n");
  Var x("x", t32({n}));
  std::vector<Binding> b;
  auto add = [&](runtime::Tensor t) {
    Expr c = make_constant(t);
    b.push_back(bind(Var("c" + std::to_string(b.size()), c.struct_info()), c));
  };
  add(tensor_of<uint32_t>({static_cast<int64_t>(f32_bits.size())}, f32(), f32_bits));
  add(tensor_of<uint64_t>({static_cast<int64_t>(f64_bits.size())}, DataType::float64(), f64_bits));
  add(tensor_of<uint16_t>({static_cast<int64_t>(f16_bits.size())}, DataType::float16(), f16_bits));
  add(tensor_of<uint16_t>({static_cast<int64_t>(f16_bits.size())}, DataType::bfloat16(), f16_bits));
  IRModule mod;
  mod.add("f", function({x}, {plain(b)}, x));
  expect_round_trip(mod);
}

TEST(ParserTest, RoundTripsRandomDoubleAttributes) {
  std::mt19937_64 rng(11);
  Attrs attrs;
  for (int i = 0; i < 200; ++i) {
    double d = std::bit_cast<double>(rng());
    if (std::isnan(d)) continue;
    attrs["a" + std::to_string(i)] = d;
  }
  IRModule mod;
  mod.attrs() = attrs;
  expect_round_trip(mod);
}

// ---------------------------------------------------------------------------
// Hand-written text.

TEST(ParserTest, TheExampleOfThePrinterHeaderParses) {
  absl::StatusOr<IRModule> mod = parse_module(R"(
  module {
    prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32],
                   C: Buffer[(n, 4), float32]) {
      for i in range(n) parallel {
        for j in range(4) {
          block add(vi = spatial(n, i), vj = spatial(4, j)) {
            C[vi, vj] = A[vi, vj] + B[vi, vj]
          }
        }
      }
    }
    func @main(x: Tensor[(n, 4), float32], y: Tensor[(n, 4), float32])
        -> Tensor[ndim=2, float32] upper_bounds {n: 4096} {
      dataflow {
        lv: Tensor[(n, 4), float32] = call_tir(@add, (x, y), sinfo=Tensor[(n, 4), float32])
        output gv: Tensor[(n, 4), float32] = add(lv, x)
      }
      z: Tensor[(m, 4), float32] = match_cast(gv, Tensor[(m, 4), float32])
      return z
    }
    extern_func @gemm = "cblas_sgemm" : Func[opaque -> Object, impure]
  })");
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  IRModule expected = example_module();
  expected.add("gemm", make_extern_func("cblas_sgemm"));
  RELAX_EXPECT_STRUCTURAL_EQ(expected, *mod);
}

TEST(ParserTest, DeducesAnnotationsLeftOutAndLinksGlobals) {
  absl::StatusOr<IRModule> mod = parse_module(R"(
    // Functions may call functions defined later in the module.
    module {
      func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
        y = @double(x)
        z = add(y, x)
        return z
      }
      func @double(a: Tensor[(m, 4), float32]) -> Tensor[(m, 4), float32] {
        b = multiply(a,
                     a)   // arguments may span lines
        return b
      }
    })");
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  const auto* main = mod->lookup("main").as<FunctionNode>();
  ASSERT_NE(main, nullptr);
  const auto* seq = main->body.as<SeqExprNode>();
  ASSERT_EQ(seq->blocks.size(), 1u);
  const Binding& y = seq->blocks[0].bindings[0];
  EXPECT_EQ(y.var.struct_info().to_string(), "Tensor[(n, 4), float32]");
  const auto* call = y.value.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->callee.same_as(mod->global_var("double")));
  EXPECT_TRUE(y.value.struct_info().defined());
  EXPECT_EQ(seq->body.struct_info().to_string(), "Tensor[(n, 4), float32]");
}

TEST(ParserTest, KeepsALooserWrittenAnnotation) {
  absl::StatusOr<IRModule> mod = parse_module(in_function(
      "    y: Tensor[ndim=1, ?] = add(x, x)\n    return y"));
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  const auto* seq = mod->lookup("f").as<FunctionNode>()->body.as<SeqExprNode>();
  EXPECT_EQ(seq->blocks[0].bindings[0].var.struct_info().to_string(), "Tensor[ndim=1, ?]");
  EXPECT_EQ(seq->blocks[0].bindings[0].value.struct_info().to_string(), "Tensor[(n,), float32]");
}

TEST(ParserTest, AParameterMayUseAVariableThatALaterOneDefines) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  func @f(x: Tensor[(n * 2,), float32], y: Tensor[(n,), float32]) -> Object {
    return x
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  const auto* f = mod->lookup("f").as<FunctionNode>();
  const auto* x = f->params[0].struct_info().as<TensorStructInfoNode>();
  const auto* y = f->params[1].struct_info().as<TensorStructInfoNode>();
  EXPECT_TRUE((*x->shape)[0].operand(0).same_as((*y->shape)[0]));
}

TEST(ParserTest, ReadsLoopLevelShorthands) {
  absl::StatusOr<IRModule> mod = parse_module(R"(module {
  prim_func @k(A: Buffer[(n,), float32], s: int32) {
    for i in range(1, extent=n - 1) {
      A[i] = A[i - 1] + 1f32
    }
    seq {
      evaluate 0
    }
  }
  func @g(x: Tensor[(4,), float32]) -> Object {
    y = op("add")(x, x)
    return y
  }
})");
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  const auto* k = mod->lookup("k").as<PrimFuncNode>();
  const auto* seq = k->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  const auto* loop = seq->stmts[0].as<ForNode>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->min.to_string(), "1");
  EXPECT_EQ(loop->extent.to_string(), "n - 1");
  EXPECT_NE(seq->stmts[1].as<SeqStmtNode>(), nullptr);
  EXPECT_EQ(k->params[1].scalar->dtype(), DataType::int32());
}

TEST(ParserTest, TextsThatDifferOnlyInNamesAreStructurallyEqual) {
  // The way pass tests compare: parse the expected text, compare structurally.
  absl::StatusOr<IRModule> a = parse_module(R"(module {
  func @f(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      lv = add(x, x)
      output gv = multiply(lv, x)
    }
    return gv
  }
})");
  absl::StatusOr<IRModule> b = parse_module(R"(module {
  func @f(input: Tensor[(batch, 4), float32]) -> Tensor[(batch, 4), float32] {
    dataflow {
      t: Tensor[(batch, 4), float32] = add(input, input)
      output out: Tensor[(batch, 4), float32] = multiply(t, input)
    }
    return out
  }
})");
  absl::StatusOr<IRModule> c = parse_module(R"(module {
  func @f(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      lv = add(x, x)
      output gv = multiply(x, lv)
    }
    return gv
  }
})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  RELAX_EXPECT_STRUCTURAL_EQ(*a, *b);
  EXPECT_FALSE(structural_equal(*a, *c));
  EXPECT_THAT(first_difference(*a, *c).value_or(""), HasSubstr("@f.body.blocks[0].bindings[1]"));
}

TEST(ParserTest, PrintingParsedTextGivesTheCanonicalForm) {
  absl::StatusOr<IRModule> mod = parse_module(
      "module{func @f(x:Tensor[(n,),float32])->Tensor[(n,),float32]{y=add(x,x)\n"
      "return y}\nprim_func @k(A:Buffer[(8,),float32]){for i in range(8){A[i]=0f32}}}");
  ASSERT_TRUE(mod.ok()) << mod.status().message();
  EXPECT_EQ(to_text(*mod),
            "module {\n"
            "  func @f(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {\n"
            "    y: Tensor[(n,), float32] = add(x, x)\n"
            "    return y\n"
            "  }\n"
            "  prim_func @k(A: Buffer[(8,), float32]) {\n"
            "    for i in range(8) {\n"
            "      A[i] = 0f32\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(ParserTest, ABareNumberIsAPrimValueThatAdaptsToTheTensor) {
  auto parse_main = [](const std::string& x_dtype, const std::string& body) {
    return parse_module("module {\n  func @main(x: Tensor[(n,), " + x_dtype + "]) -> Object {\n" + body +
                        "\n  }\n}\n");
  };
  // `1.0` is the float64 constant the C++ builder makes of 1.0: prim(1f64).
  absl::StatusOr<IRModule> bare = parse_main("float32", "    y = multiply(x, 1.0)\n    return y");
  absl::StatusOr<IRModule> explicit_prim = parse_main("float32", "    y = multiply(x, prim(1f64))\n    return y");
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  ASSERT_TRUE(explicit_prim.ok()) << explicit_prim.status().message();
  RELAX_EXPECT_STRUCTURAL_EQ(*explicit_prim, *bare);
  // It adapts to the tensor's dtype: the product of a float16 x is float16.
  absl::StatusOr<IRModule> half = parse_main("float16", "    y: Tensor[(n,), float16] = multiply(x, -2.5e-1)\n    return y");
  ASSERT_TRUE(half.ok()) << half.status().message();
  EXPECT_THAT(to_text(*half), HasSubstr("multiply(x, prim(-0.25f64))"));
  // An integer is an int64 constant, which adapts too; a suffix gives its own dtype.
  absl::StatusOr<IRModule> ints = parse_main("float32", "    y = add(x, 2)\n    z = add(y, 0.5f32)\n    return z");
  ASSERT_TRUE(ints.ok()) << ints.status().message();
  EXPECT_THAT(to_text(*ints), HasSubstr("add(x, prim(2))"));
  EXPECT_THAT(to_text(*ints), HasSubstr("add(y, prim(0.5f32))"));
  // A suffixed float that disagrees with the tensor is the deduction's error, as for prim().
  EXPECT_THAT(error_of(in_function("    y = add(x, 0.5f16)\n    return y")), HasSubstr("dtypes differ"));
  // print -> parse holds: the printer writes prim(...).
  const std::string text = to_text(*bare);
  absl::StatusOr<IRModule> again = parse_module(text);
  ASSERT_TRUE(again.ok()) << again.status().message();
  RELAX_EXPECT_STRUCTURAL_EQ(*bare, *again);
  EXPECT_EQ(to_text(*again), text);
  // Alone in its operand: arithmetic on an unsuffixed float is refused where it starts.
  EXPECT_EQ(error_of(in_function("    y = multiply(x, 1.0 * n)\n    return y")),
            "3:25: expected ',' or ')' after the float literal `1.0` (arithmetic on literals is written "
            "`prim(...)` with suffixed floats: `prim(2.0f32 * n)`), found '*'");
  EXPECT_EQ(error_of(in_function("    y = multiply(x, 1e999)\n    return y")),
            "3:21: float literal 1e999 is not a finite float64 number");
}

TEST(ParserTest, BlockCommentsAreSkippedAnywhereBetweenTokens) {
  absl::StatusOr<IRModule> plain = parse_module(
      "module {\n  func @f(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {\n"
      "    z = prim(n * 2)\n    y = add(x, x)\n    return y\n  }\n}\n");
  absl::StatusOr<IRModule> commented = parse_module(
      "/* a module\n   over several lines */ module {\n"
      "  func @f(x: Tensor[(n /* rows */, 4), float32]) -> Tensor[(n, 4), float32] {\n"
      "    z = prim(n /* inside a scalar expression */ * 2)\n"
      "    y = add(/* lhs */ x, x) /* not nested: /* ends here */\n    return y // a line comment /* too\n  }\n}/**/\n");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE(commented.ok()) << commented.status().message();
  RELAX_EXPECT_STRUCTURAL_EQ(*plain, *commented);
  // Lines are still counted inside comments.
  EXPECT_EQ(error_of("/* one\ntwo */ module {\n  func @f() -> Object { return y }\n}"),
            "3:32: unknown variable or operator `y`");
  // An unterminated comment is an error at its `/*`, also inside a scalar expression.
  EXPECT_EQ(error_of("module {\n  /* never closed\n  func @f() -> Object {}\n}"),
            "2:3: unterminated comment: this `/*` has no closing `*/`");
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(n /* rows, 4), float32]) -> Object {}\n}"),
            "2:24: unterminated comment: this `/*` has no closing `*/`");
  // Nesting is not supported: the first `*/` closes the comment, and what follows is text.
  EXPECT_EQ(error_of("/* a /* b */ c */ module {}"), "1:14: expected `module`, found name `c`");
}

// ---------------------------------------------------------------------------
// Errors.

TEST(ParserTest, ReportsExpectedAndFoundWithLineAndColumn) {
  EXPECT_EQ(error_of(in_function("    y = add(x x)\n    return y")), "3:15: expected ')', found name `x`");
  EXPECT_EQ(error_of(""), "1:1: expected `module`, found end of input");
  EXPECT_EQ(error_of("module {\n  fn @f() -> Object {}\n}"),
            "2:3: expected `func`, `prim_func`, `extern_func` or '}', found name `fn`");
  EXPECT_EQ(error_of("module {\n}\nextra"), "3:1: expected end of input, found name `extra`");
  EXPECT_EQ(error_of("module { func @f() -> Object { return \"abc }\n}"), "1:39: unterminated string");
  EXPECT_EQ(error_of("module {\n  func @f() -> Tensor[(2,), flaot32] {\n"),
            "2:29: expected a dtype, found name `flaot32`");
}

TEST(ParserTest, ReportsUnknownNames) {
  EXPECT_EQ(error_of(in_function("    y = add(x, q)\n    return y")),
            "3:16: unknown variable or operator `q`");
  EXPECT_EQ(error_of(in_function("    y = op(\"nope\")(x)\n    return y")), "3:12: unknown operator `nope`");
  EXPECT_EQ(error_of(in_function("    y = @g(x)\n    return y")), "3:10: unknown function @g");
  EXPECT_EQ(error_of(in_function("    y: Tensor[(k,), float32] = add(x, x)\n    return y")),
            "3:16: unknown symbolic variable `k`");
  EXPECT_EQ(error_of(in_function("    y = shape(n, k + 1)\n    return y")),
            "3:18: unknown symbolic variable `k`");
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(n * n,), float32]) -> Object {\n    return x\n  }\n}"),
            "2:22: unknown symbolic variable `n` (no whole dim defines it and no dim can be solved "
            "for it)");
  // Found by fuzzing: a quoted empty name must not reach SymVar's constructor.
  EXPECT_EQ(error_of("module {\n  func @f(x: Tensor[(\"\",), float32]) -> Object {\n    return x\n  }\n}"),
            "2:22: a symbolic variable needs a name");
}

TEST(ParserTest, ReportsUnknownBuffers) {
  EXPECT_EQ(error_of("module {\n  prim_func @k(A: Buffer[(4,), float32]) {\n    B[0] = 1f32\n  }\n}"),
            "3:5: unknown buffer `B`");
  EXPECT_THAT(error_of("module {\n  prim_func @k(A: Buffer[(4,), float32]) {\n    A[0] = B[1]\n  }\n}"),
              StartsWith("3:12: unknown buffer `B`"));
}

TEST(ParserTest, ReportsDuplicateDefinitions) {
  EXPECT_EQ(error_of(in_function("    y = add(x, x)\n    y = add(y, y)\n    return y")),
            "4:5: duplicate definition of `y`");
  EXPECT_EQ(error_of(in_function("    x = add(x, x)\n    return x")), "3:5: duplicate definition of `x`");
  EXPECT_EQ(error_of("module {\n  extern_func @f : Func[opaque -> Object]\n"
                     "  extern_func @f : Func[opaque -> Object]\n}"),
            "3:16: duplicate function @f");
  EXPECT_EQ(error_of("module attrs {a = 1, a = 2} {\n}"), "1:22: duplicate attribute `a`");
  EXPECT_EQ(error_of("module {\n  prim_func @k(A: Buffer[(4,), float32], A: Buffer[(4,), float32]) {\n  }\n}"),
            "2:42: duplicate buffer `A`");
}

TEST(ParserTest, ReportsWrongArgumentCounts) {
  EXPECT_EQ(error_of(in_function("    y = add(x)\n    return y")), "3:12: `add` takes 2 arguments, found 1");
  EXPECT_EQ(error_of("module {\n  prim_func @k(A: Buffer[(4, 4), float32]) {\n    A[0] = 1f32\n  }\n}"),
            "3:5: a store to `A` has 1 indices, but the buffer has rank 2");
}

TEST(ParserTest, ReportsAnnotationsThatCannotHold) {
  EXPECT_THAT(error_of(in_function("    y: Tensor[(n, 4), float32] = add(x, x)\n    return y")),
              StartsWith("3:5: the annotation Tensor[(n, 4), float32] of `y` does not fit its value, "
                         "Tensor[(n,), float32]"));
  EXPECT_THAT(error_of(in_function("    y = match_cast(x, Tensor[(m, 2), float32])\n    return y")),
              StartsWith("3:9: match_cast: a value annotated Tensor[(n,), float32] can never match"));
  EXPECT_THAT(error_of("module {\n  func @f(x: Tensor[(n,), float32]) -> Shape[(n,)] {\n    return x\n  }\n}"),
              StartsWith("3:12: the function returns Tensor[(n,), float32], which does not fit its "
                         "return annotation Shape[(n,)]"));
}

TEST(ParserTest, ReportsDeductionErrorsAtTheBinding) {
  EXPECT_THAT(error_of(in_function("    y = matmul(x, shape(n))\n    return y")),
              StartsWith("3:9: the value of `y`: "));
}

TEST(ParserTest, ReportsErrorsInsideScalarExpressionsAtTheirPlace) {
  // `n +` is cut short where the dim ends, at the ','.
  EXPECT_THAT(error_of(in_function("    y = shape(n +, 4)\n    return y")), StartsWith("3:18: expected"));
  EXPECT_THAT(error_of("module {\n  prim_func @k(A: Buffer[(4,), float32]) {\n    A[0] = A[0] * 2\n  }\n}"),
              StartsWith("3:17: operands of * differ in dtype"));
}

TEST(ParserTest, ScopesDataflowVarsAndOutputs) {
  EXPECT_EQ(error_of(in_function("    dataflow {\n      lv = add(x, x)\n    }\n    return lv")),
            "6:12: unknown variable or operator `lv`");
  EXPECT_EQ(error_of(in_function("    output y = add(x, x)\n    return y")),
            "3:5: `output` marks a binding of a dataflow block, and this one is outside any");
  EXPECT_EQ(error_of(in_function("    y = if prim(true) {\n      a = add(x, x)\n      a\n    } else {\n"
                                 "      x\n    }\n    return a")),
            "9:12: unknown variable or operator `a`");
}

TEST(ParserTest, ReportsBadConstants) {
  EXPECT_EQ(error_of(in_function("    c = const(float32, (2,), [1])\n    return c")),
            "3:30: the constant's shape holds 2 elements, found 1");
  EXPECT_EQ(error_of(in_function("    c = const(uint8, (1,), [256])\n    return c")),
            "3:29: `256` is not a value of dtype uint8");
  EXPECT_EQ(error_of(in_function("    c = const(float16, (1,), bytes \"00\")\n    return c")),
            "3:36: a constant of 1 elements of float16 needs 2 bytes, found 1");
}

TEST(ParserTest, ReportsLoopLevelTypeErrors) {
  EXPECT_EQ(error_of("module {\n  prim_func @k(A: Buffer[(4,), float32]) {\n    A[0] = 1\n  }\n}"),
            "3:12: a store to `A` of dtype float32 is given `1` of dtype int64");
  EXPECT_EQ(error_of("module {\n  prim_func @k(A: Buffer[(4,), float32]) {\n    if 1 {\n    }\n  }\n}"),
            "3:8: a condition must be boolean, found `1`");
  EXPECT_EQ(error_of("module {\n  prim_func @k() {\n    for i: int32 in range(4) {\n    }\n  }\n}"),
            "3:27: the bounds of loop `i` must be int32, found `0i32` and `4`");
}

TEST(ParserTest, BoundsTheNestingDepth) {
  std::string deep = std::string(5000, '(') + "x" + std::string(5000, ')');
  EXPECT_THAT(error_of(in_function("    y = " + deep + "\n    return y")),
              HasSubstr("nesting deeper than 528 levels of brackets and blocks (trees may nest 256 "
                        "levels deep)"));
  std::string sinfo;
  for (int i = 0; i < 3000; ++i) sinfo += "Tuple[(";
  EXPECT_THAT(error_of("module {\n  func @f(x: " + sinfo + "\n}"), HasSubstr("nesting deeper than"));
  std::string ifs;
  for (int i = 0; i < 3000; ++i) ifs += "if true {\n";
  for (int i = 0; i < 3000; ++i) ifs += "}\n";
  EXPECT_THAT(error_of("module {\n  prim_func @k() {\n" + ifs + "}\n}"), HasSubstr("nesting deeper than"));
}

// ---------------------------------------------------------------------------
// Inputs that must never crash.

bool has_location(const std::string& message) {
  static const std::regex kLocation("^[0-9]+:[0-9]+: .+");
  return std::regex_search(message, kLocation);
}

TEST(ParserTest, EveryTruncationFailsCleanly) {
  const std::string text = to_text(loops_module()) + to_text(calls_module());
  for (size_t len = 0; len < text.size(); len += 3) {
    absl::StatusOr<IRModule> mod = parse_module(std::string_view(text).substr(0, len));
    if (!mod.ok()) {
      EXPECT_TRUE(has_location(std::string(mod.status().message()))) << mod.status();
    }
  }
}

TEST(ParserTest, RandomGarbageNeverCrashes) {
  std::vector<std::string> corpus;
  for (const auto& [name, make] : all_modules()) corpus.push_back(to_text(make()));
  const std::string pieces[] = {"(", ")", "[", "]", "{", "}", ",", ":", "=", "@", "->", "\"",
                                "x", "n", "Tensor", "func", "prim(", "const(", "1.5f32", "-",
                                "\n", "if", "for", "dataflow {", "output", "0", "99999999999999999999",
                                "\\", "\xff", "match_cast(", "Func[", "seq {", "A[", "cast<"};
  std::mt19937 rng(1234);
  int parsed_ok = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = corpus[rng() % corpus.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % (text.size() + 1);
      switch (rng() % 3) {
        case 0:  // delete a stretch
          text.erase(at, rng() % 12);
          break;
        case 1:  // insert a token
          text.insert(at, pieces[rng() % std::size(pieces)]);
          break;
        default:  // replace a byte
          if (at < text.size()) text[at] = static_cast<char>(rng() % 128);
      }
    }
    absl::StatusOr<IRModule> mod = parse_module(text);
    if (mod.ok()) {
      ++parsed_ok;
      // Whatever parses also prints and parses again.
      EXPECT_TRUE(parse_module(to_text(*mod)).ok()) << text;
    } else {
      EXPECT_TRUE(has_location(std::string(mod.status().message()))) << mod.status();
    }
  }
  EXPECT_LT(parsed_ok, 3000);
}

}  // namespace
}  // namespace relax
