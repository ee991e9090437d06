// Structural hashing, consistent with structural_equal.
//
// The walker is a reducer of the field descriptions of structural_fields.h, the
// ones structural equality compares: it passes each node as both sides and
// mixes the fields of one into the hash, so it visits the fields that equality
// compares, in the same order. It numbers each variable the first time it meets
// it at a binding place (both trees of an equal pair meet their bound variables
// at the same places, so they number them alike). A bound variable hashes as
// its number; a free one as its identity. Lengths, kinds and flags are mixed in
// as well, so that reordering or regrouping changes the hash.
#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "relax/ir/functor.h"
#include "relax/ir/structural_equal.h"
#include "ir/structural/structural_common.h"
#include "ir/structural/structural_fields.h"

namespace relax {
namespace detail {

// Tags that keep different shapes of data apart in the hash.
enum class Tag : uint64_t {
  kUndefined = 0x51,
  kBoundVar,
  kFreeVar,
  kBoundBuffer,
  kFreeBuffer,
  kFunction,
  kAttrs,
};

class HashWalker {
 public:
  size_t result() const { return static_cast<size_t>(h_); }

  void module(const IRModule& mod) {
    std::vector<const std::pair<std::string, Expr>*> sorted;
    for (const auto& f : mod.functions()) sorted.push_back(&f);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* x, const auto* y) { return x->first < y->first; });
    mix(sorted.size());
    for (const auto* f : sorted) {
      reset();
      mix(Tag::kFunction);
      mix_value(f->first);
      expr(nullptr, f->second, f->second);
    }
    reset();
    attrs(nullptr, mod.attrs(), mod.attrs());
  }

  // ---- The reducer of structural_fields.h (`b` is `a`). ------------------

  bool expr(const char*, const Expr& e, const Expr&) {
    if (!e.defined()) return mix(Tag::kUndefined);
    mix(e.kind());
    return dispatch_expr(e, [&](const auto& n) { return reduce_fields(*this, n, n); });
  }

  bool stmt(const char*, const Stmt& s, const Stmt&) {
    if (!s.defined()) return mix(Tag::kUndefined);
    mix(s.kind());
    return dispatch_stmt(s, [&](const auto& n) { return reduce_fields(*this, n, n); });
  }

  bool sinfo(const char*, const StructInfo& s, const StructInfo&, BindMode mode) {
    if (!s.defined()) return mix(Tag::kUndefined);
    mix(s.kind());
    return dispatch_struct_info(s, [&](const auto& n) { return reduce_fields(*this, n, n, mode); });
  }

  bool sym(const char*, const SymExpr& e, const SymExpr&, BindMode mode) { return dim(e, e, mode); }

  bool dim(const SymExpr& e, const SymExpr&, BindMode mode) {
    if (!e.defined()) return mix(Tag::kUndefined);
    mix(e.kind());
    mix_value(e.dtype());
    return reduce_fields(*this, *e, *e, mode);
  }

  template <typename T, typename Fn>
  bool list(const char*, const std::vector<T>& a, const std::vector<T>&, const char*, Fn&& each) {
    mix(a.size());
    for (const T& x : a) each(x, x);
    return true;
  }
  template <typename T>
  bool list(const char* field, const std::vector<T>& a, const std::vector<T>& b, const char* noun) {
    return list(field, a, b, noun,
                [this](const T& x, const T& y) { return reduce_item(*this, x, y); });
  }

  bool attrs(const char*, const Attrs& a, const Attrs&) {
    mix(Tag::kAttrs);
    mix(a.size());
    for (const auto& [key, value] : a) {
      mix_value(key);
      reduce_attr_value(*this, value, value);
    }
    return true;
  }

  template <typename T, typename... Message>
  bool value(const char*, const T& a, const T&, Message&&...) {
    return mix_value(a);
  }

  template <typename T>
  bool label(const T& a, const T&) {
    return mix_value(a);
  }

  bool label_buffer(const BufferNode* b, const BufferNode*) {
    auto it = buf_index_.find(b);
    if (it != buf_index_.end()) {
      mix(Tag::kBoundBuffer);
      return mix(it->second);
    }
    mix(Tag::kFreeBuffer);
    return mix(reinterpret_cast<uintptr_t>(b));
  }

  bool constant(const ConstantNode& n, const ConstantNode&) {
    const runtime::Tensor& t = n.data;
    mix_value(t.dtype());
    mix(t.shape().size());
    for (int64_t d : t.shape()) mix(d);
    std::optional<std::string> bytes = host_bytes(t);
    return mix(bytes ? absl::HashOf(*bytes) : reinterpret_cast<uintptr_t>(t.data()));
  }

  template <typename List>
  bool define_together(const List& a, const List&) {
    for (const SymVar& v : binding_sym_vars(a)) {
      if (!sym_index_.contains(v.id())) sym_index_[v.id()] = next_index_++;
    }
    return true;
  }

  bool define_var(const char*, const Var& v, const Var&, BindMode annotation_mode) {
    return reduce_var_def(*this, v, v, annotation_mode);
  }
  bool define_sym(const char*, const SymVar& v, const SymVar&) {
    return dim(v, v, BindMode::kDefine);
  }
  bool define_buffer(const char*, const Buffer& b, const Buffer&) {
    return reduce_buffer_def(*this, b, b);
  }

  bool bind_var(const Var& v, const Var&) {
    if (!var_index_.contains(v.get())) var_index_[v.get()] = next_index_++;
    return true;
  }
  bool bind_buffer(const Buffer& b, const Buffer&) {
    if (!buf_index_.contains(b.get())) buf_index_[b.get()] = next_index_++;
    return true;
  }

  bool use_var(const VarNode& v, const VarNode&) {
    auto it = var_index_.find(&v);
    if (it != var_index_.end()) {
      mix(Tag::kBoundVar);
      return mix(it->second);
    }
    mix(Tag::kFreeVar);
    return mix(reinterpret_cast<uintptr_t>(&v));
  }

  bool use_sym_var(const SymExprNode& v, const SymExprNode&, BindMode mode) {
    const auto id = static_cast<uint64_t>(v.value());  // a variable's value() is its id
    auto it = sym_index_.find(id);
    if (it == sym_index_.end() && mode == BindMode::kDefine) {
      it = sym_index_.emplace(id, next_index_++).first;
    }
    if (it != sym_index_.end()) {
      mix(Tag::kBoundVar);
      return mix(it->second);
    }
    mix(Tag::kFreeVar);
    return mix(id);
  }

  bool use_buffer(const char*, const Buffer& b, const Buffer&) {
    return label_buffer(b.get(), b.get());
  }

 private:
  template <typename T>
  bool mix(T value) {
    const auto v = static_cast<uint64_t>(value);
    // A 64-bit mix (boost::hash_combine's shape with a stronger multiplier).
    h_ ^= (v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2)) * 0xff51afd7ed558ccdULL;
    return true;
  }

  // Plain data by value.
  template <typename T>
  bool mix_value(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      return mix(absl::HashOf(v));
    } else if constexpr (std::is_same_v<T, DataType>) {
      return mix((static_cast<uint64_t>(v.code) << 24) | (static_cast<uint64_t>(v.bits) << 16) |
                 v.lanes);
    } else if constexpr (std::is_same_v<T, std::optional<DataType>>) {
      mix(v.has_value());
      return !v || mix_value(*v);
    } else if constexpr (std::is_same_v<T, Device>) {
      mix(v.type);
      return mix(v.index);
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      mix(v.size());
      for (int64_t i : v) mix(i);
      return true;
    } else {
      static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "no hash for this field type");
      return mix(v);
    }
  }

  void reset() {
    var_index_.clear();
    sym_index_.clear();
    buf_index_.clear();
    next_index_ = 0;
  }

  uint64_t h_ = 0x2545f4914f6cdd1dULL;
  uint64_t next_index_ = 0;
  absl::flat_hash_map<const ExprNode*, uint64_t> var_index_;
  absl::flat_hash_map<uint64_t, uint64_t> sym_index_;
  absl::flat_hash_map<const BufferNode*, uint64_t> buf_index_;
};

}  // namespace detail

using detail::BindMode;
using detail::HashWalker;

size_t structural_hash(const Expr& e) {
  HashWalker w;
  w.expr(nullptr, e, e);
  return w.result();
}

size_t structural_hash(const Stmt& s) {
  HashWalker w;
  w.stmt(nullptr, s, s);
  return w.result();
}

size_t structural_hash(const StructInfo& sinfo) {
  HashWalker w;
  w.sinfo(nullptr, sinfo, sinfo, BindMode::kUse);
  return w.result();
}

size_t structural_hash(const IRModule& mod) {
  HashWalker w;
  w.module(mod);
  return w.result();
}

}  // namespace relax
