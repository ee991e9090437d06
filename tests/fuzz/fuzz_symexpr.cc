// Fuzz target: SymExpr::parse and the Analyzer (see README.md in this folder).
//
// Input: the SymExpr text form. Oracle, for every input that parses:
//   - to_string() parses back (with the same variables) to a structurally equal tree;
//   - at a fixed set of points (every variable bound to values from 0 and ±1 up to the int64
//     extremes), wherever the original evaluates without error: const_int_bound of both
//     contains that value, and the simplified expression evaluates to the same value or
//     reports an int64 overflow -- the documented limit of the canonical form (docs/shapes.md, Known
//     limits): a sum evaluates its terms in a fixed order, so near ±2^63 a partial sum may
//     overflow where the input's order did not. The overflow must be reported by evaluate,
//     never a wrong value; comparisons must add no overflow at all (checked separately by
//     tests/shape/simplify_property_test.cc);
//   - the simplified expression prints and parses back as well, unless simplification made it
//     deeper than the readers' nesting limit (expanding products can), when the parser must
//     refuse it with a Status.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/shape/analyzer.h"
#include "relax/shape/sym_expr.h"
#include "relax/support/limits.h"

namespace relax::fuzz {
namespace {

using VarTable = absl::flat_hash_map<std::string, SymVar>;

// The values the variables take; the extremes are where overflow hides.
constexpr int64_t kValues[] = {
    0, 1, -1, 2, 3, -7, 13, 64, 1000003, -65536,
    std::numeric_limits<int32_t>::max(), int64_t{1} << 32,
    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
    std::numeric_limits<int64_t>::max() - 1, std::numeric_limits<int64_t>::min() + 1,
};
constexpr size_t kNumValues = sizeof kValues / sizeof kValues[0];

// Prints `e`, parses it back with the variables of `vars` and checks the trees agree.
void check_round_trip(const SymExpr& e, VarTable& vars, std::string_view what) {
  const std::string printed = e.to_string();
  absl::StatusOr<SymExpr> back = SymExpr::parse(printed, &vars);
  FUZZ_CHECK(back.ok()) << what << " prints as text that does not parse: " << back.status()
                        << "\ntext: " << excerpt(printed);
  FUZZ_CHECK(structural_equal(e, *back)) << what << " does not read back as the same tree"
                                         << "\nprinted:   " << excerpt(printed)
                                         << "\nread back: " << excerpt(back->to_string());
}

bool contains(const ConstIntBound& bound, int64_t value) {
  return bound.min_value <= value && value <= bound.max_value;
}

void check(std::string_view text) {
  VarTable vars;
  absl::StatusOr<SymExpr> parsed = SymExpr::parse(text, &vars);
  if (!parsed.ok()) return;
  const SymExpr& e = *parsed;
  check_round_trip(e, vars, "the expression");

  Analyzer analyzer;
  const SymExpr simplified = analyzer.simplify(e);
  if (simplified->depth() <= static_cast<uint32_t>(kMaxNestingDepth)) {
    check_round_trip(simplified, vars, "the simplified expression");
  }
  const ConstIntBound bound = analyzer.const_int_bound(e);
  const ConstIntBound simplified_bound = analyzer.const_int_bound(simplified);

  // Variables in name order, so that the points do not depend on hashing.
  std::vector<std::pair<std::string, SymVar>> ordered(vars.begin(), vars.end());
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t point = 0; point < kNumValues; ++point) {
    SymVarMap<int64_t> bindings;
    std::string where;
    for (size_t i = 0; i < ordered.size(); ++i) {
      const int64_t value = kValues[(point + 5 * i) % kNumValues];
      bindings[ordered[i].second] = value;
      where += ordered[i].first + "=" + std::to_string(value) + " ";
    }
    absl::StatusOr<int64_t> value = evaluate(e, bindings);
    if (!value.ok()) continue;
    FUZZ_CHECK(contains(bound, *value))
        << "const_int_bound " << bound << " does not hold the value " << *value << " at " << where
        << "\nexpression: " << excerpt(e.to_string());
    absl::StatusOr<int64_t> simplified_value = evaluate(simplified, bindings);
    const bool reported_overflow =
        !simplified_value.ok() &&
        simplified_value.status().message().find("overflow") != std::string_view::npos;
    FUZZ_CHECK(reported_overflow || (simplified_value.ok() && *simplified_value == *value))
        << "simplify changed the value at " << where << "from " << *value << " to "
        << (simplified_value.ok() ? std::to_string(*simplified_value)
                                  : std::string(simplified_value.status().message()))
        << "\nexpression: " << excerpt(e.to_string())
        << "\nsimplified: " << excerpt(simplified.to_string());
    FUZZ_CHECK(contains(simplified_bound, *value))
        << "const_int_bound " << simplified_bound << " of the simplified expression does not hold "
        << *value << " at " << where << "\nsimplified: " << excerpt(simplified.to_string());
  }
}

}  // namespace
}  // namespace relax::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  relax::fuzz::check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
