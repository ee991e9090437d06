// Helpers shared by the SymExpr text tests: parsing shorthands, the round-trip
// check and a generator of random well-typed trees.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "relax/shape/sym_expr.h"

namespace relax::test {

using VarTable = absl::flat_hash_map<std::string, SymVar>;

/// Parses `text`, which must succeed.
inline SymExpr parse_ok(std::string_view text, VarTable* vars = nullptr) {
  absl::StatusOr<SymExpr> result = SymExpr::parse(text, vars);
  EXPECT_TRUE(result.ok()) << "`" << text << "`: " << result.status();
  return result.ok() ? *result : SymExpr();
}

/// The message of the error that parsing `text` must give.
inline std::string parse_error(std::string_view text) {
  absl::StatusOr<SymExpr> result = SymExpr::parse(text);
  if (result.ok()) {
    ADD_FAILURE() << "`" << text << "` parsed as `" << *result << "`";
    return "";
  }
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

/// Parses and prints again.
inline std::string reprint(std::string_view text) { return to_string(parse_ok(text)); }

/// The variables of `e` by name, so that parsing its text resolves to them.
inline VarTable table_of(const SymExpr& e) {
  VarTable table;
  for_each_var(e, [&](const SymVar& v) { table.emplace(v.name(), v); });
  return table;
}

/// Prints `e`, parses it back over e's own variables and expects the same tree and text.
inline void expect_round_trip(const SymExpr& e) {
  VarTable table = table_of(e);
  const size_t known = table.size();
  const std::string text = to_string(e);
  absl::StatusOr<SymExpr> parsed = SymExpr::parse(text, &table);
  ASSERT_TRUE(parsed.ok()) << "`" << text << "`: " << parsed.status();
  EXPECT_TRUE(structural_equal(*parsed, e)) << "`" << text << "` read back as `" << *parsed << "`";
  EXPECT_EQ(to_string(*parsed), text);
  EXPECT_EQ(table.size(), known) << "no new variables expected for `" << text << "`";
}

/// Random well-typed trees over a few variables (some needing quotes) and edge constants.
class RandomTrees {
 public:
  explicit RandomTrees(uint64_t seed) : rng_(seed) {}

  // Operands are generated in separate statements so that every compiler builds the same
  // trees from the same seed.
  SymExpr integer(int depth) {
    if (depth == 0 || pick(5) == 0) return pick(2) == 0 ? leaf_var() : leaf_const();
    static constexpr SymKind kBinary[] = {SymKind::kAdd,      SymKind::kSub,      SymKind::kMul,
                                          SymKind::kFloorDiv, SymKind::kFloorMod, SymKind::kMin,
                                          SymKind::kMax};
    const int choice = pick(9);
    if (choice == 7) return -integer(depth - 1);
    if (choice == 8) {
      SymExpr cond = boolean(depth - 1);
      SymExpr then_value = integer(depth - 1);
      SymExpr else_value = integer(depth - 1);
      return select(cond, then_value, else_value);
    }
    SymExpr lhs = integer(depth - 1);
    SymExpr rhs = integer(depth - 1);
    return SymExpr::make(kBinary[choice], lhs, rhs);
  }

  SymExpr boolean(int depth) {
    if (depth == 0 || pick(6) == 0) return SymExpr::boolean(pick(2) == 0);
    static constexpr SymKind kCompares[] = {SymKind::kEQ, SymKind::kNE, SymKind::kLT,
                                            SymKind::kLE, SymKind::kGT, SymKind::kGE};
    const int choice = pick(4);
    if (choice == 2) return !boolean(depth - 1);
    if (choice == 3) {
      const SymKind kind = kCompares[pick(6)];
      SymExpr lhs = integer(depth - 1);
      SymExpr rhs = integer(depth - 1);
      return SymExpr::make(kind, lhs, rhs);
    }
    SymExpr lhs = boolean(depth - 1);
    SymExpr rhs = boolean(depth - 1);
    return choice == 0 ? lhs && rhs : lhs || rhs;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  SymExpr leaf_var() { return vars_[static_cast<size_t>(pick(static_cast<int>(vars_.size())))]; }
  SymExpr leaf_const() {
    static constexpr int64_t kEdges[] = {0, 1, -1, 2, 16, -5, 128, INT64_MIN, INT64_MAX};
    if (pick(4) == 0) return SymExpr(static_cast<int64_t>(rng_()));
    return SymExpr(kEdges[pick(9)]);
  }

  std::mt19937_64 rng_;
  std::vector<SymVar> vars_ = {SymVar("n"),   SymVar("m"),   SymVar("seq_len"), SymVar("x.1"),
                               SymVar("a b"), SymVar("min"), SymVar("q\"\\")};
};

}  // namespace relax::test
