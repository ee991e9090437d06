// The parser of the IR text format: attribute values and constants.
//
// Attribute values are told apart by their spelling (printer.h): an integer,
// a float (with '.', an exponent, or inf/nan), true/false, a string, a dtype
// name, `[ints]` or `sym[exprs]`. Constant elements are read for the dtype of
// the constant: floats read straight into their own precision (decimal ->
// float32 rounds once), half floats round from double, integers are
// range-checked; `bytes "..."` gives the raw little-endian bytes.
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/text/parser_impl.h"
#include "relax/runtime/tensor.h"
#include "ir/text/text_format.h"
#include "relax/support/float_format.h"

namespace relax::text {
namespace {

absl::string_view sv(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

// ---------------------------------------------------------------------------
// Attributes.

std::optional<AttrValue> Parser::parse_attr_value() {
  if (!ok()) return std::nullopt;
  const Token& t = tok();
  if (t.kind == TokenKind::kString) {
    advance();
    return AttrValue(t.value);
  }
  if (at_punct("[")) {
    advance();
    std::vector<int64_t> ints;
    while (ok() && !at_punct("]")) {
      std::optional<int64_t> v = parse_int();
      if (v) ints.push_back(*v);
      if (!accept_punct(",")) break;
    }
    expect_punct("]");
    if (!ok()) return std::nullopt;
    return AttrValue(std::move(ints));
  }
  if (at_name("sym") && peek().text == "[") {
    advance();
    advance();
    std::vector<SymExpr> syms;
    while (ok() && !at_punct("]")) {
      syms.push_back(parse_sym());
      if (!accept_punct(",")) break;
    }
    expect_punct("]");
    if (!ok()) return std::nullopt;
    return AttrValue(std::move(syms));
  }
  if (accept_name("true")) return AttrValue(true);
  if (accept_name("false")) return AttrValue(false);
  const bool negative = at_punct("-");
  const Token& number = negative ? peek() : t;
  if (number.kind == TokenKind::kName && (number.text == "inf" || number.text == "nan")) {
    if (negative) advance();
    advance();
    const double v = number.text == "inf" ? std::numeric_limits<double>::infinity()
                                          : std::numeric_limits<double>::quiet_NaN();
    return AttrValue(negative ? -v : v);
  }
  if (number.kind == TokenKind::kNumber && looks_float(number.text)) {
    std::optional<double> v = read_float64(number.text);
    if (!v) {
      if (negative) advance();
      fail_expected("a float");
      return std::nullopt;
    }
    if (negative) advance();
    advance();
    return AttrValue(negative ? -*v : *v);
  }
  if (number.kind == TokenKind::kNumber) {
    std::optional<int64_t> v = parse_int();
    if (!v) return std::nullopt;
    return AttrValue(*v);
  }
  if (t.kind == TokenKind::kName) {
    if (std::optional<DataType> dtype = parse_dtype(t.text)) {
      if (!is_scalar_dtype(*dtype)) {
        fail(t, unsupported_dtype_message(*dtype));
        return std::nullopt;
      }
      advance();
      return AttrValue(*dtype);
    }
  }
  fail_expected("an attribute value");
  return std::nullopt;
}

std::optional<Attrs> Parser::parse_attrs_body() {
  Attrs attrs;
  expect_punct("{");
  while (ok() && !at_punct("}")) {
    const Token& at = tok();
    std::optional<std::string> key = expect_name_or_string("an attribute name");
    expect_punct("=");
    std::optional<AttrValue> value = parse_attr_value();
    if (!ok()) break;
    if (!attrs.emplace(*key, std::move(*value)).second) {
      fail(at, "duplicate attribute `" + *key + "`");
      break;
    }
    if (!accept_punct(",")) break;
  }
  expect_punct("}");
  if (!ok()) return std::nullopt;
  return attrs;
}

// ---------------------------------------------------------------------------
// Constants.

namespace {

// Writes element `text` (with its sign) of dtype `t` at `p`; false when it does not fit.
bool store_element(DataType t, bool negative, std::string_view text, uint8_t* p) {
  auto special = [&](double* out) {
    if (text == "inf") *out = std::numeric_limits<double>::infinity();
    else if (text == "nan") *out = std::numeric_limits<double>::quiet_NaN();
    else return false;
    if (negative) *out = -*out;
    return true;
  };
  switch (t.code) {
    case DataType::Code::kBool:
      if (negative || (text != "true" && text != "false")) return false;
      *p = text == "true" ? 1 : 0;
      return true;
    case DataType::Code::kInt:
    case DataType::Code::kUInt: {
      std::optional<uint64_t> m = read_u64(text);
      if (!m) return false;
      const bool is_signed = t.code == DataType::Code::kInt;
      const uint64_t max_pos = is_signed ? (uint64_t{1} << (t.bits - 1)) - 1
                                         : (t.bits == 64 ? UINT64_MAX : (uint64_t{1} << t.bits) - 1);
      const uint64_t max_neg = is_signed ? uint64_t{1} << (t.bits - 1) : 0;
      if (negative ? *m > max_neg : *m > max_pos) return false;
      const uint64_t bits = negative ? ~*m + 1 : *m;
      std::memcpy(p, &bits, t.bits / 8);  // little-endian hosts: the low bytes
      return true;
    }
    case DataType::Code::kFloat:
    case DataType::Code::kBFloat: {
      if (t.bits == 32 && t.code == DataType::Code::kFloat) {
        // Read as float directly: decimal -> float rounds once.
        float f = 0;
        double s = 0;
        if (special(&s)) {
          f = static_cast<float>(s);
        } else {
          std::optional<float> v = read_float32(text);
          if (!v) return false;
          f = negative ? -*v : *v;
        }
        std::memcpy(p, &f, 4);
        return true;
      }
      double v = 0;
      if (!special(&v)) {
        std::optional<double> d = read_float64(text);
        if (!d) return false;
        v = negative ? -*d : *d;
      }
      if (t.bits == 64 && t.code == DataType::Code::kFloat) {
        std::memcpy(p, &v, 8);
        return true;
      }
      if (t.bits != 16) return false;
      const uint16_t h = t.code == DataType::Code::kBFloat ? bfloat16_bits(v) : float16_bits(v);
      std::memcpy(p, &h, 2);
      return true;
    }
    case DataType::Code::kHandle:
      return false;
  }
  return false;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Expr Parser::parse_constant() {
  expect_punct("(");
  const Token& dtype_at = tok();
  std::optional<DataType> dtype = parse_dtype_token();
  expect_punct(",");
  expect_punct("(");
  std::vector<int64_t> shape;
  uint64_t numel = 1;
  while (ok() && !at_punct(")")) {
    const Token& at = tok();
    std::optional<int64_t> d = parse_int();
    if (!ok()) break;
    if (*d < 0) fail(at, "a constant's dims must be >= 0");
    numel = numel > 0 && static_cast<uint64_t>(*d) > (uint64_t{1} << 62) / numel ? (uint64_t{1} << 62)
                                                                                  : numel * static_cast<uint64_t>(*d);
    shape.push_back(*d);
    if (!accept_punct(",")) break;
  }
  expect_punct(")");
  expect_punct(",");
  if (!ok()) return Expr();
  const Token& data_at = tok();
  const size_t elem_bytes = (static_cast<size_t>(dtype->bits) * dtype->lanes + 7) / 8;
  std::vector<uint8_t> bytes;
  if (accept_name("bytes")) {
    if (tok().kind != TokenKind::kString) {
      fail_expected("a string of hex digits");
      return Expr();
    }
    const std::string& hex = tok().value;
    if (hex.size() % 2 != 0 || numel > (uint64_t{1} << 40) || hex.size() / 2 != numel * elem_bytes) {
      fail(tok(), absl::StrCat("a constant of ", numel, " elements of ", dtype->to_string(), " needs ",
                               numel * elem_bytes, " bytes, found ", hex.size() / 2));
      return Expr();
    }
    for (size_t i = 0; i < hex.size(); i += 2) {
      const int hi = hex_digit(hex[i]);
      const int lo = hex_digit(hex[i + 1]);
      if (hi < 0 || lo < 0) {
        fail(tok(), "a constant's bytes must be hex digits");
        return Expr();
      }
      bytes.push_back(static_cast<uint8_t>(hi * 16 + lo));
    }
    advance();
  } else if (at_name("device")) {
    fail(tok(), "constants must be on the host");
    return Expr();
  } else {
    if (!is_scalar_dtype(*dtype)) {
      fail(dtype_at, "constants of dtype " + dtype->to_string() + " are written as bytes \"...\"");
      return Expr();
    }
    expect_punct("[");
    while (ok() && !at_punct("]")) {
      const bool negative = accept_punct("-");
      const Token& at = tok();
      if (at.kind != TokenKind::kNumber && at.kind != TokenKind::kName) {
        fail_expected("a number");
        break;
      }
      bytes.resize(bytes.size() + elem_bytes);
      if (!store_element(*dtype, negative, at.text, bytes.data() + bytes.size() - elem_bytes)) {
        fail(at, absl::StrCat("`", negative ? "-" : "", sv(at.text), "` is not a value of dtype ",
                              dtype->to_string()));
        break;
      }
      advance();
      if (!accept_punct(",")) break;
    }
    expect_punct("]");
    if (ok() && bytes.size() != numel * elem_bytes) {
      fail(data_at, absl::StrCat("the constant's shape holds ", numel, " elements, found ",
                                 bytes.size() / elem_bytes));
    }
  }
  expect_punct(")");
  if (!ok()) return Expr();
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::empty(shape, *dtype);
  if (!t.ok()) {
    fail(dtype_at, "cannot make the constant: " + std::string(t.status().message()));
    return Expr();
  }
  if (!bytes.empty()) std::memcpy(t->data(), bytes.data(), bytes.size());
  return make_constant(*t);
}

}  // namespace relax::text
