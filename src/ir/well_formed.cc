// Well-formedness checking (the rules are listed in well_formed.h).
//
// One checker per level, both built on the visitors: GraphChecker walks a
// graph function keeping the variables in scope (graph Vars, and SymVars with
// a count, since nested scopes may define one again), PrimChecker walks a
// PrimFunc keeping its buffers and SymVars in scope. Neither stops at the first
// violation: every one is reported, each once, with the chain of enclosing
// bindings or statements as its location.
#include "relax/ir/well_formed.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "relax/ir/micro_kernel.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/visitor.h"
#include "relax/shape/analyzer.h"
#include "ir/structural/structural_common.h"
#include "ir/text/text_format.h"

namespace relax {
namespace {

// Collects violations with their location: "@func: outer: inner: message".
class Reporter {
 public:
  explicit Reporter(std::vector<std::string>& out) : out_(out) {}

  void set_function(const std::string& name) {
    function_ = name;
    where_.clear();
  }

  void report(const std::string& message) {
    std::vector<std::string> parts = {"@" + function_};
    parts.insert(parts.end(), where_.begin(), where_.end());
    parts.push_back(message);
    std::string line = absl::StrJoin(parts, ": ");
    if (seen_.insert(line).second) out_.push_back(std::move(line));
  }

  // Names one enclosing construct while it lives.
  class Scope {
   public:
    Scope(Reporter& r, std::string where) : r_(r) { r_.where_.push_back(std::move(where)); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { r_.where_.pop_back(); }

   private:
    Reporter& r_;
  };

 private:
  std::vector<std::string>& out_;
  std::string function_;
  std::vector<std::string> where_;
  absl::flat_hash_set<std::string> seen_;
};

// SymVars in scope, counted because nested scopes may define a variable again.
class SymScope {
 public:
  void enter(const std::vector<SymVar>& vars) {
    for (const SymVar& v : vars) ++count_[v.id()];
  }
  void leave(const std::vector<SymVar>& vars) {
    for (const SymVar& v : vars) {
      auto it = count_.find(v.id());
      if (it != count_.end() && --it->second == 0) count_.erase(it);
    }
  }
  bool contains(const SymVar& v) const { return count_.contains(v.id()); }

 private:
  absl::flat_hash_map<uint64_t, int> count_;
};

std::string callee_name(const Expr& callee) {
  if (const auto* g = callee.as<GlobalVarNode>()) return "@" + g->name;
  if (const auto* v = callee.as<VarNode>()) return v->name_hint;
  if (const auto* e = callee.as<ExternFuncNode>()) return e->symbol;
  if (const auto* o = callee.as<OpNode>()) return o->name;
  return std::string(expr_kind_name(callee.kind()));
}

// What is wrong with the dtypes of an annotation on its own (dims are int64,
// element types are ones the IR supports), or "".
std::string annotation_problem(const StructInfo& sinfo) {
  if (!sinfo.defined()) return "";
  auto dims_problem = [](const std::optional<std::vector<SymExpr>>& dims) -> std::string {
    if (!dims) return "";
    for (const SymExpr& d : *dims) {
      if (d.defined() && d.dtype() != DataType::int64()) {
        return "dim `" + d.to_string() + "` is " + d.dtype().to_string() + ", expected int64";
      }
    }
    return "";
  };
  if (const auto* t = sinfo.as<TensorStructInfoNode>()) {
    if (t->dtype && !is_scalar_dtype(*t->dtype)) {
      return text::unsupported_dtype_message(*t->dtype);
    }
    return dims_problem(t->shape);
  }
  if (const auto* s = sinfo.as<ShapeStructInfoNode>()) return dims_problem(s->values);
  if (const auto* p = sinfo.as<PrimStructInfoNode>()) {
    if (!is_scalar_dtype(p->dtype)) return text::unsupported_dtype_message(p->dtype);
    if (p->value.defined() && p->value.dtype() != p->dtype) {
      return "the value `" + p->value.to_string() + "` of Prim[" + p->dtype.to_string() + "] is " +
             p->value.dtype().to_string();
    }
    return "";
  }
  if (const auto* t = sinfo.as<TupleStructInfoNode>()) {
    for (const StructInfo& f : t->fields) {
      if (std::string why = annotation_problem(f); !why.empty()) return why;
    }
    return "";
  }
  if (const auto* f = sinfo.as<FuncStructInfoNode>()) {
    if (f->params) {
      for (const StructInfo& p : *f->params) {
        if (std::string why = annotation_problem(p); !why.empty()) return why;
      }
    }
    return annotation_problem(f->ret);
  }
  return "";
}

// Every graph variable a function defines, wherever it is.
class DefCollector : public ExprVisitor {
 public:
  void visit_var_def(const Var& var) override { defs.insert(var.get()); }
  absl::flat_hash_set<const ExprNode*> defs;
};

class GraphChecker : public ExprVisitor {
 public:
  GraphChecker(const IRModule& mod, Reporter& reporter) : mod_(mod), r_(reporter) {}

  void check(const Expr& func) {
    DefCollector collector;
    collector.visit_expr(func);
    all_defs_ = std::move(collector.defs);
    visit_expr(func);
  }

  void visit_expr(const Expr& e) override {
    if (e.as<VarNode>() == nullptr && !e.struct_info().defined()) {
      r_.report(
          std::string(expr_kind_name(e.kind())) + " without StructInfo" +
          (e.as<CallNode>() ? " (call of " + callee_name(e.as<CallNode>()->callee) + ")" : ""));
    }
    ExprVisitor::visit_expr(e);
    check_derived(e);
  }

  void visit_extern_func(const Expr& e, const ExternFuncNode& node) override {
    const StructInfo& sinfo = e.struct_info();
    if (sinfo.defined() && sinfo.as<FuncStructInfoNode>() == nullptr) {
      r_.report("extern_func `" + node.symbol + "` is annotated " + sinfo.to_string() +
                ", expected a Func annotation");
    }
    ExprVisitor::visit_extern_func(e, node);
  }

  void visit_constant(const Expr& e, const ConstantNode& node) override {
    if (e.struct_info().defined()) {
      if (std::string why = annotation_problem(e.struct_info()); !why.empty()) {
        r_.report("constant: " + why);
      }
    }
    ExprVisitor::visit_constant(e, node);
  }

  void visit_var(const Var& var) override {
    if (in_scope_.contains(var.get())) return;
    const std::string name = "`" + var.name_hint() + "`";
    if (escaped_.contains(var.get())) {
      r_.report("DataflowVar " + name + " is used outside its dataflow block");
    } else if (seen_.contains(var.get())) {
      r_.report("variable " + name + " is used outside its scope");
    } else if (all_defs_.contains(var.get())) {
      r_.report("variable " + name + " is used before its definition");
    } else {
      r_.report("variable " + name + " is not defined");
    }
  }

  void visit_global_var(const Expr&, const GlobalVarNode& node) override {
    if (!mod_.contains(node.name)) {
      r_.report("GlobalVar `@" + node.name + "` names no function of the module");
    }
  }

  void visit_call(const Expr& e, const CallNode& node) override {
    if (const auto* op = node.callee.as<OpNode>()) {
      const OpInfo* info = find_op(op->name);
      if (dataflow_ && info != nullptr && !info->pure) report_impure(node.callee);
      if ((op->name == "call_tir" || op->name == "call_tir_inplace") &&
          !check_call_tir(op->name, node)) {
        reported_.insert(e.get());
      }
    } else if (dataflow_ && node.callee.struct_info().defined()) {
      const auto* fn = node.callee.struct_info().as<FuncStructInfoNode>();
      if (fn != nullptr && !fn->pure) report_impure(node.callee);
    }
    for (const StructInfo& s : node.sinfo_args) check_sym_uses(s);
    ExprVisitor::visit_call(e, node);
  }

  void visit_if(const Expr& e, const IfNode& node) override {
    visit_expr(node.cond);
    const StructInfo& cond = node.cond.struct_info();
    if (cond.defined() && !is_if_condition(cond)) {
      r_.report("If condition is " + cond.to_string() + ", expected Prim[bool] or a one-element bool tensor");
      reported_.insert(e.get());
    }
    {
      Reporter::Scope where(r_, "then branch");
      visit_expr(node.then_branch);
    }
    Reporter::Scope where(r_, "else branch");
    visit_expr(node.else_branch);
  }

  void visit_sym_expr(const SymExpr& value) override {
    for_each_var(value, [&](const SymVar& v) { check_sym_use(v); });
  }

  void visit_function(const Expr&, const FunctionNode& node) override {
    // The parameters define their variables together (struct_info.h).
    std::vector<StructInfo> annotations;
    for (const Var& p : node.params) {
      if (p.struct_info().defined()) annotations.push_back(p.struct_info());
    }
    std::vector<SymVar> syms = defined_sym_vars(annotations);
    sym_scope_.enter(syms);
    note_dims(annotations);
    for (const SymBound& b : node.upper_bounds) analyzer_.bind(b.var, 0, b.upper);
    bool saved_dataflow = dataflow_;
    dataflow_ = false;
    for (const Var& p : node.params) {
      Reporter::Scope where(r_, "parameter " + p.name_hint());
      define(p);
    }
    for (const SymBound& b : node.upper_bounds) {
      if (!sym_scope_.contains(b.var)) {
        r_.report("upper bound on undefined symbolic variable `" + b.var.name() + "`");
      }
    }
    {
      Reporter::Scope where(r_, "return annotation");
      check_sym_uses(node.ret);
      check_annotation(node.ret);
    }
    visit_expr(node.body);
    const StructInfo& body = node.body.struct_info();
    if (node.ret.defined() && body.defined() &&
        check_base_of(node.ret, body, analyzer_) == BaseCheck::kFail) {
      r_.report("the function returns " + body.to_string() +
                ", which does not fit its return annotation " + node.ret.to_string());
    }
    for (const Var& p : node.params) in_scope_.erase(p.get());
    dataflow_ = saved_dataflow;
    sym_scope_.leave(syms);
  }

  void visit_seq_expr(const Expr&, const SeqExprNode& node) override {
    std::vector<const ExprNode*> defined_here;
    std::vector<SymVar> syms_here;
    bool saved_dataflow = dataflow_;
    for (const BindingBlock& block : node.blocks) {
      dataflow_ = block.is_dataflow;
      std::vector<const ExprNode*> block_vars;
      for (const Binding& b : block.bindings) {
        Reporter::Scope where(r_, "binding " + b.var.name_hint());
        visit_expr(b.value);
        if (b.is_match_cast) {
          std::vector<SymVar> defined = defined_sym_vars(
              {b.cast_sinfo}, [this](const SymVar& v) { return sym_scope_.contains(v); });
          sym_scope_.enter(defined);
          note_dims({b.cast_sinfo});
          syms_here.insert(syms_here.end(), defined.begin(), defined.end());
          check_sym_uses(b.cast_sinfo);
          check_annotation(b.cast_sinfo);
        }
        check_binding_fits(b);
        define(b.var);
        (b.var.is_dataflow() ? block_vars : defined_here).push_back(b.var.get());
      }
      // A dataflow block's DataflowVars end with it.
      for (const ExprNode* v : block_vars) {
        in_scope_.erase(v);
        escaped_.insert(v);
      }
    }
    dataflow_ = saved_dataflow;
    {
      Reporter::Scope where(r_, "result");
      visit_expr(node.body);
    }
    for (const ExprNode* v : defined_here) in_scope_.erase(v);
    sym_scope_.leave(syms_here);
  }

 private:
  void define(const Var& var) {
    const std::string name = "`" + var.name_hint() + "`";
    if (seen_.contains(var.get())) r_.report("variable " + name + " is defined twice");
    if (var.is_dataflow() && !dataflow_) {
      r_.report("DataflowVar " + name + " is bound outside a dataflow block");
    }
    if (!var.struct_info().defined()) {
      r_.report("variable " + name + " has no StructInfo");
    } else {
      check_sym_uses(var.struct_info());
      check_annotation(var.struct_info());
    }
    seen_.insert(var.get());
    in_scope_.insert(var.get());
  }

  void check_sym_use(const SymVar& v) {
    if (!sym_scope_.contains(v)) {
      r_.report("symbolic variable `" + v.name() + "` is used before any definition");
    }
  }

  void check_sym_uses(const StructInfo& sinfo) {
    if (!sinfo.defined()) return;
    for (const SymVar& v : used_sym_vars(sinfo)) check_sym_use(v);
  }

  void check_annotation(const StructInfo& sinfo) {
    if (std::string why = annotation_problem(sinfo); !why.empty()) {
      r_.report("annotation " + sinfo.to_string() + ": " + why);
    }
  }

  void note_dims(const std::vector<StructInfo>& sinfos) {
    for (const SymVar& v : bare_dim_vars(sinfos)) analyzer_.bind(v, 0);
  }

  // The annotation an expression carries must be what deduction gives it
  // from its children (the deduction the builder and the parser run), or a
  // base of it: a reader that takes annotations as written (JSON) must not
  // let one claim more than the value gives, such as a matmul of (n, 8) and
  // (2, 2) annotated (n, 2).
  void check_derived(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar:
      case ExprKind::kGlobalVar:
      case ExprKind::kConstant:
      case ExprKind::kExternFunc:
      case ExprKind::kOp:
      case ExprKind::kPrimFunc:
        return;  // leaves: their annotation is their own
      default:
        break;
    }
    const StructInfo& written = e.struct_info();
    if (!written.defined()) return;
    check_annotation(written);
    DeduceContext ctx{analyzer_, &mod_, [this](const SymVar& v) { return sym_scope_.contains(v); }};
    absl::StatusOr<StructInfo> derived = deduce_struct_info(e, ctx);
    const std::string what = e.kind() == ExprKind::kCall
                                 ? "call of " + callee_name(e.as<CallNode>()->callee)
                                 : std::string(expr_kind_name(e.kind()));
    if (!derived.ok()) {
      // A rule above may have said why already, in its own words.
      if (!reported_.contains(e.get()))
        r_.report(what + ": " + std::string(derived.status().message()));
      return;
    }
    if (check_base_of(written, *derived, analyzer_) != BaseCheck::kPass) {
      r_.report(what + " is annotated " + written.to_string() + ", but its value gives " +
                derived->to_string());
    }
  }

  // A binding's variable must fit its value (a match_cast's: the pattern, and
  // the pattern must be able to match the value), as the parser requires.
  void check_binding_fits(const Binding& b) {
    const StructInfo& value = b.value.struct_info();
    const StructInfo& var = b.var.struct_info();
    if (!value.defined() || !var.defined()) return;
    if (b.is_match_cast) {
      if (b.cast_sinfo.defined() &&
          check_base_of(b.cast_sinfo, value, analyzer_) == BaseCheck::kFail) {
        r_.report("match_cast: a value annotated " + value.to_string() + " can never match " +
                  b.cast_sinfo.to_string());
      }
      if (b.cast_sinfo.defined() &&
          check_base_of(var, b.cast_sinfo, analyzer_) == BaseCheck::kFail) {
        r_.report("the annotation " + var.to_string() + " of `" + b.var.name_hint() +
                  "` does not fit its pattern " + b.cast_sinfo.to_string());
      }
      return;
    }
    if (check_base_of(var, value, analyzer_) == BaseCheck::kFail) {
      r_.report("the annotation " + var.to_string() + " of `" + b.var.name_hint() +
                "` does not fit its value, " + value.to_string());
    }
  }

  void report_impure(const Expr& callee) {
    r_.report("impure call to `" + callee_name(callee) + "` inside a dataflow block");
  }

  // Whether the callee of a call_tir is fine; reports it when not.
  bool check_call_tir(const std::string& op, const CallNode& node) {
    if (node.args.empty()) return true;  // the op's deduction reports the arity
    const auto* gvar = node.args[0].as<GlobalVarNode>();
    if (gvar == nullptr) {
      r_.report(op + " callee is a " + std::string(expr_kind_name(node.args[0].kind())) +
                ", expected a GlobalVar naming a PrimFunc");
      return false;
    }
    Expr callee = mod_.lookup(gvar->name);
    if (callee.defined() && callee.as<PrimFuncNode>() == nullptr) {
      r_.report(op + " callee `@" + gvar->name + "` is a " +
                std::string(expr_kind_name(callee.kind())) + ", not a PrimFunc");
      return false;
    }
    return true;
  }

  const IRModule& mod_;
  Reporter& r_;
  Analyzer analyzer_;
  absl::flat_hash_set<const ExprNode*> reported_;  ///< expressions a rule reported already
  absl::flat_hash_set<const ExprNode*> all_defs_;  ///< defined anywhere in the function
  absl::flat_hash_set<const ExprNode*> seen_;      ///< defined so far
  absl::flat_hash_set<const ExprNode*> in_scope_;
  absl::flat_hash_set<const ExprNode*> escaped_;  ///< DataflowVars whose block ended
  SymScope sym_scope_;
  bool dataflow_ = false;
};

class PrimChecker : public StmtVisitor {
 public:
  explicit PrimChecker(Reporter& reporter) : r_(reporter) {}

  void check(const PrimFuncNode& func) {
    for (const PrimParam& p : func.params) {
      if (p.buffer) {
        buffers_.insert(p.buffer->get());
        check_buffer(*p.buffer);
        for (const SymExpr& d : p.buffer->shape()) {
          if (d.is_var() && d.dtype() == DataType::int64()) analyzer_.bind(SymVar::from_expr(d), 0);
        }
      }
    }
    // Scalars and bare-variable dims (and strides) of buffers, whatever their order.
    scope_.enter(detail::binding_sym_vars(func.params));
    visit_prim_func(func);
  }

  void visit_for(const Stmt&, const ForNode& node) override {
    visit_value(node.min);
    visit_value(node.extent);
    Reporter::Scope where(r_, "for " + node.loop_var.name());
    check_index_dtypes("loop variable", node.loop_var, {node.min, node.extent});
    scope_.enter({node.loop_var});
    // The loop's range, for the proofs about extent-call regions inside it.
    std::optional<Analyzer::ConstraintScope> in_loop;
    const SymExpr v = node.loop_var;
    if (v.dtype() == DataType::int64() && node.min.defined() && node.extent.defined() &&
        node.min.dtype() == DataType::int64() && node.extent.dtype() == DataType::int64()) {
      in_loop.emplace(analyzer_, node.min <= v && v < node.min + node.extent);
    }
    visit_stmt(node.body);
    scope_.leave({node.loop_var});
    ended_loops_.insert(node.loop_var.id());
  }

  void visit_let(const Stmt&, const LetStmtNode& node) override {
    visit_value(node.value);
    Reporter::Scope where(r_, "let " + node.var.name());
    scope_.enter({node.var});
    visit_stmt(node.body);
    scope_.leave({node.var});
  }

  void visit_block(const Stmt&, const BlockNode& node) override {
    Reporter::Scope where(r_, "block " + node.name);
    std::vector<SymVar> vars;
    for (const IterVar& iv : node.iter_vars) {
      visit_value(iv.extent);
      visit_value(iv.binding);
      check_index_dtypes("iteration variable", iv.var, {iv.extent, iv.binding});
      vars.push_back(iv.var);
    }
    scope_.enter(vars);
    visit_stmt(node.init);
    visit_stmt(node.body);
    scope_.leave(vars);
  }

  void visit_allocate(const Stmt&, const AllocateNode& node) override {
    for (const SymExpr& d : node.buffer.shape()) visit_value(d);
    Reporter::Scope where(r_, "allocate " + node.buffer.name());
    check_buffer(node.buffer);
    bool added = buffers_.insert(node.buffer.get()).second;
    visit_stmt(node.body);
    if (added) buffers_.erase(node.buffer.get());
  }

  void visit_buffer_store(const Stmt& s, const BufferStoreNode& node) override {
    check_access("BufferStore to", node.buffer, node.indices.size());
    // The value has the dtype a load at the same indices gives (a vector at vector indices).
    std::string index_problem =
        node.indices.size() == node.buffer.ndim() ? load_index_mismatch(node.buffer, node.indices) : "";
    if (!index_problem.empty()) r_.report("BufferStore to `" + node.buffer.name() + "`: " + index_problem);
    const DataType expected = index_problem.empty() && node.indices.size() == node.buffer.ndim()
                                  ? buffer_load(node.buffer, node.indices).dtype()
                                  : node.buffer.dtype();
    if (node.value.defined() && node.value.dtype() != expected) {
      r_.report("BufferStore to `" + node.buffer.name() + "` of dtype " +
                node.buffer.dtype().to_string() +
                (expected != node.buffer.dtype() ? " at vector indices (" + expected.to_string() + ")" : "") +
                " stores `" + node.value.to_string() + "` of dtype " + node.value.dtype().to_string());
    }
    StmtVisitor::visit_buffer_store(s, node);
  }

  // call_extern: the kernel is registered and the arguments fit its
  // signature; each region's buffer is in scope with one index per dim, and
  // no region provably starts, or (compact buffers, declared extent) ends,
  // outside its buffer.
  void visit_extern_call(const Stmt& s, const ExternCallNode& node) override {
    for (const ExternArg& a : node.args) {
      if (a.is_region()) check_access("the region of", a.buffer, a.indices.size());
    }
    if (absl::Status status = check_extern_call(node); !status.ok()) {
      r_.report(std::string(status.message()));
    } else {
      const MicroKernel& kernel = *find_micro_kernel(node.name);
      for (size_t i = 0; i < node.args.size(); ++i) {
        if (node.args[i].is_region()) check_region(node, kernel, i);
      }
    }
    StmtVisitor::visit_extern_call(s, node);
  }

  void visit_if_then_else(const Stmt& s, const IfThenElseNode& node) override {
    if (node.cond.defined() && node.cond.dtype() != DataType::boolean()) {
      r_.report("IfThenElse condition has dtype " + node.cond.dtype().to_string() +
                ", expected bool");
    }
    StmtVisitor::visit_if_then_else(s, node);
  }

  void visit_value(const SymExpr& value) override {
    if (!value.defined()) return;
    if (value.is_var()) {
      SymVar v = SymVar::from_expr(value);
      if (scope_.contains(v)) return;
      if (ended_loops_.contains(v.id())) {
        r_.report("loop variable `" + v.name() + "` is used outside its loop");
      } else {
        r_.report("symbolic variable `" + v.name() + "` is not defined");
      }
      return;
    }
    if (value.kind() == SymKind::kBufferLoad) {
      check_access("load from", value->buffer(), value.num_operands());
    }
    StmtVisitor::visit_value(value);
  }

 private:
  void check_buffer(const Buffer& buffer) {
    if (!is_scalar_dtype(buffer.dtype())) {
      r_.report("buffer `" + buffer.name() +
                "`: " + text::unsupported_dtype_message(buffer.dtype()));
    }
    for (const SymExpr& d : buffer.shape()) {
      if (d.defined() && !d.dtype().is_int()) {
        r_.report("buffer `" + buffer.name() + "`: dim `" + d.to_string() + "` is " +
                  d.dtype().to_string() + ", expected an integer");
      }
    }
  }

  // A loop or iteration variable has an integer dtype, and its bounds (or
  // extent and binding) have the same one: what the text format can write.
  void check_index_dtypes(const std::string& what, const SymVar& var,
                          std::initializer_list<SymExpr> values) {
    const DataType t = var.dtype();
    if (!is_scalar_dtype(t) || !t.is_int()) {
      r_.report(what + " `" + var.name() + "` is " + t.to_string() + ", expected an integer dtype");
      return;
    }
    for (const SymExpr& v : values) {
      if (v.defined() && v.dtype() != t) {
        r_.report(what + " `" + var.name() + "` is " + t.to_string() + ", but `" + v.to_string() +
                  "` is " + v.dtype().to_string());
      }
    }
  }

  void check_access(const std::string& what, const Buffer& buffer, size_t num_indices) {
    if (!buffers_.contains(buffer.get())) {
      r_.report(what + " undefined buffer `" + buffer.name() + "`");
    }
    if (num_indices != buffer.ndim()) {
      r_.report(what + " `" + buffer.name() + "` has " + std::to_string(num_indices) +
                (num_indices == 1 ? " index" : " indices") + ", but the buffer has rank " +
                std::to_string(buffer.ndim()));
    }
  }

  void check_region(const ExternCallNode& call, const MicroKernel& kernel, size_t arg) {
    const ExternArg& a = call.args[arg];
    const Buffer& b = a.buffer;
    if (a.indices.size() != b.ndim()) return;  // reported by check_access
    const std::string where = "extern call of `" + call.name + "`: argument " + std::to_string(arg) +
                              " (`" + kernel.params[arg].name + "`): the region `&" + b.name() + "[...]`";
    auto int64_all = [](const std::vector<SymExpr>& xs) {
      return std::all_of(xs.begin(), xs.end(),
                         [](const SymExpr& x) { return x.defined() && x.dtype() == DataType::int64(); });
    };
    if (!int64_all(a.indices) || !int64_all(b.shape())) return;
    for (size_t d = 0; d < b.ndim(); ++d) {
      const SymExpr& i = a.indices[d];
      if (analyzer_.prove(i < 0) || analyzer_.prove(i >= b.shape()[d])) {
        r_.report(where + " starts at index `" + i.to_string() + "` of dim " + std::to_string(d) +
                  ", outside [0, " + b.shape()[d].to_string() + ")");
        return;
      }
    }
    const SymExpr extent = extern_region_extent(kernel, call, arg);
    if (!extent.defined() || !b->strides.empty()) return;
    SymExpr first = SymExpr::int_imm(0, DataType::int64());
    SymExpr numel = SymExpr::int_imm(1, DataType::int64());
    for (size_t d = 0; d < b.ndim(); ++d) {
      first = first * b.shape()[d] + a.indices[d];
      numel = numel * b.shape()[d];
    }
    if (analyzer_.prove(first + extent > numel)) {
      r_.report(where + " covers " + extent.to_string() + " elements from element " +
                analyzer_.simplify(first).to_string() + ", past the end of the buffer's " +
                analyzer_.simplify(numel).to_string());
    }
  }

  Reporter& r_;
  Analyzer analyzer_;
  absl::flat_hash_set<const BufferNode*> buffers_;
  SymScope scope_;
  absl::flat_hash_set<uint64_t> ended_loops_;
};

}  // namespace

std::vector<std::string> well_formed_violations(const IRModule& mod) {
  std::vector<std::string> out;
  Reporter reporter(out);
  for (const auto& [name, func] : mod.functions()) {
    reporter.set_function(name);
    if (func.as<FunctionNode>() != nullptr) {
      GraphChecker(mod, reporter).check(func);
    } else if (const auto* prim = func.as<PrimFuncNode>()) {
      PrimChecker(reporter).check(*prim);
    } else if (const auto* ext = func.as<ExternFuncNode>()) {
      const StructInfo& sinfo = func.struct_info();
      if (sinfo.defined() && sinfo.as<FuncStructInfoNode>() == nullptr) {
        reporter.report("extern_func `" + ext->symbol + "` is annotated " + sinfo.to_string() +
                        ", expected a Func annotation");
      }
    }
  }
  return out;
}

absl::Status well_formed(const IRModule& mod) {
  std::vector<std::string> violations = well_formed_violations(mod);
  if (violations.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(violations, "\n"));
}

}  // namespace relax
