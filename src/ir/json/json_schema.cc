// Spellings of the JSON form of an IRModule; see json_schema.h.
#include "ir/json/json_schema.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "relax/shape/intrinsics.h"
#include "relax/support/check.h"
#include "relax/support/dtype_util.h"

namespace relax::json_detail {
namespace {

// Each enum's spellings, one table per enum: the writer looks a value up, the
// reader a name.
template <typename E, size_t N>
using NameTable = std::pair<E, std::string_view>[N];

constexpr std::pair<ForKind, std::string_view> kForKinds[] = {
    {ForKind::kSerial, "serial"},
    {ForKind::kParallel, "parallel"},
    {ForKind::kVectorized, "vectorized"},
    {ForKind::kUnrolled, "unrolled"},
};

constexpr std::pair<IterType, std::string_view> kIterTypes[] = {
    {IterType::kSpatial, "spatial"},
    {IterType::kReduction, "reduction"},
};

constexpr std::pair<BufferScope, std::string_view> kScopes[] = {
    {BufferScope::kGlobal, "global"},
    {BufferScope::kLocal, "local"},
    {BufferScope::kWorkspace, "workspace"},
};

constexpr std::pair<Device::Type, std::string_view> kDeviceTypes[] = {
    {Device::Type::kUnknown, "unknown"},
    {Device::Type::kCPU, "cpu"},
    {Device::Type::kCUDA, "cuda"},
};

template <typename E, size_t N>
std::string_view name_of(const NameTable<E, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  RELAX_CHECK(false) << "no JSON spelling for enum value " << static_cast<int>(value);
  return {};
}

template <typename E, size_t N>
std::optional<E> value_of(const NameTable<E, N>& table, std::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}


}  // namespace

// SymKinds by the serial names of their table (relax/shape/sym_kind.h).
std::string_view sym_kind_json(SymKind kind) { return sym_kind_info(kind).serial_name; }
std::optional<SymKind> sym_kind_from_json(std::string_view name) {
  for (int k = 0; k < kNumSymKinds; ++k) {
    if (sym_kind_info(static_cast<SymKind>(k)).serial_name == name) return static_cast<SymKind>(k);
  }
  return std::nullopt;
}
// Intrinsics are spelled as in the text form: the names of their table (relax/shape/intrinsics.h).
std::string_view intrinsic_json(Intrinsic op) { return intrinsic_info(op).name; }
std::optional<Intrinsic> intrinsic_from_json(std::string_view name) { return intrinsic_from_name(name); }
std::string_view for_kind_json(ForKind kind) { return name_of(kForKinds, kind); }
std::optional<ForKind> for_kind_from_json(std::string_view name) {
  return value_of(kForKinds, name);
}
std::string_view iter_type_json(IterType type) { return name_of(kIterTypes, type); }
std::optional<IterType> iter_type_from_json(std::string_view name) {
  return value_of(kIterTypes, name);
}
std::string_view scope_json(BufferScope scope) { return name_of(kScopes, scope); }
std::optional<BufferScope> scope_from_json(std::string_view name) {
  return value_of(kScopes, name);
}
std::string_view device_type_json(Device::Type type) { return name_of(kDeviceTypes, type); }
std::optional<Device::Type> device_type_from_json(std::string_view name) {
  return value_of(kDeviceTypes, name);
}

std::string dtype_json(DataType t) {
  switch (t.code) {
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
    case DataType::Code::kFloat:
    case DataType::Code::kBFloat:
    case DataType::Code::kHandle:
    case DataType::Code::kBool:
      return dtype_name(t);
  }
  RELAX_CHECK(false) << "no JSON spelling for dtype code " << static_cast<int>(t.code);
  return {};
}

FloatText float_json(double value) {
  if (std::isfinite(value)) return {true, value, ""};
  if (std::isinf(value)) return {false, 0, value > 0 ? "inf" : "-inf"};
  const auto bits = std::bit_cast<uint64_t>(value);
  if (bits == std::bit_cast<uint64_t>(std::numeric_limits<double>::quiet_NaN())) {
    return {false, 0, "nan"};
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(bits));
  return {false, 0, buf};
}

std::optional<double> float_from_json_text(std::string_view text) {
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text.size() != 18 || text.substr(0, 2) != "0x") return std::nullopt;
  uint64_t bits = 0;
  for (char c : text.substr(2)) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return std::nullopt;
    bits = bits << 4 | static_cast<uint64_t>(digit);
  }
  const double value = std::bit_cast<double>(bits);
  // Only the bit patterns that no other spelling names.
  if (!std::isnan(value) || float_json(value).text != text) return std::nullopt;
  return value;
}

bool is_valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cont = static_cast<unsigned char>(text[i + k]);
      if ((cont & 0xC0) != 0x80) return false;
      code = code << 6 | (cont & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr std::array<uint32_t, 5> kMin = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMin[len] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

}  // namespace relax::json_detail
