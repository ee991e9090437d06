// The lexer of the SymExpr text form; see sym_expr_text.h for the name rules.
#include "shape/text/sym_expr_lexer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "shape/dtype_util.h"
#include "shape/text/sym_expr_text.h"

namespace relax::sym_text {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Token Lexer::lex(size_t pos) const {
  while (pos < text_.size() && is_space(text_[pos])) ++pos;
  Token tok;
  tok.offset = pos;
  tok.end = pos;
  if (pos >= text_.size()) return tok;
  const char c = text_[pos];
  size_t end = pos + 1;
  if (is_digit(c)) {
    return lex_number(pos);
  } else if (is_name_start(c)) {
    tok.kind = TokenKind::kName;
    while (end < text_.size() && is_name_char(text_[end])) ++end;
  } else if (c == '"') {
    return lex_quoted(pos);
  } else {
    const std::string_view two = text_.substr(pos, 2);
    tok.kind = TokenKind::kPunct;
    if (two == "<=" || two == ">=" || two == "==" || two == "!=" || two == "&&" || two == "||") {
      end = pos + 2;
    } else if (std::string_view("+-*/(),<>![]").find(c) == std::string_view::npos) {
      tok.kind = TokenKind::kInvalid;
    }
  }
  tok.end = end;
  tok.text = text_.substr(pos, end - pos);
  return tok;
}

size_t Lexer::suffix_length(size_t pos) const {
  for (size_t length = 2; length <= 4; ++length) {
    if (pos + length > text_.size()) break;
    if (!shape_detail::dtype_of_suffix(text_.substr(pos, length))) continue;
    if (pos + length < text_.size() && is_name_char(text_[pos + length])) continue;
    return length;
  }
  return 0;
}

Token Lexer::lex_number(size_t pos) const {
  Token tok;
  tok.offset = pos;
  size_t int_end = pos;
  while (int_end < text_.size() && is_digit(text_[int_end])) ++int_end;
  // A fraction or an exponent belongs to the literal only when a float suffix follows
  // (`1.5f32`); without one, `1.5` stays the integer 1 followed by a stray '.'.
  size_t end = int_end;
  auto digit_at = [&](size_t i) { return i < text_.size() && is_digit(text_[i]); };
  if (end < text_.size() && text_[end] == '.' && digit_at(end + 1)) {
    end += 2;
    while (digit_at(end)) ++end;
  }
  if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
    size_t exponent = end + 1;
    if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) ++exponent;
    if (digit_at(exponent)) {
      while (digit_at(exponent)) ++exponent;
      end = exponent;
    }
  }
  auto is_float_suffix = [&](size_t at, size_t length) {
    return length > 0 && shape_detail::dtype_of_suffix(text_.substr(at, length))->is_float();
  };
  size_t number_end = int_end;
  size_t suffix = suffix_length(int_end);
  if (end > int_end) {
    if (const size_t length = suffix_length(end); is_float_suffix(end, length)) {
      number_end = end;
      suffix = length;
    }
  }
  tok.kind = is_float_suffix(number_end, suffix) ? TokenKind::kFloat : TokenKind::kInteger;
  tok.end = number_end + suffix;
  tok.text = text_.substr(pos, tok.end - pos);
  tok.number = text_.substr(pos, number_end - pos);
  tok.suffix = text_.substr(number_end, suffix);
  return tok;
}

Token Lexer::lex_quoted(size_t pos) const {
  Token tok;
  tok.kind = TokenKind::kQuotedName;
  tok.offset = pos;
  size_t i = pos + 1;
  for (;; ++i) {
    if (i >= text_.size()) {
      tok.kind = TokenKind::kInvalid;
      tok.error = "unterminated quoted name";
      break;
    }
    const char c = text_[i];
    if (c == '"') {
      ++i;
      break;
    }
    if (c != '\\') {
      tok.name += c;
      continue;
    }
    const char next = i + 1 < text_.size() ? text_[i + 1] : '\0';
    if (next == '"' || next == '\\') {
      tok.name += next;
      ++i;
    } else if (next == 'x' && i + 3 < text_.size() && hex_value(text_[i + 2]) >= 0 &&
               hex_value(text_[i + 3]) >= 0) {
      tok.name += static_cast<char>(hex_value(text_[i + 2]) * 16 + hex_value(text_[i + 3]));
      i += 3;
    } else {
      // Point at the backslash rather than at the opening quote.
      tok.kind = TokenKind::kInvalid;
      tok.error = "unknown escape in quoted name (use \\\", \\\\ or \\xHH)";
      tok.offset = i;
      tok.end = i + 1;
      tok.text = text_.substr(i, 1);
      return tok;
    }
  }
  if (tok.kind == TokenKind::kQuotedName && tok.name.empty()) {
    tok.kind = TokenKind::kInvalid;
    tok.error = "a variable name cannot be empty";
  }
  tok.end = i;
  tok.text = text_.substr(pos, i - pos);
  return tok;
}

std::string Lexer::location(size_t offset) const {
  if (text_.find('\n') == std::string_view::npos) return absl::StrCat("column ", offset + 1);
  const std::string_view before = text_.substr(0, offset);
  const size_t newline = before.rfind('\n');
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t column = newline == std::string_view::npos ? offset + 1 : offset - newline;
  return absl::StrCat("line ", line, ", column ", column);
}

std::string describe(const Token& tok) {
  switch (tok.kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kInteger:
      return absl::StrCat("integer `", to_absl(tok.text), "`");
    case TokenKind::kFloat:
      return absl::StrCat("float `", to_absl(tok.text), "`");
    case TokenKind::kName:
    case TokenKind::kQuotedName:
      return absl::StrCat("name `", to_absl(tok.text), "`");
    case TokenKind::kPunct:
      return absl::StrCat("'", to_absl(tok.text), "'");
    case TokenKind::kInvalid:
      break;
  }
  const auto byte = static_cast<unsigned char>(tok.text.empty() ? '\0' : tok.text[0]);
  if (byte < 0x20 || byte >= 0x7f) return absl::StrFormat("byte 0x%02x", byte);
  const std::string found = absl::StrCat("'", to_absl(tok.text), "'");
  // Spellings borrowed from C or Python get a pointer to the one this language uses.
  switch (byte) {
    case '.':
      return found + " (a float literal carries its dtype: 1.5f32)";
    case '%':
      return found + " (the remainder is written floormod(a, b))";
    case '=':
      return found + " (did you mean '=='?)";
    case '&':
      return found + " (did you mean '&&'?)";
    case '|':
      return found + " (did you mean '||'?)";
    default:
      return found;
  }
}

}  // namespace relax::sym_text
