// The families of the operator conformance table (op_rows.h). A new family is a file
// tests/ops/rows/rows_<family>.cc defining `OpRows <family>_rows()`, declared here and listed once
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

OpRows elementwise_rows();   // rows_elementwise.cc: unary math, broadcasting binary ops, where
OpRows linalg_rows();        // rows_linalg.cc: matmul
OpRows nn_rows();            // rows_nn.cc: softmax
OpRows dynamic_rows();       // rows_dynamic.cc: nonzero, unique, masked_select
OpRows reduce_rows();        // rows_reduce.cc: sum, mean, max, min, prod, variance, std, argmax, argmin, cumsum, cumprod
OpRows create_rows();        // rows_create.cc: zeros, ones, full, *_like, arange, tril, triu
OpRows conv_rows();          // rows_conv.cc: conv1d, conv2d, conv1d_transpose, pools
OpRows quantize_rows();      // rows_quantize.cc: dequantize, quantize
OpRows manipulate_rows();    // rows_manipulate.cc: reshape, permute_dims, expand_dims ... one_hot

}  // namespace relax::ops_test
