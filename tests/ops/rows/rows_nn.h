// The parts of the nn family's rows (rows_nn.cc gathers them into nn_rows()).
#pragma once

#include "op_rows.h"

namespace relax::ops_test {

/// layer_norm, rms_norm, group_norm, batch_norm (rows_nn_norm.cc).
OpRows nn_norm_rows();
/// attention, rotary_embedding (rows_nn_attention.cc).
OpRows nn_attention_rows();

}  // namespace relax::ops_test
