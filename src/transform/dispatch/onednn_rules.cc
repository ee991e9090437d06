// The built-in dispatch rules: matmul, linear, conv1d/conv2d and conv2d_transpose (oneDNN's
// deconvolution, without output padding) with their fused post-ops, to oneDNN.
//
// Each rule is one pattern: the core call, then optionally a bias add, one
// activation and a residual add, each a later binding of the same dataflow
// block (the rewriter looks through the DataflowVars in between):
//
//   core      matmul(a, b) | linear(x, w) | linear(x, w, bias)
//             | conv1d/conv2d/conv2d_transpose(data, weight[, bias])
//   biased    add(core, bias) | add(bias, core) | core
//   activated (relu | gelu | silu | sigmoid | tanh)(biased) | biased
//   root      add(activated, residual) | add(residual, activated) | activated
//
// The alternatives are told apart in the pattern by the operand's shape alone,
// so that backtracking picks the right reading: a matmul bias is a rank-1
// tensor ([N], added along the last dim); a conv bias has the channel shape
// ([1, O, 1, 1] or [O, 1, 1] for conv2d, as numpy broadcasting needs to add it
// along the channel dim) and is passed as the 1-D [O] tensor it was reshaped
// from (or a Constant viewed as 1-D); any other tensor of rank >= 2 is a
// residual. The builder then checks what the pattern cannot (dims provably
// equal, dtypes) and declines when anything does not fit, leaving smaller
// matches at earlier bindings to be tried.
//
// The call (the contract with the runtime, src/runtime/onednn/):
//   onednn.<kind>[{conv attrs}]{+post}[:packed](a, b, [bias], [residual]) -> out
// with, when every dim is bounded, a declared workspace: oneDNN's scratchpad bound over the
// sizes the bounds allow (workspace_bound below), which lift-workspace puts into the plan;
// with posts in the order bias, activation (relu, gelu_erf, gelu_tanh, silu,
// sigmoid, tanh), add; `:packed` when the second operand is a weight
// (DispatchSite::is_weight). Conv attributes are written in full, one value per
// spatial dim, padding as every dim's before then every dim's after
// (conv2d: top,left,bottom,right).
//
// Decided per call: dtype f32 (or bf16 inputs with a bf16 or f32 result);
// known shapes; matmul operands of rank >= 2 (a rank-1 operand stays), linear
// input of rank >= 2 and a rank-2 weight; at most 12 dims (oneDNN's limit);
// not when the multiply-adds are provably below min-work (DispatchSite::is_small); not a
// matmul whose weight is dequantised from int8/int4 or widened from 16-bit floats in the graph
// (is_dequantised); not a float32 one of provably at most stream-rows rows against a rank-2
// weight (DispatchSite::streams_weight: the generated row kernel streams it faster). With
// bf16-products, a float32 product whose weight is a bfloat16 tensor widened in the graph
// (astype) and whose rows are not that few becomes onednn.matmul(astype(a, bf16), w) -> f32:
// the CPU's bf16 dot products (AVX512-BF16, AMX tiles) instead of float32 FMAs.
#include "transform/dispatch/onednn_rules.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/ir/ops.h"
#include "relax/ir/struct_info.h"
#include "relax/runtime/onednn.h"
#include "relax/runtime/onednn_call.h"
#include "transform/dispatch/rule_util.h"

namespace relax::transform {
namespace {

using namespace rule_util;  // NOLINT(google-build-using-namespace): the rules' own helpers

constexpr int kMaxRank = 12;  // DNNL_MAX_NDIMS

const TensorStructInfoNode* known_tensor(const Expr& e) { return rule_util::known_tensor(e, kMaxRank); }

// f32 everywhere, or bf16 inputs with a bf16 or f32 result.
bool dtypes_supported(DataType a, DataType b, DataType out) {
  if (a != b) return false;
  if (a == DataType::float32()) return out == DataType::float32();
  if (a == DataType::bfloat16()) return out == DataType::bfloat16() || out == DataType::float32();
  return false;
}

// ---------------------------------------------------------------------------
// Patterns.

Pattern post_op_chain(const Pattern& core, const std::function<bool(const Expr&)>& is_bias,
                      const std::function<bool(const Expr&)>& is_residual) {
  const Pattern activated =
      bias_activation_chain(core, is_bias, {"relu", "gelu", "silu", "sigmoid", "tanh"});
  const Pattern residual = wildcard().where(is_residual).capture("residual");
  return is_op("add")({activated, residual}) | is_op("add")({residual, activated}) | activated;
}

// ---------------------------------------------------------------------------
// Builders.

using runtime::onednn::OpKind;
using runtime::onednn::OpSpec;
using runtime::onednn::PostKind;

// The call being built (its kind, window and posts: the name's typed form) and the posts'
// extra arguments (bias, then residual).
struct Posts {
  OpSpec spec;
  std::vector<Expr> args;
};

// The activation and residual posts of a match whose core (and bias, when any) gave
// `out`; false to decline.
bool activation_and_residual(const DispatchSite& site, const TensorStructInfoNode& out, Posts& posts) {
  const Match& m = site.match();
  if (m.has("act")) {
    const CallNode* act = op_call(site.bound_value(m["act"]));
    if (act == nullptr) return false;
    const std::optional<PostKind> post = runtime::onednn::post_from_name(activation_post(*act));
    if (!post) return false;
    posts.spec.then(*post);
  }
  if (m.has("residual")) {
    const TensorStructInfoNode* r = known_tensor(m["residual"]);
    if (r == nullptr || *r->dtype != *out.dtype || !dims_equal(site.analyzer(), *r->shape, *out.shape)) return false;
    posts.spec.then(PostKind::kAdd);
    posts.args.push_back(m["residual"]);
  }
  return true;
}

std::string call_name(OpKind kind, Posts& posts, bool packed) {
  posts.spec.kind = kind;
  posts.spec.packed = packed;
  return runtime::onednn::to_name(posts.spec);
}

// oneDNN's scratchpad for the call, when this runtime has oneDNN and every dim of the
// operands and the result has a constant upper bound: the largest that the runtime reports
// at the bounds and, for each variable in turn, at its powers of two below the bound (the
// others at theirs), rounded up to 64 bytes. Otherwise none is declared, and a call that
// needs scratch allocates it itself (runtime/onednn.h).
std::optional<int64_t> workspace_bound(const DispatchSite& site, const std::string& name,
                                       const std::vector<StructInfo>& operands, const Expr& out) {
  if (!site.declare_workspaces() || !runtime::onednn_available()) return std::nullopt;
  std::vector<const TensorStructInfoNode*> tensors;
  for (const StructInfo& s : operands) {
    const auto* t = s.as<TensorStructInfoNode>();
    tensors.push_back(t != nullptr && t->shape && t->dtype ? t : nullptr);
  }
  tensors.push_back(known_tensor(out));
  SymVarMap<int64_t> bounds;
  std::vector<SymVar> vars;
  for (const TensorStructInfoNode* t : tensors) {
    if (t == nullptr) return std::nullopt;
    for (const SymExpr& d : *t->shape) {
      bool bounded = true;
      for_each_var(d, [&](const SymVar& v) {
        if (bounds.contains(v)) return;
        absl::StatusOr<int64_t> upper = site.analyzer().upper_bound(v);
        if (!upper.ok() || *upper <= 0 || *upper > (int64_t{1} << 40)) {
          bounded = false;
          return;
        }
        bounds[v] = *upper;
        vars.push_back(v);
      });
      if (!bounded) return std::nullopt;
    }
  }
  std::vector<DataType> dtypes;
  for (const TensorStructInfoNode* t : tensors) dtypes.push_back(*t->dtype);
  auto query = [&](const SymVarMap<int64_t>& values) -> std::optional<int64_t> {
    std::vector<std::vector<int64_t>> shapes;
    for (const TensorStructInfoNode* t : tensors) {
      std::vector<int64_t>& dims = shapes.emplace_back();
      for (const SymExpr& d : *t->shape) {
        absl::StatusOr<int64_t> v = evaluate(d, values);
        if (!v.ok() || *v < 0) return std::nullopt;
        dims.push_back(*v);
      }
    }
    absl::StatusOr<int64_t> bytes = runtime::onednn_workspace_bytes(name, shapes, dtypes);
    return bytes.ok() ? std::optional<int64_t>(*bytes) : std::nullopt;
  };
  std::optional<int64_t> most = query(bounds);
  if (!most) return std::nullopt;
  for (const SymVar& v : vars) {
    SymVarMap<int64_t> values = bounds;
    for (int64_t size = 1; size < bounds.at(v); size *= 2) {
      values[v] = size;
      std::optional<int64_t> bytes = query(values);
      if (!bytes) return std::nullopt;
      most = std::max(*most, *bytes);
    }
  }
  if (*most == 0) return std::nullopt;
  return (*most + 63) / 64 * 64;
}

// The call `name`(a, b, posts...). With `rows_dtype`, a is first converted to it (an astype
// the rewriter binds before the call).
Expr library_call(const DispatchSite& site, const std::string& name, const Expr& a, const Expr& b,
                  const Posts& posts, std::optional<DataType> rows_dtype = std::nullopt) {
  std::vector<Expr> args = {rows_dtype ? op::astype(a, *rows_dtype) : a, b};
  args.insert(args.end(), posts.args.begin(), posts.args.end());
  // The operands' annotations, the converted rows' made here (the astype is not deduced yet).
  std::vector<StructInfo> operands;
  for (const Expr& arg : args) operands.push_back(arg.struct_info());
  if (rows_dtype) {
    const TensorStructInfoNode& t = *known_tensor(a);
    operands[0] = tensor_sinfo(std::vector<SymExpr>(t.shape->begin(), t.shape->end()), *rows_dtype);
  }
  const StructInfo& out = site.matched().struct_info();
  if (std::optional<int64_t> bytes = workspace_bound(site, name, operands, site.matched())) {
    return op::call_dps_library(name, std::move(args), out, SymExpr::int_imm(*bytes, DataType::int64()));
  }
  return op::call_dps_library(name, std::move(args), out);
}

// The bfloat16 tensor that `weight` widens to float32 in the graph (astype), or undefined.
Expr widened_bf16(const DispatchSite& site, const Expr& weight) {
  const CallNode* call = op_call(site.bound_value(weight), "astype");
  if (call == nullptr || call->args.size() != 1) return Expr();
  const TensorStructInfoNode* t = known_tensor(call->args[0]);
  return t != nullptr && *t->dtype == DataType::bfloat16() ? call->args[0] : Expr();
}

// matmul(a[..., M, K], b[..., K, N]) and linear(x[..., K], w[N, K][, bias[N]]).
absl::StatusOr<std::optional<Expr>> build_matmul(const DispatchSite& site, const std::string& kind) {
  const Match& m = site.match();
  const CallNode* core = op_call(site.bound_value(m["core"]), kind.c_str());
  const TensorStructInfoNode* a = known_tensor(m["a"]);
  const TensorStructInfoNode* b = known_tensor(m["b"]);
  const TensorStructInfoNode* out = known_tensor(m["core"]);
  if (core == nullptr || a == nullptr || b == nullptr || out == nullptr) return std::nullopt;
  if (!dtypes_supported(*a->dtype, *b->dtype, *out->dtype)) return std::nullopt;
  if (a->ndim < 2 || (kind == "matmul" ? b->ndim < 2 : b->ndim != 2)) return std::nullopt;
  // Multiply-adds: every output element takes K of them.
  if (site.is_small(product(*out->shape) * a->shape->back())) return std::nullopt;
  // A float32 product of a few rows (decoding) streams its weight once: generated code.
  const bool few_rows = *out->dtype == DataType::float32() && b->ndim == 2 &&
                        site.streams_weight(product(std::vector<SymExpr>(out->shape->begin(), out->shape->end() - 1)));
  // A bfloat16 weight widened in the graph, against float32 rows that may be many (prefill):
  // bf16 x bf16 products summed in float32 (bf16-products), the rows rounded to bf16.
  Expr weight = m["b"];
  std::optional<DataType> rows_dtype;
  if (Expr bf16 = widened_bf16(site, m["b"]); bf16.defined() && site.bf16_products() && !few_rows) {
    weight = bf16;
    rows_dtype = DataType::bfloat16();
  } else if (is_dequantised(site, m["b"]) || few_rows) {
    return std::nullopt;
  }

  Posts posts;
  const SymExpr& n = out->shape->back();
  auto add_bias = [&](const Expr& bias) {
    const TensorStructInfoNode* t = known_tensor(bias);
    if (t == nullptr || t->ndim != 1 || *t->dtype != *out->dtype) return false;
    if (!site.analyzer().prove_equal((*t->shape)[0], n)) return false;
    posts.spec.then(PostKind::kBias);
    posts.args.push_back(bias);
    return true;
  };
  if (m.has("linear_bias") && !add_bias(m["linear_bias"])) return std::nullopt;
  if (m.has("bias") && (m.has("linear_bias") || !add_bias(m["bias"]))) return std::nullopt;
  if (!activation_and_residual(site, *out, posts)) return std::nullopt;
  const OpKind op_kind = kind == "matmul" ? OpKind::kMatmul : OpKind::kLinear;
  return library_call(site, call_name(op_kind, posts, site.is_weight(weight)), m["a"], weight, posts, rows_dtype);
}

// conv1d / conv2d(data NC..., weight OI...) [+ channel bias] [+ activation] [+ residual].
absl::StatusOr<std::optional<Expr>> build_conv(const DispatchSite& site) {
  const Match& m = site.match();
  const CallNode* core = op_call(site.bound_value(m["core"]));
  const TensorStructInfoNode* data = known_tensor(m["a"]);
  const TensorStructInfoNode* weight = known_tensor(m["b"]);
  const TensorStructInfoNode* out = known_tensor(m["core"]);
  if (core == nullptr || data == nullptr || weight == nullptr || out == nullptr) return std::nullopt;
  const std::string& kind = core->callee.as<OpNode>()->name;
  const size_t spatial = kind == "conv1d" ? 1 : 2;
  const bool transpose = kind == "conv2d_transpose";
  if (transpose) {
    // oneDNN's deconvolution has no output padding (the extra rows past the last input's reach).
    auto it = core->attrs.find("output_padding");
    if (it != core->attrs.end()) {
      const auto* pads = std::get_if<std::vector<int64_t>>(&it->second);
      if (pads == nullptr || std::any_of(pads->begin(), pads->end(), [](int64_t p) { return p != 0; })) return std::nullopt;
    }
  }
  if (data->ndim != static_cast<int>(spatial) + 2 || weight->ndim != data->ndim || out->ndim != data->ndim) {
    return std::nullopt;
  }
  if (!dtypes_supported(*data->dtype, *weight->dtype, *out->dtype)) return std::nullopt;
  // Multiply-adds: every output element takes (C / groups) * kernel taps of them.
  if (site.is_small(product(*out->shape) * product(*weight->shape, 1))) return std::nullopt;
  std::optional<runtime::ConvWindow> window = conv_window(*core, spatial);
  if (!window) return std::nullopt;

  Posts posts;
  posts.spec.conv = *std::move(window);
  if (m.has("conv_bias")) {
    // The call's own bias is oneDNN's bias argument; a second one added after it stays an add.
    if (m.has("bias")) return std::nullopt;
    Expr bias = conv_arg_bias(site, m["conv_bias"], *out);
    if (!bias.defined()) return std::nullopt;
    posts.spec.then(PostKind::kBias);
    posts.args.push_back(bias);
  } else if (m.has("bias")) {
    Expr bias = conv_bias_1d(site, m["bias"], *out);
    if (!bias.defined()) return std::nullopt;
    posts.spec.then(PostKind::kBias);
    posts.args.push_back(bias);
  }
  if (!activation_and_residual(site, *out, posts)) return std::nullopt;
  const OpKind op_kind = transpose ? OpKind::kConv2dTranspose : spatial == 1 ? OpKind::kConv1d : OpKind::kConv2d;
  return library_call(site, call_name(op_kind, posts, site.is_weight(m["b"])), m["a"], m["b"], posts);
}

}  // namespace

std::vector<DispatchRule> make_onednn_rules() {
  const Pattern a = wildcard().capture("a");
  const Pattern b = wildcard().capture("b");
  auto rank1 = [](const Expr& e) { return rank_of(e) == 1; };
  auto rank2_or_more = [](const Expr& e) { return rank_of(e) >= 2; };

  std::vector<DispatchRule> rules;
  const Pattern linear =
      (is_op("linear")({a, b}) | is_op("linear")({a, b, wildcard().capture("linear_bias")})).capture("core");
  rules.push_back({"onednn.linear", "onednn", post_op_chain(linear, rank1, rank2_or_more),
                   [](const DispatchSite& site) { return build_matmul(site, "linear"); }});
  const Pattern matmul = is_op("matmul")({a, b}).capture("core");
  rules.push_back({"onednn.matmul", "onednn", post_op_chain(matmul, rank1, rank2_or_more),
                   [](const DispatchSite& site) { return build_matmul(site, "matmul"); }});
  for (const std::pair<int, std::string>& entry :
       {std::pair<int, std::string>{1, "conv1d"}, {2, "conv2d"}, {2, "conv2d_transpose"}}) {
    const int spatial = entry.first;  // named (not a structured binding) for the lambdas to capture
    const std::string& kind = entry.second;
    const Pattern conv = conv_core(kind, a, b);
    auto channel_bias = [spatial](const Expr& e) { return has_channel_bias_shape(e, spatial); };
    auto residual = [spatial](const Expr& e) {
      return rank_of(e) == spatial + 2 && !has_channel_bias_shape(e, spatial);
    };
    rules.push_back({"onednn." + kind, "onednn", post_op_chain(conv, channel_bias, residual), build_conv});
  }
  return rules;
}

}  // namespace relax::transform
