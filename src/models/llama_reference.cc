#include "relax/models/llama_reference.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "relax/support/half_float.h"

namespace relax::models {
namespace {


// The tensor's elements as doubles (float32, bfloat16, float16, uint8).
std::vector<double> as_doubles(const runtime::Tensor& t) {
  const int64_t n = t.numel();
  std::vector<double> out(static_cast<size_t>(n));
  const DataType dt = t.dtype();
  for (int64_t i = 0; i < n; ++i) {
    if (dt == DataType::float32()) {
      out[static_cast<size_t>(i)] = static_cast<const float*>(t.data())[i];
    } else if (dt == DataType::bfloat16()) {
      out[static_cast<size_t>(i)] = bfloat16_value(static_cast<const uint16_t*>(t.data())[i]);
    } else if (dt == DataType::float16()) {
      out[static_cast<size_t>(i)] = float16_value(static_cast<const uint16_t*>(t.data())[i]);
    } else {
      out[static_cast<size_t>(i)] = static_cast<const uint8_t*>(t.data())[i];
    }
  }
  return out;
}

// y (rows, out) = x (rows, in) W (in, out).
std::vector<double> matmul(const std::vector<double>& x, const std::vector<double>& w, int64_t rows, int64_t in,
                           int64_t out) {
  std::vector<double> y(static_cast<size_t>(rows * out), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < in; ++k) {
      const double a = x[static_cast<size_t>(r * in + k)];
      for (int64_t j = 0; j < out; ++j) y[static_cast<size_t>(r * out + j)] += a * w[static_cast<size_t>(k * out + j)];
    }
  }
  return y;
}

std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<double>& weight, int64_t rows,
                             int64_t dim, double eps) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < dim; ++i) sum += x[static_cast<size_t>(r * dim + i)] * x[static_cast<size_t>(r * dim + i)];
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) {
      y[static_cast<size_t>(r * dim + i)] = x[static_cast<size_t>(r * dim + i)] * scale * weight[static_cast<size_t>(i)];
    }
  }
  return y;
}

// Rotates each head of x (rows = positions 0.., heads, d) in place, half-rotation form.
void rotate(std::vector<double>& x, int64_t rows, int64_t heads, int64_t d, double theta) {
  const int64_t half = d / 2;
  for (int64_t p = 0; p < rows; ++p) {
    for (int64_t h = 0; h < heads; ++h) {
      double* v = &x[static_cast<size_t>((p * heads + h) * d)];
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(p) * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        const double a = v[i], b = v[i + half];
        v[i] = a * std::cos(angle) - b * std::sin(angle);
        v[i + half] = b * std::cos(angle) + a * std::sin(angle);
      }
    }
  }
}

}  // namespace

absl::StatusOr<ReferenceLlama> ReferenceLlama::create(const LlamaConfig& config,
                                                      const std::map<std::string, runtime::Tensor>& tensors) {
  ReferenceLlama ref;
  ref.config_ = config;
  auto get = [&](const std::string& name) -> absl::StatusOr<std::vector<double>> {
    auto it = tensors.find(name);
    if (it == tensors.end()) return absl::NotFoundError(absl::StrCat("reference: no tensor ", name));
    return as_doubles(it->second);
  };
  std::vector<std::string> vectors = {"embed", "final_norm"};
  for (int64_t l = 0; l < config.layers; ++l) {
    vectors.push_back(absl::StrCat("layers.", l, ".attn_norm"));
    vectors.push_back(absl::StrCat("layers.", l, ".mlp_norm"));
  }
  for (const std::string& name : vectors) {
    absl::StatusOr<std::vector<double>> v = get(name);
    if (!v.ok()) return v.status();
    ref.weights_[name] = *std::move(v);
  }
  for (const MatrixSpec& m : matrix_specs(config)) {
    if (config.weights != WeightFormat::kInt4) {
      absl::StatusOr<std::vector<double>> v = get(m.name);
      if (!v.ok()) return v.status();
      ref.weights_[m.name] = *std::move(v);
      continue;
    }
    // W[k, j] = (nibble - 8) * scales[k / group, j], value k in byte k / 2, low nibble first.
    absl::StatusOr<std::vector<double>> q = get(m.name + ".q4");
    absl::StatusOr<std::vector<double>> s = get(m.name + ".scales");
    if (!q.ok()) return q.status();
    if (!s.ok()) return s.status();
    Matrix w(static_cast<size_t>(m.in * m.out));
    for (int64_t k = 0; k < m.in; ++k) {
      for (int64_t j = 0; j < m.out; ++j) {
        const auto byte = static_cast<unsigned>((*q)[static_cast<size_t>((k / 2) * m.out + j)]);
        const unsigned nibble = (k % 2 == 0) ? (byte & 15u) : (byte >> 4);
        w[static_cast<size_t>(k * m.out + j)] =
            (static_cast<double>(nibble) - 8.0) * (*s)[static_cast<size_t>((k / config.group_size) * m.out + j)];
      }
    }
    ref.weights_[m.name] = std::move(w);
  }
  return ref;
}

double ReferenceLlama::relative_error(const float* row, const std::vector<double>& expected) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(row[i]) - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return diff / scale;
}

std::vector<std::vector<double>> ReferenceLlama::logits(const std::vector<int64_t>& tokens) const {
  const LlamaConfig& c = config_;
  const auto n = static_cast<int64_t>(tokens.size());
  const int64_t dim = c.hidden, hq = c.heads, hkv = c.kv_heads, d = c.head_dim, group = hq / hkv;
  std::vector<double> x(static_cast<size_t>(n * dim));
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t i = 0; i < dim; ++i) {
      x[static_cast<size_t>(p * dim + i)] = w("embed")[static_cast<size_t>(tokens[static_cast<size_t>(p)] * dim + i)];
    }
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string pre = absl::StrCat("layers.", l, ".");
    std::vector<double> h = rms_norm(x, w(pre + "attn_norm"), n, dim, c.norm_epsilon);
    std::vector<double> q = matmul(h, w(pre + "wq"), n, dim, hq * d);
    std::vector<double> k = matmul(h, w(pre + "wk"), n, dim, hkv * d);
    std::vector<double> v = matmul(h, w(pre + "wv"), n, dim, hkv * d);
    rotate(q, n, hq, d, c.rope_theta);
    rotate(k, n, hkv, d, c.rope_theta);
    std::vector<double> o(static_cast<size_t>(n * hq * d), 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t head = 0; head < hq; ++head) {
        const int64_t kvh = head / group;
        std::vector<double> score(static_cast<size_t>(p + 1));
        double max = -INFINITY;
        for (int64_t j = 0; j <= p; ++j) {
          double dot = 0;
          for (int64_t i = 0; i < d; ++i) {
            dot += q[static_cast<size_t>((p * hq + head) * d + i)] * k[static_cast<size_t>((j * hkv + kvh) * d + i)];
          }
          score[static_cast<size_t>(j)] = dot * scale;
          max = std::max(max, dot * scale);
        }
        double sum = 0;
        for (double& s : score) sum += (s = std::exp(s - max));
        for (int64_t j = 0; j <= p; ++j) {
          for (int64_t i = 0; i < d; ++i) {
            o[static_cast<size_t>((p * hq + head) * d + i)] +=
                score[static_cast<size_t>(j)] / sum * v[static_cast<size_t>((j * hkv + kvh) * d + i)];
          }
        }
      }
    }
    std::vector<double> attn = matmul(o, w(pre + "wo"), n, hq * d, dim);
    for (size_t i = 0; i < x.size(); ++i) x[i] += attn[i];
    std::vector<double> h2 = rms_norm(x, w(pre + "mlp_norm"), n, dim, c.norm_epsilon);
    std::vector<double> gate = matmul(h2, w(pre + "w_gate"), n, dim, c.intermediate);
    std::vector<double> up = matmul(h2, w(pre + "w_up"), n, dim, c.intermediate);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    std::vector<double> down = matmul(gate, w(pre + "w_down"), n, c.intermediate, dim);
    for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }
  std::vector<double> normed = rms_norm(x, w("final_norm"), n, dim, c.norm_epsilon);
  std::vector<double> all = matmul(normed, w("lm_head"), n, dim, c.vocab);
  std::vector<std::vector<double>> out;
  for (int64_t p = 0; p < n; ++p) {
    out.emplace_back(all.begin() + p * c.vocab, all.begin() + (p + 1) * c.vocab);
  }
  return out;
}

}  // namespace relax::models
