// Text helpers of the C++ code generator: identifiers, literals, C++ types.
//
// Names from the IR may be anything ("a b", "0x", "int", "NULL"). Each becomes
// an identifier that cannot collide with C++ itself: a keyword, a type or
// macro of the standard headers the unit includes (all-caps names and names
// ending in `_t` are treated as possible macros and types), a reserved
// spelling (leading '_', "__"), or the generator's own `relax_`/`RELAX_`
// names; such a name gets a trailing '_'. (All-caps names of three or more
// characters count as possible macros.) NameTable then makes names unique
// with `_1`, `_2`, ... suffixes.
#include <cctype>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen/cpp/cpp_codegen_impl.h"

namespace relax::cpp_codegen {
namespace {

// C++20 keywords and alternative tokens, plus names the generated code uses
// unqualified or that the included headers define as macros in lower case.
constexpr const char* kReservedWords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    // The standard library namespace and lower-case macros of <cstdio>, <cmath>, ...
    "std", "errno", "stdin", "stdout", "stderr", "assert", "offsetof", "math_errhandling",
    "setjmp", "va_arg", "va_start", "va_end", "va_copy", "main",
    // The kernel function's parameters.
    "args", "num_args", "error", "error_capacity",
};

bool is_reserved_word(const std::string& name) {
  for (const char* word : kReservedWords) {
    if (name == word) return true;
  }
  return false;
}

/// Could be a macro (all caps), a type (`_t`), reserved by C++ or ours.
bool needs_suffix(const std::string& name) {
  if (is_reserved_word(name)) return true;
  if (name[0] == '_') return true;
  if (name.rfind("relax_", 0) == 0 || name.rfind("RELAX_", 0) == 0) return true;
  if (name.size() >= 2 && name.compare(name.size() - 2, 2, "_t") == 0) return true;
  // Standard macros are all capitals (NULL, EOF, NAN, INT64_C); none has fewer than three
  // characters, so short names like A or W1 stay as they are.
  bool has_lower = false;
  for (char c : name) has_lower = has_lower || std::islower(static_cast<unsigned char>(c)) != 0;
  return !has_lower && name.size() >= 3;
}

}  // namespace

std::string sanitize_identifier(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    const char next = ok && static_cast<unsigned char>(c) < 128 ? c : '_';
    if (next == '_' && !out.empty() && out.back() == '_') continue;  // no "__"
    out.push_back(next);
  }
  if (out.empty() || out == "_") out = "v";
  if (std::isdigit(static_cast<unsigned char>(out[0])) != 0) out.insert(0, "v");
  if (needs_suffix(out)) {
    if (out.back() != '_') out.push_back('_');
    if (out[0] == '_') out.insert(0, "v");
  }
  return out;
}

std::string string_literal(std::string_view text, bool for_printf) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '?':
        out += "\\?";  // no trigraphs
        break;
      case '%':
        out += for_printf ? "%%" : "%";
        break;
      default:
        if (u < 0x20 || u >= 0x7f) {
          // Octal escapes take at most three digits, so a following digit stays a digit.
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(u));
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string printf_text(std::string_view text) {
  const std::string quoted = string_literal(text, /*for_printf=*/true);
  return quoted.substr(1, quoted.size() - 2);
}

std::string comment_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u >= 0x7f || c == '\\' ? '?' : c);
  }
  return out;
}

NameTable::NameTable() {
  for (const char* word : kReservedWords) used_.insert(word);
}

std::string NameTable::fresh(std::string_view hint) { return fresh_generated(sanitize_identifier(hint)); }

std::string NameTable::fresh_generated(std::string base) {
  if (used_.insert(base).second) return base;
  // "x_1" could itself be taken (an IR name), hence the loop.
  const std::string stem = base.back() == '_' ? base : base + "_";
  for (int i = 1;; ++i) {
    std::string candidate = absl::StrCat(stem, i);
    if (used_.insert(candidate).second) return candidate;
  }
}

std::string value_type(DataType dtype) {
  if (dtype.lanes != 1) return "";
  switch (dtype.code) {
    case DataType::Code::kBool:
      return dtype.bits == 8 ? "bool" : "";
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      if (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64) {
        return absl::StrCat(dtype.code == DataType::Code::kUInt ? "uint" : "int", dtype.bits, "_t");
      }
      return "";
    case DataType::Code::kFloat:
      // float16 is computed as float (stored in 16 bits, see storage_type).
      if (dtype.bits == 16 || dtype.bits == 32) return "float";
      if (dtype.bits == 64) return "double";
      return "";
    case DataType::Code::kBFloat:
      return dtype.bits == 16 ? "float" : "";
    case DataType::Code::kHandle:
      return "";
  }
  return "";
}

std::string half_round_helper(DataType dtype) {
  return dtype.code == DataType::Code::kBFloat ? "relax_round_bfloat16" : "relax_round_float16";
}

bool is_half_float(DataType dtype) { return dtype.lanes == 1 && dtype.is_float() && dtype.bits == 16; }

std::string storage_type(DataType dtype) {
  if (dtype.is_bool()) return value_type(dtype).empty() ? "" : "uint8_t";
  if (is_half_float(dtype)) return "uint16_t";
  return value_type(dtype);
}

}  // namespace relax::cpp_codegen
