// Sliding windows shared by conv.cc and pool.cc (see window.h).
#include "ir/op/window.h"

#include "ir/op/op_util.h"

namespace relax::detail {
namespace {

std::string list_text(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> per_spatial_dim(const std::string& op, const std::string& key,
                                                     const std::vector<int64_t>& values, size_t n,
                                                     int64_t min_value) {
  if (values.size() != 1 && values.size() != n) {
    return op_error(op, "attribute `" + key + "` must have 1 or " + std::to_string(n) +
                            " values, got " + list_text(values));
  }
  for (int64_t v : values) {
    if (v < min_value) {
      return op_error(op, "attribute `" + key + "` must be >= " + std::to_string(min_value) +
                              ", got " + list_text(values));
    }
  }
  return values.size() == n ? values : std::vector<int64_t>(n, values[0]);
}

absl::StatusOr<WindowPadding> window_padding(const std::string& op,
                                             const std::vector<int64_t>& padding, size_t n,
                                             bool allow_before_after) {
  for (int64_t v : padding) {
    if (v < 0) return op_error(op, "attribute `padding` must be >= 0, got " + list_text(padding));
  }
  WindowPadding out;
  if (padding.size() == 1 || padding.size() == n) {
    out.before = padding.size() == n ? padding : std::vector<int64_t>(n, padding[0]);
    out.after = out.before;
    return out;
  }
  if (allow_before_after && n == 1 && padding.size() == 2) {
    out.before = {padding[0]};
    out.after = {padding[1]};
    return out;
  }
  std::string counts = "1";
  if (n != 1) counts += " or " + std::to_string(n);
  if (allow_before_after && n == 1) counts += " or 2 ([before, after])";
  return op_error(op, "attribute `padding` must have " + counts + " values, got " +
                          list_text(padding));
}

SymExpr window_out_dim(const SymExpr& in, const SymExpr& kernel, int64_t stride, int64_t dilation,
                       int64_t pad_before, int64_t pad_after, Analyzer& analyzer) {
  SymExpr span = in + SymExpr(pad_before + pad_after) - SymExpr(dilation) * (kernel - 1) - 1;
  return analyzer.simplify(floordiv(span, SymExpr(stride)) + 1);
}

absl::Status check_window_out_dim(const std::string& op, size_t dim, const SymExpr& out,
                                  const SymExpr& in, const SymExpr& kernel, Analyzer& analyzer) {
  if (!analyzer.prove(out < 1)) return absl::OkStatus();
  return op_error(op, "output dim " + std::to_string(dim) + " would be " + quoted(out) +
                          " (< 1): data dim " + std::to_string(dim) + " is " + quoted(in) +
                          ", window " + quoted(kernel));
}

SymExpr window_load(const Buffer& buffer, const std::vector<SymExpr>& index,
                    const std::vector<bool>& checked, const SymExpr& pad, const SymExpr& extra) {
  SymExpr cond = extra;
  std::vector<SymExpr> clamped = index;
  for (size_t d = 0; d < index.size(); ++d) {
    if (!checked[d]) continue;
    const SymExpr& extent = buffer.shape()[d];
    SymExpr inside = index[d] >= 0 && index[d] < extent;
    cond = cond.defined() ? (cond && inside) : inside;
    clamped[d] = min(max(index[d], SymExpr(0)), extent - 1);
  }
  SymExpr value = buffer_load(buffer, clamped);
  return cond.defined() ? select(cond, value, pad) : value;
}

SymExpr zero_of(DataType dtype) {
  return dtype.is_float() ? SymExpr::float_imm(0, dtype) : SymExpr::int_imm(0, dtype);
}

}  // namespace relax::detail
