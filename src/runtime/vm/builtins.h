// Private to the runtime: the VM's builtins, functions that compute a fresh
// value from their arguments (Opcode::kCallBuiltin).
//
// A kernel (call_tir) or a library function (call_dps_library) writes into
// destinations that the caller allocated, so the size of its result must be
// known before the call. The data-dependent operators (nonzero, unique,
// masked_select) cannot be written that way: their result's size is found only
// by computing it. A builtin allocates its own result instead. The set is fixed
// and compiled into the runtime (an AOT module needs nothing else to run them);
// an executable names the builtins it calls, and Module::create resolves the
// names against this table.
//
// Builtins are pure: they read their arguments and never write them. Their
// errors name the builtin's argument and the expected and actual values; the
// VM prefixes them with the function and the builtin's name.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/runtime/value.h"

namespace relax::runtime {

/// A builtin: its result from its arguments.
using BuiltinFunction = absl::StatusOr<Value> (*)(std::span<const Value> args);

/// The builtin called `name`, or nullptr. The builtins:
///   nonzero(x)              int64 (x.ndim, count): the multi-indices of x's
///                           non-zero elements (NaN counts as non-zero), in
///                           row-major order, one column per element
///   unique(x)               1-D, x's dtype: x's distinct values in ascending
///                           order (floats: NaNs last, all NaNs as one; -0.0
///                           equals 0.0 and the one met first is kept)
///   masked_select(x, mask)  1-D, x's dtype: the elements of x where the bool
///                           `mask` (x's shape) is true, in row-major order
BuiltinFunction find_builtin(std::string_view name);

/// The names of every builtin, in alphabetical order.
std::vector<std::string> builtin_names();

}  // namespace relax::runtime
