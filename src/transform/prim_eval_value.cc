// Scalar values of the loop-level evaluator (prim_eval_value.h, prim_eval.h).
//
// Integers are computed in 128 bits from their operands' values and then
// checked against the node's dtype, so every int64 and uint64 value is exact
// and an overflow is reported rather than wrapped (as SymExpr's evaluate()
// does; the generated C++ would be undefined or wrap, and a pass must not
// guess which). Floats are computed in double and rounded after each operation
// to the node's dtype, or to float32 for float16 and bfloat16 nodes (which the
// generated code computes as float; a cast to them and a store round to 16 bits). min/max follow std::min/std::max (what the C++ code
// generator emits): min(a, b) is `b < a ? b : a`, so a NaN in the first
// operand propagates and one in the second does not.
#include "prim_eval_value.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/sym_kind.h"
#include "relax/support/check.h"
#include "relax/support/float_format.h"
#include "relax/transform/prim_eval.h"

namespace relax::transform {
namespace prim_eval_detail {
namespace {

using Int128 = SymInt128;  // exact products of 64-bit values

// Deeper than any tree a reader of outside input accepts (kMaxNestingDepth).
constexpr int kMaxDepth = 4096;

bool is_unsigned(DataType t) { return t.code == DataType::Code::kUInt; }

/// The dtype of one lane: a vector node is evaluated one lane at a time, each
/// lane as a scalar of this dtype.
DataType lane_of(DataType t) { return DataType{t.code, t.bits, 1}; }

/// The integer or bool value `v` of dtype `t`, widened.
Int128 wide(Value v, DataType t) {
  return is_unsigned(t) ? static_cast<Int128>(static_cast<uint64_t>(v.i)) : static_cast<Int128>(v.i);
}

bool in_range(Int128 v, DataType t) {
  if (t.is_bool()) return v == 0 || v == 1;
  if (is_unsigned(t)) return v >= 0 && v <= (static_cast<Int128>(1) << t.bits) - 1;
  const Int128 half = static_cast<Int128>(1) << (t.bits - 1);
  return v >= -half && v < half;
}

/// A value known to be in range of its dtype, as a Value (uint64 by bit pattern).
Value narrow(Int128 v) { return Value{static_cast<int64_t>(static_cast<uint64_t>(v)), 0}; }

/// `v` converted to the integer dtype `t` as C++ converts: modulo 2^bits.
Value wrap(Int128 v, DataType t) {
  if (t.is_bool()) return Value{v != 0 ? 1 : 0, 0};
  uint64_t u = static_cast<uint64_t>(v);
  if (t.bits < 64) {
    const uint64_t mask = (uint64_t{1} << t.bits) - 1;
    u &= mask;
    if (!is_unsigned(t) && ((u >> (t.bits - 1)) & 1) != 0) u |= ~mask;
  }
  return Value{static_cast<int64_t>(u), 0};
}

std::string int128_to_string(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  // Digits of the magnitude, from the last; |v| < 2^127 here (64-bit operands).
  Int128 m = negative ? -v : v;
  while (m > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  return negative ? "-" + digits : digits;
}

/// The float of dtype `t` nearest to the integer `v`, rounded once.
double int_to_float(Int128 v, DataType t) {
  if (t.bits == 64) return static_cast<double>(v);
  if (t.bits == 32 && t.code == DataType::Code::kFloat) {
    return static_cast<double>(static_cast<float>(v));
  }
  // Through a double rounded to odd, so that the second rounding (to 16 bits
  // of format) gives what rounding the integer once would; the generated code
  // converts with the same helpers (relax/support/half_float.h).
  const double d = v > INT64_MAX ? uint64_to_double_odd(static_cast<uint64_t>(v))
                                 : int64_to_double_odd(static_cast<int64_t>(v));
  return round_to_dtype(d, t);
}

/// The dtype float arithmetic of dtype `t` is computed in: float16 and
/// bfloat16 values are computed as float32 (as the generated code computes
/// them), rounded to 16 bits only by a cast or a store.
DataType compute_dtype(DataType t) {
  return t.is_float() && t.bits == 16 ? DataType::float32() : t;
}

std::string dtype_suffix(DataType t) {
  switch (t.code) {
    case DataType::Code::kInt:
      return t.bits == 64 ? "" : absl::StrCat("i", t.bits);
    case DataType::Code::kUInt:
      return absl::StrCat("u", t.bits);
    case DataType::Code::kBFloat:
      return absl::StrCat("bf", t.bits);
    default:
      return absl::StrCat("f", t.bits);
  }
}

}  // namespace

bool is_supported_dtype(DataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case DataType::Code::kBool:
      return true;
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case DataType::Code::kFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case DataType::Code::kBFloat:
      return t.bits == 16;
    default:
      return false;
  }
}

Value read_element(const void* p, DataType t) {
  auto get = [p]<typename T>(T) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return x;
  };
  switch (t.code) {
    case DataType::Code::kBool:
      return Value{get(uint8_t{}) != 0 ? 1 : 0, 0};
    case DataType::Code::kInt:
      switch (t.bits) {
        case 8: return Value{get(int8_t{}), 0};
        case 16: return Value{get(int16_t{}), 0};
        case 32: return Value{get(int32_t{}), 0};
        default: return Value{get(int64_t{}), 0};
      }
    case DataType::Code::kUInt:
      switch (t.bits) {
        case 8: return Value{get(uint8_t{}), 0};
        case 16: return Value{get(uint16_t{}), 0};
        case 32: return Value{get(uint32_t{}), 0};
        default: return Value{static_cast<int64_t>(get(uint64_t{})), 0};
      }
    case DataType::Code::kBFloat:
      return Value{0, bfloat16_value(get(uint16_t{}))};
    default:
      switch (t.bits) {
        case 16: return Value{0, float16_value(get(uint16_t{}))};
        case 32: return Value{0, static_cast<double>(get(float{}))};
        default: return Value{0, get(double{})};
      }
  }
}

void write_element(void* p, DataType t, Value v) {
  auto put = [p]<typename T>(T x) { std::memcpy(p, &x, sizeof(T)); };
  switch (t.code) {
    case DataType::Code::kBool:
      put(static_cast<uint8_t>(v.i != 0 ? 1 : 0));
      return;
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      switch (t.bits) {
        case 8: put(static_cast<uint8_t>(v.i)); return;
        case 16: put(static_cast<uint16_t>(v.i)); return;
        case 32: put(static_cast<uint32_t>(v.i)); return;
        default: put(v.i); return;
      }
    case DataType::Code::kBFloat:
      put(bfloat16_bits(v.f));
      return;
    default:
      switch (t.bits) {
        case 16: put(float16_bits(v.f)); return;
        case 32: put(static_cast<float>(v.f)); return;
        default: put(v.f); return;
      }
  }
}

std::string value_to_string(Value v, DataType t) {
  if (t.is_bool()) return v.i != 0 ? "true" : "false";
  if (t.is_float()) return SymExpr::float_imm(v.f, t).to_string();
  return int128_to_string(wide(v, t)) + dtype_suffix(t);
}

bool convert_int(Value v, DataType from, DataType to, Value& out) {
  const Int128 x = wide(v, from);
  if (!in_range(x, to)) return false;
  out = narrow(x);
  return true;
}

// ---------------------------------------------------------------------------
// The walk.

Value ValueEvaluator::fail(std::string message) {
  if (!failed_) {
    failed_ = true;
    error_ = std::move(message);
  }
  return Value{};
}

int64_t ValueEvaluator::eval_index(const SymExpr& e) {
  const Value v = eval(e);
  if (failed_) return 0;
  if (is_unsigned(e.dtype()) && e.dtype().bits == 64 && v.i < 0) {
    fail(absl::StrCat("the index `", e.to_string(), "` = ", value_to_string(v, e.dtype()),
                      " is too large"));
    return 0;
  }
  return v.i;
}

Value ValueEvaluator::eval(const SymExpr& e) {
  struct Depth {
    explicit Depth(int& d) : d_(d) { ++d_; }
    ~Depth() { --d_; }
    int& d_;
  } level(depth_);
  if (failed_) return Value{};
  if (depth_ > kMaxDepth) {
    return fail(absl::StrCat("a value nested deeper than ", kMaxDepth, " levels"));
  }
  const SymExprNode& node = *e;
  const SymKindInfo& row = sym_kind_info(node.kind());
  if (row.eval_int != nullptr || row.eval_float != nullptr) return eval_arith(e);
  switch (node.kind()) {
    case SymKind::kIntImm:
      return Value{node.value(), 0};
    case SymKind::kFloatImm:
      return Value{0, node.float_value()};
    case SymKind::kVar: {
      auto it = vars_.find(e.get());
      if (it == vars_.end()) return fail(absl::StrCat("the variable `", node.name(), "` is unbound"));
      return it->second;
    }
    case SymKind::kAnd: {
      // Lazy, as in C: the right side counts only when the left one does not decide.
      if (eval(node.operand(0)).i == 0 || failed_) return Value{};
      return Value{eval(node.operand(1)).i != 0 ? 1 : 0, 0};
    }
    case SymKind::kOr: {
      if (eval(node.operand(0)).i != 0) return failed_ ? Value{} : Value{1, 0};
      return Value{eval(node.operand(1)).i != 0 ? 1 : 0, 0};
    }
    case SymKind::kNot:
      return Value{eval(node.operand(0)).i == 0 ? 1 : 0, 0};
    case SymKind::kSelect: {
      const bool cond = eval(node.operand(0)).i != 0;
      if (failed_) return Value{};
      return eval(node.operand(cond ? 1 : 2));
    }
    case SymKind::kCast:
      return eval_cast(e);
    case SymKind::kCall:
      return eval_call(e);
    case SymKind::kBufferLoad:
      return eval_load(e);
    case SymKind::kRamp: {
      // Lane `lane_` of base, base + stride, ...: exact, an overflow of int64 is an error.
      if (lane_ < 0) return fail(absl::StrCat("the vector `", e.to_string(), "` outside a vector store"));
      const Value base = eval(node.operand(0));
      const Value stride = eval(node.operand(1));
      if (failed_) return Value{};
      const Int128 r = static_cast<Int128>(base.i) + static_cast<Int128>(stride.i) * lane_;
      if (!in_range(r, DataType::int64())) {
        return fail(absl::StrCat("int64 overflow in lane ", lane_, " of `", e.to_string(), "`"));
      }
      return narrow(r);
    }
    case SymKind::kBroadcast:
      if (lane_ < 0) return fail(absl::StrCat("the vector `", e.to_string(), "` outside a vector store"));
      return eval(node.operand(0));
    default:  // the strict binary kinds, above
      break;
  }
  return fail(absl::StrCat("a value of unknown kind ", static_cast<int>(node.kind())));
}

// Arithmetic and comparisons: the SymKind table's (relax/shape/sym_kind.h), on
// 128-bit integers or doubles; the result checked against, or rounded to, the dtype.
Value ValueEvaluator::eval_arith(const SymExpr& e) {
  const Value a = eval(e.operand(0));
  const Value b = eval(e.operand(1));
  if (failed_) return Value{};
  const SymKindInfo& row = sym_kind_info(e.kind());
  const DataType t = lane_of(e.operand(0).dtype());
  if (t.is_float()) {
    if (row.eval_float == nullptr) {
      return fail(absl::StrCat("`", e.to_string(), "` applies ", std::string(row.name), " to floats"));
    }
    const double r = row.eval_float(a.f, b.f);
    if (row.operands == SymOperands::kCompare) return Value{r != 0 ? 1 : 0, 0};
    // min and max pick an operand, already of the dtype.
    if (e.kind() == SymKind::kMin || e.kind() == SymKind::kMax) return Value{0, r};
    return Value{0, round_to_dtype(r, compute_dtype(t))};
  }
  if (row.eval_int == nullptr) {
    return fail(absl::StrCat("`", e.to_string(), "` divides integers with `/`"));
  }
  Int128 r = 0;
  switch (row.eval_int(wide(a, t), wide(b, t), &r)) {
    case SymEvalError::kNone:
      break;
    case SymEvalError::kByZero:
      return fail(absl::StrCat(e.kind() == SymKind::kFloorDiv ? "division" : "modulo", " by zero in `",
                               e.to_string(), "`"));
    case SymEvalError::kOverflow:
      r = static_cast<Int128>(1) << 126;  // out of range of every dtype
      break;
  }
  if (row.operands == SymOperands::kCompare) return Value{r != 0 ? 1 : 0, 0};
  if (!in_range(r, t)) {
    return fail(absl::StrCat(t.to_string(), " overflow in `", e.to_string(), "` (",
                             value_to_string(a, t), " ", std::string(row.name), " ",
                             value_to_string(b, t), ")"));
  }
  return narrow(r);
}

Value ValueEvaluator::eval_cast(const SymExpr& e) {
  const SymExpr& x = e.operand(0);
  const Value v = eval(x);
  if (failed_) return Value{};
  const DataType from = lane_of(x.dtype());
  const DataType to = lane_of(e.dtype());
  if (!from.is_float()) {
    if (to.is_float()) return Value{0, int_to_float(wide(v, from), to)};
    return wrap(wide(v, from), to);
  }
  if (to.is_float()) return Value{0, round_to_dtype(v.f, to)};
  if (to.is_bool()) return Value{v.f != 0 ? 1 : 0, 0};
  // Truncation toward zero, defined only where the result fits the dtype; the
  // bounds are powers of two, exact in double.
  const double t = std::trunc(v.f);
  const double lo = is_unsigned(to) ? 0.0 : -std::ldexp(1.0, to.bits - 1);
  const double hi = std::ldexp(1.0, is_unsigned(to) ? to.bits : to.bits - 1);
  if (std::isnan(v.f) || t < lo || t >= hi) {
    return fail(absl::StrCat("the cast of ", value_to_string(v, from), " to ", to.to_string(),
                             " is out of range in `", e.to_string(), "`"));
  }
  return narrow(static_cast<Int128>(t));
}

Value ValueEvaluator::eval_call(const SymExpr& e) {
  Value x[3];
  for (size_t i = 0; i < e.num_operands() && i < 3; ++i) x[i] = eval(e.operand(i));
  if (failed_) return Value{};
  const IntrinsicInfo& row = intrinsic_info(e->intrinsic());
  const DataType operand_dtype = lane_of(e.operand(0).dtype());
  const DataType result_dtype = lane_of(e.dtype());
  if (operand_dtype.is_float()) {
    double f[3] = {x[0].f, x[1].f, x[2].f};
    if (row.eval_float == nullptr) {
      return fail(absl::StrCat("`", e.to_string(), "` applies ", std::string(row.name), " to floats"));
    }
    const double r = row.eval_float(f);
    if (result_dtype.is_bool()) return Value{r != 0 ? 1 : 0, 0};
    return Value{0, round_to_dtype(r, compute_dtype(result_dtype))};
  }
  if (row.eval_int == nullptr) {
    return fail(absl::StrCat("`", e.to_string(), "` applies ", std::string(row.name), " to integers"));
  }
  const int64_t i[3] = {x[0].i, x[1].i, x[2].i};
  const std::optional<int64_t> r = row.eval_int(i, result_dtype);
  if (!r) {
    std::string values;
    for (size_t k = 0; k < e.num_operands(); ++k) {
      absl::StrAppend(&values, k > 0 ? ", " : "", value_to_string(x[k], operand_dtype));
    }
    return fail(absl::StrCat(result_dtype.to_string(), " ", std::string(row.int_undefined), " in `",
                             e.to_string(), "` (", std::string(row.name), "(", values, "))"));
  }
  return Value{*r, 0};
}

Value ValueEvaluator::eval_load(const SymExpr& e) {
  std::vector<int64_t> indices;
  indices.reserve(e.num_operands());
  for (size_t i = 0; i < e.num_operands(); ++i) {
    indices.push_back(eval_index(e.operand(i)));
    if (failed_) return Value{};
  }
  return load(e, indices);
}

namespace {

/// The evaluator of evaluate_scalar: loads are errors.
class NoLoads : public ValueEvaluator {
 protected:
  Value load(const SymExpr& e, const std::vector<int64_t>&) override {
    return fail(absl::StrCat("cannot evaluate the buffer load `", e.to_string(),
                             "` outside a kernel"));
  }
};

}  // namespace
}  // namespace prim_eval_detail

// ---------------------------------------------------------------------------
// PrimScalar.

using prim_eval_detail::Value;

PrimScalar PrimScalar::from_int(int64_t value, DataType dtype) {
  RELAX_CHECK(dtype.lanes == 1 && (dtype.is_int() || dtype.is_bool()))
      << "PrimScalar::from_int of dtype " << dtype;
  Value out;
  RELAX_CHECK(prim_eval_detail::convert_int(Value{value, 0}, DataType::int64(), dtype, out))
      << value << " does not fit " << dtype;
  PrimScalar s;
  s.dtype_ = dtype;
  s.int_ = out.i;
  return s;
}

PrimScalar PrimScalar::from_uint64(uint64_t value) {
  PrimScalar s;
  s.dtype_ = DataType{DataType::Code::kUInt, 64, 1};
  s.int_ = static_cast<int64_t>(value);
  return s;
}

PrimScalar PrimScalar::from_float(double value, DataType dtype) {
  RELAX_CHECK(dtype.lanes == 1 && dtype.is_float()) << "PrimScalar::from_float of dtype " << dtype;
  PrimScalar s;
  s.dtype_ = dtype;
  s.float_ = round_to_dtype(value, dtype);
  return s;
}

double PrimScalar::float_value() const {
  if (is_float()) return float_;
  if (dtype_.code == DataType::Code::kUInt) return static_cast<double>(static_cast<uint64_t>(int_));
  return static_cast<double>(int_);
}

std::string PrimScalar::to_string() const {
  return prim_eval_detail::value_to_string(Value{int_, float_}, dtype_);
}

absl::StatusOr<PrimScalar> evaluate_scalar(const SymExpr& value,
                                           const SymVarMap<PrimScalar>& bindings) {
  RELAX_CHECK(value.defined()) << "evaluate_scalar of an undefined SymExpr";
  prim_eval_detail::NoLoads evaluator;
  for (const auto& [var, scalar] : bindings) {
    Value v{scalar.int_value(), scalar.is_float() ? scalar.float_value() : 0.0};
    if (scalar.dtype() != var.dtype()) {
      if (!scalar.dtype().is_int() || !var.dtype().is_int() ||
          !prim_eval_detail::convert_int(v, scalar.dtype(), var.dtype(), v)) {
        return absl::InvalidArgumentError(absl::StrCat("the variable `", var.name(), "` of dtype ",
                                                       var.dtype().to_string(), " is bound to ",
                                                       scalar.to_string()));
      }
    }
    evaluator.bind(var, v);
  }
  const Value v = evaluator.eval(value);
  if (evaluator.failed()) return absl::InvalidArgumentError(evaluator.error());
  const DataType t = value.dtype();
  PrimScalar out;
  if (t.is_float()) {
    out = PrimScalar::from_float(v.f, t);
  } else if (t.code == DataType::Code::kUInt && t.bits == 64) {
    out = PrimScalar::from_uint64(static_cast<uint64_t>(v.i));
  } else {
    out = PrimScalar::from_int(v.i, t);
  }
  return out;
}

}  // namespace relax::transform
