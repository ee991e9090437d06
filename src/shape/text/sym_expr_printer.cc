// The text form of SymExpr: infix with spaces, fewest parentheses.
//
// Precedence, lowest first: `||`, `&&`, comparisons, `+ -`, `* /`, unary `!`,
// then primaries (constants, variables, calls such as `floordiv(a, b)` or
// `exp(x)`, casts `cast<float32>(x)`, buffer loads `A[i, j + 1]`).
// Binary operators are left-associative: the right operand is parenthesized
// when it binds no tighter than its parent, the left one when it binds looser.
// Comparisons do not associate at all, so a comparison operand of a comparison
// is always parenthesized.
//
// A negative constant is written as one literal, `-5`; the parser reads `-`
// followed directly by digits as such a literal, so `x - -5`, `-5 * x` and
// `-9223372036854775808` read back as the constants they were. The printer
// never writes a unary minus on anything else (negation is the tree `x * -1`).
//
// Constants other than int64 carry their dtype as a suffix, so that they read
// back exactly: `5i32`, `255u8`, `1.5f32`, `0.1f64`, `2f16`, `1bf16`. A float
// literal is the shortest decimal (in C's %g style) that reads back, through
// the parser's own path (decimal -> double -> rounded to the dtype), as the
// same value; so `0.1f32` prints as `0.1f32`, not as its 9-digit expansion.
// Infinities and NaN are the names `inf_f32`, `-inf_f32`, `nan_f32` (every
// NaN is the one quiet NaN, see SymExpr::float_imm). A negative float literal
// is, like a negative integer, one literal: `x - -1.5f32`.
#include <bit>
#include <charconv>
#include <cmath>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "shape/dtype_util.h"
#include "relax/shape/buffer.h"
#include "relax/shape/sym_expr.h"
#include "shape/text/sym_expr_text.h"
#include "relax/support/check.h"

namespace relax {
namespace {

int precedence(SymKind kind) { return sym_kind_info(kind).precedence; }

void append_name(const std::string& name, std::string& out) {
  if (sym_text::is_plain_name(name)) {
    out += name;
    return;
  }
  out += '"';
  for (char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      // Control characters would make the text hard to read and to locate errors in.
      absl::StrAppendFormat(&out, "\\x%02x", byte);
    } else {
      out += c;
    }
  }
  out += '"';
}

/// The shortest %g-style decimal that reads back as `v` of dtype `t`.
std::string float_digits(double v, DataType t) {
  std::string best;
  for (int precision = 1; precision <= 17; ++precision) {
    char buf[64];
    const auto written = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, precision);
    if (written.ec != std::errc()) continue;
    double back = 0;
    const auto read = std::from_chars(buf, written.ptr, back);
    if (read.ec != std::errc() ||
        std::bit_cast<uint64_t>(round_to_dtype(back, t)) != std::bit_cast<uint64_t>(v))
      continue;
    std::string candidate(buf, written.ptr);
    if (best.empty() || candidate.size() < best.size()) best = std::move(candidate);
  }
  return best;
}

void append_float(double v, DataType t, std::string& out) {
  const std::string suffix = shape_detail::literal_suffix(t);
  if (std::isnan(v)) {
    out += "nan_" + suffix;
  } else if (std::isinf(v)) {
    out += (v < 0 ? "-inf_" : "inf_") + suffix;
  } else {
    out += float_digits(v, t) + suffix;
  }
}

[[gnu::noinline]] void append_leaf(const SymExprNode& node, std::string& out) {
  if (node.kind() == SymKind::kVar) {
    append_name(node.name(), out);
  } else if (node.kind() == SymKind::kFloatImm) {
    append_float(node.float_value(), node.dtype(), out);
  } else if (node.dtype().is_bool()) {
    out += node.value() != 0 ? "true" : "false";
  } else {
    absl::StrAppend(&out, node.value(), shape_detail::literal_suffix(node.dtype()));
  }
}

/// `name(op0, op1, ...)`, `cast<dtype>(op)` or `A[i, j]`.
[[gnu::noinline]] void append_head(const SymExprNode& node, std::string& out) {
  switch (node.kind()) {
    case SymKind::kCast:
      absl::StrAppend(&out, "cast<", node.dtype().to_string(), ">(");
      return;
    case SymKind::kCall:
      out += intrinsic_name(node.intrinsic());
      out += '(';
      return;
    case SymKind::kBufferLoad:
      append_name(node.buffer_node()->name, out);
      out += '[';
      return;
    default:
      out += sym_kind_name(node.kind());
      out += '(';
      return;
  }
}

/// The end of `ramp(base, stride, lanes)` and `broadcast(value, lanes)`: ", lanes)".
std::string_view lanes_close(int lanes) {
  switch (lanes) {
    case 2: return ", 2)";
    case 4: return ", 4)";
    case 8: return ", 8)";
    case 16: return ", 16)";
    case 32: return ", 32)";
    case 64: return ", 64)";
    default: break;
  }
  static_assert(kMaxLanes == 64, "a lane count without its text");
  RELAX_CHECK(false) << "a vector of " << lanes << " lanes";
  return ")";
}

/// One step of the printer's work list: print a subtree, write a fixed text, or
/// write the operator of a binary node with a space on each side.
struct Step {
  enum Kind : uint8_t { kExpr, kText, kInfix };
  Kind kind;
  const SymExprNode* node = nullptr;
  std::string_view text;
};

/// Appends the text of `root`. The tree is walked with an explicit stack, not by
/// recursion, so that any depth prints (a simplified sum of many terms is a long
/// chain); the steps of a node are pushed in reverse of the order they write.
void append(const SymExprNode& root, std::string& out) {
  absl::InlinedVector<Step, 32> stack = {Step{Step::kExpr, &root, {}}};
  auto push_text = [&](std::string_view text) { stack.push_back(Step{Step::kText, nullptr, text}); };
  auto push_expr = [&](const SymExpr& e) { stack.push_back(Step{Step::kExpr, e.get(), {}}); };
  // Pushes `e`, parenthesized when asked (close first: the stack is a LIFO).
  auto push_operand = [&](const SymExpr& e, bool parenthesize) {
    if (parenthesize) push_text(")");
    push_expr(e);
    if (parenthesize) push_text("(");
  };
  while (!stack.empty()) {
    const Step step = stack.back();
    stack.pop_back();
    if (step.kind == Step::kText) {
      out += step.text;
      continue;
    }
    const SymExprNode& node = *step.node;
    if (step.kind == Step::kInfix) {
      out += ' ';
      out += sym_kind_name(node.kind());
      out += ' ';
      continue;
    }
    const SymKindInfo& row = sym_kind_info(node.kind());
    switch (row.syntax) {
      case SymSyntax::kLeaf:
        append_leaf(node, out);
        continue;
      case SymSyntax::kPrefix:
        out += row.name;
        push_operand(node.operand(0), precedence(node.operand(0).kind()) < row.precedence);
        continue;
      case SymSyntax::kFunction:
      case SymSyntax::kOwn:
        append_head(node, out);
        push_text(node.kind() == SymKind::kBufferLoad ? "]"
                  : node.kind() == SymKind::kRamp || node.kind() == SymKind::kBroadcast
                      ? lanes_close(node.dtype().lanes)
                      : ")");
        for (size_t i = node.num_operands(); i-- > 0;) {
          push_expr(node.operand(i));
          if (i > 0) push_text(", ");
        }
        continue;
      case SymSyntax::kInfix: {
        // Left-associative; a comparison operand of a comparison is always parenthesized.
        const int prec = row.precedence;
        const int left = precedence(node.operand(0).kind());
        const int right = precedence(node.operand(1).kind());
        const bool compare = prec == kSymPrecCompare;
        push_operand(node.operand(1), right <= prec);
        stack.push_back(Step{Step::kInfix, &node, {}});
        push_operand(node.operand(0), left < prec || (compare && left == prec));
        continue;
      }
    }
  }
}

}  // namespace

std::string to_string(const SymExpr& e) {
  if (!e.defined()) return "<undefined>";
  std::string out;
  append(*e, out);
  return out;
}

std::ostream& operator<<(std::ostream& os, const SymExpr& e) { return os << to_string(e); }

}  // namespace relax
