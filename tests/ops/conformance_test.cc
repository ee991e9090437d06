// The operator conformance table (op_rows.h): one gtest case per row of every family,
// Op/Deduce.Row/<op>_<k> and Op/Numeric.Row/<op>_<k>. The numerical rows of a family share
// one relax::build (harness.cc), made by the first of them that runs in the process.
#include <gtest/gtest.h>

#include "families.h"
#include "harness.h"

namespace relax::ops_test {
namespace {

std::string case_name(const ::testing::TestParamInfo<RowCase>& info) { return info.param.name; }

class Deduce : public ::testing::TestWithParam<RowCase> {};
class Numeric : public ::testing::TestWithParam<RowCase> {};

TEST_P(Deduce, Row) {
  const RowCase& c = GetParam();
  const std::string failure = check_deduce_row(std::get<DeduceRow>(all_rows()[c.family][c.row]));
  if (!failure.empty()) ADD_FAILURE() << failure;
}

TEST_P(Numeric, Row) {
  const RowCase& c = GetParam();
  const std::string failure = check_numeric_row(op_families()[c.family].name, all_rows()[c.family], c.row);
  if (!failure.empty()) ADD_FAILURE() << failure;
}

INSTANTIATE_TEST_SUITE_P(Op, Deduce, ::testing::ValuesIn(deduce_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Op, Numeric, ::testing::ValuesIn(numeric_cases()), case_name);

}  // namespace
}  // namespace relax::ops_test
