// Memory plans as they stand in the IR: reading a planned function back and checking it, for
// tests and for pass authors who plan memory themselves (docs/memory.md). The pass plan-memory
// (create_plan_memory_pass() in passes.h) writes a plan into a function as one arena storage
// and tensors at offsets of it:
//
//   arena: Object = alloc_storage(prim(8192), alignment=64)
//   a: Tensor[(n, 4), float32] = alloc_tensor(arena, prim(0), shape(n, 4), dtype=float32)
//   ...
//   _kill_a: Tuple[()] = kill_tensor(a)
//   b: Tensor[(n, 8), float32] = alloc_tensor(arena, prim(0), shape(n, 8), dtype=float32)
//
// The functions here read only that IR -- storages, the offsets and byte sizes of the
// tensors made from them, and liveness from the uses of the variables -- never the planner's
// result, so they check a plan however it was made.
//
// Liveness, as read here. The bindings of the function's body (its top-level blocks, in
// order) are numbered 0, 1, ...; a tensor is live from its alloc_tensor binding to the last
// binding that uses it or anything that may alias it, and to the end of the function when the
// function's result may alias it. A binding's variable may alias every tensor its value
// mentions (through views, tuples, tuple items, calls and nested functions) unless its
// annotation can hold no memory (Prim, Shape, and tuples of them); an If uses every tensor it
// mentions, and its result may alias what its branches' results may alias, read through the
// bindings inside them (an allocation there is fresh). Storages and tensors allocated inside
// If branches or nested functions are not read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/shape/sym_expr.h"
#include "relax/transform/memory_planner.h"

namespace relax::transform::memory {

/// The tensors of one storage of a planned function and their placement, in the planner's
/// terms (memory_planner.h), so that check_plan() and plan_to_svg() take them.
struct FunctionMemoryPlan {
  std::string storage;                 ///< the storage's variable name (`arena`)
  std::vector<PlannedTensor> tensors;  ///< in binding order; live intervals in binding indices
  MemoryPlan plan;                     ///< one block per distinct offset; the storage's size
};

/// Reads back the plan of graph function `function` of `mod`: the top-level storage from which
/// the most tensors are made (the pass's arena). Errors: no such graph function, or a function
/// without a top-level storage.
absl::StatusOr<FunctionMemoryPlan> read_memory_plan(const IRModule& mod, const std::string& function);

/// The values of the symbolic variables that graph function `function`'s parameters define:
/// `given` by name, each other variable at its declared upper bound. Errors name the function
/// and a variable that is neither given nor bounded, or a name that is not a variable of it.
absl::StatusOr<SymVarMap<int64_t>> function_sym_values(const IRModule& mod, const std::string& function,
                                                       const std::map<std::string, int64_t>& given);

/// Checks the storages of graph function `fn` at `values` of its symbolic variables: every
/// storage size evaluates to a non-negative value; every tensor made from a storage has a
/// non-negative offset that is a multiple of its element size, and lies inside the storage;
/// no tensor is used after its storage is killed; no two tensors of one storage that are live
/// at once share a byte. An error names the function, the storage, the two tensors, their
/// byte ranges and their live intervals.
absl::Status check_memory_plan(const Expr& fn, const SymVarMap<int64_t>& values);

}  // namespace relax::transform::memory
