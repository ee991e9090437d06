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
//   product := unary ('*' unary)*
//   unary   := '!' unary | '-' INTEGER | '-' unary | primary
//   primary := INTEGER | 'true' | 'false' | NAME | QUOTED_NAME | '(' expr ')'
//            | ('floordiv' | 'floormod' | 'min' | 'max' | 'select') '(' expr (',' expr)* ')'
//
// `-` followed by an integer literal is one negative literal (so INT64_MIN reads);
// `-` before anything else is negation as operator-(SymExpr) builds it.
//
// Every error is an InvalidArgument status naming the column, what was
// expected and what was found. The parser never aborts: dtypes are checked
// here before SymExpr::make sees them. Nor does it overflow the stack: the
// nesting of parentheses, unary operators and calls is bounded, and so is the
// height of the built tree (long chains like `a + b + c + ...` are built in a
// loop), which keeps the recursive walks over the result safe as well. Each
// recursive function keeps a small frame: messages are built out of line.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "relax/shape/sym_expr.h"
#include "sym_expr_lexer.h"
#include "sym_expr_text.h"

namespace relax {
namespace {

using sym_text::to_absl;
using sym_text::Token;
using sym_text::TokenKind;

/// How deeply parentheses, unary operators and calls may nest.
constexpr int kMaxNesting = 256;
/// How tall the built tree may get.
constexpr int kMaxTreeHeight = 10000;

/// A parsed subexpression with where it starts and the height of its tree.
struct Parsed {
  SymExpr expr;
  size_t offset = 0;
  int height = 1;
};

struct BinaryOp {
  std::string_view spelling;
  SymKind kind;
  int level;  // binding strength, loosest 0
};

constexpr int kCompareLevel = 2;
constexpr BinaryOp kBinaryOps[] = {
    {"||", SymKind::kOr, 0}, {"&&", SymKind::kAnd, 1}, {"==", SymKind::kEQ, 2},
    {"!=", SymKind::kNE, 2}, {"<", SymKind::kLT, 2},   {"<=", SymKind::kLE, 2},
    {">", SymKind::kGT, 2},  {">=", SymKind::kGE, 2},  {"+", SymKind::kAdd, 3},
    {"-", SymKind::kSub, 3}, {"*", SymKind::kMul, 4},
};

bool is_bool(const Parsed& p) { return p.expr.dtype().is_bool(); }

class Parser {
 public:
  Parser(std::string_view text, absl::flat_hash_map<std::string, SymVar>* vars)
      : lexer_(text), user_vars_(vars) {}

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
    for (const BinaryOp& op : kBinaryOps) {
      if (tok_.text == op.spelling) return &op;
    }
    return nullptr;
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
      if (op == nullptr || op->level < min_level) break;
      if (op->level == kCompareLevel && after_compare) return fail_chained_comparison();
      const size_t op_offset = tok_.offset;
      advance();
      std::optional<Parsed> rhs = parse_binary(op->level + 1);
      if (!rhs) return std::nullopt;
      after_compare = op->level == kCompareLevel;
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
    std::optional<Parsed> operand = parse_unary();
    if (!operand) return std::nullopt;
    return apply_unary(is_not, *operand, offset);
  }

  [[gnu::noinline]] std::optional<Parsed> parse_primary() {
    const size_t offset = tok_.offset;
    switch (tok_.kind) {
      case TokenKind::kInteger:
        return parse_integer(false, offset);
      case TokenKind::kQuotedName:
        return parse_variable(tok_.name);
      case TokenKind::kName:
        if (tok_.text == "true" || tok_.text == "false") {
          const bool value = tok_.text == "true";
          advance();
          return Parsed{SymExpr::boolean(value), offset, 1};
        }
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

  [[gnu::noinline]] std::optional<Parsed> parse_variable(std::string name) {
    const size_t offset = tok_.offset;
    advance();
    if (at_punct("(")) return fail_unknown_function(offset, name);
    return Parsed{lookup(name), offset, 1};
  }

  [[gnu::noinline]] std::optional<Parsed> parse_integer(bool negative, size_t offset) {
    // Accumulate the magnitude unsigned so that 9223372036854775808 can become INT64_MIN.
    const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
    uint64_t magnitude = 0;
    for (char c : tok_.text) {
      const auto digit = static_cast<uint64_t>(c - '0');
      if (magnitude > (limit - digit) / 10) {
        return fail(offset, absl::StrCat("integer literal ", negative ? "-" : "",
                                         to_absl(tok_.text), " is out of the int64 range"));
      }
      magnitude = magnitude * 10 + digit;
    }
    advance();
    // Negating in unsigned arithmetic is well defined and lands on INT64_MIN for 2^63.
    const uint64_t bits = negative ? ~magnitude + 1 : magnitude;
    return Parsed{SymExpr(static_cast<int64_t>(bits)), offset, 1};
  }

  // ---- Building nodes (with the checks SymExpr::make would abort on) -------

  [[gnu::noinline]] std::optional<Parsed> combine(const BinaryOp& op, const Parsed& lhs,
                                                  const Parsed& rhs, size_t op_offset) {
    const bool want_bool = op.kind == SymKind::kAnd || op.kind == SymKind::kOr;
    if (is_bool(lhs) != want_bool) return fail_operand(op, lhs, want_bool);
    if (is_bool(rhs) != want_bool) return fail_operand(op, rhs, want_bool);
    const int height = 1 + std::max(lhs.height, rhs.height);
    if (height > kMaxTreeHeight) return fail_height(op_offset);
    return Parsed{SymExpr::make(op.kind, lhs.expr, rhs.expr), lhs.offset, height};
  }

  [[gnu::noinline]] std::optional<Parsed> apply_unary(bool is_not, const Parsed& operand,
                                                      size_t offset) {
    if (is_bool(operand) != is_not) {
      return fail_dtype(operand, is_not, is_not ? "operand of !" : "operand of unary -");
    }
    SymExpr result = is_not ? !operand.expr : -operand.expr;
    const int height = result.as_const() ? 1 : operand.height + 1;
    if (height > kMaxTreeHeight) return fail_height(offset);
    return Parsed{std::move(result), offset, height};
  }

  [[gnu::noinline]] std::optional<Parsed> make_call(std::string_view name,
                                                    const std::vector<Parsed>& args,
                                                    size_t offset) {
    const bool is_select = name == "select";
    const size_t arity = is_select ? 3 : 2;
    if (args.size() != arity) {
      return fail(offset,
                  absl::StrCat(to_absl(name), " takes ", arity, " arguments, found ", args.size()));
    }
    int height = 0;
    for (size_t i = 0; i < arity; ++i) {
      const bool want_bool = is_select && i == 0;
      if (is_bool(args[i]) != want_bool) {
        return fail_dtype(args[i], want_bool,
                          want_bool ? "the condition of select"
                                    : absl::StrCat("argument ", i + 1, " of ", to_absl(name)));
      }
      height = std::max(height, args[i].height + 1);
    }
    if (height > kMaxTreeHeight) return fail_height(offset);
    if (is_select) return Parsed{select(args[0].expr, args[1].expr, args[2].expr), offset, height};
    const SymKind kind = name == "floordiv"   ? SymKind::kFloorDiv
                         : name == "floormod" ? SymKind::kFloorMod
                         : name == "min"      ? SymKind::kMin
                                              : SymKind::kMax;
    return Parsed{SymExpr::make(kind, args[0].expr, args[1].expr), offset, height};
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

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_dtype(const Parsed& operand, bool want_bool,
                                                         const std::string& role) {
    return fail(
        operand.offset,
        absl::StrCat(role, " must be ", want_bool ? "boolean" : "an integer", ", found ",
                     is_bool(operand) ? "boolean" : "integer", " `", to_string(operand.expr), "`"));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_operand(const BinaryOp& op,
                                                           const Parsed& operand, bool want_bool) {
    return fail_dtype(operand, want_bool, absl::StrCat("operand of ", to_absl(op.spelling)));
  }

  [[gnu::noinline, gnu::cold]] std::nullopt_t fail_height(size_t offset) {
    return fail(offset,
                absl::StrCat("expression is nested deeper than ", kMaxTreeHeight, " levels"));
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
    return fail(offset, absl::StrCat("unknown function `", name,
                                     "` (the functions are floordiv, floormod, min, max and "
                                     "select)"));
  }

  sym_text::Lexer lexer_;
  absl::flat_hash_map<std::string, SymVar>* user_vars_;
  absl::flat_hash_map<std::string, SymVar> new_vars_;
  Token tok_;
  int nesting_ = 0;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<SymExpr> SymExpr::parse(std::string_view text,
                                       absl::flat_hash_map<std::string, SymVar>* vars) {
  return Parser(text, vars).run();
}

}  // namespace relax
