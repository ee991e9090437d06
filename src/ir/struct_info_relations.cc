// Relations between StructInfos that need an Analyzer: the base check used by
// calls and match_cast, the join of two annotations (If), erasure of
// out-of-scope symbolic variables and substitution of symbolic variables.
//
// Dims are compared by proof. A dim pair the Analyzer proves equal passes; a
// pair whose difference provably excludes zero fails; anything else is left to
// a run-time check. Every function here returns its input handle unchanged
// when nothing changes, so that unchanged annotations stay shared.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "relax/ir/struct_info.h"

namespace relax {
namespace {

BaseCheck combine(BaseCheck a, BaseCheck b) { return std::min(a, b); }

// Compares two scalar values of the same dtype.
BaseCheck check_value(const SymExpr& base, const SymExpr& derived, Analyzer& analyzer) {
  if (structural_equal(base, derived)) return BaseCheck::kPass;
  if (!base.dtype().is_int() || !derived.dtype().is_int()) return BaseCheck::kRuntimeCheck;
  if (analyzer.prove_equal(base, derived)) return BaseCheck::kPass;
  ConstIntBound diff = analyzer.const_int_bound(analyzer.simplify(base - derived));
  if (diff.min_value > 0 || diff.max_value < 0) return BaseCheck::kFail;
  return BaseCheck::kRuntimeCheck;
}

// Shared by Shape and Tensor: a rank and optionally the dims.
BaseCheck check_dims(int base_ndim, const std::optional<std::vector<SymExpr>>& base_dims,
                     int derived_ndim, const std::optional<std::vector<SymExpr>>& derived_dims,
                     Analyzer& analyzer) {
  if (base_ndim == kUnknownNDim) return BaseCheck::kPass;
  if (derived_ndim == kUnknownNDim) return BaseCheck::kRuntimeCheck;
  if (base_ndim != derived_ndim) return BaseCheck::kFail;
  if (!base_dims) return BaseCheck::kPass;
  if (!derived_dims) return BaseCheck::kRuntimeCheck;
  BaseCheck result = BaseCheck::kPass;
  for (size_t i = 0; i < base_dims->size(); ++i) {
    result = combine(result, check_value((*base_dims)[i], (*derived_dims)[i], analyzer));
    if (result == BaseCheck::kFail) break;
  }
  return result;
}

bool dims_provably_equal(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b,
                         Analyzer& analyzer) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!structural_equal(a[i], b[i]) && !analyzer.prove_equal(a[i], b[i])) return false;
  }
  return true;
}

// The join of two (rank, dims) pairs.
void join_dims(int a_ndim, const std::optional<std::vector<SymExpr>>& a_dims, int b_ndim,
               const std::optional<std::vector<SymExpr>>& b_dims, Analyzer& analyzer, int& ndim,
               std::optional<std::vector<SymExpr>>& dims) {
  ndim = a_ndim == b_ndim ? a_ndim : kUnknownNDim;
  dims = std::nullopt;
  if (ndim != kUnknownNDim && a_dims && b_dims && dims_provably_equal(*a_dims, *b_dims, analyzer)) {
    dims = a_dims;
  }
}

bool mentions_out_of_scope(const SymExpr& e, const std::function<bool(const SymVar&)>& in_scope) {
  bool out = false;
  if (e.defined()) {
    for_each_var(e, [&](const SymVar& v) {
      if (!out && !in_scope(v)) out = true;
    });
  }
  return out;
}

bool any_out_of_scope(const std::optional<std::vector<SymExpr>>& dims,
                      const std::function<bool(const SymVar&)>& in_scope) {
  if (!dims) return false;
  return std::any_of(dims->begin(), dims->end(),
                     [&](const SymExpr& d) { return mentions_out_of_scope(d, in_scope); });
}

// Applies `fn` to each field; returns nullopt when every field came back unchanged.
template <typename Fn>
std::optional<std::vector<StructInfo>> map_fields(const std::vector<StructInfo>& fields, Fn&& fn) {
  std::vector<StructInfo> out;
  out.reserve(fields.size());
  bool changed = false;
  for (const StructInfo& f : fields) {
    out.push_back(fn(f));
    changed = changed || !out.back().same_as(f);
  }
  if (!changed) return std::nullopt;
  return out;
}

SymExpr substitute_dim(const SymExpr& e, const SymVarMap<SymExpr>& map, Analyzer& analyzer) {
  if (!e.defined()) return e;
  SymExpr out = substitute(e, map);
  return out.same_as(e) ? e : analyzer.simplify(out);
}

std::optional<std::vector<SymExpr>> substitute_dims(const std::vector<SymExpr>& dims,
                                                    const SymVarMap<SymExpr>& map,
                                                    Analyzer& analyzer) {
  std::vector<SymExpr> out;
  out.reserve(dims.size());
  bool changed = false;
  for (const SymExpr& d : dims) {
    out.push_back(substitute_dim(d, map, analyzer));
    changed = changed || !out.back().same_as(d);
  }
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace

BaseCheck check_base_of(const StructInfo& base, const StructInfo& derived, Analyzer& analyzer) {
  if (base.kind() == StructInfoKind::kObject) return BaseCheck::kPass;
  if (derived.kind() != base.kind()) {
    // A value known only as an Object may still be of the base's kind.
    return derived.kind() == StructInfoKind::kObject ? BaseCheck::kRuntimeCheck : BaseCheck::kFail;
  }
  switch (base.kind()) {
    case StructInfoKind::kObject:
      return BaseCheck::kPass;
    case StructInfoKind::kPrim: {
      const auto* b = base.as<PrimStructInfoNode>();
      const auto* d = derived.as<PrimStructInfoNode>();
      if (b->dtype != d->dtype) return BaseCheck::kFail;
      if (!b->value.defined()) return BaseCheck::kPass;
      if (!d->value.defined()) return BaseCheck::kRuntimeCheck;
      return check_value(b->value, d->value, analyzer);
    }
    case StructInfoKind::kShape: {
      const auto* b = base.as<ShapeStructInfoNode>();
      const auto* d = derived.as<ShapeStructInfoNode>();
      return check_dims(b->ndim, b->values, d->ndim, d->values, analyzer);
    }
    case StructInfoKind::kTensor: {
      const auto* b = base.as<TensorStructInfoNode>();
      const auto* d = derived.as<TensorStructInfoNode>();
      BaseCheck result = BaseCheck::kPass;
      if (b->dtype) {
        if (!d->dtype) {
          result = BaseCheck::kRuntimeCheck;
        } else if (*b->dtype != *d->dtype) {
          return BaseCheck::kFail;
        }
      }
      if (b->device.type != Device::Type::kUnknown) {
        if (d->device.type == Device::Type::kUnknown) {
          result = combine(result, BaseCheck::kRuntimeCheck);
        } else if (b->device != d->device) {
          return BaseCheck::kFail;
        }
      }
      return combine(result, check_dims(b->ndim, b->shape, d->ndim, d->shape, analyzer));
    }
    case StructInfoKind::kTuple: {
      const auto& b = base.as<TupleStructInfoNode>()->fields;
      const auto& d = derived.as<TupleStructInfoNode>()->fields;
      if (b.size() != d.size()) return BaseCheck::kFail;
      BaseCheck result = BaseCheck::kPass;
      for (size_t i = 0; i < b.size() && result != BaseCheck::kFail; ++i) {
        result = combine(result, check_base_of(b[i], d[i], analyzer));
      }
      return result;
    }
    case StructInfoKind::kFunc: {
      const auto* b = base.as<FuncStructInfoNode>();
      const auto* d = derived.as<FuncStructInfoNode>();
      if (b->pure && !d->pure) return BaseCheck::kFail;
      BaseCheck result = check_base_of(b->ret, d->ret, analyzer);
      if (!b->params || result == BaseCheck::kFail) return result;
      if (!d->params) return combine(result, BaseCheck::kRuntimeCheck);
      if (b->params->size() != d->params->size()) return BaseCheck::kFail;
      // Parameters are contravariant: the derived function must accept every
      // argument the base one does.
      for (size_t i = 0; i < b->params->size() && result != BaseCheck::kFail; ++i) {
        result = combine(result, check_base_of((*d->params)[i], (*b->params)[i], analyzer));
      }
      return result;
    }
  }
  return BaseCheck::kFail;
}

bool is_if_condition(const StructInfo& sinfo) {
  if (sinfo.kind() == StructInfoKind::kObject) return true;
  if (const auto* prim = sinfo.as<PrimStructInfoNode>()) return prim->dtype.is_bool();
  const auto* t = sinfo.as<TensorStructInfoNode>();
  if (t == nullptr || !t->dtype || !t->dtype->is_bool()) return false;
  if (!t->shape) return true;
  for (const SymExpr& d : *t->shape) {
    const std::optional<int64_t> c = d.as_const();
    if (c && *c != 1) return false;
  }
  return true;
}

StructInfo struct_info_lca(const StructInfo& a, const StructInfo& b, Analyzer& analyzer) {
  if (a.same_as(b)) return a;
  if (a.kind() != b.kind()) return object_sinfo();
  switch (a.kind()) {
    case StructInfoKind::kObject:
      return a;
    case StructInfoKind::kPrim: {
      const auto* x = a.as<PrimStructInfoNode>();
      const auto* y = b.as<PrimStructInfoNode>();
      if (x->dtype != y->dtype) return object_sinfo();
      if (x->value.defined() && y->value.defined() &&
          check_value(x->value, y->value, analyzer) == BaseCheck::kPass) {
        return a;
      }
      return x->value.defined() ? prim_sinfo(x->dtype) : a;
    }
    case StructInfoKind::kShape: {
      const auto* x = a.as<ShapeStructInfoNode>();
      const auto* y = b.as<ShapeStructInfoNode>();
      int ndim;
      std::optional<std::vector<SymExpr>> dims;
      join_dims(x->ndim, x->values, y->ndim, y->values, analyzer, ndim, dims);
      if (dims) return a;
      return shape_sinfo_rank(ndim);
    }
    case StructInfoKind::kTensor: {
      const auto* x = a.as<TensorStructInfoNode>();
      const auto* y = b.as<TensorStructInfoNode>();
      int ndim;
      std::optional<std::vector<SymExpr>> dims;
      join_dims(x->ndim, x->shape, y->ndim, y->shape, analyzer, ndim, dims);
      std::optional<DataType> dtype = x->dtype == y->dtype ? x->dtype : std::nullopt;
      Device device = x->device == y->device ? x->device : Device();
      if (dims && dtype == x->dtype && device == x->device) return a;
      if (dims) return tensor_sinfo(*dims, dtype, device);
      return tensor_sinfo_rank(ndim, dtype, device);
    }
    case StructInfoKind::kTuple: {
      const auto& x = a.as<TupleStructInfoNode>()->fields;
      const auto& y = b.as<TupleStructInfoNode>()->fields;
      if (x.size() != y.size()) return object_sinfo();
      std::vector<StructInfo> fields;
      bool changed = false;
      for (size_t i = 0; i < x.size(); ++i) {
        fields.push_back(struct_info_lca(x[i], y[i], analyzer));
        changed = changed || !fields.back().same_as(x[i]);
      }
      return changed ? tuple_sinfo(std::move(fields)) : a;
    }
    case StructInfoKind::kFunc: {
      const auto* x = a.as<FuncStructInfoNode>();
      const auto* y = b.as<FuncStructInfoNode>();
      if (struct_info_equal(a, b)) return a;
      // Parameter annotations would need a meet, not a join; a caller of the
      // joined function only learns that it returns the join of both returns.
      return opaque_func_sinfo(struct_info_lca(x->ret, y->ret, analyzer), x->pure && y->pure);
    }
  }
  return object_sinfo();
}

StructInfo erase_to_scope(const StructInfo& sinfo,
                          const std::function<bool(const SymVar&)>& in_scope) {
  switch (sinfo.kind()) {
    case StructInfoKind::kObject:
      return sinfo;
    case StructInfoKind::kPrim: {
      const auto* p = sinfo.as<PrimStructInfoNode>();
      return mentions_out_of_scope(p->value, in_scope) ? prim_sinfo(p->dtype) : sinfo;
    }
    case StructInfoKind::kShape: {
      const auto* s = sinfo.as<ShapeStructInfoNode>();
      return any_out_of_scope(s->values, in_scope) ? shape_sinfo_rank(s->ndim) : sinfo;
    }
    case StructInfoKind::kTensor: {
      const auto* t = sinfo.as<TensorStructInfoNode>();
      if (!any_out_of_scope(t->shape, in_scope)) return sinfo;
      return tensor_sinfo_rank(t->ndim, t->dtype, t->device);
    }
    case StructInfoKind::kTuple: {
      auto fields = map_fields(sinfo.as<TupleStructInfoNode>()->fields,
                               [&](const StructInfo& f) { return erase_to_scope(f, in_scope); });
      return fields ? tuple_sinfo(std::move(*fields)) : sinfo;
    }
    case StructInfoKind::kFunc: {
      const auto* f = sinfo.as<FuncStructInfoNode>();
      // The variables the parameters define are bound by the annotation itself.
      absl::flat_hash_set<uint64_t> own;
      if (f->params) {
        for (const SymVar& v : defined_sym_vars(*f->params)) own.insert(v.id());
      }
      std::function<bool(const SymVar&)> inner = [&](const SymVar& v) {
        return own.contains(v.id()) || in_scope(v);
      };
      std::optional<std::vector<StructInfo>> params;
      bool changed = false;
      if (f->params) {
        auto mapped =
            map_fields(*f->params, [&](const StructInfo& p) { return erase_to_scope(p, inner); });
        changed = mapped.has_value();
        params = mapped ? std::move(*mapped) : *f->params;
      }
      StructInfo ret = erase_to_scope(f->ret, inner);
      if (!changed && ret.same_as(f->ret)) return sinfo;
      return params ? func_sinfo(std::move(*params), ret, f->pure)
                    : opaque_func_sinfo(ret, f->pure);
    }
  }
  return sinfo;
}

StructInfo substitute_sinfo(const StructInfo& sinfo, const SymVarMap<SymExpr>& map,
                            Analyzer& analyzer) {
  if (map.empty()) return sinfo;
  switch (sinfo.kind()) {
    case StructInfoKind::kObject:
      return sinfo;
    case StructInfoKind::kPrim: {
      const auto* p = sinfo.as<PrimStructInfoNode>();
      SymExpr value = substitute_dim(p->value, map, analyzer);
      return value.same_as(p->value) ? sinfo : prim_sinfo(p->dtype, value);
    }
    case StructInfoKind::kShape: {
      const auto* s = sinfo.as<ShapeStructInfoNode>();
      if (!s->values) return sinfo;
      auto dims = substitute_dims(*s->values, map, analyzer);
      return dims ? shape_sinfo(std::move(*dims)) : sinfo;
    }
    case StructInfoKind::kTensor: {
      const auto* t = sinfo.as<TensorStructInfoNode>();
      if (!t->shape) return sinfo;
      auto dims = substitute_dims(*t->shape, map, analyzer);
      return dims ? tensor_sinfo(std::move(*dims), t->dtype, t->device) : sinfo;
    }
    case StructInfoKind::kTuple: {
      auto fields = map_fields(sinfo.as<TupleStructInfoNode>()->fields, [&](const StructInfo& f) {
        return substitute_sinfo(f, map, analyzer);
      });
      return fields ? tuple_sinfo(std::move(*fields)) : sinfo;
    }
    case StructInfoKind::kFunc: {
      const auto* f = sinfo.as<FuncStructInfoNode>();
      auto sub = [&](const StructInfo& s) { return substitute_sinfo(s, map, analyzer); };
      std::optional<std::vector<StructInfo>> params;
      bool changed = false;
      if (f->params) {
        auto mapped = map_fields(*f->params, sub);
        changed = mapped.has_value();
        params = mapped ? std::move(*mapped) : *f->params;
      }
      StructInfo ret = sub(f->ret);
      if (!changed && ret.same_as(f->ret)) return sinfo;
      return params ? func_sinfo(std::move(*params), ret, f->pure)
                    : opaque_func_sinfo(ret, f->pure);
    }
  }
  return sinfo;
}

}  // namespace relax
