// The walker behind structural_equal and first_difference (private to src/ir).
//
// One walker compares two trees in lockstep. It keeps three bijections -- graph
// Vars, SymVars and Buffers -- from the left tree's bound variables to the
// right's. At a binding place (structural_equal.h lists them) an unbound pair
// is added to the bijection; everywhere else a variable of the left must map to
// the one on the right, or, when free on both sides, be the same variable. The
// bijection is checked both ways, so two left variables never map to one right
// variable. The variables that a parameter list binds are paired up before the
// parameters are compared (prebind), since a parameter may use a variable that
// a later one binds.
//
// The walker also keeps the path from the root to the node it is comparing.
// Path steps are pointers to field names (plus an index or a key), so the path
// costs nothing until a difference is found; only then is it rendered into the
// message that first_difference returns.
//
// structural_equal.cc holds the graph level, structural_equal_loop.cc the loop
// level. structural_hash.cc walks one tree in the same order; keep them in step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"
#include "structural_common.h"

namespace relax::detail {

/// Short descriptions of the two sides of a difference ("Var lv1", "Block add").
std::string diff_text(const Expr& e);
std::string diff_text(const Stmt& s);
std::string diff_text(const StructInfo& s);
std::string diff_text(const SymExpr& s);
std::string diff_text(const AttrValue& v);

// One step of the path from the root: `@func`, `.field`, `[index]`, `["key"]`.
struct PathStep {
  const char* field = nullptr;
  int64_t index = -1;
  const std::string* key = nullptr;
  bool is_function = false;
};

class EqualWalker {
 public:
  // Variables of the left tree that already stand for ones of the right.
  void seed(const SymVarMap<SymVar>& a_to_b) {
    for (const auto& [a, b] : a_to_b) {
      sym_fwd_[a.id()] = b.id();
      sym_bwd_[b.id()] = a.id();
    }
  }

  const std::optional<std::string>& difference() const { return difference_; }

  bool module(const IRModule& a, const IRModule& b);

  bool expr(const Expr& a, const Expr& b);

  bool stmt(const Stmt& a, const Stmt& b);

  // Annotations. Leaf kinds (Prim, Shape, Tensor) are reported whole; Tuple and
  // Func descend so that the path names the differing field.
  bool sinfo(const StructInfo& a, const StructInfo& b, BindMode mode);

  // A SymExpr compared (and reported) whole.
  bool sym(const SymExpr& a, const SymExpr& b, BindMode mode);

 private:
  class Step {
   public:
    Step(EqualWalker& w, const char* field, int64_t index = -1, const std::string* key = nullptr)
        : w_(w) {
      w_.path_.push_back({field, index, key, false});
    }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;
    ~Step() { w_.path_.pop_back(); }

   private:
    EqualWalker& w_;
  };

  void reset() {
    var_fwd_.clear();
    var_bwd_.clear();
    sym_fwd_.clear();
    sym_bwd_.clear();
    buf_fwd_.clear();
    buf_bwd_.clear();
  }

  std::string path_text() const;

  bool fail(const std::string& what) {
    if (!difference_) difference_ = path_text() + ": " + what;
    return false;
  }

  bool fail_expr(const Expr& a, const Expr& b) {
    return fail(diff_text(a) + " vs " + diff_text(b));
  }

  bool fail_sinfo(const StructInfo& a, const StructInfo& b) {
    return fail(diff_text(a) + " vs " + diff_text(b));
  }

  bool fail_at_function(const std::string& name, const std::string& what) {
    path_.push_back({nullptr, -1, &name, true});
    fail(what);
    path_.pop_back();
    return false;
  }

  // Two lists of the same length whose items compare with `each`.
  template <typename T, typename Fn>
  bool list(const char* field, const std::vector<T>& a, const std::vector<T>& b, const char* noun,
            Fn&& each) {
    if (a.size() != b.size()) {
      Step s(*this, field);
      return fail(std::to_string(a.size()) + " " + noun + " vs " + std::to_string(b.size()) + " " +
                  noun);
    }
    for (size_t i = 0; i < a.size(); ++i) {
      Step s(*this, field, static_cast<int64_t>(i));
      if (!each(a[i], b[i])) return false;
    }
    return true;
  }

  bool field(const char* name, const Expr& a, const Expr& b) {
    Step s(*this, name);
    return expr(a, b);
  }

  bool stmt_field(const char* name, const Stmt& a, const Stmt& b) {
    Step s(*this, name);
    return stmt(a, b);
  }

  bool sym_field(const char* name, const SymExpr& a, const SymExpr& b) {
    Step s(*this, name);
    return sym(a, b, BindMode::kUse);
  }

  bool sym_list(const char* name, const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
    return list(name, a, b, "values",
                [&](const SymExpr& x, const SymExpr& y) { return sym(x, y, BindMode::kUse); });
  }

  bool dims(const std::optional<std::vector<SymExpr>>& a,
            const std::optional<std::vector<SymExpr>>& b, BindMode mode);

  bool var_use(const Expr& a, const Expr& b);

  // A binding place of a graph variable: its kind, its annotation, then the pair.
  bool var_def(const Var& a, const Var& b, BindMode annotation_mode);

  // Binds, pair by pair, the variables that two parameter lists bind (see
  // binding_sym_vars); pairs where either side is bound already are left to the
  // comparison that follows, which reports any mismatch.
  void prebind(const std::vector<SymVar>& a, const std::vector<SymVar>& b);

  // A SymVar at a binding place (loop, let, iteration and scalar parameter variables).
  bool bind_sym(const SymVar& a, const SymVar& b);

  bool sym_var(const SymExpr& a, const SymExpr& b, BindMode mode);

  // Compares without recording; only a top-level bare variable may be bound.
  bool sym_inner(const SymExpr& a, const SymExpr& b, BindMode mode);

  bool same_buffer(const BufferNode* a, const BufferNode* b) const;

  bool buffer_use(const Buffer& a, const Buffer& b);

  // A binding place of a buffer: dtype, scope, shape and strides (whose bare
  // variables it binds), then the pair.
  bool buffer_def(const Buffer& a, const Buffer& b);

  bool constant(const Expr& a, const Expr& b);

  bool attr_value(const AttrValue& a, const AttrValue& b);

  bool attrs(const Attrs& a, const Attrs& b);

  bool call(const CallNode& a, const CallNode& b);

  bool binding(const Binding& a, const Binding& b);

  bool seq(const SeqExprNode& a, const SeqExprNode& b);

  bool function(const FunctionNode& a, const FunctionNode& b);

  bool prim_func(const PrimFuncNode& a, const PrimFuncNode& b);

  bool block(const BlockNode& a, const BlockNode& b);

  std::vector<PathStep> path_;
  std::optional<std::string> difference_;
  absl::flat_hash_map<const ExprNode*, const ExprNode*> var_fwd_, var_bwd_;
  absl::flat_hash_map<uint64_t, uint64_t> sym_fwd_, sym_bwd_;
  absl::flat_hash_map<const BufferNode*, const BufferNode*> buf_fwd_, buf_bwd_;
};

}  // namespace relax::detail
