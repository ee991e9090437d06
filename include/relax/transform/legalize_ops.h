// Legalization: operator calls become calls of loop-level kernels.
//
//   absl::StatusOr<relax::IRModule> legal = relax::transform::legalize_ops(mod);
//
// As a pass (`legalize-ops`, in the default pipeline), with the rule of any
// operator replaced by the user's:
//
//   pm.replace("legalize-ops", relax::transform::create_legalize_ops_pass(
//       {{"exp", my_exp_rule}}));   // my_exp_rule: a LegalizeRule
//
// Every call of an operator with a legalization in its table entry (see
// legalizable_ops()) in the module's graph functions becomes call_tir of a PrimFunc that
// the pass adds to the module. Kernels keep symbolic shapes: one PrimFunc per
// operator and pattern of argument annotations, whose buffers have the call's
// dims over the kernel's own symbolic variables, so one kernel serves every
// size (and identical kernels are shared). docs/operators.md says how the
// kernels are built and what is not handled yet.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/module.h"
#include "relax/ir/op.h"
#include "relax/shape/analyzer.h"
#include "relax/transform/pass.h"

namespace relax::transform {

/// What a rule makes of one operator call (relax/ir/op.h).
using Lowering = relax::Lowering;

/// Legalizes one normalised call of an operator; build kernels with the
/// compute library (relax/ir/compute.h). `analyzer` is the one the call's
/// annotations were deduced with (it proves dims equal or 1). An error
/// (InvalidArgument "<op>: <what>") is reported with the function and binding.
using LegalizeRule = LegalizeFn;

/// User rules by operator name: they replace the built-in rule of that
/// operator, or make an operator without one legalizable.
using LegalizeRules = std::map<std::string, LegalizeRule, std::less<>>;

/// Rewrites every call of a legalizable operator in the module's graph
/// functions into call_tir of a PrimFunc added to the module (built with
/// PrimFuncBuilder), keeping each call's annotation. A Prim operand of add or
/// multiply becomes a scalar parameter of its dtype (passed in call_tir's
/// arguments); a symbolic variable that no buffer dim of a kernel defines
/// becomes a trailing int64 scalar parameter (passed as extra_sym_args). A
/// kernel named like its operator gets a suffix when the name is taken;
/// structurally equal kernels (this pass's and those already in the module)
/// are one function. add / multiply of two Prims whose value is known is
/// replaced by that value.
///
/// Errors (InvalidArgument, every one found, a line each): a call whose
/// operands have rank-only or unknown shapes or unknown dtypes, or dtypes its
/// kernel does not compute with; each line names the function, the binding
/// and the operator.
absl::StatusOr<IRModule> legalize_ops(const IRModule& mod, const LegalizeRules& overrides = {});

/// The pass `legalize-ops`: legalize_ops with `overrides`.
PassPtr create_legalize_ops_pass(LegalizeRules overrides);

/// The operators legalize_ops rewrites, in a fixed order.
std::vector<std::string> legalizable_ops();

}  // namespace relax::transform
