// Runs an AOT library written by Module::export_library, in a process that
// links only the relax runtime (no compiler, no IR): used by mlp_demo.
//
//   aot_runner <library.so> <batch> <seq>
//
// Calls main(x) with x of shape (batch, seq, 16) filled by the demo's formula
// and prints a weighted sum of the outputs (sum of y[r, c] * (c + 1)) (the demo compares it with its own) after
// checking that every softmax row sums to 1.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "relax/runtime/module.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <library.so> <batch> <seq>\n", argv[0]);
    return 2;
  }
  absl::StatusOr<relax::runtime::Module> m = relax::runtime::load_module(argv[1]);
  if (!m.ok()) {
    std::fprintf(stderr, "aot_runner: %s\n", std::string(m.status().message()).c_str());
    return 1;
  }
  const int64_t batch = std::atoll(argv[2]), seq = std::atoll(argv[3]), in = 16;
  absl::StatusOr<relax::runtime::Tensor> x =
      relax::runtime::Tensor::empty({batch, seq, in}, relax::DataType::float32());
  if (!x.ok()) return 1;
  for (int64_t i = 0; i < x->numel(); ++i) {
    x->data_as_or_die<float>()[i] = static_cast<float>((i * 37 % 101) - 50) / 50.0f;
  }
  absl::StatusOr<relax::runtime::Value> y = (*m)["main"](*x);
  if (!y.ok()) {
    std::fprintf(stderr, "aot_runner: %s\n", std::string(y.status().message()).c_str());
    return 1;
  }
  // The library is outside input: its result is checked to be a float32 tensor, not assumed.
  absl::StatusOr<relax::runtime::Tensor> out = y->tensor();
  absl::StatusOr<const float*> data = out.ok() ? out->data_as<const float>() : out.status();
  if (!data.ok()) {
    std::fprintf(stderr, "aot_runner: %s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  const int64_t cols = out->shape().back();
  double total = 0;
  for (int64_t r = 0; r < out->numel() / cols; ++r) {
    double row = 0;
    for (int64_t c = 0; c < cols; ++c) row += (*data)[r * cols + c];
    if (std::fabs(row - 1.0) > 1e-5) {
      std::fprintf(stderr, "aot_runner: row %lld sums to %f\n", static_cast<long long>(r), row);
      return 1;
    }
    for (int64_t c = 0; c < cols; ++c) total += (*data)[r * cols + c] * static_cast<double>(c + 1);
  }
  std::printf("  aot_runner: loaded %s, main(x: (%lld, %lld, %lld)) -> %s, checksum %.6f\n", argv[1],
              static_cast<long long>(batch), static_cast<long long>(seq), static_cast<long long>(in),
              out->describe().c_str(), total);
  return 0;
}
