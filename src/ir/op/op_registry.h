// Building the operator registry (private to src/ir).
//
// The registry is filled once, on first use, by calling each family's
// register_* function below in order; afterwards it is read-only. Explicit
// calls, rather than static registration objects, keep every operator in a
// static library build (a linker drops unreferenced static initialisers) and
// make the order deterministic. A new family adds its function here and one
// line to build_registry() in op.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "relax/ir/op.h"

namespace relax::detail {

/// Collects operators while the registry is being built.
class OpTable {
 public:
  /// Registers `name` with `num_args` arguments (-1: variadic) and its deduction;
  /// aborts on a duplicate name. The returned entry may be refined (purity).
  OpInfo& add(std::string name, int num_args, DeduceFn deduce, std::string summary);

  std::vector<std::unique_ptr<OpInfo>>& entries() { return entries_; }

 private:
  std::vector<std::unique_ptr<OpInfo>> entries_;
};

/// add, multiply (ops_binary.cc).
void register_binary_ops(OpTable& table);
/// matmul (ops_linalg.cc).
void register_linalg_ops(OpTable& table);
/// reshape, permute_dims (ops_manipulate.cc).
void register_manipulate_ops(OpTable& table);
/// call_tir, call_tir_inplace, call_dps_library (ops_call.cc).
void register_call_ops(OpTable& table);
/// exp (ops_unary.cc).
void register_unary_ops(OpTable& table);
/// sum, softmax (ops_reduce.cc).
void register_reduce_ops(OpTable& table);

}  // namespace relax::detail
