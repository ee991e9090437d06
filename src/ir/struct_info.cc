// StructInfo constructors, text form, exact equality and the symbolic
// variables an annotation defines or uses (the definition rule of
// struct_info.h: bare dims first, then the dims relax/shape/solve.h solves).
// The relations that need an Analyzer (check_base_of, struct_info_lca,
// erase_to_scope, substitute_sinfo) live in struct_info_relations.cc.
#include "relax/ir/struct_info.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "relax/shape/solve.h"
#include "relax/support/check.h"

namespace relax {
namespace {

// A parenthesised list; one element takes a trailing comma when `tuple_like`.
template <typename T, typename Fn>
std::string paren_list(const std::vector<T>& items, bool tuple_like, Fn&& item_text) {
  std::string out = "(";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += item_text(items[i]);
  }
  if (tuple_like && items.size() == 1) out += ",";
  out += ")";
  return out;
}

std::string dims_text(const std::vector<SymExpr>& dims) {
  return paren_list(dims, true, [](const SymExpr& d) { return d.to_string(); });
}

std::string sinfo_list_text(const std::vector<StructInfo>& items, bool tuple_like) {
  return paren_list(items, tuple_like, [](const StructInfo& s) { return s.to_string(); });
}

bool dims_equal(const std::optional<std::vector<SymExpr>>& a,
                const std::optional<std::vector<SymExpr>>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i) {
    if (!structural_equal((*a)[i], (*b)[i])) return false;
  }
  return true;
}

bool sym_equal(const SymExpr& a, const SymExpr& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || structural_equal(a, b);
}

// Collects variables in first-occurrence order without repeats.
class VarCollector {
 public:
  /// True when `v` is new.
  bool add(const SymVar& v) {
    if (!seen_.insert(v.id()).second) return false;
    vars_.push_back(v);
    return true;
  }
  bool contains(const SymVar& v) const { return seen_.contains(v.id()); }
  void add_all(const SymExpr& e) {
    if (e.defined()) for_each_var(e, [this](const SymVar& v) { add(v); });
  }
  void add_defined_by(const SymExpr& e) {
    if (e.defined() && e.is_var()) add(SymVar::from_expr(e));
  }
  std::vector<SymVar> take() { return std::move(vars_); }

 private:
  absl::flat_hash_set<uint64_t> seen_;
  std::vector<SymVar> vars_;
};

void collect_defined(const StructInfo& sinfo, VarCollector& out) {
  if (!sinfo.defined()) return;
  if (const auto* p = sinfo.as<PrimStructInfoNode>()) {
    out.add_defined_by(p->value);
  } else if (const auto* s = sinfo.as<ShapeStructInfoNode>()) {
    if (s->values) {
      for (const SymExpr& d : *s->values) out.add_defined_by(d);
    }
  } else if (const auto* t = sinfo.as<TensorStructInfoNode>()) {
    if (t->shape) {
      for (const SymExpr& d : *t->shape) out.add_defined_by(d);
    }
  } else if (const auto* tup = sinfo.as<TupleStructInfoNode>()) {
    for (const StructInfo& f : tup->fields) collect_defined(f, out);
  }
}

// The Tensor and Shape dims of an annotation that are not bare variables, through
// tuples: the ones the second step of the definition rule solves.
void collect_solvable_dims(const StructInfo& sinfo, std::vector<SymExpr>& out) {
  auto add = [&](const std::optional<std::vector<SymExpr>>& dims) {
    if (!dims) return;
    for (const SymExpr& d : *dims) {
      if (d.defined() && !d.is_var()) out.push_back(d);
    }
  };
  if (!sinfo.defined()) return;
  if (const auto* s = sinfo.as<ShapeStructInfoNode>()) {
    add(s->values);
  } else if (const auto* t = sinfo.as<TensorStructInfoNode>()) {
    add(t->shape);
  } else if (const auto* tup = sinfo.as<TupleStructInfoNode>()) {
    for (const StructInfo& f : tup->fields) collect_solvable_dims(f, out);
  }
}

void collect_used(const StructInfo& sinfo, VarCollector& out) {
  if (!sinfo.defined()) return;
  if (const auto* p = sinfo.as<PrimStructInfoNode>()) {
    out.add_all(p->value);
  } else if (const auto* s = sinfo.as<ShapeStructInfoNode>()) {
    if (s->values) {
      for (const SymExpr& d : *s->values) out.add_all(d);
    }
  } else if (const auto* t = sinfo.as<TensorStructInfoNode>()) {
    if (t->shape) {
      for (const SymExpr& d : *t->shape) out.add_all(d);
    }
  } else if (const auto* tup = sinfo.as<TupleStructInfoNode>()) {
    for (const StructInfo& f : tup->fields) collect_used(f, out);
  } else if (const auto* fn = sinfo.as<FuncStructInfoNode>()) {
    // A function annotation binds the variables its parameters define.
    absl::flat_hash_set<uint64_t> own;
    VarCollector inner;
    if (fn->params) {
      for (const StructInfo& param : *fn->params) {
        collect_used(param, inner);
      }
      for (const SymVar& v : defined_sym_vars(*fn->params)) own.insert(v.id());
    }
    collect_used(fn->ret, inner);
    for (const SymVar& v : inner.take()) {
      if (!own.contains(v.id())) out.add(v);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Constructors.

StructInfo object_sinfo() {
  static const StructInfo kObject(std::make_shared<const ObjectStructInfoNode>());
  return kObject;
}

StructInfo prim_sinfo(DataType dtype, SymExpr value) {
  RELAX_CHECK(!value.defined() || value.dtype() == dtype)
      << "Prim[" << dtype.to_string() << "] given a value of dtype " << value.dtype().to_string();
  return StructInfo(std::make_shared<const PrimStructInfoNode>(dtype, std::move(value)));
}

StructInfo shape_sinfo(std::vector<SymExpr> values) {
  int ndim = static_cast<int>(values.size());
  return StructInfo(std::make_shared<const ShapeStructInfoNode>(std::move(values), ndim));
}

StructInfo shape_sinfo_rank(int ndim) {
  RELAX_CHECK(ndim >= kUnknownNDim) << "bad rank " << ndim;
  return StructInfo(std::make_shared<const ShapeStructInfoNode>(std::nullopt, ndim));
}

StructInfo tensor_sinfo(std::vector<SymExpr> shape, std::optional<DataType> dtype, Device device) {
  int ndim = static_cast<int>(shape.size());
  return StructInfo(
      std::make_shared<const TensorStructInfoNode>(std::move(shape), ndim, dtype, device));
}

StructInfo tensor_sinfo_rank(int ndim, std::optional<DataType> dtype, Device device) {
  RELAX_CHECK(ndim >= kUnknownNDim) << "bad rank " << ndim;
  return StructInfo(
      std::make_shared<const TensorStructInfoNode>(std::nullopt, ndim, dtype, device));
}

StructInfo tuple_sinfo(std::vector<StructInfo> fields) {
  for (const StructInfo& f : fields) RELAX_CHECK(f.defined()) << "a tuple field has no annotation";
  return StructInfo(std::make_shared<const TupleStructInfoNode>(std::move(fields)));
}

StructInfo func_sinfo(std::vector<StructInfo> params, StructInfo ret, bool pure) {
  for (const StructInfo& p : params) RELAX_CHECK(p.defined()) << "a parameter has no annotation";
  RELAX_CHECK(ret.defined()) << "a function annotation needs a return annotation";
  return StructInfo(
      std::make_shared<const FuncStructInfoNode>(std::move(params), std::move(ret), pure));
}

StructInfo opaque_func_sinfo(StructInfo ret, bool pure) {
  RELAX_CHECK(ret.defined()) << "a function annotation needs a return annotation";
  return StructInfo(std::make_shared<const FuncStructInfoNode>(std::nullopt, std::move(ret), pure));
}

// ---------------------------------------------------------------------------
// Text.

std::string StructInfo::to_string() const {
  if (!defined()) return "<undefined>";
  switch (kind()) {
    case StructInfoKind::kObject:
      return "Object";
    case StructInfoKind::kPrim: {
      const auto* p = as<PrimStructInfoNode>();
      std::string out = "Prim[" + p->dtype.to_string();
      if (p->value.defined()) out += ", " + p->value.to_string();
      return out + "]";
    }
    case StructInfoKind::kShape: {
      const auto* s = as<ShapeStructInfoNode>();
      if (s->values) return "Shape[" + dims_text(*s->values) + "]";
      if (s->ndim == kUnknownNDim) return "Shape[]";
      return "Shape[ndim=" + std::to_string(s->ndim) + "]";
    }
    case StructInfoKind::kTensor: {
      const auto* t = as<TensorStructInfoNode>();
      std::string out = "Tensor[";
      if (t->shape) {
        out += dims_text(*t->shape);
      } else {
        out += t->ndim == kUnknownNDim ? "ndim=?" : "ndim=" + std::to_string(t->ndim);
      }
      out += ", ";
      out += t->dtype ? t->dtype->to_string() : "?";
      if (t->device.type != Device::Type::kUnknown) out += ", " + t->device.to_string();
      return out + "]";
    }
    case StructInfoKind::kTuple:
      return "Tuple[" + sinfo_list_text(as<TupleStructInfoNode>()->fields, true) + "]";
    case StructInfoKind::kFunc: {
      const auto* f = as<FuncStructInfoNode>();
      std::string out = "Func[";
      out += f->params ? sinfo_list_text(*f->params, false) : "opaque";
      out += " -> " + f->ret.to_string();
      if (!f->pure) out += ", impure";
      return out + "]";
    }
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, const StructInfo& sinfo) {
  return os << sinfo.to_string();
}

// ---------------------------------------------------------------------------
// Equality and variables.

bool struct_info_equal(const StructInfo& a, const StructInfo& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case StructInfoKind::kObject:
      return true;
    case StructInfoKind::kPrim: {
      const auto* x = a.as<PrimStructInfoNode>();
      const auto* y = b.as<PrimStructInfoNode>();
      return x->dtype == y->dtype && sym_equal(x->value, y->value);
    }
    case StructInfoKind::kShape: {
      const auto* x = a.as<ShapeStructInfoNode>();
      const auto* y = b.as<ShapeStructInfoNode>();
      return x->ndim == y->ndim && dims_equal(x->values, y->values);
    }
    case StructInfoKind::kTensor: {
      const auto* x = a.as<TensorStructInfoNode>();
      const auto* y = b.as<TensorStructInfoNode>();
      return x->ndim == y->ndim && x->dtype == y->dtype && x->device == y->device &&
             dims_equal(x->shape, y->shape);
    }
    case StructInfoKind::kTuple: {
      const auto& x = a.as<TupleStructInfoNode>()->fields;
      const auto& y = b.as<TupleStructInfoNode>()->fields;
      return std::equal(x.begin(), x.end(), y.begin(), y.end(), struct_info_equal);
    }
    case StructInfoKind::kFunc: {
      const auto* x = a.as<FuncStructInfoNode>();
      const auto* y = b.as<FuncStructInfoNode>();
      if (x->pure != y->pure || x->params.has_value() != y->params.has_value()) return false;
      if (x->params && !std::equal(x->params->begin(), x->params->end(), y->params->begin(),
                                   y->params->end(), struct_info_equal)) {
        return false;
      }
      return struct_info_equal(x->ret, y->ret);
    }
  }
  return false;
}

std::vector<SymVar> defined_sym_vars(const std::vector<StructInfo>& sinfos,
                                     const std::function<bool(const SymVar&)>& outer_known) {
  VarCollector out;
  std::vector<SymExpr> dims;
  for (const StructInfo& s : sinfos) {
    collect_defined(s, out);
    collect_solvable_dims(s, dims);
  }
  auto known = [&](const SymVar& v) { return out.contains(v) || (outer_known && outer_known(v)); };
  // Each pass defines at least one variable or ends the loop; a dim whose
  // variables are all defined has nothing left to solve.
  std::vector<bool> settled(dims.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (settled[i]) continue;
      std::optional<LinearSolution> s = solve_linear(dims[i], known);
      if (s) {
        out.add(s->var);
        settled[i] = progress = true;
      }
    }
  }
  return out.take();
}

std::vector<SymVar> defined_sym_vars(const StructInfo& sinfo) {
  return defined_sym_vars(std::vector<StructInfo>{sinfo});
}

namespace {

void append_bare_dim_vars(const StructInfo& sinfo, std::vector<SymVar>& out) {
  auto add = [&](const std::optional<std::vector<SymExpr>>& dims) {
    if (!dims) return;
    for (const SymExpr& d : *dims) {
      if (d.is_var()) out.push_back(SymVar::from_expr(d));
    }
  };
  if (const auto* t = sinfo.as<TensorStructInfoNode>()) add(t->shape);
  if (const auto* s = sinfo.as<ShapeStructInfoNode>()) add(s->values);
  if (const auto* t = sinfo.as<TupleStructInfoNode>()) {
    for (const StructInfo& f : t->fields) append_bare_dim_vars(f, out);
  }
}

}  // namespace

std::vector<SymVar> bare_dim_vars(const std::vector<StructInfo>& sinfos) {
  std::vector<SymVar> out;
  for (const StructInfo& s : sinfos) append_bare_dim_vars(s, out);
  return out;
}

std::vector<SymVar> definable_sym_vars(const StructInfo& sinfo) {
  VarCollector out;
  collect_defined(sinfo, out);
  std::vector<SymExpr> dims;
  collect_solvable_dims(sinfo, dims);
  for (const SymExpr& d : dims) {
    // Each variable of the dim, taken as the only unknown one.
    for_each_var(d, [&](const SymVar& candidate) {
      if (out.contains(candidate)) return;
      auto others_known = [&](const SymVar& v) { return v.id() != candidate.id(); };
      if (solve_linear(d, others_known)) out.add(candidate);
    });
  }
  return out.take();
}

std::vector<SymVar> used_sym_vars(const StructInfo& sinfo) {
  VarCollector out;
  collect_used(sinfo, out);
  return out.take();
}

}  // namespace relax
