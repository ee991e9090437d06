// relax::compile_to_executable: graph functions compiled to VM bytecode (a runtime::Executable),
// the step of relax::build after the kernels are generated.
//
// Compiles every graph Function of a module whose operators have been
// legalized (see relax/transform/legalize_ops.h) into a runtime::Executable.
// What a function may contain after legalization: parameters of any
// annotation but Func, VarBindings of variables, constants, tuples and tuple
// items, shape and prim values, strings, calls of call_tir /
// call_tir_inplace / call_dps_library and of other graph functions of the
// module, match_casts, and If. Anything else (an operator that was not
// legalized, a closure) is an error naming the function and the binding.
#pragma once

#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/runtime/executable.h"
#include "relax/support/device.h"

namespace relax {

struct VMCodegenOptions {
  /// Check argument and match_cast annotations at run time (see
  /// runtime::MatchGroup::checked); variables are bound either way.
  bool runtime_checks = true;
  /// The device the executable's functions run on (runtime::Executable::device):
  /// Device::cuda() for the cuda target, else the CPU.
  Device device = Device::cpu();
};

/// The executable of `mod`'s graph functions; kernels are named after the
/// module's PrimFuncs that call_tir calls.
absl::StatusOr<runtime::Executable> compile_to_executable(const IRModule& mod,
                                                          const VMCodegenOptions& options = {});

}  // namespace relax
