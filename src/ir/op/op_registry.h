// Building the operator registry (private to src/ir).
//
// The registry is filled once, on first use, by calling each family's
// register_* function below in order; afterwards it is read-only. Explicit
// calls, rather than static registration objects, keep every operator in a
// static library build (a linker drops unreferenced static initialisers) and
// make the order deterministic. A new family adds its function here and one
// line to build_registry() in op.cc; a new operator is one entry in its
// family's table (see op_def.h).
#pragma once

#include "ir/op/op_def.h"

namespace relax::detail {

/// Unary math, numpy-broadcasting binary ops (elementwise.cc).
void register_elementwise_ops(OpTable& table);
/// matmul (linalg.cc).
void register_linalg_ops(OpTable& table);
/// reshape, permute_dims (manipulate.cc).
void register_manipulate_ops(OpTable& table);
/// sum, mean, max, min, prod, variance, std, argmax, argmin, cumsum, cumprod, softmax (reduce.cc);
/// topk (reduce_topk.cc, registered by register_reduce_ops).
void register_reduce_ops(OpTable& table);
void register_topk_ops(OpTable& table);
/// nonzero, unique, masked_select, call_builtin (dynamic.cc).
void register_dynamic_ops(OpTable& table);
/// zeros, ones, full, *_like, arange, tril, triu (create.cc).
void register_create_ops(OpTable& table);
/// log_softmax, norms, attention, rotary_embedding, lstm_scan, gru_scan (nn.cc, nn_norm.cc, nn_attention.cc,
/// nn_recurrent.cc).
void register_nn_ops(OpTable& table);
/// conv1d, conv2d, conv1d_transpose (conv.cc); max/avg/adaptive_avg_pool2d (pool.cc).
void register_conv_ops(OpTable& table);
void register_pool_ops(OpTable& table);
/// dequantize, quantize (quantize.cc).
void register_quantize_ops(OpTable& table);
/// call_tir, call_tir_inplace, call_dps_library, call_tir_dps, call_library_dps (call.cc).
void register_call_ops(OpTable& table);
/// alloc_storage, alloc_tensor, kill_storage, kill_tensor, view (memory.cc).
void register_memory_ops(OpTable& table);

}  // namespace relax::detail
