// SymExpr::parse: reads the text form written by to_string().
//
// A recursive-descent parser, with precedence climbing for the binary
// operators, over an on-the-fly lexer (sym_expr_lexer.h). It is the exact
// inverse of the printer: it builds the tree as written with SymExpr::make,
// never folds, and parse(to_string(e)) is structurally equal to e whenever the
// variables resolve to e's own (through the `vars` map).
//
// Grammar, loosest first:
//   expr    := and ('||' and)*
//   and     := compare ('&&' compare)*
//   compare := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)?   -- no chaining
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '!' unary | '-' INTEGER | '-' FLOAT | '-' unary | primary
//   primary := INTEGER | FLOAT | 'true' | 'false' | FLOAT_SPECIAL | '(' expr ')'
//            | NAME | QUOTED_NAME                               -- a variable
//            | (NAME | QUOTED_NAME) '[' (expr (',' expr)*)? ']' -- a buffer load
//            | FUNCTION '(' expr (',' expr)* ')'                -- floordiv ... select, exp ... fma
//            | 'cast' '<' DTYPE '>' '(' expr ')'
//
// `-` followed by a literal is one negative literal (so INT64_MIN reads);
// `-` before anything else is negation as operator-(SymExpr) builds it (which
// folds a float constant: `-inf_f32` is negative infinity).
//
// Dtypes are checked as SymExpr::make checks them, with one rule only the C++
// operators relax: an int64 literal next to a float is an error here (the
// printer writes `2f32`, never `2`, so printed text needs no conversion). Names
// resolve to the caller's variables (any dtype) or to fresh int64 variables;
// a load's name must be one of the context's buffers.
//
// Every error is an InvalidArgument status naming the column, what was
// expected and what was found. The parser never aborts: dtypes are checked
// here before SymExpr::make sees them. Nor does it overflow the stack: the
// nesting of parentheses, unary operators and calls is bounded, and so is the
// depth of the built tree (a chain `a + b + c + ...` of n operators is n levels
// deep), both by kMaxNestingDepth (relax/support/limits.h), the one limit of
// every reader, so that what the text reader accepts the JSON reader accepts too
// and the walks over the result (simplify, bounds, printing) stay shallow. Each
// recursive function keeps a small frame: messages are built out of line.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "shape/dtype_util.h"
#include "relax/shape/buffer.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/limits.h"
#include "shape/text/sym_expr_lexer.h"
#include "shape/text/sym_expr_text.h"

namespace relax {
namespace {

using sym_text::to_absl;
using sym_text::Token;
using sym_text::TokenKind;

/// How deeply parentheses, unary operators and calls may nest (the parser's own
/// recursion), and how deep the built tree may get (SymExprNode::depth()): one limit
/// for every reader of outside input.
constexpr int kMaxNesting = kMaxNestingDepth;
constexpr int kMaxTreeHeight = kMaxNestingDepth;

/// A parsed subexpression with where it starts and the height of its tree.
struct Parsed {
  SymExpr expr;
  size_t offset = 0;
  int height = 1;
};

// The infix operators and their binding strengths are the SymKind table's rows of
// syntax kInfix (relax/shape/sym_kind.h).
using BinaryOp = SymKindInfo;

// The dtype classes look at one lane: a float32x16 operand is a float (that operands
// agree in lanes is checked with their dtypes).
DataType lane_dtype(const Parsed& p) { return DataType{p.expr.dtype().code, p.expr.dtype().bits, 1}; }
bool is_bool(const Parsed& p) { return p.expr.dtype().is_bool(); }
bool is_int(const Parsed& p) { return is_scalar_int(lane_dtype(p)); }
bool is_float(const Parsed& p) { return is_scalar_float(lane_dtype(p)); }
bool is_numeric(const Parsed& p) { return is_scalar_numeric(lane_dtype(p)); }

/// How an operand's dtype reads in a message: "boolean", "integer" (int64), or the dtype.
std::string dtype_word(const SymExpr& e) {
  if (e.dtype().is_bool()) return "boolean";
  if (e.dtype() == DataType::int64()) return "integer";
  return e.dtype().to_string();
}

/// What a numeric operand next to `other` must be: "an integer", or other's float dtype.
std::string numeric_wanted(const Parsed& other) {
  return is_float(other) ? other.expr.dtype().to_string() : "an integer";
}

class Parser {
 public:
  Parser(std::string_view text, absl::flat_hash_map<std::string, SymVar>* vars,
         const absl::flat_hash_map<std::string, Buffer>* buffers)
      : lexer_(text), user_vars_(vars), buffers_(buffers) {}

  absl::StatusOr<SymExpr> run() {
    tok_ = lexer_.lex(0);
    std::optional<Parsed> result = parse_binary(0);
    if (result && tok_.kind != TokenKind::kEnd) fail_expected("an operator or end of input");
    if (!status_.ok()) return status_;
    if (user_vars_ != nullptr) {
      for (auto& [name, var] : new_vars_) user_vars_->emplace(name, var);
    }
    return result->expr;
  }

 private:
  [[gnu::noinline]] void advance() { tok_ = lexer_.lex(tok_.end); }
  bool at_punct(std::string_view spelling) const {
    return tok_.kind == TokenKind::kPunct && tok_.text == spelling;
  }

  const BinaryOp* binary_op_here() const {
    if (tok_.kind != TokenKind::kPunct) return nullptr;
    const SymKind kind = sym_kind_of_name(tok_.text, SymSyntax::kInfix);
    return kind == SymKind::kIntImm ? nullptr : &sym_kind_info(kind);
  }

  // ---- Grammar ------------------------------------------------------------

  // Precedence climbing: one call parses a whole chain of operators at `min_level` or
  // tighter; the right operand of an operator at level L is parsed at level L + 1, which
  // makes every operator left-associative.
  [[gnu::noinline]] std::optional<Parsed> parse_binary(int min_level) {
    std::optional<Parsed> lhs = parse_unary();
    bool after_compare = false;
    while (lhs) {
      const BinaryOp* op = binary_op_here();
      if (op == nullptr || op->precedence < min_level) break;
      if (op->precedence == kSymPrecCompare && after_compare) return fail_chained_comparison();
      const size_t op_offset = tok_.offset;
      advance();
      std::optional<Parsed> rhs = parse_binary(op->precedence + 1);
      if (!rhs) return std::nullopt;
      after_compare = op->precedence == kSymPrecCompare;
      lhs = combine(*op, *lhs, *rhs, op_offset);
    }
    return lhs;
  }

  [[gnu::noinline]] std::optional<Parsed> parse_unary() {
    // Every recursive path of the grammar passes through here, so this one counter bounds
    // the stack depth of the whole parser.
    struct NestingGuard {
      int& depth;
      explicit NestingGuard(int& d) : depth(++d) {}
      ~NestingGuard() { --depth; }
    } guard(nesting_);
    if (nesting_ > kMaxNesting) return fail_nesting();
    if (!at_punct("!") && !at_punct("-")) return parse_primary();
    const bool is_not = tok_.text == "!";
    const size_t offset = tok_.offset;
    advance();
    if (!is_not && tok_.kind == TokenKind::kInteger) return parse_integer(true, offset);
    if (!is_not && tok_.kind == TokenKind::kFloat) return parse_float(true, offset);
    std::optional<Parsed> operand = parse_unary();
    if (!operand) return std::nullopt;
    return apply_unary(is_not, *operand, offset);
  }

  [[gnu::noinline]] std::optional<Parsed> parse_primary() {
    const size_t offset = tok_.offset;
    switch (tok_.kind) {
      case TokenKind::kInteger:
        return parse_integer(false, offset);
      case TokenKind::kFloat:
        return parse_float(false, offset);
      case TokenKind::kQuotedName:
        return parse_variable(tok_.name);
      case TokenKind::kName:
        if (tok_.text == "true" || tok_.text == "false") {
          const bool value = tok_.text == "true";
          advance();
          return Parsed{SymExpr::boolean(value), offset, 1};
        }
        if (sym_text::is_float_special(tok_.text)) return parse_float_special();
        if (tok_.text == "cast") return parse_cast();
        if (sym_text::is_reserved_name(tok_.text)) return parse_call();
        return parse_variable(std::string(tok_.text));
      default:
        break;
    }
    if (!at_punct("(")) return fail_expected("an expression");
    advance();
    std::optional<Parsed> inner = parse_binary(0);
    if (!inner) return std::nullopt;
    if (!at_punct(")")) return fail_unclosed("')'", offset);
    advance();
    inner->offset = offset;
    return inner;
  }

  [[gnu::noinline]] std::optional<Parsed> parse_call() {
    const size_t offset = tok_.offset;
    const std::string_view name = tok_.text;
    advance();
    const size_t open = tok_.offset;
    if (!at_punct("(")) return fail_expected(absl::StrCat("'(' after ", to_absl(name)));
    advance();
    std::vector<Parsed> args;
    while (!at_punct(")")) {
      std::optional<Parsed> arg = parse_binary(0);
      if (!arg) return std::nullopt;
      args.push_back(std::move(*arg));
      if (!at_punct(",")) break;
      advance();
      // A ',' must be followed by an argument: `min(a, )` is an error, not a one-argument call.
      if (at_punct(")")) return fail_expected("an expression");
    }
    if (!at_punct(")")) return fail_unclosed("',' or ')'", open);
    advance();
    return make_call(name, args, offset);
  }

  [[gnu::noinline]] std::optional<Parsed> parse_cast() {
    const size_t offset = tok_.offset;
    advance();
    if (!at_punct("<")) return fail_expected("'<' after cast");
    advance();
    std::optional<DataType> dtype;
    if (tok_.kind == TokenKind::kName) dtype = parse_dtype(tok_.text);
    const bool supported =
        dtype && (dtype->lanes == 1 || is_vector_lanes(dtype->lanes)) &&
        is_scalar_dtype(DataType{dtype->code, dtype->bits, 1});
    if (!supported) return fail_expected("a dtype (int32, float32, bool, ...) after 'cast<'");
    advance();
    if (!at_punct(">")) return fail_expected("'>' after the dtype of cast");
    advance();
    const size_t open = tok_.offset;
    if (!at_punct("(")) return fail_expected("'(' after cast<dtype>");
    advance();
    std::optional<Parsed> operand = parse_binary(0);
    if (!operand) return std::nullopt;
    if (!at_punct(")")) return fail_unclosed("')'", open);
    advance();
    if (operand->height + 1 > kMaxTreeHeight) return fail_height(offset);
    if (operand->expr.dtype().lanes != dtype->lanes) {
      return fail(offset, absl::StrCat("cast of ", operand->expr.dtype().to_string(), " `", to_string(operand->expr),
                                       "` to ", dtype->to_string(), ": the lanes differ"));
    }
    return Parsed{cast(*dtype, operand->expr), offset, operand->height + 1};
  }

  [[gnu::noinline]] std::optional<Parsed> parse_variable(std::string name) {
    const size_t offset = tok_.offset;
    advance();
    if (at_punct("(")) return fail_unknown_function(offset, name);
    if (at_punct("[")) return parse_load(name, offset);
    return Parsed{lookup(name), offset, 1};
  }

  [[gnu::noinline]] std::optional<Parsed> parse_load(const std::string& name, size_t offset) {
    const size_t open = tok_.offset;
    advance();
    std::vector<Parsed> indices;
    while (!at_punct("]")) {
      std::optional<Parsed> index = parse_binary(0);
      if (!index) return std::nullopt;
      indices.push_back(std::move(*index));
      if (!at_punct(",")) break;
      advance();
      if (at_punct("]")) return fail_expected("an expression");
    }
    if (!at_punct("]")) return fail_expected(absl::StrCat("',' or ']' to close '[' at ", lexer_.location(open)));
    advance();
    return make_load(name, indices, offset);
  }

  [[gnu::noinline]] std::optional<Parsed> parse_float_special() {
    const size_t offset = tok_.offset;
    const std::string_view text = tok_.text;
    const size_t underscore = text.find('_');
    const DataType dtype = *shape_detail::dtype_of_suffix(text.substr(underscore + 1));
    const double value = text.substr(0, underscore) == "inf"
                             ? std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::quiet_NaN();
    advance();
    return Parsed{SymExpr::float_imm(value, dtype), offset, 1};
  }

  [[gnu::noinline]] std::optional<Parsed> parse_float(bool negative, size_t offset) {
    const std::string_view number = tok_.number;
    const DataType dtype = *shape_detail::dtype_of_suffix(tok_.suffix);
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    const bool finite = ec == std::errc() && end == number.data() + number.size() &&
                        std::isfinite(round_to_dtype(value, dtype));
    if (!finite) {
      return fail(offset, absl::StrCat("float literal ", negative ? "-" : "", to_absl(tok_.text),
                                       " is out of the ", dtype.to_string(), " range"));
    }
    advance();
    return Parsed{SymExpr::float_imm(negative ? -value : value, dtype), offset, 1};
  }

  [[gnu::noinline]] std::optional<Parsed> parse_integer(bool negative, size_t offset) {
    const DataType dtype =
        tok_.suffix.empty() ? DataType::int64() : *shape_detail::dtype_of_suffix(tok_.suffix);
    auto out_of_range = [&] {
      return fail(offset, absl::StrCat("integer literal ", negative ? "-" : "", to_absl(tok_.text),
                                       " is out of the ", dtype.to_string(), " range"));
    };
    // Accumulate the magnitude unsigned so that 9223372036854775808 can become INT64_MIN.
    const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
    uint64_t magnitude = 0;
    for (char c : tok_.number) {
      const auto digit = static_cast<uint64_t>(c - '0');
      if (magnitude > (limit - digit) / 10) return out_of_range();
      magnitude = magnitude * 10 + digit;
    }
    // Negating in unsigned arithmetic is well defined and lands on INT64_MIN for 2^63.
    const auto value = static_cast<int64_t>(negative ? ~magnitude + 1 : magnitude);
    if (!fits_dtype(value, dtype)) return out_of_range();
    advance();
    return Parsed{SymExpr::int_imm(value, dtype), offset, 1};
  }

  // ---- Building nodes (with the checks SymExpr::make would abort on) -------

  [[gnu::noinline]] std::optional<Parsed> combine(const BinaryOp& op, const Parsed& lhs,
                                                  const Parsed& rhs, size_t op_offset) {
    if (op.kind == SymKind::kAnd || op.kind == SymKind::kOr) {
      if (!is_bool(lhs)) return fail_dtype(lhs, "boolean", operand_role(op));
      if (!is_bool(rhs)) return fail_dtype(rhs, "boolean", operand_role(op));
    } else {
      if (!is_numeric(lhs)) return fail_dtype(lhs, numeric_wanted(rhs), operand_role(op));
      if (!is_numeric(rhs)) return fail_dtype(rhs, numeric_wanted(lhs), operand_role(op));
      if (op.kind == SymKind::kDiv && (!is_float(lhs) || !is_float(rhs))) {
        return fail(op_offset,
                    "'/' is true division, for floats; integer division is written floordiv(a, b)");
      }
      if (lhs.expr.dtype() != rhs.expr.dtype()) {
        return fail_mismatch(op_offset, absl::StrCat("operands of ", to_absl(op.name)), lhs, rhs);
      }
    }
    const int height = 1 + std::max(lhs.height, rhs.height);
    if (height > kMaxTreeHeight) return fail_height(op_offset);
    // What is left to check: the lanes of two bool vectors.
    const std::string why = sym_operand_mismatch(op.kind, {lhs.expr, rhs.expr}, op.name);
    if (!why.empty()) return fail(op_offset, why);
    return Parsed{SymExpr::make(op.kind, lhs.expr, rhs.expr), lhs.offset, height};
  }

  [[gnu::noinline]] std::optional<Parsed> apply_unary(bool is_not, const Parsed& operand,
                                                      size_t offset) {
    if (is_not && !is_bool(operand)) return fail_dtype(operand, "boolean", "operand of !");
    if (!is_not && !is_numeric(operand)) {
      return fail_dtype(operand, "an integer", "operand of unary -");
    }
    // An unsigned operand negates only when it is the constant 0 (-(5u8) has no uint8 value).
    if (!is_not && operand.expr.dtype().code == DataType::Code::kUInt && !operand.expr.is_const(0)) {
      return fail_dtype(operand, "signed", "operand of unary -");
    }
    SymExpr result = is_not ? !operand.expr : -operand.expr;
    const int height = result.as_const() || result.as_float() ? 1 : operand.height + 1;
    if (height > kMaxTreeHeight) return fail_height(offset);
    return Parsed{std::move(result), offset, height};
  }

  [[gnu::noinline]] std::optional<Parsed> make_call(std::string_view name,
                                                    const std::vector<Parsed>& args,
                                                    size_t offset) {
    if (name == "ramp" || name == "broadcast") return make_vector(name, args, offset);
    const SymKind kind = sym_kind_of_name(name, SymSyntax::kFunction);
    const bool is_select = kind == SymKind::kSelect;
    const bool int_only = sym_kind_info(kind).operands == SymOperands::kInteger;
    const std::optional<Intrinsic> intrinsic = intrinsic_from_name(name);
    const size_t arity = is_select ? 3 : intrinsic ? intrinsic_arity(*intrinsic) : 2;
    if (args.size() != arity) {
      return fail(offset, absl::StrCat(to_absl(name), " takes ", arity,
                                       arity == 1 ? " argument" : " arguments", ", found ",
                                       args.size()));
    }
    int height = 0;
    const size_t first = is_select ? 1 : 0;  // the first value argument
    for (size_t i = 0; i < arity; ++i) {
      const std::string role = i < first ? "the condition of select"
                                         : absl::StrCat("argument ", i + 1, " of ", to_absl(name));
      const Parsed& arg = args[i];
      if (i < first) {
        if (!is_bool(arg)) return fail_dtype(arg, "boolean", role);
      } else if (intrinsic) {
        if (!intrinsic_takes(*intrinsic, lane_dtype(arg))) {
          const IntrinsicDtypes rule = intrinsic_info(*intrinsic).dtypes;
          return fail_dtype(arg,
                            rule == IntrinsicDtypes::kNumeric   ? "a float or an integer"
                            : rule == IntrinsicDtypes::kInteger ? "an integer"
                                                                : "a float",
                            role);
        }
      } else if (int_only ? !is_int(arg) : !is_numeric(arg)) {
        return fail_dtype(arg, int_only ? "an integer" : numeric_wanted(args[first]), role);
      }
      if (i > first && arg.expr.dtype() != args[first].expr.dtype()) {
        return fail_mismatch(arg.offset, absl::StrCat("arguments of ", to_absl(name)), args[first],
                             arg);
      }
      height = std::max(height, args[i].height + 1);
    }
    if (height > kMaxTreeHeight) return fail_height(offset);
    std::vector<SymExpr> operands;
    for (const Parsed& arg : args) operands.push_back(arg.expr);
    if (intrinsic) {
      // What is left to check: the lanes (the dtypes of one lane are checked above).
      const std::string why = intrinsic_operand_mismatch(*intrinsic, operands, name);
      if (!why.empty()) return fail(offset, why);
      return Parsed{call(*intrinsic, std::move(operands)), offset, height};
    }
    const std::string why = sym_operand_mismatch(kind, operands, name);
    if (!why.empty()) return fail(offset, why);
    if (is_select) return Parsed{select(args[0].expr, args[1].expr, args[2].expr), offset, height};
    return Parsed{SymExpr::make(kind, args[0].expr, args[1].expr), offset, height};
  }

  /// `ramp(base, stride, lanes)` or `broadcast(value, lanes)`: the lanes a plain literal.
  [[gnu::noinline]] std::optional<Parsed> make_vector(std::string_view name, const std::vector<Parsed>& args,
                                                      size_t offset) {
    const bool is_ramp = name == "ramp";
    const size_t arity = is_ramp ? 3 : 2;
    if (args.size() != arity) {
      return fail(offset, absl::StrCat(to_absl(name), " takes ", arity, " arguments, found ", args.size()));
    }
    const Parsed& lanes = args.back();
    const std::optional<int64_t> count = lanes.expr.as_const();
    if (!count || lanes.expr.dtype() != DataType::int64()) {
      return fail(lanes.offset, absl::StrCat("the lanes of ", to_absl(name), " must be an integer literal, found `",
                                             to_string(lanes.expr), "`"));
    }
    std::vector<SymExpr> operands;
    int height = 0;
    for (size_t i = 0; i + 1 < arity; ++i) {
      operands.push_back(args[i].expr);
      height = std::max(height, args[i].height + 1);
    }
    if (height > kMaxTreeHeight) return fail_height(offset);
    const SymKind kind = is_ramp ? SymKind::kRamp : SymKind::kBroadcast;
    const std::string why = vector_operand_mismatch(kind, operands, *count);
    if (!why.empty()) return fail(offset, why);
    return Parsed{is_ramp ? ramp(operands[0], operands[1], *count) : broadcast(operands[0], *count), offset, height};
  }

  [[gnu::noinline]] std::optional<Parsed> make_load(const std::string& name,
                                                    const std::vector<Parsed>& indices,
                                                    size_t offset) {
    const Buffer* buffer = nullptr;
    if (buffers_ != nullptr) {
      if (auto it = buffers_->find(name); it != buffers_->end()) buffer = &it->second;
    }
    if (buffer == nullptr) {
      return fail(offset, absl::StrCat("unknown buffer `", name, "`",
                                       buffers_ == nullptr
                                           ? " (loads parse only with a ParseContext naming buffers)"
                                           : ""));
    }
    if (indices.size() != buffer->ndim()) {
      return fail(offset, absl::StrCat("load from `", name, "` has ", indices.size(),
                                       indices.size() == 1 ? " index" : " indices",
                                       ", but the buffer has rank ", buffer->ndim()));
    }
    int height = 1;
    std::vector<SymExpr> exprs;
    for (size_t i = 0; i < indices.size(); ++i) {
      if (!is_int(indices[i])) {
        return fail_dtype(indices[i], "an integer", absl::StrCat("index ", i + 1, " of `", name, "`"));
      }
      height = std::max(height, indices[i].height + 1);
      exprs.push_back(indices[i].expr);
    }
    if (height > kMaxTreeHeight) return fail_height(offset);
    if (const std::string why = load_index_mismatch(*buffer, exprs); !why.empty()) return fail(offset, why);
    return Parsed{buffer_load(*buffer, std::move(exprs)), offset, height};
  }

  /// The variable for `name`: the caller's when it has one, else one made for this text.
  /// New variables reach the caller's map only when the whole parse succeeds.
  SymExpr lookup(const std::string& name) {
    if (user_vars_ != nullptr) {
      if (auto it = user_vars_->find(name); it != user_vars_->end()) return it->second;
    }
    if (auto it = new_vars_.find(name); it != new_vars_.end()) return it->second;
    return new_vars_.emplace(name, SymVar(name)).first->second;
  }

  // ---- Errors (out of line, so that the recursive functions stay small) ----

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail(size_t offset, absl::string_view message) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(absl::StrCat(lexer_.location(offset), ": ", message));
    }
    return std::nullopt;
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_expected(absl::string_view what) {
    if (tok_.kind == TokenKind::kInvalid && !tok_.error.empty())
      return fail(tok_.offset, tok_.error);
    return fail(tok_.offset, absl::StrCat("expected ", what, ", found ", describe(tok_)));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_unclosed(const char* closer, size_t open) {
    return fail_expected(absl::StrCat(closer, " to close '(' at ", lexer_.location(open)));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_dtype(const Parsed& operand,
                                                         const std::string& wanted,
                                                         const std::string& role) {
    return fail(operand.offset, absl::StrCat(role, " must be ", wanted, ", found ",
                                             dtype_word(operand.expr), " `",
                                             to_string(operand.expr), "`"));
  }

  static std::string operand_role(const BinaryOp& op) {
    return absl::StrCat("operand of ", to_absl(op.name));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_mismatch(size_t offset, const std::string& what,
                                                            const Parsed& a, const Parsed& b) {
    std::string message =
        absl::StrCat(what, " differ in dtype: ", a.expr.dtype().to_string(), " `",
                     to_string(a.expr), "` and ", b.expr.dtype().to_string(), " `",
                     to_string(b.expr), "`");
    // An unsuffixed literal is int64; the likely intent was the other operand's dtype.
    for (const Parsed* lit : {&a, &b}) {
      const Parsed* other = lit == &a ? &b : &a;
      if (lit->expr.as_const() && lit->expr.dtype() == DataType::int64() && !is_bool(*other)) {
        absl::StrAppend(&message, " (a literal of ", other->expr.dtype().to_string(),
                        " carries a suffix: ", *lit->expr.as_const(),
                        shape_detail::literal_suffix(other->expr.dtype()), ")");
        break;
      }
    }
    return fail(offset, message);
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_height(size_t offset) {
    return fail(offset,
                absl::StrCat("expression is nested deeper than ", kMaxTreeHeight,
                             " levels (its tree would be deeper than the nesting limit; a chain "
                             "of n operators is n levels deep)"));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_nesting() {
    return fail(tok_.offset, absl::StrCat("expression nests deeper than ", kMaxNesting,
                                          " levels of parentheses, unary operators and calls"));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_chained_comparison() {
    return fail(tok_.offset, "comparison operators do not chain (write `a < b && b < c`)");
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_unknown_function(size_t offset,
                                                                    const std::string& name) {
    // Every name is_function_name accepts, from the tables, so the list cannot go stale.
    std::string names;
    for (int k = 0; k < kNumSymKinds; ++k) {
      const SymKindInfo& row = sym_kind_info(static_cast<SymKind>(k));
      if (row.syntax == SymSyntax::kFunction) absl::StrAppend(&names, to_absl(row.name), ", ");
    }
    absl::StrAppend(&names, to_absl(sym_kind_name(SymKind::kRamp)), ", ",
                    to_absl(sym_kind_name(SymKind::kBroadcast)));
    for (size_t i = 0; i < kNumIntrinsics; ++i) {
      absl::StrAppend(&names, ", ", to_absl(intrinsic_name(static_cast<Intrinsic>(i))));
    }
    return fail(offset, absl::StrCat("unknown function `", name, "` (the functions are ", names,
                                     " and cast<dtype>)"));
  }

  sym_text::Lexer lexer_;
  absl::flat_hash_map<std::string, SymVar>* user_vars_;
  const absl::flat_hash_map<std::string, Buffer>* buffers_;
  absl::flat_hash_map<std::string, SymVar> new_vars_;
  Token tok_;
  int nesting_ = 0;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<SymExpr> SymExpr::parse(std::string_view text,
                                       absl::flat_hash_map<std::string, SymVar>* vars) {
  return Parser(text, vars, nullptr).run();
}

absl::StatusOr<SymExpr> SymExpr::parse(std::string_view text, ParseContext& context) {
  return Parser(text, &context.vars, &context.buffers).run();
}

}  // namespace relax
