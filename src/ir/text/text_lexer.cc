// The lexer of the IR text format (see text_lexer.h).
#include "ir/text/text_lexer.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace relax::text {
namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c) || c == '.'; }

constexpr std::array<std::string_view, 7> kTwoCharPuncts = {"->", "==", "!=", "<=",
                                                            ">=", "&&", "||"};
constexpr std::string_view kOneCharPuncts = "()[]{},:=@<>+-*/!?%.&";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skip_space();
      Token tok = start_token();
      if (pos_ >= text_.size()) {
        tok.kind = TokenKind::kEnd;
        out.push_back(std::move(tok));
        return out;
      }
      lex_one(tok);
      tok.end = static_cast<uint32_t>(pos_);
      tok.text = text_.substr(tok.offset, tok.end - tok.offset);
      out.push_back(std::move(tok));
    }
  }

 private:
  Token start_token() const {
    Token tok;
    tok.offset = static_cast<uint32_t>(pos_);
    tok.end = tok.offset;
    tok.line = line_;
    tok.column = static_cast<uint32_t>(pos_ - line_start_ + 1);
    return tok;
  }

  void newline_at(size_t i) {
    ++line_;
    line_start_ = i + 1;
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        newline_at(pos_);
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        if (!skip_block_comment()) return;  // unterminated: lex_one makes it an error token
      } else {
        return;
      }
    }
  }

  // Skips the block comment at pos_ (`/* ... */`, not nested: the first `*/` ends it) and
  // returns true, or returns false and leaves pos_ at the `/*` when no `*/` follows.
  bool skip_block_comment() {
    const size_t close = text_.find("*/", pos_ + 2);
    if (close == std::string_view::npos) return false;
    for (size_t i = pos_; i < close; ++i) {
      if (text_[i] == '\n') newline_at(i);
    }
    pos_ = close + 2;
    return true;
  }

  void lex_one(Token& tok) {
    const char c = text_[pos_];
    if (text_.substr(pos_, 2) == "/*") {  // a block comment skip_space found unterminated
      tok.kind = TokenKind::kInvalid;
      tok.value = "unterminated comment: this `/*` has no closing `*/`";
      pos_ = text_.size();
      return;
    }
    if (is_name_start(c)) {
      tok.kind = TokenKind::kName;
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    } else if (is_digit(c)) {
      lex_number(tok);
    } else if (c == '"') {
      lex_string(tok);
    } else {
      lex_punct(tok);
    }
  }

  void lex_number(Token& tok) {
    tok.kind = TokenKind::kNumber;
    const size_t start = pos_;
    const bool hex = text_.substr(start, 2) == "0x" || text_.substr(start, 2) == "0X";
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (is_name_char(c)) {
        ++pos_;
        continue;
      }
      // An exponent sign: 1e-05, 2.5E+3f32.
      const char prev = text_[pos_ - 1];
      if ((c == '+' || c == '-') && !hex && (prev == 'e' || prev == 'E') &&
          pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])) {
        ++pos_;
        continue;
      }
      break;
    }
  }

  void lex_string(Token& tok) {
    tok.kind = TokenKind::kString;
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c == '\n') break;
      if (c != '\\') {
        tok.value += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= text_.size()) break;
      const char e = text_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case '"': tok.value += '"'; break;
        case '\\': tok.value += '\\'; break;
        case 'n': tok.value += '\n'; break;
        case 't': tok.value += '\t'; break;
        case 'r': tok.value += '\r'; break;
        case 'x': {
          const int hi = pos_ < text_.size() ? hex_value(text_[pos_]) : -1;
          const int lo = pos_ + 1 < text_.size() ? hex_value(text_[pos_ + 1]) : -1;
          if (hi < 0 || lo < 0) {
            invalid(tok, "expected two hex digits after \\x in a string");
            return;
          }
          tok.value += static_cast<char>(hi * 16 + lo);
          pos_ += 2;
          break;
        }
        default:
          invalid(tok, absl::StrFormat("unknown escape \\%c in a string", e));
          return;
      }
    }
    invalid(tok, "unterminated string");
  }

  void invalid(Token& tok, std::string reason) {
    tok.kind = TokenKind::kInvalid;
    tok.value = std::move(reason);
    // Resume after the rest of the line, so one bad string yields one error token.
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }

  void lex_punct(Token& tok) {
    const std::string_view two = text_.substr(pos_, 2);
    for (std::string_view p : kTwoCharPuncts) {
      if (two == p) {
        tok.kind = TokenKind::kPunct;
        pos_ += 2;
        return;
      }
    }
    tok.kind = kOneCharPuncts.find(text_[pos_]) != std::string_view::npos ? TokenKind::kPunct
                                                                           : TokenKind::kInvalid;
    ++pos_;
  }

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text) { return Lexer(text).run(); }

std::string describe(const Token& tok) {
  switch (tok.kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kName:
      return absl::StrCat("name `", absl::string_view(tok.text.data(), tok.text.size()), "`");
    case TokenKind::kNumber:
      return absl::StrCat("number `", absl::string_view(tok.text.data(), tok.text.size()), "`");
    case TokenKind::kString: {
      std::string shown = tok.text.size() > 40 ? std::string(tok.text.substr(0, 37)) + "..."
                                               : std::string(tok.text);
      return "string " + shown;
    }
    case TokenKind::kPunct:
      return absl::StrCat("'", absl::string_view(tok.text.data(), tok.text.size()), "'");
    case TokenKind::kInvalid:
      if (!tok.value.empty()) return tok.value;
      return absl::StrFormat("byte 0x%02x", static_cast<unsigned char>(tok.text.empty() ? 0 : tok.text[0]));
  }
  return "?";
}

std::string location(const Token& tok) { return absl::StrCat(tok.line, ":", tok.column); }

}  // namespace relax::text
