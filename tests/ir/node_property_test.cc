// Properties every node kind must keep, checked over a corpus that together
// holds every expression, statement and annotation kind (text_corpus.h):
//   - print -> parse and JSON write -> read give structurally equal modules;
//   - structurally equal modules and functions hash equal, also for copies whose
//     variables are all fresh and renamed;
//   - a copy with one constant changed, or one dim changed, is unequal (and
//     hashes differently: the changed field is both compared and hashed);
//   - identity ExprMutator and StmtMutator return the very same nodes.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir_fixtures.h"
#include "relax/ir/functor.h"
#include "relax/ir/json.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "text_corpus.h"

namespace relax {
namespace {

std::vector<std::pair<std::string, IRModule>> corpus() {
  std::vector<std::pair<std::string, IRModule>> out;
  for (const auto& [name, make] : text_corpus::all_modules()) out.emplace_back(name, make());
  return out;
}

// The kinds of every node reachable from a module, annotations included.
class KindCollector : public ExprVisitor {
 public:
  KindCollector() : ExprVisitor(/*visit_annotations=*/true) {}

  void visit_expr(const Expr& e) override {
    exprs.insert(e.kind());
    // Annotations of deduced nodes are not visited as annotations; collect them too.
    if (e.struct_info().defined()) visit_struct_info(e.struct_info());
    ExprVisitor::visit_expr(e);
  }
  void visit_struct_info(const StructInfo& s) override {
    sinfos.insert(s.kind());
    ExprVisitor::visit_struct_info(s);
  }
  void visit_prim_func(const Expr&, const PrimFuncNode& node) override {
    class Stmts : public StmtVisitor {
     public:
      explicit Stmts(std::set<StmtKind>& kinds) : kinds_(kinds) {}
      void visit_stmt(const Stmt& s) override {
        if (s.defined()) kinds_.insert(s.kind());
        StmtVisitor::visit_stmt(s);
      }

     private:
      std::set<StmtKind>& kinds_;
    };
    Stmts walker(stmts);
    walker.visit_prim_func(node);
  }

  std::set<ExprKind> exprs;
  std::set<StmtKind> stmts;
  std::set<StructInfoKind> sinfos;
};

TEST(NodeProperty, TheCorpusHoldsEveryNodeKind) {
  KindCollector kinds;
  for (const auto& [name, mod] : corpus()) kinds.visit_module(mod);
  for (int k = 0; k <= static_cast<int>(ExprKind::kPrimFunc); ++k) {
    EXPECT_TRUE(kinds.exprs.contains(static_cast<ExprKind>(k)))
        << expr_kind_name(static_cast<ExprKind>(k));
  }
  for (int k = 0; k <= static_cast<int>(StmtKind::kBlock); ++k) {
    EXPECT_TRUE(kinds.stmts.contains(static_cast<StmtKind>(k))) << "statement kind " << k;
  }
  for (int k = 0; k <= static_cast<int>(StructInfoKind::kFunc); ++k) {
    EXPECT_TRUE(kinds.sinfos.contains(static_cast<StructInfoKind>(k))) << "annotation kind " << k;
  }
}

// `a` and `b` are structurally equal and hash equal, as modules and function by function.
void expect_equal_and_same_hash(const IRModule& a, const IRModule& b, const std::string& what) {
  EXPECT_TRUE(structural_equal(a, b)) << what << ": " << first_difference(a, b).value_or("");
  EXPECT_EQ(structural_hash(a), structural_hash(b)) << what;
  for (const auto& [name, func] : a.functions()) {
    if (!b.contains(name)) continue;
    EXPECT_TRUE(structural_equal(func, b.lookup(name))) << what << " @" << name;
    EXPECT_EQ(structural_hash(func), structural_hash(b.lookup(name))) << what << " @" << name;
  }
}

TEST(NodeProperty, PrintParseGivesAnEqualModuleWithTheSameHash) {
  for (const auto& [name, mod] : corpus()) {
    absl::StatusOr<IRModule> back = parse_module(to_text(mod));
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    expect_equal_and_same_hash(mod, *back, name + " (text)");
  }
}

TEST(NodeProperty, JsonRoundTripGivesAnEqualModuleWithTheSameHash) {
  for (const auto& [name, mod] : corpus()) {
    absl::StatusOr<IRModule> back = from_json(to_json(mod));
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    expect_equal_and_same_hash(mod, *back, name + " (json)");
  }
}

TEST(NodeProperty, AlphaRenamedCopiesAreEqualWithTheSameHash) {
  for (const auto& [name, mod] : corpus()) {
    // Parsing gives fresh symbolic variables, buffers and loop variables; the
    // renamer then replaces every graph variable by one with another name.
    absl::StatusOr<IRModule> parsed = parse_module(to_text(mod));
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    fixtures::Renamer renamer(&*parsed);
    IRModule renamed = renamer.visit_module(*parsed);
    ASSERT_TRUE(renamer.status().ok()) << name << ": " << renamer.status();
    for (const auto& [fname, func] : mod.functions()) {
      if (func.kind() == ExprKind::kFunction && !func.as<FunctionNode>()->params.empty()) {
        EXPECT_FALSE(renamed.lookup(fname).same_as(parsed->lookup(fname))) << name << " @" << fname;
      }
    }
    expect_equal_and_same_hash(mod, renamed, name + " (renamed)");
  }
}

// ---------------------------------------------------------------------------
// Changed copies.

// The constant with data numbered `target` (from 0, in visiting order), one byte changed.
class ChangeOneConstant : public ExprMutator {
 public:
  ChangeOneConstant(const IRModule* mod, int target) : ExprMutator(mod), target_(target) {}
  Expr visit_constant(const Expr& e, const ConstantNode& node) override {
    if (node.data.nbytes() == 0 || seen_++ != target_) return e;
    changed = true;
    absl::StatusOr<runtime::Tensor> copy =
        runtime::Tensor::empty(node.data.shape(), node.data.dtype());
    RELAX_CHECK(copy.ok());
    std::memcpy(copy->data(), node.data.data(), copy->nbytes());
    static_cast<unsigned char*>(copy->data())[0] ^= 0x5a;
    return annotate(make_constant(*copy));
  }
  bool changed = false;

 private:
  int target_;
  int seen_ = 0;
};

// The last dim of the first parameter annotated with a known tensor shape, plus one.
class ChangeOneParamDim : public ExprMutator {
 public:
  using ExprMutator::ExprMutator;
  Var visit_var_def(const Var& v) override {
    const auto* t = v.struct_info().as<TensorStructInfoNode>();
    if (changed || t == nullptr || !t->shape || t->shape->empty()) return v;
    changed = true;
    std::vector<SymExpr> dims = *t->shape;
    dims.back() = dims.back() + 1;
    return Var(v.name_hint(), tensor_sinfo(std::move(dims), t->dtype, t->device));
  }
  bool changed = false;
};

// The extent of the first loop, plus one.
class ChangeOneLoopExtent : public StmtMutator {
 public:
  Stmt visit_for(const Stmt& s, const ForNode& node) override {
    if (changed) return StmtMutator::visit_for(s, node);
    changed = true;
    SymExpr extent = node.extent + SymExpr::int_imm(1, node.extent.dtype());
    return make_for(node.loop_var, node.min, extent, node.for_kind, node.body);
  }
  bool changed = false;
};

// `changed` differs from `mod` in one function: unequal, with a difference
// reported, and a different hash.
void expect_unequal(const IRModule& mod, const IRModule& changed, const std::string& what) {
  EXPECT_FALSE(structural_equal(mod, changed)) << what;
  EXPECT_TRUE(first_difference(mod, changed).has_value()) << what;
  EXPECT_NE(structural_hash(mod), structural_hash(changed)) << what;
}

TEST(NodeProperty, ACopyWithOneConstantChangedIsUnequal) {
  int tried = 0;
  for (const auto& [name, mod] : corpus()) {
    for (int target = 0;; ++target) {
      ChangeOneConstant mutator(&mod, target);
      IRModule changed = mutator.visit_module(mod);
      if (!mutator.changed) break;
      ++tried;
      expect_unequal(mod, changed, name + " (constant " + std::to_string(target) + ")");
    }
  }
  EXPECT_GE(tried, 10);  // constants of every printable dtype
}

TEST(NodeProperty, ACopyWithOneDimChangedIsUnequal) {
  int graph = 0;
  int loops = 0;
  for (const auto& [name, mod] : corpus()) {
    ChangeOneParamDim mutator(&mod);
    IRModule changed = mutator.visit_module(mod);
    if (mutator.changed) {
      ++graph;
      expect_unequal(mod, changed, name + " (parameter dim)");
    }
    for (const auto& [fname, func] : mod.functions()) {
      if (func.kind() != ExprKind::kPrimFunc) continue;
      ChangeOneLoopExtent loop_mutator;
      Expr kernel = loop_mutator.visit_prim_func(func);
      if (!loop_mutator.changed) continue;
      ++loops;
      IRModule with_kernel = mod;
      with_kernel.add(fname, kernel);
      expect_unequal(mod, with_kernel, name + " @" + fname + " (loop extent)");
      EXPECT_FALSE(structural_equal(func, kernel)) << name << " @" << fname;
      EXPECT_NE(structural_hash(func), structural_hash(kernel)) << name << " @" << fname;
    }
  }
  EXPECT_GE(graph, 5);
  EXPECT_GE(loops, 3);
}

TEST(NodeProperty, IdentityMutatorsReturnTheVerySameNodes) {
  for (const auto& [name, mod] : corpus()) {
    ExprMutator graph(&mod);
    for (const auto& [fname, func] : mod.functions()) {
      EXPECT_TRUE(graph.visit_expr(func).same_as(func)) << name << " @" << fname;
      if (func.kind() == ExprKind::kPrimFunc) {
        StmtMutator loops;
        EXPECT_TRUE(loops.visit_prim_func(func).same_as(func)) << name << " @" << fname;
      }
    }
    EXPECT_TRUE(graph.status().ok()) << name << ": " << graph.status();
    IRModule same = graph.visit_module(mod);
    for (const auto& [fname, func] : mod.functions()) {
      EXPECT_TRUE(same.lookup(fname).same_as(func)) << name << " @" << fname;
    }
  }
}

}  // namespace
}  // namespace relax
