// Dtype names (relax/support/dtype_util.h).
#include "relax/support/dtype_util.h"

#include <charconv>
#include <utility>

namespace relax {
namespace {

// The name of each code; no name is a prefix of another, so at most one matches
// the front of a dtype name.
constexpr std::pair<DataType::Code, std::string_view> kCodeNames[] = {
    {DataType::Code::kInt, "int"},       {DataType::Code::kUInt, "uint"},
    {DataType::Code::kFloat, "float"},   {DataType::Code::kBFloat, "bfloat"},
    {DataType::Code::kHandle, "handle"}, {DataType::Code::kBool, "bool"},
};

// The decimal number at the front of `text` (no sign, no leading zero, at most
// six digits), removed from `text`; nullopt when there is none.
std::optional<uint32_t> take_number(std::string_view& text) {
  size_t n = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  if (n == 0 || n > 6 || (n > 1 && text[0] == '0')) return std::nullopt;
  uint32_t value = 0;
  std::from_chars(text.data(), text.data() + n, value);
  text.remove_prefix(n);
  return value;
}

}  // namespace

std::string dtype_name(DataType t) {
  for (const auto& [code, name] : kCodeNames) {
    if (code != t.code) continue;
    std::string out(name);
    if (code != DataType::Code::kBool || t.bits != 8) out += std::to_string(t.bits);
    if (t.lanes != 1) out += "x" + std::to_string(t.lanes);
    return out;
  }
  return "code" + std::to_string(static_cast<int>(t.code)) + "_" + std::to_string(t.bits);
}

std::optional<DataType> parse_dtype(std::string_view name) {
  for (const auto& [code, code_name] : kCodeNames) {
    if (name.substr(0, code_name.size()) != code_name) continue;
    std::string_view rest = name.substr(code_name.size());
    DataType t{code, 8, 1};
    // Bits: required, except for bool, whose 8 bits are not written.
    if (code != DataType::Code::kBool || (!rest.empty() && rest[0] != 'x')) {
      std::optional<uint32_t> bits = take_number(rest);
      if (!bits || *bits == 0 || *bits > 255) return std::nullopt;
      if (code == DataType::Code::kBool && *bits == 8) return std::nullopt;  // "bool"
      t.bits = static_cast<uint8_t>(*bits);
    }
    // Lanes: written only when more than one.
    if (!rest.empty()) {
      if (rest[0] != 'x') return std::nullopt;
      rest.remove_prefix(1);
      std::optional<uint32_t> lanes = take_number(rest);
      if (!lanes || *lanes <= 1 || *lanes > 65535 || !rest.empty()) return std::nullopt;
      t.lanes = static_cast<uint16_t>(*lanes);
    }
    return t;
  }
  return std::nullopt;
}

}  // namespace relax
