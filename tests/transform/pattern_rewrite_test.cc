// The pattern rewriter: text in, text out. Replacements, declines, optional
// parts (the larger match first), functions added by the callback, bindings
// that became dead, annotations kept current, errors, and the places it
// leaves alone (blocks that are not dataflow blocks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pattern_test_util.h"
#include "relax/ir/ops.h"
#include "relax/ir/testing.h"
#include "relax/ir/well_formed.h"
#include "relax/transform/pattern.h"

namespace relax {
namespace {

using namespace transform;  // NOLINT(google-build-using-namespace)
using pattern_testing::parse;
using ::testing::HasSubstr;

// matmul(x, permute_dims(w, axes=[1, 0])) with w a parameter.
Pattern transposed_weight_matmul() {
  return is_op("matmul")(
      {wildcard().capture("x"), is_op("permute_dims")({is_param().capture("w")})
                                    .has_attr("axes", std::vector<int64_t>{1, 0})});
}

Expr transpose(Expr e) { return op::permute_dims(std::move(e), std::vector<int64_t>{1, 0}); }

// The rewrite of transposed_weight_matmul's matches: x @ w^T == (w @ x^T)^T.
absl::StatusOr<Expr> weight_first(const Expr&, const Match& m) {
  return transpose(op::matmul(m["w"], transpose(m["x"])));
}

constexpr std::string_view kBefore = R"(
  module {
    func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
      dataflow {
        unused = exp(x)
        t = permute_dims(w, axes=[1, 0])
        mm = matmul(x, t)
        output y = exp(mm)
      }
      return y
    }
  })";

TEST(PatternRewrite, ReplacesTheMatchAndRemovesTheBindingsThatBecameDead) {
  IRModule before = parse(kBefore);
  int64_t rewrites = 0;
  absl::StatusOr<IRModule> after = rewrite(
      before, transposed_weight_matmul(),
      weight_first, &rewrites);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(rewrites, 1);
  // `t` became dead and is removed; `unused` was dead before and is left to dce.
  IRModule expected = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
        dataflow {
          unused = exp(x)
          mm = permute_dims(matmul(w, permute_dims(x, axes=[1, 0])), axes=[1, 0])
          output y = exp(mm)
        }
        return y
      }
    })");
  RELAX_EXPECT_STRUCTURAL_EQ(expected, *after);
  EXPECT_TRUE(well_formed(*after).ok()) << well_formed(*after);
}

TEST(PatternRewrite, AddsTheCallbacksKernelsToTheModule) {
  IRModule kernels = parse(R"(
    module {
      prim_func @k(A: Buffer[(n, k), float32], B: Buffer[(m, k), float32],
                   C: Buffer[(n, m), float32]) {
        for i in range(n) {
          for j in range(m) {
            C[i, j] = 0f32
            for r in range(k) { C[i, j] = C[i, j] + A[i, r] * B[j, r] }
          }
        }
      }
    })");
  Expr kernel = kernels.lookup("k");
  IRModule before = parse(kBefore);
  absl::StatusOr<IRModule> after =
      rewrite(before, transposed_weight_matmul(),
              [&](const Expr& matched, const Match& m) -> absl::StatusOr<Expr> {
                absl::StatusOr<Expr> gvar = m.add_function("matmul_nt", kernel);
                if (!gvar.ok()) return gvar.status();
                return op::call_tir(*gvar, {m["x"], m["w"]}, matched.struct_info());
              });
  ASSERT_TRUE(after.ok()) << after.status();
  IRModule expected = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
        dataflow {
          unused = exp(x)
          mm = call_tir(@matmul_nt, (x, w), sinfo=Tensor[(n, 8), float32])
          output y = exp(mm)
        }
        return y
      }
      prim_func @matmul_nt(A: Buffer[(n, k), float32], B: Buffer[(m, k), float32],
                           C: Buffer[(n, m), float32]) attrs {global_symbol = "matmul_nt"} {
        for i in range(n) {
          for j in range(m) {
            C[i, j] = 0f32
            for r in range(k) { C[i, j] = C[i, j] + A[i, r] * B[j, r] }
          }
        }
      }
    })");
  RELAX_EXPECT_STRUCTURAL_EQ(expected, *after);
  EXPECT_TRUE(well_formed(*after).ok()) << well_formed(*after);

  // Two matches share one kernel; a different function under a taken name gets a suffix.
  IRModule twice = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
        dataflow {
          a = matmul(x, permute_dims(w, axes=[1, 0]))
          b = matmul(exp(x), permute_dims(w, axes=[1, 0]))
          output y = add(a, b)
        }
        return y
      }
    })");
  absl::StatusOr<IRModule> shared =
      rewrite(twice, transposed_weight_matmul(),
              [&](const Expr& matched, const Match& m) -> absl::StatusOr<Expr> {
                absl::StatusOr<Expr> gvar = m.add_function("matmul_nt", kernel);
                if (!gvar.ok()) return gvar.status();
                return op::call_tir(*gvar, {m["x"], m["w"]}, matched.struct_info());
              });
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->functions().size(), 2u);
  EXPECT_TRUE(well_formed(*shared).ok()) << well_formed(*shared);
  IRModule named = parse(kBefore);
  named.add("matmul_nt", parse(R"(module { func @f() -> Shape[()] { return shape() } })").lookup("f"));
  absl::StatusOr<IRModule> suffixed =
      rewrite(named, transposed_weight_matmul(), [&](const Expr& matched, const Match& m) {
        Expr gvar = *m.add_function("matmul_nt", kernel);
        return op::call_tir(gvar, {m["x"], m["w"]}, matched.struct_info());
      });
  ASSERT_TRUE(suffixed.ok()) << suffixed.status();
  EXPECT_TRUE(suffixed->contains("matmul_nt_1"));
  EXPECT_TRUE(well_formed(*suffixed).ok()) << well_formed(*suffixed);
}

TEST(PatternRewrite, ADeclinedMatchLeavesTheFunctionUntouched) {
  IRModule before = parse(kBefore);
  int64_t rewrites = 0;
  int calls = 0;
  absl::StatusOr<IRModule> after = rewrite(
      before, transposed_weight_matmul(),
      [&](const Expr& matched, const Match&) {
        ++calls;
        return matched;
      },
      &rewrites);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(rewrites, 0);
  EXPECT_TRUE(after->lookup("main").same_as(before.lookup("main")));
}

// Whether `e` is a float32 constant of ones.
bool all_ones(const Expr& e) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || c->data.dtype() != DataType::float32()) return false;
  const float* data = c->data.data_as_or_die<float>();
  for (int64_t i = 0; i < c->data.numel(); ++i) {
    if (data[i] != 1.0f) return false;
  }
  return true;
}

constexpr std::string_view kTimesOne = R"(
  module {
    func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
      dataflow {
        one = const(float32, (4,), [1, 1, 1, 1])
        two = const(float32, (4,), [2, 2, 2, 2])
        m = multiply(x, one)
        d = multiply(x, two)
        a = add(m, d)
        output y = exp(a)
      }
      return y
    }
  })";

// A pass author's first rewrite: fold x * 1 where the 1 is a constant bound earlier in the
// block. The predicate sees the constant the pattern looked through to, not the variable
// `one` (which folded nothing before).
TEST(PatternRewrite, AFirstRewriteFoldsMultiplyByOneThroughABinding) {
  IRModule before = parse(kTimesOne);
  int64_t rewrites = 0;
  absl::StatusOr<IRModule> after = rewrite(
      before, is_op("multiply")({wildcard().capture("x"), is_const().where(all_ones)}),
      [](const Expr&, const Match& m) -> absl::StatusOr<Expr> { return m["x"]; }, &rewrites);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(rewrites, 1);
  RELAX_EXPECT_STRUCTURAL_EQ(parse(R"(
    module {
      func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
        dataflow {
          two = const(float32, (4,), [2, 2, 2, 2])
          m = x
          d = multiply(x, two)
          a = add(m, d)
          output y = exp(a)
        }
        return y
      }
    })"),
                             *after);
}

// The same fold written from the add's side: the callback reads the multiply behind the
// captured variable through Match::matched and rewrites add(x * 1, d) to add(x, d).
TEST(PatternRewrite, ACallbackReadsTheLookedThroughCallOfACapture) {
  IRModule before = parse(kTimesOne);
  int64_t rewrites = 0;
  absl::StatusOr<IRModule> after = rewrite(
      before,
      is_op("add")({is_op("multiply")({wildcard(), is_const().where(all_ones)}).capture("lhs"),
                    wildcard().capture("rhs")}),
      [](const Expr&, const Match& m) -> absl::StatusOr<Expr> {
        const auto* product = m.matched("lhs").as<CallNode>();
        if (product == nullptr) return absl::InternalError("the capture's call is not reachable");
        return op::add(product->args[0], m["rhs"]);
      },
      &rewrites);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(rewrites, 1);
  RELAX_EXPECT_STRUCTURAL_EQ(parse(R"(
    module {
      func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
        dataflow {
          two = const(float32, (4,), [2, 2, 2, 2])
          d = multiply(x, two)
          a = add(x, d)
          output y = exp(a)
        }
        return y
      }
    })"),
                             *after);
}

TEST(PatternRewrite, TheLargerMatchOfAnOptionalPartWins) {
  IRModule before = parse(R"(
    module {
      extern_func @linear = "linear" : Func[(Tensor[(n, 4), float32], Tensor[(8, 4), float32],
                                             Tensor[(8,), float32]) -> Tensor[(n, 8), float32]]
      extern_func @linear_exp = "linear_exp" : Func[(Tensor[(n, 4), float32],
          Tensor[(8, 4), float32], Tensor[(8,), float32]) -> Tensor[(n, 8), float32]]
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32], b: Tensor[(8,), float32])
          -> Tensor[(n, 8), float32] {
        dataflow {
          t = permute_dims(w, axes=[1, 0])
          mm = matmul(x, t)
          s = add(mm, b)
          e = exp(s)
          mm2 = matmul(x, t)
          s2 = add(mm2, b)
          output y = add(e, s2)
        }
        return y
      }
    })");
  Pattern linear = is_op("add")({transposed_weight_matmul(), is_param().capture("b")});
  int calls = 0;
  absl::StatusOr<IRModule> after =
      rewrite(before, linear.optional("exp"), [&](const Expr& matched, const Match& m) {
        ++calls;
        bool with_exp = matched.as<CallNode>()->callee.as<OpNode>()->name == "exp";
        Expr callee = before.global_var(with_exp ? "linear_exp" : "linear");
        return make_call(callee, {m["x"], m["w"], m["b"]});
      });
  ASSERT_TRUE(after.ok()) << after.status();
  // s, inside e's match, is not offered on its own; s2 is.
  EXPECT_EQ(calls, 2);
  IRModule expected = parse(R"(
    module {
      extern_func @linear = "linear" : Func[(Tensor[(n, 4), float32], Tensor[(8, 4), float32],
                                             Tensor[(8,), float32]) -> Tensor[(n, 8), float32]]
      extern_func @linear_exp = "linear_exp" : Func[(Tensor[(n, 4), float32],
          Tensor[(8, 4), float32], Tensor[(8,), float32]) -> Tensor[(n, 8), float32]]
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32], b: Tensor[(8,), float32])
          -> Tensor[(n, 8), float32] {
        dataflow {
          e = @linear_exp(x, w, b)
          s2 = @linear(x, w, b)
          output y = add(e, s2)
        }
        return y
      }
    })");
  RELAX_EXPECT_STRUCTURAL_EQ(expected, *after);
  EXPECT_TRUE(well_formed(*after).ok()) << well_formed(*after);
}

TEST(PatternRewrite, AnnotationsFollowAReplacementThatKnowsMore) {
  // The bindings were annotated with rank only; the replacement's annotation
  // is exact, so the binding gets a fresh variable and what uses it is
  // re-deduced; the return annotation was the body's and follows it.
  IRModule before = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[ndim=2, float32] {
        dataflow {
          t = permute_dims(w, axes=[1, 0])
          mm: Tensor[ndim=2, float32] = matmul(x, t)
          output y: Tensor[ndim=2, float32] = exp(mm)
        }
        return y
      }
    })");
  absl::StatusOr<IRModule> after =
      rewrite(before, transposed_weight_matmul(), weight_first);
  ASSERT_TRUE(after.ok()) << after.status();
  IRModule expected = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
        dataflow {
          mm: Tensor[(n, 8), float32] = permute_dims(matmul(w, permute_dims(x, axes=[1, 0])), axes=[1, 0])
          output y: Tensor[(n, 8), float32] = exp(mm)
        }
        return y
      }
    })");
  RELAX_EXPECT_STRUCTURAL_EQ(expected, *after);
  EXPECT_TRUE(well_formed(*after).ok()) << well_formed(*after);
}

TEST(PatternRewrite, ErrorsNameTheFunctionAndTheBinding) {
  IRModule before = parse(kBefore);
  absl::StatusOr<IRModule> failed =
      rewrite(before, transposed_weight_matmul(),
              [](const Expr&, const Match&) -> absl::StatusOr<Expr> {
                return absl::UnimplementedError("no kernel for this shape");
              });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(failed.status().message(), "@main: binding mm: no kernel for this shape");

  // A replacement whose annotation cannot be deduced: (8, 4) @ (8, 4).
  absl::StatusOr<IRModule> bad = rewrite(before, transposed_weight_matmul(),
                                         [](const Expr&, const Match& m) {
                                           return op::matmul(m["w"], m["w"]);
                                         });
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("@main: binding mm: the replacement: matmul"));

  absl::StatusOr<IRModule> undefined =
      rewrite(before, transposed_weight_matmul(), [](const Expr&, const Match&) { return Expr(); });
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(undefined.status().message(),
            "@main: binding mm: the rewrite callback returned an undefined Expr");

  // Outside a module there is nowhere to add a function.
  absl::StatusOr<Expr> lone =
      rewrite(before.lookup("main"), transposed_weight_matmul(),
              [](const Expr& matched, const Match& m) -> absl::StatusOr<Expr> {
                absl::StatusOr<Expr> gvar = m.add_function("k", matched);
                if (!gvar.ok()) return gvar.status();
                return matched;
              });
  ASSERT_FALSE(lone.ok());
  EXPECT_EQ(lone.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(lone.status().message(), HasSubstr("not part of a module rewrite"));
}

TEST(PatternRewrite, RewritesAFunctionAloneAndOnlyInsideDataflowBlocks) {
  IRModule before = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
        t = permute_dims(w, axes=[1, 0])
        a = matmul(x, t)
        dataflow {
          t2 = permute_dims(w, axes=[1, 0])
          output b = matmul(a, permute_dims(t2, axes=[1, 0]))
          output c = matmul(x, t2)
        }
        return c
      }
    })");
  int64_t rewrites = 0;
  absl::StatusOr<Expr> after = rewrite(
      before.lookup("main"), transposed_weight_matmul(),
      weight_first, &rewrites);
  ASSERT_TRUE(after.ok()) << after.status();
  // `a` is outside a dataflow block; b's weight is no parameter.
  EXPECT_EQ(rewrites, 1);
  IRModule expected = parse(R"(
    module {
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32]) -> Tensor[(n, 8), float32] {
        t = permute_dims(w, axes=[1, 0])
        a = matmul(x, t)
        dataflow {
          t2 = permute_dims(w, axes=[1, 0])
          output b = matmul(a, permute_dims(t2, axes=[1, 0]))
          output c = permute_dims(matmul(w, permute_dims(x, axes=[1, 0])), axes=[1, 0])
        }
        return c
      }
    })");
  RELAX_EXPECT_STRUCTURAL_EQ(expected.lookup("main"), *after);
}

}  // namespace
}  // namespace relax
