// GoogleTest helpers for comparing IR structurally.
//
//   #include "relax/ir/testing.h"
//   TEST(MyPass, FoldsConstants) {
//     relax::IRModule after = my_pass(before);
//     RELAX_EXPECT_STRUCTURAL_EQ(expected, after);
//   }
//
// On a mismatch the failure names the first difference (see first_difference)
// and prints both sides in the text form (printer.h). Header-only: it is the
// one part of relax that needs GoogleTest, and only the code that includes it
// links GoogleTest.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "gtest/gtest.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"

namespace relax {

namespace testing_detail {

// The text form (printer.h), indented to set it off in the failure message.
template <typename T>
std::string print(const T& ir) {
  if constexpr (std::is_same_v<T, Expr>) {
    if (!ir.defined()) return "  (undefined)\n";
  }
  std::string text = to_text(ir);
  std::string out = "  ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out + "\n";
}

template <typename T>
::testing::AssertionResult compare(const char* expected_text, const char* actual_text,
                                   const T& expected, const T& actual) {
  std::optional<std::string> diff = first_difference(expected, actual);
  if (!diff) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual_text << " is not structurally equal to " << expected_text
         << ".\nFirst difference: " << *diff << "\nExpected:\n"
         << print(expected) << "Actual:\n"
         << print(actual);
}

}  // namespace testing_detail

/// Success when `actual` is structurally equal to `expected`; otherwise a
/// failure naming the first difference and printing both modules.
inline ::testing::AssertionResult structurally_equal(const IRModule& expected,
                                                     const IRModule& actual) {
  return testing_detail::compare("expected", "actual", expected, actual);
}

/// As above, for two expressions (functions, PrimFuncs, ...).
inline ::testing::AssertionResult structurally_equal(const Expr& expected, const Expr& actual) {
  return testing_detail::compare("expected", "actual", expected, actual);
}

/// The predicate-formatter form (EXPECT_PRED_FORMAT2), which names the two
/// argument expressions in the message; the macros below use it.
inline ::testing::AssertionResult structurally_equal_format(const char* expected_text,
                                                            const char* actual_text,
                                                            const IRModule& expected,
                                                            const IRModule& actual) {
  return testing_detail::compare(expected_text, actual_text, expected, actual);
}
inline ::testing::AssertionResult structurally_equal_format(const char* expected_text,
                                                            const char* actual_text,
                                                            const Expr& expected,
                                                            const Expr& actual) {
  return testing_detail::compare(expected_text, actual_text, expected, actual);
}

}  // namespace relax

/// EXPECT that two modules (or expressions) are structurally equal, printing
/// the first difference and both sides otherwise.
#define RELAX_EXPECT_STRUCTURAL_EQ(expected, actual) \
  EXPECT_PRED_FORMAT2(::relax::structurally_equal_format, expected, actual)

/// As RELAX_EXPECT_STRUCTURAL_EQ, but stops the test on a mismatch.
#define RELAX_ASSERT_STRUCTURAL_EQ(expected, actual) \
  ASSERT_PRED_FORMAT2(::relax::structurally_equal_format, expected, actual)
