// SymExpr nodes: construction with dtype checks, structural hash, equality and order.
//
// The dtype rules (see sym_expr.h) are checked here, in one place; the
// parser checks the same rules first so that bad text is an error, never an
// abort. Hashes of the int64 and boolean nodes are those of the integer-only
// layer this grew from, so canonical forms and orders did not move.
#include "relax/shape/sym_expr.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "shape/dtype_util.h"
#include "relax/shape/buffer.h"
#include "relax/shape/intrinsics.h"
#include "absl/strings/str_cat.h"
#include "relax/support/check.h"

namespace relax {

namespace {

using Family = SymOperands;

/// The operands SymExpr::make takes for `kind` (0: a kind of its own constructors).
size_t arity(SymKind kind) { return sym_kind_info(kind).arity; }

size_t mix(size_t seed, size_t value) { return absl::HashOf(seed, value); }

size_t dtype_bits(DataType t) {
  return (static_cast<size_t>(t.code) << 24) | (static_cast<size_t>(t.bits) << 16) | t.lanes;
}

std::atomic<uint64_t> next_var_id{1};

/// The dtype of one lane of `t`.
DataType element_of(DataType t) { return DataType{t.code, t.bits, 1}; }
/// `t` with `lanes` lanes.
DataType with_lanes(DataType t, int64_t lanes) {
  return DataType{t.code, t.bits, static_cast<uint16_t>(lanes)};
}
/// A scalar dtype, or a vector of one with a lane count vectors may have.
bool lanes_ok(DataType t) { return t.lanes == 1 || is_vector_lanes(t.lanes); }
bool is_int_lanes(DataType t) { return lanes_ok(t) && is_scalar_int(element_of(t)); }
bool is_float_lanes(DataType t) { return lanes_ok(t) && is_scalar_float(element_of(t)); }
bool is_numeric_lanes(DataType t) { return lanes_ok(t) && is_scalar_numeric(element_of(t)); }
bool is_bool_lanes(DataType t) { return lanes_ok(t) && is_scalar_bool(element_of(t)); }
bool is_dtype_lanes(DataType t) { return lanes_ok(t) && is_scalar_dtype(element_of(t)); }

/// How an operand of a dtype error reads: "float32 `x`".
std::string operand_text(const SymExpr& e) { return e.dtype().to_string() + " `" + to_string(e) + "`"; }


/// An int64 constant `c` meeting an operand of another numeric dtype becomes a
/// constant of that dtype (the C++ operators' one convenience).
SymExpr convert_constant(const SymExpr& c, const SymExpr& other) {
  if (!c.defined() || !other.defined() || c.kind() != SymKind::kIntImm ||
      c.dtype() != DataType::int64())
    return c;
  const DataType t = other.dtype();
  if (t.lanes != 1 && is_numeric_lanes(t)) {  // a vector: the constant in every lane
    const DataType e = element_of(t);
    if (is_scalar_float(e)) return broadcast(SymExpr::float_imm(static_cast<double>(c->value()), e), t.lanes);
    if (fits_dtype(c->value(), e)) return broadcast(SymExpr::int_imm(c->value(), e), t.lanes);
    return c;
  }
  if (t == DataType::int64() || !is_scalar_numeric(t)) return c;
  if (is_scalar_float(t)) return SymExpr::float_imm(static_cast<double>(c->value()), t);
  if (fits_dtype(c->value(), t)) return SymExpr::int_imm(c->value(), t);
  return c;  // make() reports the dtype mismatch
}

SymExpr make_converted(SymKind kind, const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(kind, convert_constant(a, b), convert_constant(b, a));
}

}  // namespace

namespace detail {

/// Builds nodes; the one place that writes SymExprNode fields.
struct SymNodeFactory {
  /// A node and its reference count in one allocation (make_shared), whose destruction
  /// releases the operands without recursing into them. The plain destructor chain would
  /// recurse as deep as the tree (a sum of 100,000 terms built in C++ would overflow the
  /// stack when dropped); instead the outermost deletion on a thread keeps the dropped
  /// operands on a list of its own and releases them one by one, and a deletion they
  /// trigger adds to that list and returns.
  struct Held : SymExprNode {
    Held() = default;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
      thread_local absl::InlinedVector<SymExpr, 8>* pending = nullptr;
      if (pending != nullptr) {  // inside an outer deletion: hand the operands to it
        for (SymExpr& op : operands_) pending->push_back(std::move(op));
        return;
      }
      // Fast path: when no operand is an operator node held only here, dropping
      // them (with the node's members) deletes at most leaves, which recurse no further.
      bool deep = false;
      for (const SymExpr& op : operands_) {
        deep = deep || (op->num_operands() > 0 && op.node_.use_count() == 1);
      }
      if (!deep) return;
      absl::InlinedVector<SymExpr, 8> list;
      pending = &list;
      for (SymExpr& op : operands_) list.push_back(std::move(op));
      while (!list.empty()) {
        SymExpr last = std::move(list.back());
        list.pop_back();
        // `last` goes out of scope here; when it held the last reference, its node's
        // deletion appends that node's operands to `list`.
      }
      pending = nullptr;
    }
  };

  static std::shared_ptr<SymExprNode> node(SymKind kind, DataType dtype) {
    std::shared_ptr<SymExprNode> n = std::make_shared<Held>();
    n->kind_ = kind;
    n->dtype_ = dtype;
    return n;
  }

  /// Computes the hash of an operator node and wraps it. int64 and bool nodes hash
  /// as they always did; other dtypes, the payload and the buffer are mixed in.
  static SymExpr finish(std::shared_ptr<SymExprNode> n) {
    size_t h = static_cast<size_t>(n->kind_) * 0x9e3779b97f4a7c15ULL;
    if (n->dtype_ != DataType::int64() && (!n->dtype_.is_bool() || n->dtype_.lanes != 1)) {
      h = mix(h, dtype_bits(n->dtype_));
    }
    if (n->value_ != 0) h = mix(h, static_cast<size_t>(n->value_));
    if (n->buffer_) h = mix(h, static_cast<size_t>(n->buffer_->id));
    uint32_t depth = 0;
    for (const SymExpr& op : n->operands_) {
      h = mix(h, op->hash());
      depth = std::max(depth, op->depth());
    }
    n->hash_ = h;
    n->depth_ = depth == UINT32_MAX ? depth : depth + 1;
    return SymExpr(std::shared_ptr<const SymExprNode>(std::move(n)));
  }

  static SymExpr leaf(SymKind kind, DataType dtype, int64_t value, size_t hash) {
    auto n = node(kind, dtype);
    n->value_ = value;
    n->hash_ = hash;
    return SymExpr(std::shared_ptr<const SymExprNode>(std::move(n)));
  }

  static SymExpr call(Intrinsic op, std::vector<SymExpr> operands) {
    for (size_t i = 0; i < operands.size(); ++i) {
      RELAX_CHECK(operands[i].defined()) << "operand " << i << " of " << intrinsic_name(op) << " is undefined";
    }
    const std::string why = intrinsic_operand_mismatch(op, operands, intrinsic_name(op));
    RELAX_CHECK(why.empty()) << why;
    const DataType t = operands[0].dtype();
    auto n = node(SymKind::kCall, with_lanes(intrinsic_result_dtype(op, element_of(t)), t.lanes));
    n->value_ = static_cast<int64_t>(op);
    n->operands_.assign(operands.begin(), operands.end());
    return finish(std::move(n));
  }

  static SymExpr load(const Buffer& buffer, std::vector<SymExpr> indices) {
    RELAX_CHECK(buffer.defined()) << "buffer_load of an undefined buffer";
    const std::string why = load_index_mismatch(buffer, indices);
    RELAX_CHECK(why.empty()) << why;
    int64_t lanes = 1;
    for (const SymExpr& index : indices) lanes = std::max<int64_t>(lanes, index.dtype().lanes);
    auto n = node(SymKind::kBufferLoad, with_lanes(buffer.dtype(), lanes));
    n->buffer_ = buffer.node();
    n->operands_.assign(indices.begin(), indices.end());
    return finish(std::move(n));
  }

  static SymExpr cast(DataType dtype, const SymExpr& value) {
    RELAX_CHECK(is_dtype_lanes(dtype)) << "cannot cast to " << dtype;
    RELAX_CHECK(value.defined()) << "cast of an undefined expression";
    RELAX_CHECK(value.dtype().lanes == dtype.lanes)
        << "cast of " << operand_text(value) << " to " << dtype << ": the lanes differ";
    auto n = node(SymKind::kCast, dtype);
    n->operands_.push_back(value);
    return finish(std::move(n));
  }

  static SymExpr vector(SymKind kind, std::vector<SymExpr> operands, int64_t lanes) {
    const std::string why = vector_operand_mismatch(kind, operands, lanes);
    RELAX_CHECK(why.empty()) << why;
    auto n = node(kind, with_lanes(operands[0].dtype(), lanes));
    n->operands_.assign(operands.begin(), operands.end());
    return finish(std::move(n));
  }
};

SymExpr float_like(double value, const SymExpr& like) {
  RELAX_CHECK(like.defined() && is_float_lanes(like.dtype()))
      << "a C++ floating-point value " << value << " next to "
      << (like.defined() ? operand_text(like) : std::string("an undefined expression"))
      << ", which is not a float";
  const DataType t = like.dtype();
  if (t.lanes != 1) return broadcast(SymExpr::float_imm(value, element_of(t)), t.lanes);
  return SymExpr::float_imm(value, t);
}

}  // namespace detail

using detail::SymNodeFactory;

// ---------------------------------------------------------------------------
// Leaves.

namespace {

SymExpr make_int64(int64_t value) {
  return SymNodeFactory::leaf(SymKind::kIntImm, DataType::int64(), value,
                              mix(static_cast<size_t>(SymKind::kIntImm), static_cast<size_t>(value)));
}

SymExpr make_boolean(bool value) {
  const int64_t v = value ? 1 : 0;
  return SymNodeFactory::leaf(SymKind::kIntImm, DataType::boolean(), v,
                              mix(mix(static_cast<size_t>(SymKind::kIntImm), 0xb001), v));
}

// Small int64 constants and the two booleans are made once and shared: index and shape
// arithmetic builds them by the thousand (every simplification step, every matched rule),
// and a node is immutable, so sharing one is invisible but for the allocations it saves.
constexpr int64_t kSharedMin = -128, kSharedMax = 1024;

const std::vector<SymExpr>& shared_constants() {
  static const std::vector<SymExpr>* table = [] {
    auto* t = new std::vector<SymExpr>();  // never freed: expressions may outlive static destruction
    t->reserve(kSharedMax - kSharedMin + 3);
    for (int64_t v = kSharedMin; v <= kSharedMax; ++v) t->push_back(make_int64(v));
    t->push_back(make_boolean(false));
    t->push_back(make_boolean(true));
    return t;
  }();
  return *table;
}

}  // namespace

SymExpr::SymExpr(int64_t value)
    : SymExpr(value >= kSharedMin && value <= kSharedMax ? shared_constants()[value - kSharedMin]
                                                         : make_int64(value)) {}

SymExpr SymExpr::boolean(bool value) {
  return shared_constants()[kSharedMax - kSharedMin + 1 + (value ? 1 : 0)];
}

SymExpr SymExpr::int_imm(int64_t value, DataType dtype) {
  if (dtype == DataType::int64()) return SymExpr(value);
  RELAX_CHECK(is_scalar_int(dtype) || is_scalar_bool(dtype))
      << "int_imm needs an integer or bool dtype, got " << dtype;
  RELAX_CHECK(fits_dtype(value, dtype))
      << "integer constant " << value << " does not fit " << dtype;
  if (dtype.is_bool()) return boolean(value != 0);
  return SymNodeFactory::leaf(
      SymKind::kIntImm, dtype, value,
      mix(mix(static_cast<size_t>(SymKind::kIntImm), dtype_bits(dtype)), static_cast<size_t>(value)));
}

SymExpr SymExpr::float_imm(double value, DataType dtype) {
  RELAX_CHECK(is_scalar_float(dtype)) << "float_imm needs a float dtype, got " << dtype;
  const double v = std::isnan(value) ? std::numeric_limits<double>::quiet_NaN()
                                     : round_to_dtype(value, dtype);
  const auto bits = std::bit_cast<int64_t>(v);
  return SymNodeFactory::leaf(
      SymKind::kFloatImm, dtype, bits,
      mix(mix(static_cast<size_t>(SymKind::kFloatImm), dtype_bits(dtype)), static_cast<size_t>(bits)));
}

double SymExprNode::float_value() const { return std::bit_cast<double>(value_); }

Buffer SymExprNode::buffer() const { return buffer_ ? Buffer(buffer_) : Buffer(); }

// ---------------------------------------------------------------------------
// Operator nodes.

SymExpr SymExpr::make(SymKind kind, const SymExpr& a, const SymExpr& b, const SymExpr& c) {
  const Family f = sym_kind_info(kind).operands;
  RELAX_CHECK(f != Family::kOwn)
      << "SymExpr::make cannot build a " << sym_kind_name(kind)
      << " (use float_imm, cast, call, buffer_load or the SymExpr/SymVar constructors)";
  const size_t n = arity(kind);
  const std::array<const SymExpr*, 3> given = {&a, &b, &c};
  for (size_t i = 0; i < 3; ++i) {
    RELAX_CHECK(given[i]->defined() == (i < n))
        << sym_kind_name(kind) << " takes " << n << " operand(s)";
  }
  // The dtypes checked in place (every node of every simplification comes through here); the
  // message is built only when they are wrong.
  const size_t bools = f == Family::kLogic || f == Family::kNot ? n : f == Family::kSelect ? 1 : 0;
  bool fits = true;
  for (size_t i = 0; i < bools; ++i) {
    fits = fits && is_bool_lanes(given[i]->dtype()) && given[i]->dtype().lanes == given[0]->dtype().lanes;
  }
  for (size_t i = bools; i < n && fits; ++i) {
    const DataType t = given[i]->dtype();
    fits = (f == Family::kInteger     ? is_int_lanes(t)
            : f == Family::kFloat ? is_float_lanes(t)
                                      : is_numeric_lanes(t)) &&
           t == given[bools]->dtype() && t.lanes == given[0]->dtype().lanes;
  }
  if (!fits) {
    std::vector<SymExpr> operands;
    for (size_t i = 0; i < n; ++i) operands.push_back(*given[i]);
    const std::string why = sym_operand_mismatch(kind, operands, sym_kind_name(kind));
    RELAX_CHECK(why.empty()) << why;
  }
  // A comparison or logic operator gives a bool; the others the dtype of their values.
  const DataType result = f == Family::kCompare || f == Family::kLogic || f == Family::kNot
                              ? with_lanes(DataType::boolean(), a.dtype().lanes)
                              : given[f == Family::kSelect ? 1 : 0]->dtype();
  auto node = SymNodeFactory::node(kind, result);
  for (size_t i = 0; i < n; ++i) node->operands_.push_back(*given[i]);
  return SymNodeFactory::finish(std::move(node));
}

size_t sym_operator_arity(SymKind kind) { return arity(kind); }

std::string sym_operand_mismatch(SymKind kind, const std::vector<SymExpr>& operands,
                                 std::string_view name) {
  const Family f = sym_kind_info(kind).operands;
  RELAX_CHECK(f != Family::kOwn) << sym_kind_name(kind) << " is not an operator SymExpr::make builds";
  const std::string op(name);
  const size_t n = arity(kind);
  if (operands.size() != n) {
    return absl::StrCat(op, " takes ", n, " operand", n == 1 ? "" : "s", ", found ", operands.size());
  }
  // The operands that must be boolean, then the value operands (of one dtype).
  const size_t bools = f == Family::kLogic || f == Family::kNot ? n : f == Family::kSelect ? 1 : 0;
  for (size_t i = 0; i < n; ++i) {
    if (!lanes_ok(operands[i].dtype())) {
      return absl::StrCat("operand ", i, " of ", op, " has ", operands[i].dtype().lanes,
                          " lanes, not a power of two from 2 to ", kMaxLanes);
    }
    if (operands[i].dtype().lanes != operands[0].dtype().lanes) {
      return absl::StrCat("operands of ", op, " differ in lanes: ", operand_text(operands[0]), " vs ",
                          operand_text(operands[i]));
    }
  }
  for (size_t i = 0; i < bools; ++i) {
    if (!is_bool_lanes(operands[i].dtype())) {
      return absl::StrCat("operand ", i, " of ", op, " must be boolean, got ", operand_text(operands[i]));
    }
  }
  for (size_t i = bools; i < n; ++i) {
    const DataType t = operands[i].dtype();
    const bool ok = f == Family::kInteger     ? is_int_lanes(t)
                    : f == Family::kFloat ? is_float_lanes(t)
                                              : is_numeric_lanes(t);
    if (!ok) {
      return absl::StrCat("operand ", i, " of ", op, " must be ",
                          f == Family::kFloat ? "a float" : f == Family::kInteger ? "an integer" : "an integer or a float",
                          ", got ", operand_text(operands[i]));
    }
    if (t != operands[bools].dtype()) {
      return absl::StrCat("operands of ", op, " differ in dtype: ", operand_text(operands[bools]), " vs ",
                          operand_text(operands[i]));
    }
  }
  return "";
}

std::string intrinsic_operand_mismatch(Intrinsic op, const std::vector<SymExpr>& operands,
                                       std::string_view name) {
  const std::string fn(name);
  const size_t n = intrinsic_arity(op);
  if (operands.size() != n) {
    return absl::StrCat(fn, " takes ", n, " operand", n == 1 ? "" : "s", ", found ", operands.size());
  }
  const IntrinsicDtypes rule = intrinsic_info(op).dtypes;
  const char* wanted = rule == IntrinsicDtypes::kNumeric   ? "a float or an integer"
                       : rule == IntrinsicDtypes::kInteger ? "an integer"
                                                           : "a float";
  for (size_t i = 0; i < n; ++i) {
    const DataType t = operands[i].dtype();
    if (!lanes_ok(t)) {
      return absl::StrCat("operand ", i, " of ", fn, " has ", t.lanes, " lanes, not a power of two from 2 to ",
                          kMaxLanes);
    }
    if (t.lanes != operands[0].dtype().lanes) {
      return absl::StrCat("operands of ", fn, " differ in lanes: ", operand_text(operands[0]), " vs ",
                          operand_text(operands[i]));
    }
    if (!intrinsic_takes(op, element_of(t))) {
      return absl::StrCat("operand ", i, " of ", fn, " must be ", wanted, ", got ", operand_text(operands[i]));
    }
    if (t != operands[0].dtype()) {
      return absl::StrCat("operands of ", fn, " differ in dtype: ", operand_text(operands[0]), " vs ",
                          operand_text(operands[i]));
    }
  }
  return "";
}

SymExpr SymExpr::with_operands(std::vector<SymExpr> operands) const {
  RELAX_CHECK(defined()) << "with_operands of an undefined SymExpr";
  const SymExprNode& n = *node_;
  if (operands.size() == n.num_operands()) {
    bool same = true;
    for (size_t i = 0; i < operands.size() && same; ++i) same = operands[i].same_as(n.operand(i));
    if (same) return *this;
  }
  switch (n.kind()) {
    case SymKind::kIntImm:
    case SymKind::kVar:
    case SymKind::kFloatImm:
      RELAX_CHECK(operands.empty()) << "a " << sym_kind_name(n.kind()) << " takes no operands";
      return *this;
    case SymKind::kCast:
      RELAX_CHECK(operands.size() == 1) << "a cast takes one operand";
      return SymNodeFactory::cast(n.dtype(), operands[0]);
    case SymKind::kCall:
      return SymNodeFactory::call(n.intrinsic(), std::move(operands));
    case SymKind::kBufferLoad:
      return SymNodeFactory::load(n.buffer(), std::move(operands));
    case SymKind::kRamp:
    case SymKind::kBroadcast:
      return SymNodeFactory::vector(n.kind(), std::move(operands), n.dtype().lanes);
    default:
      break;
  }
  RELAX_CHECK(operands.size() == arity(n.kind()))
      << sym_kind_name(n.kind()) << " takes " << arity(n.kind()) << " operand(s), got "
      << operands.size();
  operands.resize(3);
  return make(n.kind(), operands[0], operands[1], operands[2]);
}

std::optional<int64_t> SymExpr::as_const() const {
  if (defined() && kind() == SymKind::kIntImm) return node_->value();
  return std::nullopt;
}

bool SymExpr::is_const(int64_t value) const {
  return defined() && kind() == SymKind::kIntImm && node_->value() == value;
}

std::optional<double> SymExpr::as_float() const {
  if (defined() && kind() == SymKind::kFloatImm) return node_->float_value();
  return std::nullopt;
}

std::string SymExpr::to_string() const { return relax::to_string(*this); }

SymVar::SymVar(std::string name, DataType dtype) {
  RELAX_CHECK(!name.empty()) << "a SymVar needs a name";
  RELAX_CHECK(is_scalar_dtype(dtype)) << "SymVar `" << name << "` cannot have dtype " << dtype;
  const auto id = static_cast<int64_t>(next_var_id.fetch_add(1, std::memory_order_relaxed));
  auto node = SymNodeFactory::node(SymKind::kVar, dtype);
  node->value_ = id;
  node->name_ = std::move(name);
  node->hash_ = mix(static_cast<size_t>(SymKind::kVar), static_cast<size_t>(id));
  node_ = std::move(node);
}

SymVar SymVar::from_expr(const SymExpr& expr) {
  RELAX_CHECK(expr.is_var()) << "`" << expr << "` is not a variable";
  SymVar var;
  var.node_ = expr.node_;
  return var;
}

const std::string& SymVar::name() const { return node_->name(); }
uint64_t SymVar::id() const { return static_cast<uint64_t>(node_->value()); }

// ---------------------------------------------------------------------------
// Operators.

SymExpr operator+(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kAdd, a, b); }
SymExpr operator-(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kSub, a, b); }
SymExpr operator*(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kMul, a, b); }
SymExpr operator/(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kDiv, a, b); }
SymExpr operator-(const SymExpr& a) {
  const DataType t = a.dtype();
  if (auto c = a.as_const(); c && !t.is_bool()) {
    if (t == DataType::int64() && *c != INT64_MIN) return SymExpr(-*c);
    if (t != DataType::int64() && fits_dtype(-*c, t)) return SymExpr::int_imm(-*c, t);
  }
  if (auto v = a.as_float()) return SymExpr::float_imm(-*v, t);
  if (is_scalar_float(t)) return a * SymExpr::float_imm(-1.0, t);
  RELAX_CHECK(t.code != DataType::Code::kUInt) << "negation of unsigned " << operand_text(a);
  return a * SymExpr(-1);
}
SymExpr floordiv(const SymExpr& a, const SymExpr& b) {
  return make_converted(SymKind::kFloorDiv, a, b);
}
SymExpr floormod(const SymExpr& a, const SymExpr& b) {
  return make_converted(SymKind::kFloorMod, a, b);
}
SymExpr min(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kMin, a, b); }
SymExpr max(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kMax, a, b); }
SymExpr operator==(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kEQ, a, b); }
SymExpr operator!=(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kNE, a, b); }
SymExpr operator<(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kLT, a, b); }
SymExpr operator<=(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kLE, a, b); }
SymExpr operator>(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kGT, a, b); }
SymExpr operator>=(const SymExpr& a, const SymExpr& b) { return make_converted(SymKind::kGE, a, b); }
SymExpr operator&&(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymKind::kAnd, a, b);
}
SymExpr operator||(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kOr, a, b); }
SymExpr operator!(const SymExpr& a) { return SymExpr::make(SymKind::kNot, a); }
SymExpr select(const SymExpr& cond, const SymExpr& then_value, const SymExpr& else_value) {
  return SymExpr::make(SymKind::kSelect, cond, convert_constant(then_value, else_value),
                       convert_constant(else_value, then_value));
}

SymExpr cast(DataType dtype, const SymExpr& value) { return SymNodeFactory::cast(dtype, value); }

SymExpr call(Intrinsic op, std::vector<SymExpr> operands) {
  // Integer constants take the dtype of the first operand that is not one.
  const SymExpr* reference = nullptr;
  for (const SymExpr& x : operands) {
    if (x.defined() && !(x.kind() == SymKind::kIntImm && x.dtype() == DataType::int64())) {
      reference = &x;
      break;
    }
  }
  if (reference != nullptr) {
    const SymExpr like = *reference;
    for (SymExpr& x : operands) x = convert_constant(x, like);
  }
  RELAX_CHECK(!operands.empty()) << intrinsic_name(op) << " takes " << intrinsic_arity(op)
                                 << " operand(s), got none";
  return SymNodeFactory::call(op, std::move(operands));
}

SymExpr exp(const SymExpr& x) { return call(Intrinsic::kExp, {x}); }
SymExpr log(const SymExpr& x) { return call(Intrinsic::kLog, {x}); }
SymExpr sqrt(const SymExpr& x) { return call(Intrinsic::kSqrt, {x}); }
SymExpr rsqrt(const SymExpr& x) { return call(Intrinsic::kRsqrt, {x}); }
SymExpr tanh(const SymExpr& x) { return call(Intrinsic::kTanh, {x}); }
SymExpr erf(const SymExpr& x) { return call(Intrinsic::kErf, {x}); }
SymExpr sigmoid(const SymExpr& x) { return call(Intrinsic::kSigmoid, {x}); }
SymExpr pow(const SymExpr& x, const SymExpr& y) { return call(Intrinsic::kPow, {x, y}); }
SymExpr abs(const SymExpr& x) { return call(Intrinsic::kAbs, {x}); }
SymExpr fma(const SymExpr& a, const SymExpr& b, const SymExpr& c) {
  return call(Intrinsic::kFma, {a, b, c});
}
SymExpr sin(const SymExpr& x) { return call(Intrinsic::kSin, {x}); }
SymExpr cos(const SymExpr& x) { return call(Intrinsic::kCos, {x}); }
SymExpr floor(const SymExpr& x) { return call(Intrinsic::kFloor, {x}); }
SymExpr ceil(const SymExpr& x) { return call(Intrinsic::kCeil, {x}); }
SymExpr round(const SymExpr& x) { return call(Intrinsic::kRound, {x}); }
SymExpr trunc(const SymExpr& x) { return call(Intrinsic::kTrunc, {x}); }
SymExpr isnan(const SymExpr& x) { return call(Intrinsic::kIsNan, {x}); }
SymExpr isinf(const SymExpr& x) { return call(Intrinsic::kIsInf, {x}); }
SymExpr bitwise_and(const SymExpr& a, const SymExpr& b) { return call(Intrinsic::kBitwiseAnd, {a, b}); }
SymExpr bitwise_or(const SymExpr& a, const SymExpr& b) { return call(Intrinsic::kBitwiseOr, {a, b}); }
SymExpr bitwise_xor(const SymExpr& a, const SymExpr& b) { return call(Intrinsic::kBitwiseXor, {a, b}); }
SymExpr bitwise_not(const SymExpr& a) { return call(Intrinsic::kBitwiseNot, {a}); }
SymExpr shift_left(const SymExpr& a, const SymExpr& n) { return call(Intrinsic::kShiftLeft, {a, n}); }
SymExpr shift_right(const SymExpr& a, const SymExpr& n) { return call(Intrinsic::kShiftRight, {a, n}); }

SymExpr buffer_load(const Buffer& buffer, std::vector<SymExpr> indices) {
  // Indices are independent of one another (any integer dtype each): nothing to convert.
  return SymNodeFactory::load(buffer, std::move(indices));
}

SymExpr ramp(const SymExpr& base, const SymExpr& stride, int64_t lanes) {
  return SymNodeFactory::vector(SymKind::kRamp, {base, stride}, lanes);
}

SymExpr broadcast(const SymExpr& value, int64_t lanes) {
  return SymNodeFactory::vector(SymKind::kBroadcast, {value}, lanes);
}

std::string vector_operand_mismatch(SymKind kind, const std::vector<SymExpr>& operands, int64_t lanes) {
  RELAX_CHECK(kind == SymKind::kRamp || kind == SymKind::kBroadcast)
      << sym_kind_name(kind) << " is not a vector constructor";
  const std::string name(sym_kind_name(kind));
  const size_t n = kind == SymKind::kRamp ? 2 : 1;
  if (operands.size() != n) {
    return absl::StrCat(name, " takes ", n, " operand", n == 1 ? "" : "s", " and a lane count, found ",
                        operands.size(), " operand", operands.size() == 1 ? "" : "s");
  }
  if (!is_vector_lanes(lanes)) {
    return absl::StrCat("the lanes of ", name, " must be a power of two from 2 to ", kMaxLanes, ", got ", lanes);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!operands[i].defined()) return absl::StrCat("operand ", i, " of ", name, " is undefined");
    const DataType t = operands[i].dtype();
    if (kind == SymKind::kRamp ? t != DataType::int64() : !is_scalar_dtype(t)) {
      return absl::StrCat("operand ", i, " of ", name, " must be ",
                          kind == SymKind::kRamp ? "an int64 scalar" : "a scalar", ", got ",
                          operand_text(operands[i]));
    }
  }
  return "";
}

std::string load_index_mismatch(const Buffer& buffer, const std::vector<SymExpr>& indices) {
  if (!is_scalar_dtype(buffer.dtype())) {
    return absl::StrCat("buffer `", buffer.name(), "` has dtype ", buffer.dtype().to_string(),
                        ", which no scalar expression has");
  }
  if (indices.size() != buffer.ndim()) {
    return absl::StrCat("load from `", buffer.name(), "` has ", indices.size(), " indices, but the buffer has rank ",
                        buffer.ndim());
  }
  const SymExpr* vector_index = nullptr;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i].defined()) return absl::StrCat("index ", i, " of a load from `", buffer.name(), "` is undefined");
    const DataType t = indices[i].dtype();
    if (t.lanes != 1 && t == with_lanes(DataType::int64(), t.lanes) && is_vector_lanes(t.lanes)) {
      if (vector_index != nullptr && vector_index->dtype().lanes != t.lanes) {
        return absl::StrCat("indices of a load from `", buffer.name(), "` differ in lanes: ",
                            operand_text(*vector_index), " vs ", operand_text(indices[i]));
      }
      vector_index = &indices[i];
      continue;
    }
    if (!is_scalar_int(t)) {
      return absl::StrCat("index ", i, " of a load from `", buffer.name(),
                          "` must be an integer or an int64 vector, got ", operand_text(indices[i]));
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// Structure.

namespace {

int compare_dtype(DataType a, DataType b) {
  if (a.code != b.code) return a.code < b.code ? -1 : 1;
  if (a.bits != b.bits) return a.bits < b.bits ? -1 : 1;
  if (a.lanes != b.lanes) return a.lanes < b.lanes ? -1 : 1;
  return 0;
}

/// A total order on float constants: by value, -0 before +0, NaN last.
int compare_float(double x, double y) {
  const bool x_nan = std::isnan(x), y_nan = std::isnan(y);
  if (x_nan || y_nan) return x_nan == y_nan ? 0 : (x_nan ? 1 : -1);
  if (x != y) return x < y ? -1 : 1;
  if (std::signbit(x) != std::signbit(y)) return std::signbit(x) ? -1 : 1;
  return 0;
}

}  // namespace

// Equality and order walk the two trees with an explicit stack, so that trees of
// any depth compare (simplified forms of large sums are long chains).

bool structural_equal(const SymExpr& a, const SymExpr& b) {
  absl::InlinedVector<std::pair<const SymExpr*, const SymExpr*>, 16> stack = {{&a, &b}};
  while (!stack.empty()) {
    const auto [pa, pb] = stack.back();
    stack.pop_back();
    if (pa->same_as(*pb)) continue;
    if (!pa->defined() || !pb->defined()) return false;
    const SymExprNode& x = **pa;
    const SymExprNode& y = **pb;
    if (x.hash() != y.hash() || x.kind() != y.kind() || x.dtype() != y.dtype()) return false;
    // The payload: constant, variable id, float bits, intrinsic (0 for the rest).
    if (x.value() != y.value() || x.buffer_node() != y.buffer_node()) return false;
    if (x.num_operands() != y.num_operands()) return false;
    for (size_t i = x.num_operands(); i-- > 0;) stack.emplace_back(&x.operand(i), &y.operand(i));
  }
  return true;
}

size_t structural_hash(const SymExpr& e) { return e.defined() ? e->hash() : 0; }

namespace {

/// The order of two nodes by their own fields (kind, dtype, payload, buffer,
/// operand count), not looking at the operands.
int compare_node(const SymExprNode& x, const SymExprNode& y) {
  if (x.kind() != y.kind()) return x.kind() < y.kind() ? -1 : 1;
  // Nodes of one kind and different dtypes: only constants, variables, casts,
  // loads and float arithmetic can differ here (an int64 sum is always int64).
  if (int c = compare_dtype(x.dtype(), y.dtype()); c != 0) return c;
  switch (x.kind()) {
    case SymKind::kIntImm:
      if (x.value() != y.value()) return x.value() < y.value() ? -1 : 1;
      return 0;
    case SymKind::kVar:
      if (int c = x.name().compare(y.name()); c != 0) return c < 0 ? -1 : 1;
      if (x.value() != y.value()) return x.value() < y.value() ? -1 : 1;
      return 0;
    case SymKind::kFloatImm:
      return compare_float(x.float_value(), y.float_value());
    case SymKind::kCall:
      if (x.value() != y.value()) return x.value() < y.value() ? -1 : 1;
      break;
    case SymKind::kBufferLoad:
      if (x.buffer_node() != y.buffer_node()) {
        if (int c = x.buffer_node()->name.compare(y.buffer_node()->name); c != 0) return c < 0 ? -1 : 1;
        return x.buffer_node()->id < y.buffer_node()->id ? -1 : 1;
      }
      break;
    default:
      break;
  }
  if (x.num_operands() != y.num_operands()) return x.num_operands() < y.num_operands() ? -1 : 1;
  return 0;
}

}  // namespace

int structural_compare(const SymExpr& a, const SymExpr& b) {
  // Pre-order, operands left to right: the first difference met decides, as in
  // a lexicographic comparison of the two trees.
  absl::InlinedVector<std::pair<const SymExpr*, const SymExpr*>, 16> stack = {{&a, &b}};
  while (!stack.empty()) {
    const auto [pa, pb] = stack.back();
    stack.pop_back();
    if (pa->same_as(*pb)) continue;
    if (!pa->defined() || !pb->defined()) return pa->defined() ? 1 : -1;
    const SymExprNode& x = **pa;
    const SymExprNode& y = **pb;
    if (int c = compare_node(x, y); c != 0) return c;
    for (size_t i = x.num_operands(); i-- > 0;) stack.emplace_back(&x.operand(i), &y.operand(i));
  }
  return 0;
}

}  // namespace relax
