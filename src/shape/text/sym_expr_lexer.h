// The tokens of the SymExpr text form, for the parser (sym_expr_parser.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace relax::sym_text {

/// kInteger: digits with an optional integer dtype suffix (`42`, `5i32`); kFloat: digits,
/// an optional fraction and exponent, and a float dtype suffix (`1.5f32`, `2f16`, `1e-3bf16`).
enum class TokenKind { kEnd, kInteger, kFloat, kName, kQuotedName, kPunct, kInvalid };

/// One token. `text` views the parsed text, which must outlive the token.
struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t offset = 0;      ///< of the first character
  size_t end = 0;         ///< one past the last character
  std::string_view text;  ///< as written
  std::string_view number;  ///< of a literal: the text without the suffix
  std::string_view suffix;  ///< of a literal: the dtype suffix ("" for a bare integer)
  std::string name;       ///< the decoded name of a kQuotedName
  std::string error;      ///< why a kInvalid token is invalid, when there is more to say
};

/// Splits a text into tokens on demand; it keeps no state between calls.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  /// The token at `pos`, after any whitespace. Never fails: characters that start no
  /// token become a one-character kInvalid token.
  Token lex(size_t pos) const;

  /// Where `offset` is, for messages: "column C", or "line L, column C" in a text of
  /// several lines. Columns are 1-based and count bytes.
  std::string location(size_t offset) const;

 private:
  Token lex_quoted(size_t pos) const;
  Token lex_number(size_t pos) const;
  /// The length of a dtype suffix at `pos` that ends the literal there, or 0.
  size_t suffix_length(size_t pos) const;

  std::string_view text_;
};

/// How a token reads after "found": "end of input", "name `n`", "'+'", "byte 0xc3", with a
/// hint for operators borrowed from other languages ("'%' (the remainder is ...)").
std::string describe(const Token& tok);

}  // namespace relax::sym_text
