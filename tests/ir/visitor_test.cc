// ExprVisitor, ExprMutator, StmtVisitor and StmtMutator (relax/ir/visitor.h).
#include "relax/ir/visitor.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir_fixtures.h"
#include "relax/ir/structural_equal.h"

namespace relax {
namespace {

using namespace fixtures;  // NOLINT(google-build-using-namespace)

// fn(x: Tensor[(n, 4), f32]) {
//   dataflow { lv0 = add(x, x); lv1 = multiply(lv0, x); gv = add(lv1, lv1) }
//   return gv }
struct Sample {
  SymVar n{"n"};
  Var x{"x", tensor({n, 4})};
  Expr sum = op_call("add", {x, x});
  Var lv0 = dvar("lv0", sum);
  Expr prod = op_call("multiply", {lv0, x});
  Var lv1 = dvar("lv1", prod);
  Expr out = op_call("add", {lv1, lv1});
  Var gv = var("gv", out);
  Expr func = function({x}, {dataflow({bind(lv0, sum), bind(lv1, prod), bind(gv, out)})}, gv);

  const SeqExprNode& body(const Expr& f) const {
    return *f.as<FunctionNode>()->body.as<SeqExprNode>();
  }
};

std::string op_name(const CallNode& call) {
  const auto* op = call.callee.as<OpNode>();
  return op ? op->name : "?";
}

class CallNames : public ExprVisitor {
 public:
  void visit_call(const Expr& e, const CallNode& node) override {
    names.push_back(op_name(node));
    ExprVisitor::visit_call(e, node);
  }
  std::vector<std::string> names;
};

TEST(ExprVisitor, VisitsCallsInEvaluationOrder) {
  Sample s;
  CallNames v;
  v.visit_expr(s.func);
  EXPECT_EQ(v.names, (std::vector<std::string>{"add", "multiply", "add"}));
}

TEST(ExprVisitor, SeesDefinitionsAndUses) {
  class Vars : public ExprVisitor {
   public:
    void visit_var_def(const Var& v) override { defs.push_back(v.name_hint()); }
    void visit_var(const Var& v) override { uses.push_back(v.name_hint()); }
    std::vector<std::string> defs, uses;
  };
  Sample s;
  Vars v;
  v.visit_expr(s.func);
  EXPECT_EQ(v.defs, (std::vector<std::string>{"x", "lv0", "lv1", "gv"}));
  EXPECT_EQ(v.uses, (std::vector<std::string>{"x", "x", "lv0", "x", "lv1", "lv1", "gv"}));
}

class SymCollector : public ExprVisitor {
 public:
  explicit SymCollector(bool annotations) : ExprVisitor(annotations) {}
  void visit_sym_expr(const SymExpr& e) override { seen.push_back(e.to_string()); }
  std::vector<std::string> seen;
};

TEST(ExprVisitor, VisitsAnnotationDimsOnlyWhenAsked) {
  SymVar n("n");
  Var x("x", tensor({n, 4}));
  Expr shape = make_shape_expr({n * 2});
  Var s = var("s", shape);
  Expr f = function({x}, {plain({bind(s, shape)})}, s);
  SymCollector without(false);
  without.visit_expr(f);
  EXPECT_EQ(without.seen, (std::vector<std::string>{"n * 2"}));
  SymCollector with(true);
  with.visit_expr(f);
  // x's annotation, the ShapeExpr, s's annotation, the return annotation.
  EXPECT_EQ(with.seen, (std::vector<std::string>{"n", "4", "n * 2", "n * 2", "n * 2"}));
}

TEST(ExprVisitor, VisitModuleReachesEveryFunction) {
  class Kinds : public ExprVisitor {
   public:
    void visit_function(const Expr& e, const FunctionNode& node) override {
      ++functions;
      ExprVisitor::visit_function(e, node);
    }
    void visit_prim_func(const Expr&, const PrimFuncNode&) override { ++prim_funcs; }
    int functions = 0, prim_funcs = 0;
  };
  IRModule mod;
  mod.add("main", Sample().func);
  mod.add("kernel", fill_kernel());
  Kinds v;
  v.visit_module(mod);
  EXPECT_EQ(v.functions, 1);
  EXPECT_EQ(v.prim_funcs, 1);
}

TEST(ExprMutator, ReturnsTheSameNodeWhenNothingChanges) {
  Sample s;
  ExprMutator m;
  EXPECT_TRUE(m.visit_expr(s.func).same_as(s.func));
  IRModule mod;
  mod.add("main", s.func);
  mod.add("kernel", fill_kernel());
  IRModule out = m.visit_module(mod);
  EXPECT_TRUE(out.lookup("main").same_as(mod.lookup("main")));
  EXPECT_TRUE(out.lookup("kernel").same_as(mod.lookup("kernel")));
  EXPECT_TRUE(m.status().ok());
}

// Rewrites every `multiply` into `add` of the same arguments.
class MultiplyToAdd : public ExprMutator {
 public:
  Expr visit_call(const Expr& e, const CallNode& node) override {
    Expr rewritten = ExprMutator::visit_call(e, node);
    const auto* call_node = rewritten.as<CallNode>();
    if (op_name(*call_node) != "multiply") return rewritten;
    return annotate(make_call(make_op_or_die("add"), call_node->args));
  }
};

// A mutator that redirects a variable it made for a moment (lower-alloc turns a binding's
// DataflowVar into a Var this way) must not redirect the next variable that the allocator places
// at the same address: the remap holds its key alive. Before, a remap of a freed temporary sent a
// later constant's uses to an unrelated tensor (Silero VAD's LSTM weight read a spectrogram).
class RemapProbe : public ExprMutator {
 public:
  using ExprMutator::set_var_remap;
};

TEST(ExprMutator, ARemapKeepsItsTemporaryKeyFromBeingReused) {
  RemapProbe m;
  Var target("target", tensor({4}));
  for (int i = 0; i < 64; ++i) {
    {
      Var temporary("temporary", tensor({4}));
      m.set_var_remap(temporary, target);
    }
    Var fresh("fresh", tensor({4}));
    EXPECT_TRUE(m.visit_var(fresh).same_as(fresh)) << "iteration " << i;
  }
}

TEST(ExprMutator, RebuildsOnlyThePathToTheChange) {
  Sample s;
  MultiplyToAdd m;
  Expr out = m.visit_expr(s.func);
  ASSERT_FALSE(out.same_as(s.func));
  const auto& bindings = s.body(out).blocks[0].bindings;
  EXPECT_TRUE(bindings[0].value.same_as(s.sum));    // untouched before the change
  EXPECT_FALSE(bindings[1].value.same_as(s.prod));  // the change
  EXPECT_EQ(op_name(*bindings[1].value.as<CallNode>()), "add");
  EXPECT_TRUE(bindings[2].value.same_as(s.out));  // its inputs kept their variables
  // The annotation did not change, so the variables are kept.
  EXPECT_TRUE(bindings[1].var.same_as(s.lv1));
  EXPECT_TRUE(out.as<FunctionNode>()->params[0].same_as(s.x));
}

// Rewrites `add(x, x)` of a rank-2 tensor into `permute_dims(x)`.
class AddToTranspose : public ExprMutator {
 public:
  Expr visit_call(const Expr& e, const CallNode& node) override {
    Expr rewritten = ExprMutator::visit_call(e, node);
    const auto* c = rewritten.as<CallNode>();
    if (op_name(*c) != "add" || !c->args[0].same_as(c->args[1])) return rewritten;
    if (c->args[0].as<VarNode>() == nullptr || c->args[0].as<VarNode>()->name_hint != "x") {
      return rewritten;
    }
    return annotate(make_call(make_op_or_die("permute_dims"), {c->args[0]}));
  }
};

TEST(ExprMutator, RenormalisesWhenAnAnnotationChanges) {
  SymVar n("n");
  Var x("x", tensor({n, 4}));
  Expr sum = op_call("add", {x, x});
  Var lv0 = dvar("lv0", sum);
  Expr prod = op_call("multiply", {lv0, lv0});
  Var gv = var("gv", prod);
  Expr f = function({x}, {dataflow({bind(lv0, sum), bind(gv, prod)})}, gv);

  AddToTranspose m;
  Expr out = m.visit_expr(f);
  ASSERT_TRUE(m.status().ok()) << m.status();
  const auto* fn = out.as<FunctionNode>();
  const auto& bindings = fn->body.as<SeqExprNode>()->blocks[0].bindings;
  // lv0 is now Tensor[(4, n)]: a fresh variable, and every later use follows it.
  EXPECT_FALSE(bindings[0].var.same_as(lv0));
  EXPECT_TRUE(bindings[0].var.is_dataflow());
  EXPECT_EQ(bindings[0].var.struct_info().to_string(), "Tensor[(4, n), float32]");
  EXPECT_TRUE(bindings[1].value.as<CallNode>()->args[0].same_as(bindings[0].var));
  EXPECT_EQ(bindings[1].var.struct_info().to_string(), "Tensor[(4, n), float32]");
  EXPECT_TRUE(fn->body.as<SeqExprNode>()->body.same_as(bindings[1].var));
  EXPECT_EQ(fn->body.struct_info().to_string(), "Tensor[(4, n), float32]");
  EXPECT_EQ(fn->ret.to_string(), "Tensor[(4, n), float32]");
}

TEST(ExprMutator, KeepsADeclaredCoarserReturnAnnotation) {
  SymVar n("n");
  Var x("x", tensor({n, 4}));
  Expr sum = op_call("add", {x, x});
  Var gv = var("gv", sum);
  Expr body = norm(make_seq_expr({plain({bind(gv, sum)})}, gv));
  Expr f = make_function({x}, body, tensor_sinfo_rank(2, f32()));
  AddToTranspose m;
  Expr out = m.visit_expr(f);
  EXPECT_EQ(out.as<FunctionNode>()->ret.to_string(), "Tensor[ndim=2, float32]");
}

TEST(ExprMutator, UsesAnOverriddenRenormalize) {
  class Counting : public MultiplyToAdd {
   public:
    StructInfo renormalize(const Expr& rebuilt) override {
      kinds.push_back(std::string(expr_kind_name(rebuilt.kind())));
      return MultiplyToAdd::renormalize(rebuilt);
    }
    std::vector<std::string> kinds;
  };
  Sample s;
  Counting m;
  m.visit_expr(s.func);
  // The new call, then the enclosing SeqExpr and Function.
  EXPECT_EQ(m.kinds, (std::vector<std::string>{"Call", "SeqExpr", "Function"}));
}

TEST(ExprMutator, EmitsExtraBindingsIntoTheCurrentBlock) {
  // Splits `gv = add(lv1, lv1)` into `tmp = multiply(lv1, lv1); gv = add(tmp, tmp)`.
  class Split : public ExprMutator {
   public:
    void visit_binding(const Binding& b) override {
      const auto* c = b.value.as<CallNode>();
      if (b.var.name_hint() != "gv" || c == nullptr) return ExprMutator::visit_binding(b);
      Expr arg = visit_expr(c->args[0]);
      Var tmp = emit(make_call(make_op_or_die("multiply"), {arg, arg}));
      dataflow_seen = in_dataflow_block();
      // An output of the block: a plain Var, bound with emit_binding.
      Expr value = annotate(make_call(make_op_or_die("add"), {tmp, tmp}));
      Var gv("gv2", value.struct_info());
      emit_binding({gv, value, false, StructInfo()});
      set_var_remap(b.var, gv);
    }
    bool dataflow_seen = false;
  };
  Sample s;
  Split m;
  Expr out = m.visit_expr(s.func);
  ASSERT_TRUE(m.status().ok()) << m.status();
  EXPECT_TRUE(m.dataflow_seen);
  const SeqExprNode& body = s.body(out);
  ASSERT_EQ(body.blocks[0].bindings.size(), 4u);
  const Binding& tmp = body.blocks[0].bindings[2];
  EXPECT_EQ(tmp.var.name_hint(), "lv0");
  EXPECT_TRUE(tmp.var.is_dataflow());
  EXPECT_EQ(tmp.var.struct_info().to_string(), "Tensor[(n, 4), float32]");
  EXPECT_EQ(body.blocks[0].bindings[3].var.name_hint(), "gv2");
  EXPECT_FALSE(body.blocks[0].bindings[3].var.is_dataflow());
  EXPECT_TRUE(body.body.same_as(body.blocks[0].bindings[3].var));
}

TEST(ExprMutator, DropsBindingsAndEmptiedBlocks) {
  class DropShapes : public ExprMutator {
   public:
    void visit_binding(const Binding& b) override {
      if (b.value.as<ShapeExprNode>() == nullptr) ExprMutator::visit_binding(b);
    }
  };
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr shape = make_shape_expr({n});
  Var unused = var("unused", shape);
  Expr f = function({x}, {plain({bind(unused, shape)})}, x);
  DropShapes m;
  Expr out = m.visit_expr(f);
  EXPECT_TRUE(out.as<FunctionNode>()->body.as<SeqExprNode>()->blocks.empty());
  EXPECT_TRUE(structural_equal(out, function({x}, {}, x)));
}

TEST(ExprMutator, RecordsDeductionErrors) {
  // matmul(x, x) of a (n, 4) tensor cannot be deduced: 4 != n.
  class ToMatmul : public ExprMutator {
   public:
    Expr visit_call(const Expr& e, const CallNode& node) override {
      Expr rewritten = ExprMutator::visit_call(e, node);
      if (op_name(node) != "multiply") return rewritten;
      return annotate(make_call(make_op_or_die("matmul"), {node.args[1], node.args[1]}));
    }
  };
  Sample s;
  ToMatmul m;
  Expr out = m.visit_expr(s.func);
  EXPECT_FALSE(m.status().ok());
  EXPECT_NE(std::string(m.status().message()).find("matmul"), std::string::npos) << m.status();
  // The failed value falls back to Object, and what depends on it is re-deduced from there.
  EXPECT_EQ(s.body(out).blocks[0].bindings[1].var.struct_info().to_string(), "Object");
}

TEST(ExprMutator, RewritesSymbolicValuesAndReannotates) {
  class FourToEight : public ExprMutator {
   public:
    SymExpr visit_sym_expr(const SymExpr& e) override { return e.is_const(4) ? SymExpr(8) : e; }
  };
  SymVar n("n");
  Var c("c", prim_sinfo(DataType::boolean()));
  Expr then_branch = norm(make_seq_expr({}, make_shape_expr({n, 4})));
  Expr else_branch = norm(make_seq_expr({}, make_shape_expr({n, 4})));
  Var x("x", shape_sinfo({n}));
  Expr branch = norm(make_if(c, then_branch, else_branch));
  Var r = var("r", branch);
  Expr f = function({c, x}, {plain({bind(r, branch)})}, r);
  ASSERT_EQ(r.struct_info().to_string(), "Shape[(n, 4)]");
  FourToEight m;
  Expr out = m.visit_expr(f);
  const Binding& b = out.as<FunctionNode>()->body.as<SeqExprNode>()->blocks[0].bindings[0];
  EXPECT_EQ(b.value.struct_info().to_string(), "Shape[(n, 8)]");
  EXPECT_EQ(b.var.struct_info().to_string(), "Shape[(n, 8)]");
}

TEST(ExprMutator, VarRemapRedirectsUses) {
  class ParamSwap : public ExprMutator {
   public:
    ParamSwap(Var from, Var to) : from_(std::move(from)), to_(std::move(to)) {}
    Var visit_var_def(const Var& v) override { return v.same_as(from_) ? to_ : v; }

   private:
    Var from_, to_;
  };
  Sample s;
  Var renamed("input", s.x.struct_info());
  ParamSwap m(s.x, renamed);
  Expr out = m.visit_expr(s.func);
  EXPECT_TRUE(out.as<FunctionNode>()->params[0].same_as(renamed));
  EXPECT_TRUE(s.body(out).blocks[0].bindings[0].value.as<CallNode>()->args[0].same_as(renamed));
  // Only names changed: the result is alpha-equivalent to the input.
  EXPECT_TRUE(structural_equal(out, s.func));
}

TEST(ExprMutator, VisitModuleReplacesOnlyChangedFunctions) {
  IRModule mod;
  Sample a;
  SymVar n("n");
  Var x("x", tensor({n}));
  Expr untouched = function({x}, {}, x);
  mod.add("main", a.func);
  mod.add("identity", untouched);
  MultiplyToAdd m;
  IRModule out = m.visit_module(mod);
  EXPECT_FALSE(out.lookup("main").same_as(a.func));
  EXPECT_TRUE(out.lookup("identity").same_as(untouched));
  EXPECT_TRUE(mod.lookup("main").same_as(a.func));  // the input module is not modified
}

TEST(ExprMutator, RenamingEveryVariableKeepsTheFunctionAlphaEquivalent) {
  Sample s;
  fixtures::Renamer m;
  Expr out = m.visit_expr(s.func);
  EXPECT_FALSE(out.same_as(s.func));
  EXPECT_TRUE(structural_equal(out, s.func)) << *first_difference(out, s.func);
  EXPECT_EQ(structural_hash(out), structural_hash(s.func));
  EXPECT_EQ(s.body(out).blocks[0].bindings[2].var.name_hint(), "gv_");
}

// ---------------------------------------------------------------------------
// Loop level.

TEST(StmtVisitor, VisitsEveryValueAndSubexpression) {
  class Vars : public StmtVisitor {
   public:
    void visit_value(const SymExpr& v) override {
      if (v.is_var()) names.push_back(SymVar::from_expr(v).name());
      StmtVisitor::visit_value(v);
    }
    void visit_buffer_store(const Stmt& s, const BufferStoreNode& node) override {
      stores.push_back(node.buffer.name());
      StmtVisitor::visit_buffer_store(s, node);
    }
    std::vector<std::string> names, stores;
  };
  Vars v;
  v.visit_prim_func(*fill_kernel().as<PrimFuncNode>());
  // A's and C's dims, the loop extent, the index, then the stored value i + 1.
  EXPECT_EQ(v.names, (std::vector<std::string>{"n", "n", "n", "i", "i"}));
  EXPECT_EQ(v.stores, (std::vector<std::string>{"C"}));
}

TEST(StmtMutator, ReturnsTheSameFunctionWhenNothingChanges) {
  Expr kernel = fill_kernel();
  StmtMutator m;
  EXPECT_TRUE(m.visit_prim_func(kernel).same_as(kernel));
}

TEST(StmtMutator, RewritesValuesAndSharesUntouchedStatements) {
  // Replaces the constant 1 by 2 wherever it appears.
  class OneToTwo : public StmtMutator {
   public:
    SymExpr visit_value(const SymExpr& v) override {
      return v.is_const(1) ? SymExpr(2) : StmtMutator::visit_value(v);
    }
  };
  SymVar n("n"), i("i"), j("j");
  Buffer c("C", f32(), {n});
  Stmt first = loop(i, n, store(c, {i}, i + 1));
  Stmt second = loop(j, n, store(c, {j}, SymExpr(0)));
  Expr kernel = prim_func({buffer_param(c)}, seq({first, second}));
  OneToTwo m;
  Expr out = m.visit_prim_func(kernel);
  const auto& stmts = out.as<PrimFuncNode>()->body.as<SeqStmtNode>()->stmts;
  EXPECT_FALSE(stmts[0].same_as(first));
  EXPECT_TRUE(stmts[1].same_as(second));
  const auto* st = stmts[0].as<ForNode>()->body.as<BufferStoreNode>();
  EXPECT_EQ(st->value.to_string(), "i + 2");
  EXPECT_TRUE(st->indices[0].same_as(i));
  EXPECT_TRUE(structural_equal(
      out, prim_func({buffer_param(c)}, seq({loop(i, n, store(c, {i}, i + 2)), second}))));
}

TEST(StmtMutator, StatementHooksCanReplaceNodes) {
  class Parallelise : public StmtMutator {
   public:
    Stmt visit_for(const Stmt& s, const ForNode& node) override {
      Stmt body = visit_stmt(node.body);
      if (node.for_kind == ForKind::kParallel) return s;
      return loop(node.loop_var, node.extent, body, ForKind::kParallel);
    }
  };
  Parallelise m;
  Expr out = m.visit_prim_func(fill_kernel());
  EXPECT_EQ(out.as<PrimFuncNode>()->body.as<ForNode>()->for_kind, ForKind::kParallel);
}

TEST(StmtMutator, VisitsLetBlockAndIfValues) {
  class Counter : public StmtMutator {
   public:
    SymExpr visit_value(const SymExpr& v) override {
      ++count;
      return StmtMutator::visit_value(v);
    }
    int count = 0;
  };
  SymVar n("n"), i("i"), vi("vi"), t("t");
  Buffer c("C", f32(), {n});
  Stmt body = block("b", {{vi, n, IterType::kSpatial, i}},
                    let(t, vi * 2, if_then(t < n, store(c, {vi}, t))));
  Stmt s = loop(i, n, body);
  Counter m;
  EXPECT_TRUE(m.visit_stmt(s).same_as(s));
  // Values and their subexpressions: min 0, extent n; extent n, binding i;
  // vi * 2 (3); t < n (3); index vi; value t.
  EXPECT_EQ(m.count, 2 + 2 + 3 + 3 + 1 + 1);
}

}  // namespace
}  // namespace relax
