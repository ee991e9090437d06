// relax::models::ReferenceLlama: a plain C++ Llama decoder, the independent reference the
// compiled model is checked against (by the tests and the demo). Loops in double over the
// parameter file's tensors (bfloat16 widened, int4 unpacked by its own loop, not the
// compiler's), one sequence at a time, full causal attention over the whole sequence, no
// cache, no compiler: slow, and meant for small models.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/models/llama.h"
#include "relax/runtime/tensor.h"

namespace relax::models {

class ReferenceLlama {
 public:
  /// `tensors` maps every name of weight_specs(config) to its tensor.
  static absl::StatusOr<ReferenceLlama> create(const LlamaConfig& config,
                                                const std::map<std::string, runtime::Tensor>& tensors);

  /// The logits (vocab) after each token of one sequence.
  std::vector<std::vector<double>> logits(const std::vector<int64_t>& tokens) const;

  /// max |row[i] - expected[i]| / max |expected[i]|: how far a row of computed float logits
  /// is from the reference's, relative to the reference's largest logit.
  static double relative_error(const float* row, const std::vector<double>& expected);

 private:
  using Matrix = std::vector<double>;  // row-major (in, out)
  LlamaConfig config_;
  std::map<std::string, Matrix> weights_;  // every weight as double: matrices (in, out), vectors
  const Matrix& w(const std::string& name) const { return weights_.at(name); }
};

}  // namespace relax::models
