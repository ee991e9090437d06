// relax::runtime::BoundWeights: a model's weights bound to a compiled module once, with what
// the module computes from them at bind time, handed to its functions by parameter name.
//
//   std::map<std::string, Value> weights = ...;   // by parameter name ("layers_0_wq", ...)
//   absl::StatusOr<BoundWeights> bound = BoundWeights::bind(module, std::move(weights));
//   absl::StatusOr<std::vector<Value>> args = bound->arguments(module, "decode", {tokens, ...});
//   absl::StatusOr<Value> logits = module["decode"].call(*std::move(args));
//
// A module whose functions mark their weights (the `weights` attribute) may carry a function
// `transform_weights` (the lift-weight-transforms pass writes it: weights joined for one
// product, transposed, ...). It takes weights by parameter name and returns a tuple of
// (name, tensor) pairs: the parameters the other functions read in place of the weights they
// were computed from. bind() calls it once and keeps its results beside the weights; a function
// then gets its leading arguments from the caller and every later parameter by name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/runtime/module.h"
#include "relax/runtime/value.h"

namespace relax::runtime {

/// The name of the function that computes values from the weights once, when they are bound.
inline constexpr char kWeightTransformFunction[] = "transform_weights";

class BoundWeights {
 public:
  /// Binds `weights` (by parameter name) to `module`: when the module has transform_weights,
  /// calls it with the weights its parameters name and adds its results. Errors: a weight that
  /// transform_weights reads is missing (NotFound naming it), the transform fails (its message,
  /// prefixed), or its result is not a tuple of (name, tensor) pairs (Internal).
  static absl::StatusOr<BoundWeights> bind(const Module& module, std::map<std::string, Value> weights);

  /// The arguments of `function`: `leading` for its first parameters, then every other
  /// parameter's bound value by name. NotFound naming the function and the parameter when one
  /// is not bound.
  absl::StatusOr<std::vector<Value>> arguments(const Module& module, const std::string& function,
                                               std::vector<Value> leading) const;

  /// Every bound value by name: the weights given, then what transform_weights computed.
  const std::map<std::string, Value>& values() const { return values_; }
  /// The names transform_weights computed, in its result's order.
  const std::vector<std::string>& computed() const { return computed_; }
  /// Bytes of the tensors transform_weights computed: the memory the bind added.
  int64_t computed_bytes() const { return computed_bytes_; }
  /// The weights given to bind() that no function of the module reads (transform_weights
  /// aside): their memory may be released once bound (a mapped file's pages, say).
  std::vector<std::string> unread_by_functions(const Module& module) const;

 private:
  std::map<std::string, Value> values_;
  std::vector<std::string> given_;
  std::vector<std::string> computed_;
  int64_t computed_bytes_ = 0;
};

}  // namespace relax::runtime
