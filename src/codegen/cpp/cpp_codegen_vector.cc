// Vector values of the loop-level IR (ramp, broadcast, vector loads and the
// lane-wise operators over them) as GCC vector-extension C++, and vector stores.
//
// A vector of L lanes of element type T is `relax_v<T, L>`, a GCC vector type of
// L * sizeof(T) bytes (the prelude below); a bool vector is a relax_v<uint8_t, L>
// of 0s and 1s, which is also how a bool buffer stores its elements, so that
// bool loads and stores are plain copies. The mapping:
//   - + - * / are the vector operators (integer lanes wrap, as 8- and 16-bit
//     scalar arithmetic is cast back to wrap);
//   - ramp(b, s, L) is relax_vramp<L>(b, s), broadcast(x, L)
//     relax_vbroadcast<T, L>(x);
//   - min and max are relax_vmin / relax_vmax, one comparison and select of the
//     whole vectors (std::min / std::max lane by lane);
//   - every other operator (floordiv, floormod, comparisons, logic,
//     select, casts to bool, intrinsic calls) is relax_vmap<R, L>(f, a, ...):
//     a lambda applying the scalar operator as the scalar code generator spells
//     it to each lane, in a loop of L that g++ vectorises (the intrinsics are
//     relax::vec_* of kernel_math.h, written to vectorise); other casts are
//     __builtin_convertvector, which converts as static_cast does;
//   - a load or store whose one vector index is a ramp of stride 1 in a
//     dimension of stride 1 is contiguous: relax_vload / relax_vstore copy
//     L elements through memcpy (no alignment assumed); any other vector
//     index gathers (relax_vgather) or scatters (relax_vscatter, in lane order)
//     through the vector of flat offsets.
// A vector store evaluates its whole value before writing any lane, as the
// evaluator does. float16 and bfloat16 vectors are not generated (an
// Unimplemented error): their scalar code widens and narrows per element.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/cpp/cpp_codegen_impl.h"
#include "relax/shape/intrinsics.h"

namespace relax::cpp_codegen {

const char kVectorPrelude[] = R"cpp(// ---- Vector values (GCC vector extension) ----------------------------------
// Inline and local to the unit: no vector crosses an ABI boundary (operands go
// by reference; compiled for an ISA narrower than a vector, g++ still notes,
// harmlessly, how one would be returned).
namespace {

template <class T, int L>
struct relax_vec_of {
  typedef T type __attribute__((vector_size(sizeof(T) * L)));
  // The same vector at any address, aliasing the elements: one whole-width load or store.
  typedef T unaligned __attribute__((vector_size(sizeof(T) * L), aligned(alignof(T)), may_alias));
};
template <class T, int L>
using relax_v = typename relax_vec_of<T, L>::type;

// L contiguous elements from p, which need not be aligned: one load of the whole vector (a
// memcpy g++ copied as two halves when it prefers 256-bit moves, and a 512-bit read of them
// stalled on the two stores).
template <class T, int L>
inline relax_v<T, L> relax_vload(const T* p) {
  return *reinterpret_cast<const typename relax_vec_of<T, L>::unaligned*>(p);
}
template <class T, int L>
inline void relax_vstore(T* p, const relax_v<T, L>& v) {
  *reinterpret_cast<typename relax_vec_of<T, L>::unaligned*>(p) = v;
}
template <class T, int L>
inline relax_v<T, L> relax_vgather(const T* p, const relax_v<int64_t, L>& offsets) {
  T out[L];
  for (int l = 0; l < L; ++l) out[l] = p[offsets[l]];
  relax_v<T, L> r;
  std::memcpy(&r, out, sizeof r);
  return r;
}
// In lane order: where two lanes write one element, the last lane's value stays.
template <class T, int L>
inline void relax_vscatter(T* p, const relax_v<int64_t, L>& offsets, const relax_v<T, L>& v) {
  for (int l = 0; l < L; ++l) p[offsets[l]] = v[l];
}
template <int L>
inline relax_v<int64_t, L> relax_vramp(int64_t base, int64_t stride) {
  int64_t out[L];
  for (int l = 0; l < L; ++l) out[l] = base + static_cast<int64_t>(l) * stride;
  relax_v<int64_t, L> r;
  std::memcpy(&r, out, sizeof r);
  return r;
}
template <class T, int L>
inline relax_v<T, L> relax_vbroadcast(T x) {
  T out[L];
  for (int l = 0; l < L; ++l) out[l] = x;
  relax_v<T, L> r;
  std::memcpy(&r, out, sizeof r);
  return r;
}
// std::min / std::max lane by lane, as one comparison and select of whole vectors
// (g++ makes packed min/max of them; a relax_vmap of std::max it left scalar).
template <class V>
inline V relax_vmin(const V& a, const V& b) {
  return b < a ? b : a;
}
template <class V>
inline V relax_vmax(const V& a, const V& b) {
  return a < b ? b : a;
}
// f applied to lane l of each operand, for each l: the lane-wise form of a
// scalar operator, in a loop of L the compiler vectorises.
template <class R, int L, class F, class... V>
inline relax_v<R, L> relax_vmap(F f, const V&... v) {
  R out[L];
  for (int l = 0; l < L; ++l) out[l] = f(v[l]...);
  relax_v<R, L> r;
  std::memcpy(&r, out, sizeof r);
  return r;
}

}  // namespace

)cpp";

namespace {

/// The dtype of one lane of `t`.
DataType lane_of(DataType t) { return DataType{t.code, t.bits, 1}; }

}  // namespace

std::string KernelEmitter::vector_element_type(DataType dtype, const std::string& what) {
  const DataType lane = lane_of(dtype);
  if (is_half_float(lane)) {
    fail(absl::StatusCode::kUnimplemented,
         absl::StrCat(what, " has dtype ", dtype.to_string(),
                      ": vectors of float16 and bfloat16 are not generated (vectorize leaves such loops as "
                      "`omp simd` loops)"));
    return "float";
  }
  if (lane.is_bool()) return "uint8_t";
  return checked_type(lane, what);
}

CExpr KernelEmitter::lanewise(const SymExpr& e, const std::string& result_type,
                              const std::string& body) {
  const int lanes = e.dtype().lanes;
  std::string params;
  std::string args;
  for (size_t i = 0; i < e.num_operands(); ++i) {
    const SymExpr& x = e.operand(i);
    const std::string t = vector_element_type(x.dtype(), absl::StrCat("an operand of `", e.to_string(), "`"));
    absl::StrAppend(&params, i > 0 ? ", " : "", t, " x", i);
    absl::StrAppend(&args, ", ", vector_expr(x).text);
  }
  return {absl::StrCat("relax_vmap<", result_type, ", ", lanes, ">([](", params, ") { return ", body, "; }", args,
                       ")"),
          kPrecPrimary};
}

std::string KernelEmitter::flat_offsets(const BufferInfo& buffer, const std::vector<SymExpr>& indices, int lanes) {
  std::string text = absl::StrCat("relax_vbroadcast<int64_t, ", lanes, ">(0)");
  for (size_t d = 0; d < indices.size(); ++d) {
    const SymExpr& index = indices[d];
    const std::string& stride = buffer.strides[d];
    if (stride == "0") continue;
    const std::string term = index.dtype().lanes != 1 ? vector_expr(index).text
                                                      : "static_cast<int64_t>(" + as_int64(index).text + ")";
    absl::StrAppend(&text, " + ", term, stride == "1" ? "" : " * static_cast<int64_t>(" + stride + ")");
  }
  return "(" + text + ")";
}

std::optional<std::string> KernelEmitter::contiguous_offset(const BufferInfo& buffer,
                                                            const std::vector<SymExpr>& indices) {
  std::vector<SymExpr> scalar = indices;
  int vectors = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d].dtype().lanes == 1) continue;
    ++vectors;
    const SymExpr& index = indices[d];
    if (index.kind() != SymKind::kRamp || !index.operand(1).is_const(1) || buffer.strides[d] != "1") {
      return std::nullopt;
    }
    scalar[d] = index.operand(0);
  }
  if (vectors != 1) return std::nullopt;
  return flat_index(buffer, scalar);
}

CExpr KernelEmitter::vector_load(const SymExpr& e) {
  const BufferNode* node = e->buffer_node();
  auto it = buffers_.find(node);
  if (it == buffers_.end()) {
    fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat("load from buffer `", node->name,
                      "`, which is neither a parameter nor allocated around the load"));
    return {"0", kPrecPrimary};
  }
  const BufferInfo& info = it->second;
  const int lanes = e.dtype().lanes;
  const std::string t = vector_element_type(e.dtype(), absl::StrCat("the load `", e.to_string(), "`"));
  std::vector<SymExpr> indices(e->operands().begin(), e->operands().end());
  if (std::optional<std::string> offset = contiguous_offset(info, indices)) {
    return {absl::StrCat("relax_vload<", t, ", ", lanes, ">(", info.name, " + (", *offset, "))"), kPrecPrimary};
  }
  return {absl::StrCat("relax_vgather<", t, ", ", lanes, ">(", info.name, ", ", flat_offsets(info, indices, lanes),
                       ")"),
          kPrecPrimary};
}

CExpr KernelEmitter::vector_expr(const SymExpr& e) {
  if (!ok()) return {"0", kPrecPrimary};
  const int lanes = e.dtype().lanes;
  const std::string what = absl::StrCat("the value `", e.to_string(), "`");
  const std::string type = vector_element_type(e.dtype(), what);
  if (!ok()) return {"0", kPrecPrimary};
  auto native = [&](std::string_view op) -> CExpr {
    const CExpr a = vector_expr(e.operand(0));
    const CExpr b = vector_expr(e.operand(1));
    return {absl::StrCat("(", a.text, " ", std::string(op), " ", b.text, ")"), kPrecPrimary};
  };
  const std::string operand_type =
      e.num_operands() > 0 && e.operand(e.kind() == SymKind::kSelect ? 1 : 0).dtype().lanes == lanes
          ? vector_element_type(e.operand(e.kind() == SymKind::kSelect ? 1 : 0).dtype(), what)
          : type;
  const CppSymKind& spelled = cpp_sym_kind(e.kind());
  switch (spelled.vector) {
    case CppSymKind::Vector::kNative:
      return native(spelled.vector_spelling);
    case CppSymKind::Vector::kLanes:
      return lanewise(e, type, expand_spelling(spelled.vector_spelling, type, {}).text);
    case CppSymKind::Vector::kBoolLanes:
      return lanewise(e, "uint8_t", absl::StrCat("static_cast<uint8_t>(", std::string(spelled.vector_spelling), ")"));
    case CppSymKind::Vector::kOwn:
      break;
  }
  switch (e.kind()) {
    case SymKind::kMin:
    case SymKind::kMax: {
      const CExpr a = vector_expr(e.operand(0));
      const CExpr b = vector_expr(e.operand(1));
      return {absl::StrCat(e.kind() == SymKind::kMin ? "relax_vmin(" : "relax_vmax(", a.text, ", ", b.text, ")"),
              kPrecPrimary};
    }
    case SymKind::kRamp:
      return {absl::StrCat("relax_vramp<", lanes, ">(", value(e.operand(0)), ", ", value(e.operand(1)), ")"),
              kPrecPrimary};
    case SymKind::kBroadcast: {
      const std::string x = value(e.operand(0));
      return {absl::StrCat("relax_vbroadcast<", type, ", ", lanes, ">(static_cast<", type, ">(", x, "))"),
              kPrecPrimary};
    }
    case SymKind::kCast: {
      const SymExpr& x = e.operand(0);
      if (x.dtype() == e.dtype()) return vector_expr(x);
      if (e.dtype().is_bool()) return lanewise(e, "uint8_t", "static_cast<uint8_t>(x0 != 0)");
      return {absl::StrCat("__builtin_convertvector(", vector_expr(x).text, ", relax_v<", type, ", ", lanes, ">)"),
              kPrecPrimary};
    }
    case SymKind::kCall: {
      const IntrinsicInfo& row = intrinsic_info(e->intrinsic());
      const CppIntrinsic& cpp = cpp_intrinsic(e->intrinsic());
      const DataType operand_dtype = lane_of(e.operand(0).dtype());
      const std::string_view spelling = operand_dtype.is_float() ? cpp.float_spelling : cpp.int_spelling;
      if (spelling.empty()) {
        fail(absl::StatusCode::kInternal, absl::StrCat("intrinsic ", std::string(row.name), " of dtype ",
                                                       operand_dtype.to_string(), " in `", e.to_string(), "`"));
        return {"0", kPrecPrimary};
      }
      std::vector<CExpr> lanes_of_operands;
      for (size_t i = 0; i < e.num_operands(); ++i) lanes_of_operands.push_back({absl::StrCat("x", i), kPrecPrimary});
      const std::string body = expand_spelling(spelling, operand_type, lanes_of_operands).text;
      if (e.dtype().is_bool()) return lanewise(e, "uint8_t", absl::StrCat("static_cast<uint8_t>(", body, ")"));
      return lanewise(e, type, absl::StrCat("static_cast<", type, ">(", body, ")"));
    }
    case SymKind::kBufferLoad:
      return vector_load(e);
    default:
      break;
  }
  fail(absl::StatusCode::kInternal,
       absl::StrCat("a vector value of kind ", std::string(sym_kind_name(e.kind())), ": `", e.to_string(), "`"));
  return {"0", kPrecPrimary};
}

void KernelEmitter::emit_vector_store(const BufferStoreNode& node, const BufferInfo& info) {
  const int lanes = node.value.dtype().lanes;
  const std::string t = vector_element_type(node.value.dtype(), absl::StrCat("the store to `", node.buffer.name(), "`"));
  const std::string v = vector_expr(node.value).text;
  if (std::optional<std::string> offset = contiguous_offset(info, node.indices)) {
    line(absl::StrCat("relax_vstore<", t, ", ", lanes, ">(", info.name, " + (", *offset, "), ", v, ");"));
    return;
  }
  // The offsets first, then the value: both are computed before any lane is written.
  line(absl::StrCat("relax_vscatter<", t, ", ", lanes, ">(", info.name, ", ", flat_offsets(info, node.indices, lanes),
                    ", ", v, ");"));
}

}  // namespace relax::cpp_codegen
