// Modules nested to the limit of every reader (relax/support/limits.h) are
// read, printed, checked, compared, hashed, written and walked on a thread with
// a 1 MiB stack, and one level more is refused by both readers alike.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"
#include "relax/support/limits.h"
#include "../small_stack.h"

namespace relax {
namespace {

using testing_util::on_small_stack;

// `count` loops nested around `evaluate <sum>`, where the sum n + n + ... is a
// SymExpr of depth `sym_depth`: statements nest count + 1 deep.
std::string deep_prim_func(int count, int sym_depth) {
  std::string sum = "n";
  for (int i = 1; i < sym_depth; ++i) sum += " + n";
  std::string text = "  prim_func @k(n: int64) {\n";
  for (int i = 0; i < count; ++i) text += "for i" + std::to_string(i) + " in range(2) {\n";
  text += "evaluate " + sum + "\n";
  for (int i = 0; i < count; ++i) text += "}\n";
  return text + "  }\n";
}

// A function whose result is `x` in `count` nested 1-tuples: the function,
// its SeqExpr, the tuples and `x` nest count + 3 deep.
std::string deep_func(int count) {
  std::string value = "x";
  for (int i = 0; i < count; ++i) value = "(" + value + ",)";
  return "  func @main(x: Tensor[(4,), float32]) -> Object {\n    y = " + value +
         "\n    return y\n  }\n";
}

std::string deep_module(int loops, int sym_depth, int tuples) {
  return "module {\n" + deep_prim_func(loops, sym_depth) + deep_func(tuples) + "}\n";
}

class CountingVisitor : public ExprVisitor {
 public:
  void visit_expr(const Expr& e) override {
    ++count;
    ExprVisitor::visit_expr(e);
  }
  int count = 0;
};

class CountingStmtVisitor : public StmtVisitor {
 public:
  void visit_stmt(const Stmt& s) override {
    ++count;
    StmtVisitor::visit_stmt(s);
  }
  int count = 0;
};

TEST(DeepModuleTest, EveryWalkOfAModuleAtTheLimitFitsInOneMebibyteOfStack) {
  const int limit = kMaxNestingDepth;
  const std::string text = deep_module(limit - 1, limit, limit - 3);
  on_small_stack([&] {
    absl::StatusOr<IRModule> mod = parse_module(text);
    ASSERT_TRUE(mod.ok()) << mod.status();
    EXPECT_TRUE(well_formed(*mod).ok()) << well_formed(*mod);
    const std::string printed = to_text(*mod);
    absl::StatusOr<IRModule> again = parse_module(printed);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(structural_equal(*mod, *again));
    EXPECT_EQ(structural_hash(*mod), structural_hash(*again));
    absl::StatusOr<IRModule> from = from_json(to_json(*mod));
    ASSERT_TRUE(from.ok()) << from.status();
    EXPECT_FALSE(first_difference(*mod, *from).has_value());
    CountingVisitor visitor;
    visitor.visit_expr(mod->lookup("main"));
    EXPECT_GT(visitor.count, limit);
    CountingStmtVisitor stmts;
    stmts.visit_prim_func(*mod->lookup("k").as<PrimFuncNode>());
    EXPECT_EQ(stmts.count, limit);
    ExprMutator mutator(&*mod);
    IRModule same = mutator.visit_module(*mod);
    EXPECT_TRUE(structural_equal(*mod, same));
  });
}

TEST(DeepModuleTest, BothReadersRefuseOneLevelMore) {
  const int limit = kMaxNestingDepth;
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {deep_module(limit, limit, 1), "statements nest deeper than 256 levels"},
      {deep_module(1, limit + 1, 1), "nested deeper than 256 levels"},
      {deep_module(1, 1, limit - 2), "expressions nest deeper than 256 levels"},
  };
  for (const Case& c : cases) {
    on_small_stack([&] {
      absl::StatusOr<IRModule> mod = parse_module(c.text);
      ASSERT_FALSE(mod.ok());
      EXPECT_NE(mod.status().message().find(c.error), std::string_view::npos) << mod.status();
    });
  }
}

// A module at the limit made one level deeper with the constructors (which
// take any depth) is refused by both readers: its JSON and its text.
TEST(DeepModuleTest, TextAndJsonRefuseTheSameTrees) {
  const int limit = kMaxNestingDepth;
  absl::StatusOr<IRModule> at_limit = parse_module(deep_module(limit - 1, limit, 1));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  const auto* k = at_limit->lookup("k").as<PrimFuncNode>();
  SymVar n = *k->params[0].scalar;
  // One more loop around the body: statements nest limit + 1 deep.
  IRModule loops = *at_limit;
  loops.add("k", make_prim_func(
                     k->params,
                     make_for(SymVar("extra"), SymExpr::int_imm(0, DataType::int64()),
                              SymExpr::int_imm(2, DataType::int64()), ForKind::kSerial, k->body)));
  // A sum one term longer: a SymExpr of depth limit + 1.
  Stmt innermost = k->body;
  while (const auto* f = innermost.as<ForNode>()) innermost = f->body;
  SymExpr sum = innermost.as<EvaluateNode>()->value + n;
  IRModule sym = *at_limit;
  sym.add("k", make_prim_func(k->params, make_evaluate(sum)));
  for (const auto& [mod, error] : {std::pair{loops, std::string("statements nest deeper than 256")},
                                   std::pair{sym, std::string("deeper than 256 levels")}}) {
    absl::StatusOr<IRModule> from = from_json(to_json(mod));
    ASSERT_FALSE(from.ok());
    EXPECT_NE(from.status().message().find(error), std::string_view::npos) << from.status();
    absl::StatusOr<IRModule> parsed = parse_module(to_text(mod));
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find(error), std::string_view::npos) << parsed.status();
  }
}

}  // namespace
}  // namespace relax
