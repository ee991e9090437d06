// SymExpr nodes: construction with dtype checks, structural hash, equality and order.
#include "relax/shape/sym_expr.h"

#include <atomic>

#include "absl/hash/hash.h"
#include "relax/support/check.h"

namespace relax {
namespace {

/// How many operands each kind takes and of which dtype family.
struct KindSignature {
  uint8_t arity;
  bool operands_bool;  // logic takes booleans, arithmetic and comparisons integers
  bool result_bool;
};

KindSignature signature(SymKind kind) {
  switch (kind) {
    case SymKind::kIntImm:
    case SymKind::kVar:
      return {0, false, false};
    case SymKind::kAdd:
    case SymKind::kSub:
    case SymKind::kMul:
    case SymKind::kFloorDiv:
    case SymKind::kFloorMod:
    case SymKind::kMin:
    case SymKind::kMax:
      return {2, false, false};
    case SymKind::kEQ:
    case SymKind::kNE:
    case SymKind::kLT:
    case SymKind::kLE:
    case SymKind::kGT:
    case SymKind::kGE:
      return {2, false, true};
    case SymKind::kAnd:
    case SymKind::kOr:
      return {2, true, true};
    case SymKind::kNot:
      return {1, true, true};
    case SymKind::kSelect:
      return {3, false, false};
  }
  return {0, false, false};
}

size_t mix(size_t seed, size_t value) { return absl::HashOf(seed, value); }

std::atomic<uint64_t> next_var_id{1};

}  // namespace

std::string_view sym_kind_name(SymKind kind) {
  switch (kind) {
    case SymKind::kIntImm:
      return "const";
    case SymKind::kVar:
      return "var";
    case SymKind::kAdd:
      return "+";
    case SymKind::kSub:
      return "-";
    case SymKind::kMul:
      return "*";
    case SymKind::kFloorDiv:
      return "floordiv";
    case SymKind::kFloorMod:
      return "floormod";
    case SymKind::kMin:
      return "min";
    case SymKind::kMax:
      return "max";
    case SymKind::kEQ:
      return "==";
    case SymKind::kNE:
      return "!=";
    case SymKind::kLT:
      return "<";
    case SymKind::kLE:
      return "<=";
    case SymKind::kGT:
      return ">";
    case SymKind::kGE:
      return ">=";
    case SymKind::kAnd:
      return "&&";
    case SymKind::kOr:
      return "||";
    case SymKind::kNot:
      return "!";
    case SymKind::kSelect:
      return "select";
  }
  return "?";
}

SymExpr::SymExpr(int64_t value) {
  auto node = std::shared_ptr<SymExprNode>(new SymExprNode());
  node->kind_ = SymKind::kIntImm;
  node->dtype_ = DataType::int64();
  node->value_ = value;
  node->hash_ = mix(static_cast<size_t>(SymKind::kIntImm), static_cast<size_t>(value));
  node_ = std::move(node);
}

SymExpr SymExpr::boolean(bool value) {
  auto node = std::shared_ptr<SymExprNode>(new SymExprNode());
  node->kind_ = SymKind::kIntImm;
  node->dtype_ = DataType::boolean();
  node->value_ = value ? 1 : 0;
  node->hash_ = mix(mix(static_cast<size_t>(SymKind::kIntImm), 0xb001), node->value_);
  return SymExpr(std::shared_ptr<const SymExprNode>(std::move(node)));
}

SymExpr SymExpr::make(SymKind kind, const SymExpr& a, const SymExpr& b, const SymExpr& c) {
  const KindSignature sig = signature(kind);
  RELAX_CHECK(sig.arity > 0) << "SymExpr::make cannot build a " << sym_kind_name(kind);
  const std::array<const SymExpr*, 3> given = {&a, &b, &c};
  for (size_t i = 0; i < 3; ++i) {
    RELAX_CHECK(given[i]->defined() == (i < sig.arity))
        << sym_kind_name(kind) << " takes " << int{sig.arity} << " operand(s)";
  }
  for (size_t i = 0; i < sig.arity; ++i) {
    // select's condition is boolean, its values integers.
    const bool want_bool = kind == SymKind::kSelect ? i == 0 : sig.operands_bool;
    RELAX_CHECK(given[i]->dtype().is_bool() == want_bool)
        << "operand " << i << " of " << sym_kind_name(kind) << " must be "
        << (want_bool ? "boolean" : "an integer") << ", got " << given[i]->dtype() << " `"
        << *given[i] << "`";
  }
  auto node = std::shared_ptr<SymExprNode>(new SymExprNode());
  node->kind_ = kind;
  node->dtype_ = sig.result_bool ? DataType::boolean() : DataType::int64();
  node->num_operands_ = sig.arity;
  size_t h = static_cast<size_t>(kind) * 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < sig.arity; ++i) {
    node->operands_[i] = *given[i];
    h = mix(h, given[i]->get()->hash());
  }
  node->hash_ = h;
  return SymExpr(std::shared_ptr<const SymExprNode>(std::move(node)));
}

std::optional<int64_t> SymExpr::as_const() const {
  if (defined() && kind() == SymKind::kIntImm) return node_->value();
  return std::nullopt;
}

bool SymExpr::is_const(int64_t value) const {
  return defined() && kind() == SymKind::kIntImm && node_->value() == value;
}

std::string SymExpr::to_string() const { return relax::to_string(*this); }

SymVar::SymVar(std::string name) {
  RELAX_CHECK(!name.empty()) << "a SymVar needs a name";
  auto node = std::shared_ptr<SymExprNode>(new SymExprNode());
  node->kind_ = SymKind::kVar;
  node->dtype_ = DataType::int64();
  node->value_ = static_cast<int64_t>(next_var_id.fetch_add(1, std::memory_order_relaxed));
  node->name_ = std::move(name);
  node->hash_ = mix(static_cast<size_t>(SymKind::kVar), static_cast<size_t>(node->value_));
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

SymExpr operator+(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kAdd, a, b); }
SymExpr operator-(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kSub, a, b); }
SymExpr operator*(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kMul, a, b); }
SymExpr operator-(const SymExpr& a) {
  if (auto c = a.as_const(); c && !a.dtype().is_bool() && *c != INT64_MIN) return SymExpr(-*c);
  return a * SymExpr(-1);
}
SymExpr floordiv(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymKind::kFloorDiv, a, b);
}
SymExpr floormod(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymKind::kFloorMod, a, b);
}
SymExpr min(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kMin, a, b); }
SymExpr max(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kMax, a, b); }
SymExpr operator==(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kEQ, a, b); }
SymExpr operator!=(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kNE, a, b); }
SymExpr operator<(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kLT, a, b); }
SymExpr operator<=(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kLE, a, b); }
SymExpr operator>(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kGT, a, b); }
SymExpr operator>=(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kGE, a, b); }
SymExpr operator&&(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymKind::kAnd, a, b);
}
SymExpr operator||(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymKind::kOr, a, b); }
SymExpr operator!(const SymExpr& a) { return SymExpr::make(SymKind::kNot, a); }
SymExpr select(const SymExpr& cond, const SymExpr& then_value, const SymExpr& else_value) {
  return SymExpr::make(SymKind::kSelect, cond, then_value, else_value);
}

// ---------------------------------------------------------------------------
// Structure.

bool structural_equal(const SymExpr& a, const SymExpr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  const SymExprNode& x = *a;
  const SymExprNode& y = *b;
  if (x.hash() != y.hash() || x.kind() != y.kind() || x.dtype() != y.dtype()) return false;
  if (x.kind() == SymKind::kIntImm || x.kind() == SymKind::kVar) return x.value() == y.value();
  for (size_t i = 0; i < x.num_operands(); ++i) {
    if (!structural_equal(x.operand(i), y.operand(i))) return false;
  }
  return true;
}

size_t structural_hash(const SymExpr& e) { return e.defined() ? e->hash() : 0; }

int structural_compare(const SymExpr& a, const SymExpr& b) {
  if (a.same_as(b)) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  const SymExprNode& x = *a;
  const SymExprNode& y = *b;
  if (x.kind() != y.kind()) return x.kind() < y.kind() ? -1 : 1;
  switch (x.kind()) {
    case SymKind::kIntImm:
      if (x.dtype() != y.dtype()) return x.dtype().is_bool() ? 1 : -1;
      if (x.value() != y.value()) return x.value() < y.value() ? -1 : 1;
      return 0;
    case SymKind::kVar:
      if (int c = x.name().compare(y.name()); c != 0) return c < 0 ? -1 : 1;
      if (x.value() != y.value()) return x.value() < y.value() ? -1 : 1;
      return 0;
    default:
      for (size_t i = 0; i < x.num_operands(); ++i) {
        if (int c = structural_compare(x.operand(i), y.operand(i)); c != 0) return c;
      }
      return 0;
  }
}

}  // namespace relax
