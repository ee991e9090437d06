// Helpers shared by structural_equal.cc and structural_hash.cc (private to src/ir).
//
// The two files walk IR in exactly the same order and bind variables at exactly
// the same places; that is what keeps the hash consistent with equality. When
// one of them learns a new node kind or field, the other must learn it too.
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

/// The symbolic variables that a list of parameter annotations binds, in order
/// (repeats allowed). Both walkers bind them all before comparing or hashing the
/// parameters, because a parameter may use a variable that a later one binds
/// (`fn(x: Tensor[(n * 2,)], y: Tensor[(n,)])`).
inline std::vector<SymVar> binding_sym_vars(const std::vector<StructInfo>& annotations) {
  std::vector<SymVar> out;
  for (const StructInfo& s : annotations) {
    if (!s.defined()) continue;
    for (const SymVar& v : defined_sym_vars(s)) out.push_back(v);
  }
  return out;
}

inline std::vector<SymVar> binding_sym_vars(const std::vector<Var>& params) {
  std::vector<StructInfo> annotations;
  for (const Var& p : params) annotations.push_back(p.struct_info());
  return binding_sym_vars(annotations);
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
