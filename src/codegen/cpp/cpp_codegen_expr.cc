// Values of the loop-level IR as C++ expressions.
//
// Every SymExpr node becomes an expression of its dtype's C++ type (bool,
// int8_t ... uint64_t, float, double), written with the fewest parentheses
// C++'s precedence allows. The choices that keep the IR's meaning:
//   - constants carry their type (INT64_C(5), 2.5f, HUGE_VALF, NAN), so that
//     arithmetic on constants alone happens in the right width; an integer
//     constant is written plainly (`i < 4`) where the context fixes its type:
//     next to a non-constant operand, as an argument of an explicitly typed
//     helper, or as a whole value assigned to a typed destination;
//   - arithmetic on 8- and 16-bit integers, which C++ promotes to int, is cast
//     back to its type, so that it wraps as the IR says;
//   - floordiv/floormod go through the generated helpers relax_floordiv and
//     relax_floormod (C++'s / and % truncate toward zero);
//   - min/max are std::min<T>/std::max<T>, select is `c ? a : b`, a cast to
//     bool is `x != 0`, other casts static_cast;
//   - intrinsics are written as the intrinsic table spells them (relax/shape/
//     intrinsics.h): exp, log, sigmoid, tanh and erf as relax::vec_* (relax/
//     support/kernel_math.h, copied into the unit: vectorisable for float32,
//     libm for float64), the others as the <cmath> overloads of the operand's
//     type (float ones for float32), rsqrt written out, and the prelude's
//     helpers for integer abs and the shifts;
//   - a load from a bool buffer (stored as uint8_t) reads `A[i] != 0`.
//   - float16 and bfloat16 are stored in 16 bits and computed as float: a load
//     widens (relax_float16_load), a store narrows (relax_float16_store), a
//     cast to them rounds to 16 bits of format (relax_round_float16), all
//     through the prelude's copy of relax/support/half_float.h, the one
//     implementation of these roundings (ties to even, NaN kept).
// Vector values (lanes > 1) are cpp_codegen_vector.cc's. Unsupported dtypes,
// unknown variables and buffers are errors:
// the first is recorded on the emitter, whose emit() then returns it instead of
// source, and the expression in its place is written as `0` only so that the
// walk can finish (that text is never compiled).
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen/cpp/cpp_codegen_impl.h"
#include "relax/shape/intrinsics.h"

namespace relax::cpp_codegen {
namespace {

bool is_narrow_int(DataType t) { return t.is_int() && t.bits < 32; }

/// The shortest %g form with at most `max_digits` significant digits that
/// reads back as `v` in the dtype (float when `single`).
std::string shortest_decimal(double v, bool single) {
  const int max_digits = single ? 9 : 17;
  char buf[64];
  for (int digits = 1; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    const double back = std::strtod(buf, nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
  }
  std::string text = buf;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

/// Whether `text` is one call `f(...)` (a name, maybe qualified or with template
/// arguments, then parentheses that close at its end).
bool is_single_call(std::string_view text) {
  const size_t open = text.find('(');
  if (open == std::string_view::npos || open == 0 || text.back() != ')') return false;
  for (size_t i = 0; i < open; ++i) {
    const char c = text[i];
    const bool name_char = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
                           c == '<' || c == '>' || c == '$';
    if (!name_char) return false;
  }
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i + 1 == text.size();
  }
  return false;
}

}  // namespace

CExpr expand_spelling(std::string_view spelling, const std::string& type,
                      const std::vector<CExpr>& operands) {
  std::string text;
  for (size_t i = 0; i < spelling.size(); ++i) {
    const char c = spelling[i];
    if (c != '$' || i + 1 == spelling.size()) {
      text.push_back(c);
      continue;
    }
    const char next = spelling[++i];
    if (next == 'T') {
      text += type;
      continue;
    }
    if (next == 'O') {
      text += type == "float" ? "1.0f" : type == "double" ? "1.0" : "1";
      continue;
    }
    const size_t k = static_cast<size_t>(next - '0');
    const CExpr& operand = operands.at(k);
    // A whole argument of a call needs no parentheses; anywhere else an operand
    // that is not primary does (`-$0`, `$0 & $1`).
    const char before = i >= 2 ? spelling[i - 2] : '\0';
    const char after = i + 1 < spelling.size() ? spelling[i + 1] : '\0';
    const bool opens = before == '(' || (before == ' ' && i >= 3 && spelling[i - 3] == ',');
    const bool argument = opens && (after == ')' || after == ',');
    const bool wrap = !argument && operand.prec < kPrecPrimary;
    text += wrap ? "(" + operand.text + ")" : operand.text;
  }
  if (is_single_call(spelling)) return {std::move(text), kPrecPrimary};
  return {"(" + text + ")", kPrecPrimary};
}

std::string KernelEmitter::checked_type(DataType dtype, const std::string& what) {
  std::string type = value_type(dtype);
  if (type.empty()) {
    fail(absl::StatusCode::kUnimplemented,
         absl::StrCat(what, " has dtype ", dtype.to_string(),
                      ", which the C++ code generator does not support (it supports bool, "
                      "int8..int64, uint8..uint64, float16, bfloat16, float32 and float64)"));
    return "int64_t";
  }
  return type;
}

std::string KernelEmitter::var_name(const SymVar& v) {
  auto it = vars_.find(v);
  if (it != vars_.end()) return it->second;
  fail(absl::StatusCode::kInvalidArgument,
       absl::StrCat("variable `", v.name(), "` is used where it is not defined"));
  return "0";
}

std::string KernelEmitter::value(const SymExpr& e) { return expr(e, /*typed=*/true).text; }

CExpr KernelEmitter::as_int64(const SymExpr& e) {
  CExpr c = expr(e, /*typed=*/true);
  if (e.dtype() == DataType::int64()) return c;
  return {absl::StrCat("static_cast<int64_t>(", c.text, ")"), kPrecPrimary};
}

CExpr KernelEmitter::literal(const SymExpr& e, bool typed) {
  const DataType t = e.dtype();
  if (e.kind() == SymKind::kFloatImm) {
    const double v = e->float_value();
    // float16 and bfloat16 constants are float values (computed as float).
    const bool single = t == DataType::float32() || is_half_float(t);
    if (std::isnan(v)) return {single ? "NAN" : "static_cast<double>(NAN)", kPrecPrimary};
    if (std::isinf(v)) {
      const char* inf = single ? "HUGE_VALF" : "HUGE_VAL";
      if (v > 0) return {inf, kPrecPrimary};
      return {absl::StrCat("-", inf), kPrecUnary};
    }
    std::string text = shortest_decimal(v, single) + (single ? "f" : "");
    return {text, text[0] == '-' ? kPrecUnary : kPrecPrimary};
  }
  const int64_t v = *e.as_const();
  if (t.is_bool()) return {v != 0 ? "true" : "false", kPrecPrimary};
  if (t == DataType::int64() || t == DataType::int32()) {
    // An int literal is int32_t; in a typed context it converts without loss.
    const bool plain = v > INT32_MIN && v <= INT32_MAX && (typed || t.bits == 32);
    if (plain) return {absl::StrCat(v), v < 0 ? kPrecUnary : kPrecPrimary};
    const char* macro = t.bits == 64 ? "INT64_C" : "INT32_C";
    const int64_t lowest = t.bits == 64 ? INT64_MIN : INT32_MIN;
    if (v == lowest) {
      // -9223372036854775808 is not a literal: the minus applies to a value too large.
      return {absl::StrCat("(-", macro, "(", -(v + 1), ") - 1)"), kPrecPrimary};
    }
    return {absl::StrCat(macro, "(", v, ")"), kPrecPrimary};
  }
  if (t.code == DataType::Code::kUInt && (t.bits == 64 || t.bits == 32)) {
    return {absl::StrCat(t.bits == 64 ? "UINT64_C(" : "UINT32_C(", v, ")"), kPrecPrimary};
  }
  return {absl::StrCat("static_cast<", value_type(t), ">(", v, ")"), kPrecPrimary};
}

CExpr KernelEmitter::binary(const SymExpr& e, std::string_view op, int prec) {
  const SymExpr& x = e.operand(0);
  const SymExpr& y = e.operand(1);
  const CExpr a = expr(x, y.kind() != SymKind::kIntImm);
  const CExpr b = expr(y, x.kind() != SymKind::kIntImm);
  // Left-associative: the right operand needs parentheses at equal precedence.
  // Comparisons never chain unparenthesized (a < b < c means something else).
  const bool compare = prec == kPrecEquality || prec == kPrecRelational;
  const std::string lhs = a.prec < prec || (compare && a.prec <= kPrecRelational) ? "(" + a.text + ")" : a.text;
  const std::string rhs = b.prec <= prec || (compare && b.prec <= kPrecRelational) ? "(" + b.text + ")" : b.text;
  std::string text = absl::StrCat(lhs, " ", std::string(op), " ", rhs);
  if (is_narrow_int(e.dtype()) && prec >= kPrecAdd) {
    return {absl::StrCat("static_cast<", value_type(e.dtype()), ">(", text, ")"), kPrecPrimary};
  }
  return {std::move(text), prec};
}

CExpr KernelEmitter::call(const SymExpr& e) {
  const IntrinsicInfo& row = intrinsic_info(e->intrinsic());
  const CppIntrinsic& cpp = cpp_intrinsic(e->intrinsic());
  const DataType operand_dtype = e.operand(0).dtype();
  std::string_view spelling = operand_dtype.is_float() ? cpp.float_spelling : cpp.int_spelling;
  // Device code: float intrinsics are the CUDA prelude's relax_<name> overloads
  // (src/codegen/cuda/cuda_prelude.cc), integer ones the same helpers as here.
  std::string device_spelling;
  if (device_ && operand_dtype.is_float()) {
    device_spelling = absl::StrCat("relax_", std::string(row.name), "($0");
    for (int i = 1; i < row.arity; ++i) absl::StrAppend(&device_spelling, ", $", i);
    device_spelling += ")";
    spelling = device_spelling;
  }
  if (spelling.empty()) {
    // SymExpr's constructors admit only the dtypes of the intrinsic's row.
    fail(absl::StatusCode::kInternal, absl::StrCat("intrinsic ", std::string(row.name), " of dtype ",
                                                   operand_dtype.to_string(), " in `", e.to_string(), "`"));
    return {"0", kPrecPrimary};
  }
  std::vector<CExpr> operands;
  for (size_t i = 0; i < e.num_operands(); ++i) operands.push_back(expr(e.operand(i), /*typed=*/true));
  return expand_spelling(spelling, value_type(operand_dtype), operands);
}

std::string KernelEmitter::flat_index(const BufferInfo& buffer, const std::vector<SymExpr>& indices) {
  std::string text;
  for (size_t d = 0; d < indices.size(); ++d) {
    const std::string& stride = buffer.strides[d];
    if (indices[d].is_const(0) || stride == "0") continue;
    const std::optional<int64_t> constant_index = indices[d].as_const();
    int64_t constant_stride = 0;
    if (constant_index && absl::SimpleAtoi(stride, &constant_stride)) {
      // Folded here: a product of two plain literals would be computed in int.
      if (!text.empty()) absl::StrAppend(&text, " + ");
      absl::StrAppend(&text, *constant_index * constant_stride);
      continue;
    }
    const CExpr index = as_int64(indices[d]);
    std::string term;
    if (stride == "1") {
      term = index.text;
    } else {
      term = absl::StrCat(index.prec < kPrecMul ? "(" + index.text + ")" : index.text, " * ", stride);
    }
    // Terms are summed left to right; a term of lower precedence than + needs parentheses.
    if (!text.empty()) absl::StrAppend(&text, " + ");
    absl::StrAppend(&text, index.prec < kPrecAdd && stride == "1" ? "(" + term + ")" : term);
  }
  return text.empty() ? "0" : text;
}

CExpr KernelEmitter::load(const SymExpr& e) {
  const BufferNode* node = e->buffer_node();
  auto it = buffers_.find(node);
  if (it == buffers_.end()) {
    fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat("load from buffer `", node->name,
                      "`, which is neither a parameter nor allocated around the load"));
    return {"0", kPrecPrimary};
  }
  std::string text;
  if (auto o = load_overrides_.find(e.get()); o != load_overrides_.end()) {
    text = o->second;
  } else {
    std::vector<SymExpr> indices(e->operands().begin(), e->operands().end());
    text = absl::StrCat(it->second.name, "[", flat_index(it->second, indices), "]");
  }
  if (it->second.dtype.is_bool()) return {absl::StrCat("(", text, " != 0)"), kPrecPrimary};
  if (is_half_float(it->second.dtype)) {
    // Widened to float: exact.
    const char* widen = it->second.dtype.code == DataType::Code::kBFloat ? "relax_bfloat16_load"
                                                                         : "relax_float16_load";
    return {absl::StrCat(widen, "(", text, ")"), kPrecPrimary};
  }
  return {std::move(text), kPrecPrimary};
}

CExpr KernelEmitter::expr(const SymExpr& e, bool typed) {
  if (!ok()) return {"0", kPrecPrimary};
  if (!hoisted_exprs_.empty() && e.dtype().lanes == 1) {
    if (auto it = hoisted_exprs_.find(e); it != hoisted_exprs_.end()) return {it->second, kPrecPrimary};
  }
  if (e.dtype().lanes != 1) {
    if (device_) {
      fail(absl::StatusCode::kUnimplemented,
           absl::StrCat("the vector value `", e.to_string(), "` in device code (schedule-gpu makes no vector lanes)"));
      return {"0", kPrecPrimary};
    }
    return vector_expr(e);  // cpp_codegen_vector.cc
  }
  const std::string type = checked_type(e.dtype(), absl::StrCat("the value `", e.to_string(), "`"));
  if (!ok()) return {"0", kPrecPrimary};
  // Infix operators and the kinds written as calls: their row of the spelling table.
  const CppSymKind& spelled = cpp_sym_kind(e.kind());
  if (spelled.form == CppSymKind::Form::kInfix) return binary(e, spelled.spelling, spelled.prec);
  if (spelled.form == CppSymKind::Form::kCall) {
    const std::string_view spelling =
        device_ && !spelled.device_spelling.empty() ? spelled.device_spelling : spelled.spelling;
    std::vector<CExpr> operands;
    for (size_t i = 0; i < e.num_operands(); ++i) operands.push_back(expr(e.operand(i), /*typed=*/true));
    return expand_spelling(spelling, type, operands);
  }
  switch (e.kind()) {
    case SymKind::kIntImm:
    case SymKind::kFloatImm:
      return literal(e, typed);
    case SymKind::kVar:
      return {var_name(SymVar::from_expr(e)), kPrecPrimary};
    case SymKind::kNot: {
      const CExpr a = expr(e.operand(0));
      return {absl::StrCat("!", a.prec < kPrecUnary ? "(" + a.text + ")" : a.text), kPrecUnary};
    }
    case SymKind::kSelect: {
      const CExpr c = expr(e.operand(0));
      const CExpr a = expr(e.operand(1), e.operand(2).kind() != SymKind::kIntImm);
      const CExpr b = expr(e.operand(2), e.operand(1).kind() != SymKind::kIntImm);
      auto wrap = [](const CExpr& x) { return x.prec <= kPrecSelect ? "(" + x.text + ")" : x.text; };
      return {absl::StrCat(wrap(c), " ? ", wrap(a), " : ", wrap(b)), kPrecSelect};
    }
    case SymKind::kCast: {
      const SymExpr& x = e.operand(0);
      checked_type(x.dtype(), absl::StrCat("the operand of `", e.to_string(), "`"));
      if (x.dtype() == e.dtype()) return expr(x);
      const CExpr a = expr(x, /*typed=*/true);
      if (e.dtype().is_bool()) {
        return {absl::StrCat(a.prec < kPrecEquality ? "(" + a.text + ")" : a.text, " != 0"),
                kPrecEquality};
      }
      if (is_half_float(e.dtype())) {
        // Rounded to 16 bits of format once: a 64-bit integer goes through a
        // double rounded to odd (exactly what the loop-level evaluator does).
        const DataType from = x.dtype();
        if (!device_ && e.dtype().code == DataType::Code::kBFloat && from.is_float() && from.bits <= 32) {
          // A float32 (or narrower) operand: the bit-level rounding, exactly the same value.
          return {absl::StrCat("relax_round_bfloat16_of_float(", a.text, ")"), kPrecPrimary};
        }
        std::string wide = absl::StrCat("static_cast<double>(", a.text, ")");
        if (from.is_int() && from.bits == 64) {
          // half_float.h's (copied into the unit), or the CUDA prelude's.
          wide = absl::StrCat(device_ ? "relax_" : "relax::",
                              from.code == DataType::Code::kUInt ? "uint64_to_double_odd(" : "int64_to_double_odd(",
                              a.text, ")");
        }
        return {absl::StrCat(half_round_helper(e.dtype()), "(", wide, ")"), kPrecPrimary};
      }
      return {absl::StrCat("static_cast<", type, ">(", a.text, ")"), kPrecPrimary};
    }
    case SymKind::kCall:
      return call(e);
    case SymKind::kBufferLoad:
      return load(e);
    case SymKind::kRamp:
    case SymKind::kBroadcast:
      return vector_expr(e);  // vectors: dispatched above already
    default:
      break;
  }
  fail(absl::StatusCode::kInternal,
       absl::StrCat("a value of kind ", std::string(sym_kind_name(e.kind())), " without a C++ spelling"));
  return {"0", kPrecPrimary};
}

}  // namespace relax::cpp_codegen
