// Patterns: every kind matching and not matching, constraints (dtype, rank,
// symbolic shapes proven and not provable, attributes), alternatives with
// backtracking, optional parts, captures, and the limits of looking through
// bindings (outputs, other blocks, impure calls).
#include "relax/transform/pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pattern_test_util.h"
#include "relax/shape/analyzer.h"

namespace relax {
namespace {

using namespace transform;  // NOLINT(google-build-using-namespace)
using pattern_testing::matched_bindings;
using pattern_testing::parse;
using pattern_testing::value_of;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A small layer: y = exp(x @ w^T + b) squared.
constexpr std::string_view kLayer = R"(
  module {
    func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32], b: Tensor[(8,), float32])
        -> Tensor[(n, 8), float32] {
      dataflow {
        t = permute_dims(w, axes=[1, 0])
        mm = matmul(x, t)
        s = add(mm, b)
        e = exp(s)
        output y = multiply(e, e)
      }
      return y
    }
  })";

Pattern any2(const std::string& op) { return is_op(op)({wildcard(), wildcard()}); }

TEST(Pattern, OpCallMatchesItsOpWithExactlyItsArity) {
  IRModule mod = parse(kLayer);
  EXPECT_THAT(matched_bindings(mod, any2("add")), ElementsAre("s"));
  EXPECT_THAT(matched_bindings(mod, any2("multiply")), ElementsAre("y"));
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard()})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, any2("subtract")), IsEmpty());
  // A wildcard callee: every call with one argument.
  EXPECT_THAT(matched_bindings(mod, wildcard()({wildcard()})), ElementsAre("t", "e"));
  // The Op itself is not a call.
  EXPECT_FALSE(match(is_op("exp"), value_of(mod, "e")).has_value());
  EXPECT_TRUE(match(is_op("exp"), value_of(mod, "e").as<CallNode>()->callee).has_value());
}

TEST(Pattern, LooksThroughDataflowBindingsAndCapturesWhatIsWritten) {
  IRModule mod = parse(kLayer);
  Pattern p = is_op("matmul")(
      {wildcard().capture("x"), is_op("permute_dims")({is_param().capture("w")}).capture("t")});
  std::vector<Match> matches = find_matches(mod.lookup("main"), p);
  ASSERT_EQ(matches.size(), 1u);
  const Match& m = matches[0];
  EXPECT_EQ(m.binding_var().name_hint(), "mm");
  EXPECT_TRUE(m.expr().same_as(value_of(mod, "mm")));
  // Captures are the expressions as written: variables, not their values.
  EXPECT_EQ(m["x"].as<VarNode>()->name_hint, "x");
  EXPECT_EQ(m["w"].as<VarNode>()->name_hint, "w");
  EXPECT_EQ(m["t"].as<VarNode>()->name_hint, "t");
  ASSERT_EQ(m.looked_through().size(), 1u);
  EXPECT_EQ(m.looked_through()[0].name_hint(), "t");
  // match() alone looks through nothing.
  EXPECT_FALSE(match(p, value_of(mod, "mm")).has_value());
  // A chain of three bindings.
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({is_op("add")({any2("matmul"), is_param()})})),
              ElementsAre("e"));
}

TEST(Pattern, VarAndParamPatterns) {
  IRModule mod = parse(kLayer);
  EXPECT_THAT(matched_bindings(mod, is_op("matmul")({is_var("x"), is_var("t")})),
              ElementsAre("mm"));
  EXPECT_THAT(matched_bindings(mod, is_op("matmul")({is_var("t"), wildcard()})), IsEmpty());
  // t is a DataflowVar, not a parameter; x and w are.
  EXPECT_THAT(matched_bindings(mod, is_op("matmul")({is_param(), is_param()})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_op("permute_dims")({is_param()})), ElementsAre("t"));
  EXPECT_THAT(matched_bindings(mod, is_op("multiply")({is_var(), is_var()})), ElementsAre("y"));
  // Outside a function nothing is a parameter.
  EXPECT_FALSE(match(is_op("permute_dims")({is_param()}), value_of(mod, "t")).has_value());
  EXPECT_TRUE(match(is_op("permute_dims")({is_var("w")}), value_of(mod, "t")).has_value());
  Expr x = mod.lookup("main").as<FunctionNode>()->params[0];
  EXPECT_TRUE(match(is_op("matmul")({is_expr(x), wildcard()}), value_of(mod, "mm")).has_value());
  EXPECT_FALSE(match(is_op("matmul")({wildcard(), is_expr(x)}), value_of(mod, "mm")).has_value());
}

TEST(Pattern, ConstantsWithAndWithoutPredicate) {
  IRModule mod = parse(R"(
    module {
      func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
        dataflow {
          k = const(float32, (4,), [1, 2, 3, 4])
          a = add(x, k)
          output b = add(a, const(float32, (4,), [-1, 0, 0, 0]))
        }
        return b
      }
    })");
  auto all_positive = [](const runtime::Tensor& t) {
    const float* data = t.data_as_or_die<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (!(data[i] > 0)) return false;
    }
    return true;
  };
  // The constant bound to k is looked through.
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard(), is_const()})), ElementsAre("a", "b"));
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard(), is_const(all_positive)})),
              ElementsAre("a"));
  EXPECT_THAT(matched_bindings(mod, is_op("add")({is_const(), wildcard()})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_const()), ElementsAre("k"));
}

TEST(Pattern, CallTirOfANamedPrimFunc) {
  IRModule mod = parse(R"(
    module {
      prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32],
                     C: Buffer[(n, 4), float32]) {
        for i in range(n) { for j in range(4) { C[i, j] = A[i, j] + B[i, j] } }
      }
      func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
        dataflow {
          e = exp(x)
          output y = call_tir(@add, (x, e), sinfo=Tensor[(n, 4), float32])
        }
        return y
      }
    })");
  EXPECT_THAT(matched_bindings(mod, is_call_tir("add")), ElementsAre("y"));
  EXPECT_THAT(matched_bindings(mod, is_call_tir("add", {{is_param(), is_op("exp")({is_param()})}})),
              ElementsAre("y"));
  EXPECT_THAT(matched_bindings(mod, is_call_tir("add", {{is_param(), is_param()}})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_call_tir("add", {{wildcard()}})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_call_tir("sub")), IsEmpty());
}

TEST(Pattern, TuplesAndTupleItems) {
  IRModule mod = parse(R"(
    module {
      func @main(x: Tensor[(4,), float32], n: Prim[int64]) -> Tensor[(4,), float32] {
        dataflow {
          t = (x, exp(x), n)
          a = t[1]
          output b = add(a, t[0])
        }
        return b
      }
    })");
  Pattern exp_item = is_tuple_get_item(is_tuple({is_param(), wildcard(), wildcard()}), 1);
  EXPECT_THAT(matched_bindings(mod, exp_item), ElementsAre("a"));
  EXPECT_THAT(matched_bindings(mod, is_tuple_get_item(wildcard(), 2)), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_tuple({wildcard(), wildcard()})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_tuple({wildcard(), is_op("exp")({wildcard()}),
                                              is_var().has_dtype(DataType::int64())})),
              ElementsAre("t"));
  // Through a: add(t[1], t[0]).
  EXPECT_THAT(matched_bindings(mod, is_op("add")({exp_item, is_tuple_get_item(wildcard(), 0)})),
              ElementsAre("b"));
}

TEST(Pattern, DtypeAndRankConstraints) {
  IRModule mod = parse(kLayer);
  const DataType f32 = DataType::float32();
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({wildcard().has_dtype(f32)})), ElementsAre("e"));
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({wildcard().has_dtype(DataType::float64())})),
              IsEmpty());
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard().has_rank(2), wildcard().has_rank(1)})),
              ElementsAre("s"));
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard(), wildcard().has_rank(2)})), IsEmpty());
  // On the matched call itself.
  EXPECT_THAT(matched_bindings(mod, wildcard()({wildcard()}).has_rank(2).has_dtype(f32)),
              ElementsAre("t", "e"));
}

TEST(Pattern, AttributeConstraints) {
  IRModule mod = parse(R"(
    module {
      func @main(w: Tensor[(8, 4), float32]) -> Tensor[(8, 4), float32] {
        dataflow {
          a = permute_dims(w, axes=[1, 0])
          b = permute_dims(a)
          output c = permute_dims(b, axes=[0, 1])
        }
        return c
      }
    })");
  Pattern p = is_op("permute_dims")({wildcard()});
  EXPECT_THAT(matched_bindings(mod, p.has_attr("axes", std::vector<int64_t>{1, 0})),
              ElementsAre("a"));
  EXPECT_THAT(matched_bindings(mod, p.has_attr("axes", std::vector<int64_t>{0, 1})),
              ElementsAre("c"));
  EXPECT_THAT(matched_bindings(mod, p.has_attr("axes", int64_t{1})), IsEmpty());
  EXPECT_THAT(matched_bindings(mod, p.lacks_attr("axes")), ElementsAre("b"));
  // An attribute constraint on an argument looks through to the call.
  EXPECT_THAT(
      matched_bindings(mod, is_op("permute_dims")({p.has_attr("axes", std::vector<int64_t>{1, 0})})),
      ElementsAre("b"));
  EXPECT_THAT(matched_bindings(mod, p.where([](const Expr& e) {
    return e.as<CallNode>()->args[0].as<VarNode>()->name_hint == "b";
  })),
              ElementsAre("c"));
}

// Tensors of shapes (a, c * 8), (a, b) and (a, a).
constexpr std::string_view kShapes = R"(
  module {
    func @main(x: Tensor[(a, c * 8), float32], y: Tensor[(a, b), float32],
               z: Tensor[(a, a), float32]) -> Tuple[(Tensor[(a, c * 8), float32],
               Tensor[(a, b), float32], Tensor[(a, a), float32])] {
      dataflow {
        p = exp(x)
        q = exp(y)
        r = exp(z)
        output o = (p, q, r)
      }
      return o
    }
  })";

TEST(Pattern, SymbolicShapeIsProvenWithTheAnalyzer) {
  IRModule mod = parse(kShapes);
  SymVar n("n");
  SymVar k("k");
  Pattern p = is_op("exp")({wildcard().has_shape({n, 4 * k})});
  // (a, c * 8) is (n, 4 * k) with k = 2 * c; (a, b) and (a, a) are not provably.
  std::vector<Match> matches = find_matches(mod.lookup("main"), p);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].binding_var().name_hint(), "p");
  const auto* x_sinfo =
      mod.lookup("main").as<FunctionNode>()->params[0].struct_info().as<TensorStructInfoNode>();
  const std::vector<SymExpr>& x_dims = *x_sinfo->shape;
  Analyzer analyzer;
  EXPECT_TRUE(analyzer.prove_equal(matches[0].sym(n), x_dims[0]));
  EXPECT_TRUE(analyzer.prove_equal(matches[0].sym(k) * 4, x_dims[1]));
  EXPECT_FALSE(matches[0].sym(SymVar("other")).defined());

  // (n, n): only the square tensor.
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({wildcard().has_shape({n, n})})),
              ElementsAre("r"));
  // A constant dim that the tensor's dims cannot be proven to equal.
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({wildcard().has_shape({n, 8})})), IsEmpty());
  // A variable that no dim determines (only in a product of two unknowns).
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({wildcard().has_shape({n, k * SymExpr(SymVar("j"))})})),
              IsEmpty());
  // The wrong rank.
  EXPECT_THAT(matched_bindings(mod, is_op("exp")({wildcard().has_shape({n})})), IsEmpty());
  // The same variable in two constraints must agree: (a, a) and (a, b).
  SymVar m("m");
  Pattern both = is_tuple({wildcard(), wildcard().has_shape({n, m}), wildcard().has_shape({n, m})});
  EXPECT_THAT(matched_bindings(mod, both), IsEmpty());
  Pattern rows = is_tuple({wildcard().has_shape({n, k}), wildcard().has_shape({n, m}),
                           wildcard().has_shape({n, n})});
  EXPECT_THAT(matched_bindings(mod, rows), ElementsAre("o"));
}

TEST(Pattern, AlternativesBacktrackIntoTheFirstChoice) {
  IRModule mod = parse(kLayer);
  EXPECT_THAT(matched_bindings(mod, (is_op("add") | is_op("multiply"))({wildcard(), wildcard()})),
              ElementsAre("s", "y"));
  EXPECT_THAT(matched_bindings(mod, any2("add") | any2("multiply")), ElementsAre("s", "y"));

  // (a, b) then (b, b): the first choice binds n = a, m = b and the second
  // field then fails (a == b is not provable); the second choice binds n = b.
  IRModule shapes = parse(R"(
    module {
      func @main(x: Tensor[(a, b), float32], y: Tensor[(b, b), float32])
          -> Tuple[(Tensor[(a, b), float32], Tensor[(b, b), float32])] {
        dataflow {
          output o = (x, y)
        }
        return o
      }
    })");
  SymVar n("n");
  SymVar m("m");
  Pattern first = wildcard().has_shape({n, m}).capture("first");
  Pattern second = wildcard().has_shape({m, n}).capture("second");
  Pattern p = is_tuple({first | second, wildcard().has_shape({n, n})});
  std::vector<Match> matches = find_matches(shapes.lookup("main"), p);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_FALSE(matches[0].has("first"));  // undone with its alternative
  EXPECT_TRUE(matches[0].has("second"));
  const auto* y_sinfo =
      shapes.lookup("main").as<FunctionNode>()->params[1].struct_info().as<TensorStructInfoNode>();
  EXPECT_TRUE(structural_equal(matches[0].sym(n), (*y_sinfo->shape)[0]));
  // Without the second choice there is no match.
  EXPECT_THAT(matched_bindings(shapes, is_tuple({first, wildcard().has_shape({n, n})})), IsEmpty());
}

TEST(Pattern, OptionalPartMatchesWithAndWithoutIt) {
  IRModule mod = parse(kLayer);
  Pattern linear = is_op("add")({any2("matmul").capture("mm"), wildcard().capture("bias")});
  // exp(add(...)) at e, add(...) alone at s.
  std::vector<Match> matches = find_matches(mod.lookup("main"), linear.optional("exp"));
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].binding_var().name_hint(), "s");
  EXPECT_EQ(matches[1].binding_var().name_hint(), "e");
  EXPECT_EQ(matches[1].looked_through().size(), 2u);  // s, mm
  EXPECT_EQ(matches[1]["bias"].as<VarNode>()->name_hint, "b");
  // A wrapper with more arguments.
  Pattern p = is_op("exp")({wildcard()}).optional([](const Pattern& inner) {
    return is_op("multiply")({inner, inner});
  });
  EXPECT_THAT(matched_bindings(mod, p), ElementsAre("e", "y"));
}

TEST(Pattern, ACaptureNamedTwiceMustBeTheSameNode) {
  IRModule mod = parse(kLayer);
  Pattern same = is_op("multiply")({wildcard().capture("v"), wildcard().capture("v")});
  std::vector<Match> matches = find_matches(mod.lookup("main"), same);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0]["v"].as<VarNode>()->name_hint, "e");
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard().capture("v"),
                                                  wildcard().capture("v")})),
              IsEmpty());
  EXPECT_THAT(matches[0].captures(), ::testing::SizeIs(1));
}

// m = multiply(x, one) with `one` a constant bound in the block, used by an add.
constexpr std::string_view kScaled = R"(
  module {
    func @main(x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
      dataflow {
        one = const(float32, (4,), [1, 1, 1, 1])
        m = multiply(x, one)
        a = add(m, x)
        output y = exp(a)
      }
      return y
    }
  })";

// The op a node is a call of ("" for anything else), for the nodes a predicate saw.
std::string callee_of(const Expr& e) {
  const auto* call = e.as<CallNode>();
  const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
  return op != nullptr ? op->name : std::string(e.as<VarNode>() != nullptr ? "<var>" : "");
}

TEST(Pattern, ACaptureGivesTheVariableAndTheCallItLookedThroughTo) {
  IRModule mod = parse(kScaled);
  Pattern p = is_op("add")(
      {is_op("multiply")({wildcard().capture("x"), is_const().capture("one")}).capture("m"), wildcard()});
  std::vector<Match> matches = find_matches(mod.lookup("main"), p);
  ASSERT_EQ(matches.size(), 1u);
  const Match& m = matches[0];
  // As written: the variables.
  EXPECT_EQ(m["m"].as<VarNode>()->name_hint, "m");
  EXPECT_EQ(m["one"].as<VarNode>()->name_hint, "one");
  // What the patterns matched: the call and the constant behind them.
  EXPECT_TRUE(m.matched("m").same_as(value_of(mod, "m")));
  ASSERT_NE(m.matched("m").as<CallNode>(), nullptr);
  EXPECT_NE(m.matched("one").as<ConstantNode>(), nullptr);
  // A wildcard looks through nothing: its matched node is the capture itself.
  EXPECT_TRUE(m.matched("x").same_as(m["x"]));
  // match() of the whole value: the call itself.
  std::optional<Match> whole = match(is_op("multiply")({wildcard(), wildcard()}).capture("c"), value_of(mod, "m"));
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->matched("c").same_as(value_of(mod, "m")));
}

TEST(Pattern, WhereRunsAfterItsStructureMatchedOnTheMatchedNode) {
  IRModule mod = parse(kScaled);
  std::vector<std::string> seen;
  auto record = [&seen](const Expr& e) {
    seen.push_back(callee_of(e));
    return true;
  };
  // Alone, over every binding: the predicate sees only the one multiply, never the const,
  // the add or the exp whose structure failed.
  EXPECT_THAT(matched_bindings(mod, any2("multiply").where(record)), ElementsAre("m"));
  EXPECT_THAT(seen, ElementsAre("multiply"));
  // Under an add, through the binding of m: the call, not the DataflowVar.
  seen.clear();
  EXPECT_THAT(matched_bindings(mod, is_op("add")({any2("multiply").where(record), wildcard()})),
              ElementsAre("a"));
  EXPECT_THAT(seen, ElementsAre("multiply"));
  // A structure that fails under the predicate (an exp where m's multiply is): never called.
  seen.clear();
  EXPECT_THAT(matched_bindings(mod, is_op("add")({is_op("exp")({wildcard()}).where(record), wildcard()})),
              IsEmpty());
  EXPECT_THAT(seen, IsEmpty());
  // The arguments are matched before it: a failing argument keeps it from running.
  seen.clear();
  EXPECT_THAT(matched_bindings(mod, is_op("multiply")({wildcard(), is_param()}).where(record)), IsEmpty());
  EXPECT_THAT(seen, IsEmpty());
  // On a wildcard, the expression as written.
  seen.clear();
  EXPECT_THAT(matched_bindings(mod, is_op("add")({wildcard().where(record), is_param()})), ElementsAre("a"));
  EXPECT_THAT(seen, ElementsAre("<var>"));
  // Around an alternative, the node of the branch that matched.
  seen.clear();
  EXPECT_THAT(matched_bindings(mod, is_op("add")({(any2("subtract") | any2("multiply")).where(record), wildcard()})),
              ElementsAre("a"));
  EXPECT_THAT(seen, ElementsAre("multiply"));
  // A predicate that refuses fails the match.
  EXPECT_THAT(matched_bindings(mod, any2("multiply").where([](const Expr&) { return false; })), IsEmpty());
}

TEST(Pattern, NeverLooksThroughOutputsOtherBlocksOrImpureCalls) {
  IRModule mod = parse(R"(
    module {
      extern_func @noisy = "noisy" : Func[(Tensor[(8, 4), float32]) -> Tensor[(8, 4), float32], impure]
      func @main(x: Tensor[(n, 4), float32], w: Tensor[(8, 4), float32])
          -> Tensor[(n, 8), float32] impure {
        dataflow {
          output t = permute_dims(w, axes=[1, 0])
          output a = matmul(x, t)
        }
        dataflow {
          b = matmul(x, t)
          output c = add(a, b)
        }
        u = @noisy(w)
        dataflow {
          v = permute_dims(u)
          output d = matmul(x, v)
        }
        return c
      }
    })");
  Pattern p = is_op("matmul")({wildcard(), is_op("permute_dims")({wildcard()})});
  // `t` leaves its block (an output): neither a nor b look through it.
  // `v` is a DataflowVar of d's block: looked through.
  EXPECT_THAT(matched_bindings(mod, p), ElementsAre("d"));
  // The impure call is never matched, and never looked through.
  Pattern any_unary = wildcard()({wildcard()});
  EXPECT_FALSE(match(any_unary, value_of(mod, "u")).has_value());
  EXPECT_TRUE(match(any_unary, value_of(mod, "t")).has_value());
  EXPECT_THAT(matched_bindings(mod, is_op("permute_dims")({any_unary})), IsEmpty());
  // Not even inside a dataflow block (which a well-formed module forbids).
  IRModule ill = parse(R"(
    module {
      extern_func @noisy = "noisy" : Func[(Tensor[(8, 4), float32]) -> Tensor[(8, 4), float32], impure]
      func @main(w: Tensor[(8, 4), float32]) -> Tensor[(4, 8), float32] impure {
        dataflow {
          u = @noisy(w)
          output v = permute_dims(u)
        }
        return v
      }
    })");
  EXPECT_THAT(matched_bindings(ill, any_unary), ElementsAre("v"));
  EXPECT_THAT(matched_bindings(ill, is_op("permute_dims")({any_unary})), IsEmpty());
  EXPECT_THAT(matched_bindings(ill, is_op("permute_dims")({wildcard()})), ElementsAre("v"));
}

}  // namespace
}  // namespace relax
