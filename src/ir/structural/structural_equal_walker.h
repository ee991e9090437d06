// The walker behind structural_equal and first_difference (private to src/ir).
//
// One walker compares two trees in lockstep through the field descriptions of
// structural_fields.h, acting as their reducer. It keeps three bijections --
// graph Vars, SymVars and Buffers -- from the left tree's bound variables to
// the right's. At a binding place (structural_equal.h lists them) an unbound
// pair is added to the bijection; everywhere else a variable of the left must
// map to the one on the right, or, when free on both sides, be the same
// variable. The bijection is checked both ways, so two left variables never map
// to one right variable. The variables that a parameter list binds are paired
// up before the parameters are compared (define_together), since a parameter
// may use a variable that a later one binds.
//
// The walker also keeps the path from the root to the node it is comparing.
// Path steps are pointers to field names (plus an index or a key), so the path
// costs nothing until a difference is found; only then is it rendered into the
// message that first_difference returns. A difference in a part that the
// description marks as reported whole (label, dim, ...) is silent where it is
// found; the enclosing node (expression, statement, annotation, variable
// definition) then reports itself, both sides in full.
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
#include "ir/structural/structural_common.h"
#include "ir/structural/structural_fields.h"

namespace relax::detail {

/// Short descriptions of the two sides of a difference ("Var lv1", "Block add").
std::string diff_text(const Expr& e);
std::string diff_text(const Stmt& s);
std::string diff_text(const StructInfo& s);
std::string diff_text(const SymExpr& s);
std::string diff_text(const AttrValue& v);

// Plain field values as a difference shows them.
inline std::string value_text(int64_t v) { return std::to_string(v); }
inline std::string value_text(const std::string& v) { return v; }
inline std::string value_text(ForKind v) { return std::string(for_kind_name(v)); }
inline std::string value_text(IterType v) {
  return v == IterType::kSpatial ? "spatial" : "reduction";
}

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
  bool sinfo(const StructInfo& a, const StructInfo& b, BindMode mode);
  // A SymExpr compared (and reported) whole.
  bool sym(const SymExpr& a, const SymExpr& b, BindMode mode);

  // ---- The reducer of structural_fields.h. -------------------------------

  bool expr(const char* field, const Expr& a, const Expr& b) {
    Step s(*this, field);
    return expr(a, b);
  }
  bool stmt(const char* field, const Stmt& a, const Stmt& b) {
    Step s(*this, field);
    return stmt(a, b);
  }
  bool sinfo(const char* field, const StructInfo& a, const StructInfo& b, BindMode mode) {
    Step s(*this, field);
    return sinfo(a, b, mode);
  }
  bool sym(const char* field, const SymExpr& a, const SymExpr& b, BindMode mode) {
    Step s(*this, field);
    return sym(a, b, mode);
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
  template <typename T>
  bool list(const char* field, const std::vector<T>& a, const std::vector<T>& b, const char* noun) {
    return list(field, a, b, noun,
                [this](const T& x, const T& y) { return reduce_item(*this, x, y); });
  }

  bool attrs(const char* field, const Attrs& a, const Attrs& b) {
    Step s(*this, field);
    return attrs(a, b);
  }

  template <typename T>
  bool value(const char* field, const T& a, const T& b) {
    return value(field, a, b, [&] { return value_text(a) + " vs " + value_text(b); });
  }
  template <typename T, typename Message>
  bool value(const char* field, const T& a, const T& b, Message&& message) {
    if (a == b) return true;
    Step s(*this, field);
    return fail(message());
  }

  template <typename T>
  bool label(const T& a, const T& b) {
    return a == b;
  }

  // Compares without recording; only a top-level bare variable may be bound.
  bool dim(const SymExpr& a, const SymExpr& b, BindMode mode) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    return reduce_fields(*this, *a, *b, mode);
  }

  bool label_buffer(const BufferNode* a, const BufferNode* b) const {
    auto it = buf_fwd_.find(a);
    return it != buf_fwd_.end() ? it->second == b : !buf_bwd_.contains(b) && a == b;
  }

  bool constant(const ConstantNode& a, const ConstantNode& b);

  template <typename List>
  bool define_together(const List& a, const List& b) {
    prebind(binding_sym_vars(a), binding_sym_vars(b));
    return true;
  }

  // A binding place of a graph variable (reported whole when it differs).
  bool define_var(const char* field, const Var& a, const Var& b, BindMode annotation_mode) {
    Step s(*this, field);
    return reduce_var_def(*this, a, b, annotation_mode) || whole(a, b);
  }

  // A SymVar at a binding place (loop, let, iteration and scalar parameter variables).
  bool define_sym(const char* field, const SymVar& a, const SymVar& b) {
    Step s(*this, field);
    if (dim(a, b, BindMode::kDefine)) return true;
    return fail(a.name() + " vs " + b.name() + " (bound at different places)");
  }

  bool define_buffer(const char* field, const Buffer& a, const Buffer& b) {
    Step s(*this, field);
    return reduce_buffer_def(*this, a, b);
  }

  bool bind_var(const Var& a, const Var& b) {
    auto it = var_fwd_.find(a.get());
    if (it != var_fwd_.end()) return it->second == b.get();
    if (var_bwd_.contains(b.get())) return false;
    var_fwd_[a.get()] = b.get();
    var_bwd_[b.get()] = a.get();
    return true;
  }

  bool bind_buffer(const Buffer& a, const Buffer& b) {
    auto it = buf_fwd_.find(a.get());
    if (it != buf_fwd_.end()) return it->second == b.get() || fail_buffer(a, b);
    if (buf_bwd_.contains(b.get())) return fail_buffer(a, b);
    buf_fwd_[a.get()] = b.get();
    buf_bwd_[b.get()] = a.get();
    return true;
  }

  bool use_var(const VarNode& a, const VarNode& b);

  bool use_sym_var(const SymExprNode& a, const SymExprNode& b, BindMode mode) {
    // A variable's value() is its id.
    uint64_t x = static_cast<uint64_t>(a.value());
    uint64_t y = static_cast<uint64_t>(b.value());
    auto it = sym_fwd_.find(x);
    if (it != sym_fwd_.end()) return it->second == y;
    if (sym_bwd_.contains(y)) return false;
    if (mode == BindMode::kUse) return x == y;
    sym_fwd_[x] = y;
    sym_bwd_[y] = x;
    return true;
  }

  bool use_buffer(const char* field, const Buffer& a, const Buffer& b) {
    if (label_buffer(a.get(), b.get())) return true;
    Step s(*this, field);
    return fail_buffer(a, b);
  }

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

  // Reports a node whose description failed without saying where: both sides whole.
  template <typename T>
  bool whole(const T& a, const T& b) {
    if (!difference_) fail(diff_text(a) + " vs " + diff_text(b));
    return false;
  }

  bool fail_buffer(const Buffer& a, const Buffer& b) {
    return fail("Buffer " + a.name() + " vs Buffer " + b.name());
  }

  bool fail_at_function(const std::string& name, const std::string& what) {
    path_.push_back({nullptr, -1, &name, true});
    fail(what);
    path_.pop_back();
    return false;
  }

  // Pairs up, in order, the variables that two parameter lists bind (see
  // binding_sym_vars); pairs where either side is bound already are left to the
  // comparison that follows, which reports any mismatch.
  void prebind(const std::vector<SymVar>& a, const std::vector<SymVar>& b);

  bool attrs(const Attrs& a, const Attrs& b);

  std::vector<PathStep> path_;
  std::optional<std::string> difference_;
  absl::flat_hash_map<const ExprNode*, const ExprNode*> var_fwd_, var_bwd_;
  absl::flat_hash_map<uint64_t, uint64_t> sym_fwd_, sym_bwd_;
  absl::flat_hash_map<const BufferNode*, const BufferNode*> buf_fwd_, buf_bwd_;
};

}  // namespace relax::detail
