// The names of the loop-pattern classes (relax/transform/op_pattern.h).
#include <array>
#include <string>
#include <utility>

#include "relax/transform/op_pattern.h"

namespace relax::transform {
namespace {

constexpr std::array<std::pair<OpPattern, std::string_view>, 6> kNames = {{
    {OpPattern::kElementwise, "elementwise"},
    {OpPattern::kBroadcast, "broadcast"},
    {OpPattern::kInjective, "injective"},
    {OpPattern::kReduction, "reduction"},
    {OpPattern::kOutputElementwiseFusible, "output-elementwise-fusible"},
    {OpPattern::kOpaque, "opaque"},
}};

}  // namespace

std::string_view op_pattern_name(OpPattern pattern) {
  for (const auto& [p, name] : kNames) {
    if (p == pattern) return name;
  }
  return "opaque";
}

absl::StatusOr<OpPattern> parse_op_pattern(std::string_view name) {
  std::string accepted;
  for (const auto& [p, n] : kNames) {
    if (n == name) return p;
    accepted += (accepted.empty() ? "\"" : ", \"") + std::string(n) + "\"";
  }
  return absl::InvalidArgumentError(
      "op_pattern \"" + std::string(name) + "\" is not a loop-pattern class (expected one of " + accepted + ")");
}

std::optional<OpPattern> op_pattern_of(const PrimFuncNode& func) {
  auto it = func.attrs.find(std::string(kOpPatternAttr));
  if (it == func.attrs.end()) return std::nullopt;
  const std::string* name = std::get_if<std::string>(&it->second);
  if (name == nullptr) return std::nullopt;
  absl::StatusOr<OpPattern> pattern = parse_op_pattern(*name);
  if (!pattern.ok()) return std::nullopt;
  return *pattern;
}

}  // namespace relax::transform
