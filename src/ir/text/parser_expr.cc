// The parser of the IR text format: graph-level expressions (parser.cc reads
// modules, functions and bindings around them).
//
// An expression is a primary followed by any number of calls `(...)` and
// tuple items `[i]`. A bare name is the innermost variable of that name in
// scope, else the registered operator of that name; keywords (const, shape,
// prim, extern_func, op, if, seq, func, prim_func) start the other primaries.
// Expressions are built unnormalised: the binding (or SeqExpr result) that
// holds one normalises it as a whole. Calls of operators with a fixed argument
// count are checked here, so that the error points at the call.
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ir/text/parser_impl.h"

namespace relax::text {

// ---------------------------------------------------------------------------
// Expressions.

Expr Parser::parse_expr() {
  DepthGuard guard(*this);
  if (!ok()) return Expr();
  Expr e = parse_primary();
  while (ok()) {
    const Token& at = tok();
    if (at_punct("(")) {
      e = parse_call(e, at);
    } else if (accept_punct("[")) {
      const Token& index_at = tok();
      std::optional<int64_t> index = parse_int();
      expect_punct("]");
      if (!ok()) break;
      if (*index < 0 || *index > INT32_MAX) {
        fail(index_at, "a tuple index must be in [0, 2^31)");
        break;
      }
      e = make_tuple_get_item(e, static_cast<int>(*index));
    } else {
      break;
    }
  }
  return ok() ? e : Expr();
}

Expr Parser::parse_call(Expr callee, const Token& at) {
  advance();  // '('
  std::vector<Expr> args;
  Attrs attrs;
  std::vector<StructInfo> sinfo_args;
  while (ok() && !at_punct(")")) {
    const Token& item = tok();
    const bool keyword = (item.kind == TokenKind::kName || item.kind == TokenKind::kString) &&
                         peek().kind == TokenKind::kPunct && peek().text == "=";
    if (keyword) {
      std::string key = item.kind == TokenKind::kString ? item.value : std::string(item.text);
      advance();
      advance();
      if (item.kind == TokenKind::kName && key == "sinfo") {
        sinfo_args.push_back(parse_sinfo(false));
      } else {
        std::optional<AttrValue> value = parse_attr_value();
        if (!value) break;
        if (!attrs.emplace(key, std::move(*value)).second) {
          fail(item, "duplicate attribute `" + key + "`");
          break;
        }
      }
    } else if (!attrs.empty() || !sinfo_args.empty()) {
      fail(item, "arguments come before attributes and sinfo");
      break;
    } else {
      args.push_back(parse_expr());
    }
    if (!accept_punct(",")) break;
  }
  expect_punct(")");
  if (!ok()) return Expr();
  if (const auto* op = callee.as<OpNode>()) {
    const OpInfo* info = find_op(op->name);
    const int n = static_cast<int>(args.size());
    if (info != nullptr && info->num_args >= 0 && (n > info->num_args || n < info->min_args)) {
      const std::string expected =
          info->min_args == info->num_args
              ? std::to_string(info->num_args)
              : absl::StrCat(info->min_args, " to ", info->num_args);
      fail(at, absl::StrCat("`", op->name, "` takes ", expected, " argument",
                            info->num_args == 1 ? "" : "s", ", found ", args.size()));
      return Expr();
    }
    if (info != nullptr) {
      // Unknown keys and wrong types are reported here, where the call is.
      absl::StatusOr<Attrs> canonical = info->canonical_attrs(attrs);
      if (!canonical.ok()) {
        fail(at, std::string(canonical.status().message()));
        return Expr();
      }
      attrs = *std::move(canonical);
    }
  }
  return make_call(std::move(callee), std::move(args), std::move(attrs), std::move(sinfo_args));
}

Expr Parser::lookup_name(const Token& at) {
  const std::string name(at.text);
  advance();
  for (auto it = st_.var_scopes.rbegin(); it != st_.var_scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end()) return found->second;
  }
  if (find_op(name) != nullptr) return make_op_or_die(name);
  fail(at, "unknown variable or operator `" + name + "`");
  return Expr();
}

Expr Parser::parse_primary() {
  const Token& t = tok();
  if (t.kind == TokenKind::kString) {
    advance();
    return make_string_imm(t.value);
  }
  if (accept_punct("@")) {
    const Token& name_at = tok();
    std::optional<std::string> name = expect_name_or_string("a function name");
    if (!name) return Expr();
    Expr gv = module_.global_var(*name);
    if (!gv.defined()) fail(name_at, "unknown function @" + *name);
    return gv;
  }
  if (accept_punct("(")) {
    if (accept_punct(")")) return make_tuple({});
    Expr first = parse_expr();
    if (accept_punct(")")) return first;  // parenthesised
    std::vector<Expr> fields = {first};
    expect_punct(",");
    while (ok() && !at_punct(")")) {
      fields.push_back(parse_expr());
      if (!accept_punct(",")) break;
    }
    expect_punct(")");
    return ok() ? make_tuple(std::move(fields)) : Expr();
  }
  if (t.kind == TokenKind::kNumber || (at_punct("-") && peek().kind == TokenKind::kNumber)) {
    return parse_number_operand();
  }
  if (t.kind != TokenKind::kName) {
    fail_expected("an expression");
    return Expr();
  }
  if (accept_name("const")) return parse_constant();
  if (accept_name("shape")) {
    expect_punct("(");
    std::vector<SymExpr> values;
    while (ok() && !at_punct(")")) {
      const Token& at = tok();
      SymExpr v = parse_sym();
      if (ok() && v.dtype() != DataType::int64()) {
        fail(at, "a shape value must be an int64 expression, found `" + v.to_string() + "`");
      }
      values.push_back(v);
      if (!accept_punct(",")) break;
    }
    expect_punct(")");
    return ok() ? make_shape_expr(std::move(values)) : Expr();
  }
  if (accept_name("prim")) {
    expect_punct("(");
    SymExpr v = ok() ? parse_sym() : SymExpr();
    expect_punct(")");
    return ok() ? make_prim_value(v) : Expr();
  }
  if (accept_name("extern_func")) {
    expect_punct("(");
    if (tok().kind != TokenKind::kString) {
      fail_expected("a symbol name string");
      return Expr();
    }
    std::string symbol = tok().value;
    advance();
    StructInfo sinfo;
    if (accept_punct(",")) {
      const Token& at = tok();
      sinfo = parse_sinfo(false);
      if (ok() && sinfo.kind() != StructInfoKind::kFunc) {
        fail(at, "an extern function needs a Func annotation, found " + sinfo.to_string());
      }
    }
    expect_punct(")");
    return ok() ? make_extern_func(std::move(symbol), sinfo) : Expr();
  }
  if (accept_name("op")) {
    expect_punct("(");
    const Token& at = tok();
    if (at.kind != TokenKind::kString) {
      fail_expected("an operator name string");
      return Expr();
    }
    advance();
    expect_punct(")");
    if (!ok()) return Expr();
    if (find_op(at.value) == nullptr) {
      fail(at, "unknown operator `" + at.value + "`");
      return Expr();
    }
    return make_op_or_die(at.value);
  }
  if (accept_name("if")) {
    Expr cond = parse_expr();
    Expr then_branch = ok() ? parse_braced_seq() : Expr();
    expect_name("else");
    Expr else_branch = ok() ? parse_braced_seq() : Expr();
    return ok() ? make_if(cond, then_branch, else_branch) : Expr();
  }
  if (at_name("seq") && peek().text == "{") {
    advance();
    return parse_braced_seq();
  }
  if (accept_name("func")) {
    std::optional<FuncHeader> header = parse_func_header();
    return header ? parse_func_body(std::move(*header)) : Expr();
  }
  if (accept_name("prim_func")) {
    // A PrimFunc's buffers are its own.
    absl::flat_hash_map<std::string, Buffer> outer = std::move(st_.syms.buffers);
    st_.syms.buffers.clear();
    std::optional<PrimHeader> header = parse_prim_header();
    Expr out = header ? parse_prim_body(std::move(*header)) : Expr();
    st_.syms.buffers = std::move(outer);
    return out;
  }
  return lookup_name(t);
}

namespace {

// Whether `text` is a float literal without a dtype suffix: digits with a fraction or an
// exponent (`1.0`, `2.5e-3`, `1e6`), which SymExpr's text form does not read (it wants
// `1.0f32`).
bool is_unsuffixed_float(std::string_view text) {
  bool fraction_or_exponent = false;
  for (char c : text) {
    if (c == '.' || c == 'e' || c == 'E') {
      fraction_or_exponent = true;
    } else if (!(c >= '0' && c <= '9') && c != '+' && c != '-') {
      return false;
    }
  }
  return fraction_or_exponent;
}

}  // namespace

// A bare number is the PrimValue of that number, as the C++ builder makes one of a C++ number
// (relax/ir/op/elementwise.h): an unsuffixed float is a float64 constant and an unsuffixed
// integer an int64 constant, which adapt to the dtype of the tensor they meet (so
// `multiply(x, 1.0)` multiplies a float16 x by a float16 1); a suffixed one (`0.5f16`, `3i32`)
// has its suffix's dtype, and anything longer (`2 * n`) is read as `prim(...)` reads it.
Expr Parser::parse_number_operand() {
  const bool negative = at_punct("-");
  const Token& number = negative ? peek() : tok();
  if (!is_unsuffixed_float(number.text)) {
    SymExpr v = parse_sym();
    return ok() ? make_prim_value(v) : Expr();
  }
  // Alone in its operand: the next token ends the expression.
  const Token& after = negative ? peek(2) : peek();
  if (after.kind == TokenKind::kPunct && after.text != "," && after.text != ")" && after.text != "]" &&
      after.text != "}") {
    fail(after, absl::StrCat("expected ',' or ')' after the float literal `", absl::string_view(number.text.data(), number.text.size()),
                             "` (arithmetic on literals is written `prim(...)` with suffixed floats: "
                             "`prim(2.0f32 * n)`), found ", describe(after)));
    return Expr();
  }
  double value = 0;
  const char* begin = number.text.data();
  const char* end = begin + number.text.size();
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || stop != end || !std::isfinite(value)) {
    fail(number, absl::StrCat("float literal ", negative ? "-" : "", absl::string_view(number.text.data(), number.text.size()),
                              " is not a finite float64 number"));
    return Expr();
  }
  advance();
  if (negative) advance();
  return make_prim_value(SymExpr::float_imm(negative ? -value : value, DataType::float64()));
}

}  // namespace relax::text
