// The `weights` attribute of a graph function: the parameters that hold the same tensors for
// the life of a module (a model's weights), as a comma-separated list of parameter names:
//   func @main(x: ..., w: ...) -> ... attrs {weights = "w"} { ... }
// Read by dispatch-library (a library may keep a prepacked copy of such an operand), by
// combine-parallel-matmul (weights may be joined) and by lift-weight-transforms (what is
// computed from weights alone is computed once, when they are bound).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/ir/expr.h"

namespace relax::transform::weights_detail {

inline constexpr char kWeightsAttr[] = "weights";
/// `pack_weights = false`: library calls read the weights as they are bound (no prepacked copy).
inline constexpr char kPackWeightsAttr[] = "pack_weights";

/// The parameters `fn`'s `weights` attribute names, in parameter order (empty without the
/// attribute). InvalidArgument naming the function `name` when the attribute is not a string
/// or names something that is not a parameter.
absl::StatusOr<std::vector<Var>> weight_params(const std::string& name, const FunctionNode& fn);

/// The attribute's text for `params` ("w1,w2").
std::string weights_attr_text(const std::vector<Var>& params);

/// A call's attributes as text ("axis=1 dtype=float32"), for keys that compare calls.
std::string attrs_text(const Attrs& attrs);

}  // namespace relax::transform::weights_detail
