// Helpers shared by structural equality and structural hashing (private to
// src/ir). Both walk the field descriptions of structural_fields.h.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/struct_info.h"
#include "relax/runtime/tensor.h"

namespace relax::detail {

/// Whether a SymExpr (or annotation) stands where it may bind variables.
enum class BindMode : uint8_t {
  kUse,     ///< every variable is a use
  kDefine,  ///< a bare variable not yet bound is bound here
};

/// The element bytes of a host tensor in row-major order (strides resolved), or
/// nullopt when the data is not on the host (compared by storage identity then).
inline std::optional<std::string> host_bytes(const runtime::Tensor& t) {
  if (t.device().type != Device::Type::kCPU || t.data() == nullptr) {
    if (t.numel() == 0) return std::string();
    return std::nullopt;
  }
  const size_t elem = t.element_bytes();
  const auto* base = static_cast<const char*>(t.data());
  if (t.is_contiguous()) return std::string(base, t.nbytes());
  std::string out;
  out.reserve(t.nbytes());
  const std::vector<int64_t>& shape = t.shape();
  const std::vector<int64_t>& strides = t.strides();
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    out.append(base + offset * static_cast<int64_t>(elem), elem);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

/// The symbolic variables that a match_cast pattern or a Func annotation's
/// parameter list binds, in order. Both walkers bind them all before comparing
/// or hashing the annotations (define_together in structural_fields.h),
/// because one may use a variable that a later one binds
/// (`Func[(Tensor[(n * 2,)], Tensor[(n,)]) -> ...]`). The walkers do not pass
/// the enclosing scope, which decides what a pattern such as
/// `Tensor[(m + k * 2,)]` defines (k, when m is defined outside), so this is
/// definable_sym_vars (struct_info.h), a superset of what any scope gives: the
/// extra variables are those the enclosing scope defines, already bound when
/// the walk starts at a function, which prebinding skips. (When two fragments
/// are compared without their function, such an outer variable is bound here
/// like a bare dim of a pattern always was.)
inline std::vector<SymVar> binding_sym_vars(const std::vector<StructInfo>& annotations) {
  std::vector<SymVar> out;
  for (const StructInfo& s : annotations) {
    if (!s.defined()) continue;
    for (const SymVar& v : definable_sym_vars(s)) out.push_back(v);
  }
  return out;
}

/// As above for a single match_cast pattern.
inline std::vector<SymVar> binding_sym_vars(const StructInfo& pattern) {
  return binding_sym_vars(std::vector<StructInfo>{pattern});
}

/// The symbolic variables that a function's parameters define, in order, by
/// the definition rule of struct_info.h (a function sees no enclosing scope).
inline std::vector<SymVar> binding_sym_vars(const std::vector<Var>& params) {
  std::vector<StructInfo> annotations;
  for (const Var& p : params) {
    if (p.struct_info().defined()) annotations.push_back(p.struct_info());
  }
  return defined_sym_vars(annotations);
}

/// As above for PrimFunc parameters: scalars, and bare-variable buffer dims and strides.
inline std::vector<SymVar> binding_sym_vars(const std::vector<PrimParam>& params) {
  std::vector<SymVar> out;
  for (const PrimParam& p : params) {
    if (p.scalar) out.push_back(*p.scalar);
    if (!p.buffer) continue;
    for (const SymExpr& d : p.buffer->shape()) {
      if (d.is_var()) out.push_back(SymVar::from_expr(d));
    }
    for (const SymExpr& d : (*p.buffer)->strides) {
      if (d.is_var()) out.push_back(SymVar::from_expr(d));
    }
  }
  return out;
}

/// Doubles compare (and hash) by their bits, so that NaN attributes equal themselves.
inline uint64_t double_bits(double v) { return std::bit_cast<uint64_t>(v); }

}  // namespace relax::detail
