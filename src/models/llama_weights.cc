// write_random_weights: a seeded random-weight parameter file for any LlamaConfig.
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "relax/models/llama.h"
#include "relax/runtime/quantize.h"
#include "relax/runtime/safetensors.h"
#include "relax/support/half_float.h"

namespace relax::models {
namespace {

using runtime::Tensor;

// splitmix64: a small, well-mixed generator whose stream is the same on every platform
// (std::uniform_real_distribution's is not).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  float symmetric() { return static_cast<float>(static_cast<double>(next() >> 40) * 0x1p-23 - 1.0); }

 private:
  uint64_t state_;
};

// Fills a float32 tensor of `shape` with center + scale * U(-1, 1), from the stream of (seed, index).
absl::StatusOr<Tensor> uniform(std::vector<int64_t> shape, uint64_t seed, size_t index, float center, float scale) {
  absl::StatusOr<Tensor> t = Tensor::empty(std::move(shape), DataType::float32());
  if (!t.ok()) return t.status();
  Random random(seed * 0x100000001b3ULL + index);
  auto* data = static_cast<float*>(t->data());
  for (int64_t i = 0; i < t->numel(); ++i) data[i] = center + scale * random.symmetric();
  return t;
}

// A float32 tensor as `dtype` (float32: itself; bfloat16 or float16: each element rounded).
absl::StatusOr<Tensor> as_dtype(const Tensor& f, DataType dtype) {
  if (dtype == DataType::float32()) return f;
  absl::StatusOr<Tensor> t = Tensor::empty(f.shape(), dtype);
  if (!t.ok()) return t.status();
  const auto* in = static_cast<const float*>(f.data());
  auto* out = static_cast<uint16_t*>(t->data());
  const bool bf16 = dtype == DataType::bfloat16();
  for (int64_t i = 0; i < f.numel(); ++i) out[i] = bf16 ? bfloat16_bits(in[i]) : float16_bits(in[i]);
  return t;
}

}  // namespace

absl::Status write_random_weights(const LlamaConfig& config, uint64_t seed, const std::string& path,
                                  const std::function<void(size_t, size_t)>& progress) {
  if (absl::Status s = config.validate(); !s.ok()) return s;
  const std::vector<WeightSpec> specs = weight_specs(config);
  std::vector<runtime::SafetensorsEntry> declared;
  for (const WeightSpec& w : specs) declared.push_back({w.name, w.dtype, w.shape, 0, 0});
  absl::StatusOr<runtime::SafetensorsWriter> writer =
      runtime::SafetensorsWriter::create(path, std::move(declared), config.to_metadata());
  if (!writer.ok()) return writer.status();
  std::map<std::string, MatrixSpec> matrices;
  for (const MatrixSpec& m : matrix_specs(config)) matrices.emplace(m.name, m);
  size_t done = 0;
  auto wrote = [&](size_t n) {
    done += n;
    if (progress) progress(done, specs.size());
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    const WeightSpec& w = specs[i];
    // A matrix's tensors: the whole name, or <name>.q4 then <name>.scales for int4.
    const std::string base = w.name.ends_with(".q4") ? w.name.substr(0, w.name.size() - 3) : w.name;
    auto m = matrices.find(base);
    if (m == matrices.end()) {
      // A vector or the embedding table.
      const bool norm = w.name != "embed";
      absl::StatusOr<Tensor> t = uniform(w.shape, seed, i, norm ? 1.0f : 0.0f, norm ? 0.1f : 1.0f);
      if (!t.ok()) return t.status();
      if (t.ok()) t = as_dtype(*t, w.dtype);
      if (!t.ok()) return t.status();
      if (absl::Status s = writer->write(w.name, *t); !s.ok()) return s;
      wrote(1);
      continue;
    }
    const float bound = std::sqrt(3.0f / static_cast<float>(m->second.in));
    absl::StatusOr<Tensor> t = uniform({m->second.in, m->second.out}, seed, i, 0.0f, bound);
    if (!t.ok()) return t.status();
    if (const std::optional<DataType> dtype = float_weight_dtype(config.weights)) {
      t = as_dtype(*t, *dtype);
    } else {
      absl::StatusOr<std::pair<Tensor, Tensor>> q = runtime::quantize_int4(*t, config.group_size);
      if (!q.ok()) return q.status();
      if (absl::Status s = writer->write(w.name, q->first); !s.ok()) return s;
      if (absl::Status s = writer->write(base + ".scales", q->second); !s.ok()) return s;
      ++i;  // the scales were this matrix's next tensor
      wrote(2);
      continue;
    }
    if (!t.ok()) return t.status();
    if (absl::Status s = writer->write(w.name, *t); !s.ok()) return s;
    wrote(1);
  }
  return writer->finish();
}

}  // namespace relax::models
