// matmul and linear as one oneDNN matmul primitive (onednn_plan.h).
//
// matmul(a[..., M, K], b[..., K, N]) broadcasts the batch dims as numpy does; oneDNN's
// matmul broadcasts dims of 1 itself once both operands have the output's rank (leading 1s
// added). When b has no batch (or only 1s), a's batch folds into M: one 2-D product over the
// compact rows, which oneDNN runs faster than a batch of small ones.
// linear(x[..., K], w[N, K]) is x . w^T: x's leading dims fold into M and w is read as a
// (K, N) matrix with strides (1, K), without a copy (a `:packed` w is reordered once).
#ifdef RELAX_WITH_ONEDNN

#include <algorithm>
#include <functional>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "onednn_common.h"
#include "onednn_plan.h"

namespace relax::runtime::onednn {
namespace {

int64_t product(std::span<const int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

struct Dims {
  std::vector<int64_t> src, weights, dst, expected_out;
  dnnl::memory::desc weights_md;  // the user's layout
};

absl::StatusOr<Dims> linear_dims(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  const std::vector<int64_t>& x = *tensors[0].shape;
  const std::vector<int64_t>& w = *tensors[1].shape;
  if (x.empty()) return arg_error(spec, 0, "expected a tensor of rank >= 1, got a scalar");
  if (w.size() != 2) {
    return arg_error(spec, 1, absl::StrCat("expected a (N, K) tensor, got shape ", shape_text(w)));
  }
  const int64_t k = x.back();
  if (w[1] != k) {
    return arg_error(
        spec, 1,
        absl::StrCat("expected (N, ", k, ") (K is the last dim of ", arg_label(spec, 0), " ",
                     shape_text(x), "), got shape ", shape_text(w)));
  }
  const int64_t n = w[0];
  const int64_t m = product(std::span(x).first(x.size() - 1));
  Dims d;
  d.src = {m, k};
  d.weights = {k, n};
  d.dst = {m, n};
  d.expected_out.assign(x.begin(), x.end() - 1);
  d.expected_out.push_back(n);
  d.weights_md = dnnl::memory::desc({k, n}, *dnnl_type(tensors[1].dtype), dnnl::memory::dims{1, k});
  return d;
}

absl::StatusOr<Dims> matmul_dims(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  const std::vector<int64_t>& a = *tensors[0].shape;
  const std::vector<int64_t>& b = *tensors[1].shape;
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<int64_t>& s = *tensors[i].shape;
    if (s.size() < 2) {
      return arg_error(spec, i,
                       absl::StrCat("expected a tensor of rank >= 2, got shape ", shape_text(s)));
    }
  }
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k) {
    return arg_error(
        spec, 1,
        absl::StrCat("expected (..., ", k, ", N) (K is the last dim of ", arg_label(spec, 0), " ",
                     shape_text(a), "), got shape ", shape_text(b)));
  }
  // Batch dims, aligned at the right and padded with 1s to the longer batch.
  const size_t rank = std::max(a.size(), b.size()) - 2;
  std::vector<int64_t> a_batch(rank, 1), b_batch(rank, 1), batch(rank, 1);
  std::copy(a.begin(), a.end() - 2, a_batch.end() - static_cast<ptrdiff_t>(a.size() - 2));
  std::copy(b.begin(), b.end() - 2, b_batch.end() - static_cast<ptrdiff_t>(b.size() - 2));
  for (size_t i = 0; i < rank; ++i) {
    if (a_batch[i] != b_batch[i] && a_batch[i] != 1 && b_batch[i] != 1) {
      return arg_error(
          spec, 1,
          absl::StrCat("batch dims of shape ", shape_text(b), " do not broadcast with those of ",
                       arg_label(spec, 0), " ", shape_text(a)));
    }
    batch[i] = std::max(a_batch[i], b_batch[i]);
  }
  Dims d;
  d.expected_out = batch;
  d.expected_out.push_back(m);
  d.expected_out.push_back(n);
  if (product(b_batch) == 1) {
    const int64_t rows = product(a_batch) * m;
    d.src = {rows, k};
    d.weights = {k, n};
    d.dst = {rows, n};
  } else {
    d.src = a_batch;
    d.src.insert(d.src.end(), {m, k});
    d.weights = b_batch;
    d.weights.insert(d.weights.end(), {k, n});
    d.dst = batch;
    d.dst.insert(d.dst.end(), {m, n});
  }
  d.weights_md = plain_md(d.weights, tensors[1].dtype);
  return d;
}

}  // namespace

absl::StatusOr<Plan> plan_matmul(const OpSpec& spec, std::span<const TensorInfo> tensors) {
  if (absl::Status s = check_dtypes(spec, tensors); !s.ok()) return s;
  absl::StatusOr<Dims> dims =
      spec.kind == OpKind::kLinear ? linear_dims(spec, tensors) : matmul_dims(spec, tensors);
  if (!dims.ok()) return dims.status();
  std::vector<int64_t> bias_dims(dims->dst.size(), 1);
  bias_dims.back() = dims->weights.back();
  Plan plan;
  absl::StatusOr<OperandDescs> d =
      add_operands(spec, tensors,
                   OperandDims{dims->expected_out, dims->src, dims->weights, dims->weights_md, dims->weights.back(),
                               bias_dims, dims->dst},
                   plan);
  if (!d.ok()) return d.status();
  if (plan.empty_output) return plan;
  const dnnl::primitive_attr attr = make_attr(spec, d->residuals);
  const dnnl::matmul::desc desc = spec.bias ? dnnl::matmul::desc(d->src, d->weights, d->bias, d->dst)
                                            : dnnl::matmul::desc(d->src, d->weights, d->dst);
  plan.pd = dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
  return plan;
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
