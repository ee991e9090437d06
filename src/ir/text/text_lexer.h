// Tokens of the IR text format (printer.h describes the format; parser*.cc reads it).
//
// The lexer splits a whole text up front into names, numbers, strings and
// punctuation, each with its line and column, and skips whitespace, `//`
// comments (to the end of the line) and `/* ... */` comments (which may span
// lines and do not nest: the first `*/` ends one, as in C). It never fails: a
// byte that starts no token becomes a kInvalid token, which the parser reports
// where it expected something else; a `/*` without its `*/` becomes one
// kInvalid token at the `/*` ("unterminated comment") that runs to the end.
//
// Scalar (SymExpr) expressions inside the IR are not parsed here: the parser
// finds where one ends from these tokens and hands that stretch of the
// original text to SymExpr::parse. So the lexer only needs to agree with the
// SymExpr text form on where tokens start and end (numbers such as `1.5f32`
// and `1e-05f32` are one token here too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace relax::text {

enum class TokenKind : uint8_t {
  kEnd,      ///< end of input (always the last token)
  kName,     ///< [A-Za-z_][A-Za-z0-9_.]*
  kNumber,   ///< starts with a digit: 42, 1.5, 1e-05, 1.5f32, 5i32
  kString,   ///< "..." with \" \\ \n \t \r \xHH escapes
  kPunct,    ///< ( ) [ ] { } , : = @ -> == != < <= > >= && || + - * / ! ? % . &
  kInvalid,  ///< anything else (an unterminated string, a stray byte)
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  uint32_t offset = 0;  ///< of the first byte
  uint32_t end = 0;     ///< one past the last byte
  uint32_t line = 1;    ///< 1-based
  uint32_t column = 1;  ///< 1-based, in bytes
  std::string_view text;  ///< as written (views the lexed text)
  std::string value;      ///< the decoded contents of a kString; the reason of a kInvalid
};

/// Splits `text` into tokens, ending with one kEnd token. `text` must outlive them.
std::vector<Token> tokenize(std::string_view text);

/// How a token reads after "found": "name `x`", "number `42`", "string \"a\"",
/// "'('", "end of input", "byte 0xc3".
std::string describe(const Token& tok);

/// "line:column" of a token.
std::string location(const Token& tok);

}  // namespace relax::text
