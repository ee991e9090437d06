// What the built-in dispatch rules share (rule_util.h).
#include "transform/dispatch/rule_util.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/ir/ops.h"

namespace relax::transform::rule_util {

const TensorStructInfoNode* known_tensor(const Expr& e, int max_rank) {
  if (!e.defined()) return nullptr;
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape || !t->dtype || t->ndim > max_rank) return nullptr;
  return t;
}

int rank_of(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  return t == nullptr ? kUnknownNDim : t->ndim;
}

bool dims_equal(Analyzer& analyzer, const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!analyzer.prove_equal(a[i], b[i])) return false;
  }
  return true;
}

bool is_one(Analyzer& analyzer, const SymExpr& dim) {
  return analyzer.prove_equal(dim, SymExpr::int_imm(1, dim.dtype()));
}

SymExpr product(const std::vector<SymExpr>& dims, size_t from) {
  SymExpr p = SymExpr::int_imm(1, DataType::int64());
  for (size_t i = from; i < dims.size(); ++i) p = p * dims[i];
  return p;
}

const CallNode* op_call(const Expr& e, const char* name) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return nullptr;
  const auto* op = call->callee.as<OpNode>();
  if (op == nullptr || (name != nullptr && op->name != name)) return nullptr;
  return call;
}

bool has_channel_bias_shape(const Expr& e, int spatial) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape) return false;
  const std::vector<SymExpr>& d = *t->shape;
  const int rank = static_cast<int>(d.size());
  if (rank != spatial + 2 && rank != spatial + 1) return false;
  Analyzer analyzer;
  if (rank == spatial + 2 && !is_one(analyzer, d[0])) return false;
  for (int i = rank - spatial; i < rank; ++i) {
    if (!is_one(analyzer, d[static_cast<size_t>(i)])) return false;
  }
  return true;
}

Pattern bias_activation_chain(const Pattern& core, const std::function<bool(const Expr&)>& is_bias,
                              const std::vector<std::string>& activations) {
  const Pattern bias = wildcard().where(is_bias).capture("bias");
  const Pattern biased = is_op("add")({core, bias}) | is_op("add")({bias, core}) | core;
  if (activations.empty()) return biased;
  Pattern activation = is_op(activations[0]);
  for (size_t i = 1; i < activations.size(); ++i) activation = activation | is_op(activations[i]);
  return activation({biased}).capture("act") | biased;
}

std::string activation_post(const CallNode& act) {
  const std::string& op = act.callee.as<OpNode>()->name;
  if (op != "gelu") return op;
  auto it = act.attrs.find("approximate");
  const std::string* approx = it == act.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (approx == nullptr || *approx == "none") return "gelu_erf";
  if (*approx == "tanh") return "gelu_tanh";
  return "";
}

std::optional<runtime::ConvWindow> conv_window(const CallNode& call, size_t spatial) {
  auto ints = [&](const char* key, std::vector<int64_t> fallback) -> std::optional<std::vector<int64_t>> {
    auto it = call.attrs.find(key);
    if (it == call.attrs.end()) return fallback;
    if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
    if (const auto* v = std::get_if<int64_t>(&it->second)) return std::vector<int64_t>{*v};
    return std::nullopt;
  };
  auto per_dim = [&](std::optional<std::vector<int64_t>> v) -> std::optional<std::vector<int64_t>> {
    if (!v) return std::nullopt;
    if (v->size() == 1) return std::vector<int64_t>(spatial, (*v)[0]);
    if (v->size() == spatial) return v;
    return std::nullopt;
  };
  std::optional<std::vector<int64_t>> strides = per_dim(ints("strides", {1}));
  std::optional<std::vector<int64_t>> dilation = per_dim(ints("dilation", {1}));
  std::optional<std::vector<int64_t>> groups = ints("groups", {1});
  std::optional<std::vector<int64_t>> pad = ints("padding", {0});
  if (!strides || !dilation || !groups || groups->size() != 1 || !pad) return std::nullopt;
  // Every dim's before, then every dim's after: [p] and per-dim [p0, p1] pad both sides;
  // conv1d's [before, after] is already that order.
  std::vector<int64_t> padding;
  if (pad->size() == 1 || (pad->size() == spatial && spatial != 1)) {
    std::vector<int64_t> each = pad->size() == 1 ? std::vector<int64_t>(spatial, (*pad)[0]) : *pad;
    padding = each;
    padding.insert(padding.end(), each.begin(), each.end());
  } else if (pad->size() == 2 * spatial) {
    padding = *pad;
  } else {
    return std::nullopt;
  }
  runtime::ConvWindow window;
  window.strides = *strides;
  window.padding_before.assign(padding.begin(), padding.begin() + static_cast<ptrdiff_t>(spatial));
  window.padding_after.assign(padding.begin() + static_cast<ptrdiff_t>(spatial), padding.end());
  window.dilation = *dilation;
  window.groups = (*groups)[0];
  return window;
}

Expr conv_bias_1d(const DispatchSite& site, const Expr& bias, const TensorStructInfoNode& out) {
  const SymExpr& channels = (*out.shape)[1];
  const auto* t = bias.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape || !t->dtype || *t->dtype != *out.dtype) return Expr();
  const int channel_dim = t->ndim == out.ndim ? 1 : 0;
  if (!site.analyzer().prove_equal((*t->shape)[static_cast<size_t>(channel_dim)], channels)) return Expr();
  const Expr value = site.bound_value(bias);
  if (const CallNode* reshape = op_call(value, "reshape")) {
    const auto* src = reshape->args[0].struct_info().as<TensorStructInfoNode>();
    if (src != nullptr && src->shape && src->dtype && src->ndim == 1 && *src->dtype == *out.dtype &&
        site.analyzer().prove_equal((*src->shape)[0], channels)) {
      return reshape->args[0];
    }
    return Expr();
  }
  if (const auto* constant = value.as<ConstantNode>()) {
    const int64_t count = constant->data.numel();
    absl::StatusOr<runtime::Tensor> flat = constant->data.view(0, {count}, *out.dtype);
    if (!flat.ok()) return Expr();
    return make_constant(*std::move(flat));
  }
  return Expr();
}

Expr conv_arg_bias(const DispatchSite& site, const Expr& bias, const TensorStructInfoNode& out) {
  const auto* t = bias.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape || t->ndim != 1 || !t->dtype || *t->dtype != *out.dtype) return Expr();
  if (!site.analyzer().prove_equal((*t->shape)[0], (*out.shape)[1])) return Expr();
  return bias;
}

Pattern conv_core(const std::string& kind, const Pattern& a, const Pattern& b) {
  return (is_op(kind)({a, b}) | is_op(kind)({a, b, wildcard().capture("conv_bias")})).capture("core");
}

bool is_dequantised(const DispatchSite& site, const Expr& weight) {
  const auto* call = site.bound_value(weight).as<CallNode>();
  if (call == nullptr) return false;
  const auto* wide = weight.struct_info().as<TensorStructInfoNode>();
  const int weight_bits = wide != nullptr && wide->dtype ? wide->dtype->bits : 0;
  auto quantised = [&](const Expr& e) {
    const auto* t = e.struct_info().as<TensorStructInfoNode>();
    if (t == nullptr || !t->dtype) return false;
    return (t->dtype->is_int() && t->dtype->bits <= 8) || (t->dtype->is_float() && t->dtype->bits < weight_bits);
  };
  for (const Expr& arg : call->args) {
    if (quantised(arg)) return true;
    if (const auto* tuple = arg.as<TupleNode>()) {
      for (const Expr& field : tuple->fields) {
        if (quantised(field)) return true;
      }
    }
  }
  return false;
}

}  // namespace relax::transform::rule_util
