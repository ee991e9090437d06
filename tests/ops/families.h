// The families of the operator conformance table (op_rows.h). A new family is a file
// tests/ops/rows_<family>.cc defining `OpRows <family>_rows()`, declared here and listed once
// in families.cc.
#pragma once

#include <string>
#include <vector>

#include "op_rows.h"

namespace relax::ops_test {

/// One family: its name (in failure messages) and its rows.
struct OpFamily {
  std::string name;
  OpRows (*rows)();
};

/// Every family, in the order of families.cc.
const std::vector<OpFamily>& op_families();

OpRows elementwise_rows();   // rows_elementwise.cc: add, multiply, exp
OpRows linalg_rows();        // rows_linalg.cc: matmul
OpRows manipulation_rows();  // rows_manipulation.cc: reshape, permute_dims
OpRows nn_rows();            // rows_nn.cc: softmax
OpRows manipulate_rows();    // rows_manipulate.cc: expand_dims ... one_hot, reshape's -1

}  // namespace relax::ops_test
