// The built-in dispatch rules of the cuda target: matmul and linear with a fused bias and
// relu / tanh-gelu to cuBLASLt, plain batched matmul of equal batch dims to cuBLAS's strided
// batched GEMM, conv2d with a channel bias and relu to cuDNN.
//
// Each rule is one pattern, the core call then optionally a bias add and one activation,
// each a later binding of the same dataflow block:
//
//   core      matmul(a, b) | linear(x, w) | linear(x, w, bias) | conv2d(data, weight[, bias])
//   biased    add(core, bias) | add(bias, core) | core
//   root      (relu | gelu)(biased) | biased              conv2d: relu only
//
// A matmul bias is a rank-1 tensor [N] (added along the last dim); a conv bias has the
// channel shape ([1, O, 1, 1] or [O, 1, 1]) and is passed as the 1-D [O] tensor it was
// reshaped from (or a Constant viewed as 1-D), as for oneDNN (rule_util.h).
//
// The calls (the contract with the runtime, relax/runtime/cuda_library.h):
//   cublas.matmul[+bias][+relu|+gelu_tanh](a, b, [bias])   cuBLASLt; epilogues BIAS, RELU(_BIAS),
//   cublas.linear[+bias][+relu|+gelu_tanh](x, w, [bias])   GELU(_BIAS)
//   cublas.batch_matmul(a, b)                              cublasGemmStridedBatchedEx
//   cudnn.conv2d{strides=..;padding=t,l,b,r;dilation=..;groups=..}[+bias][+relu](x, w, [bias])
// each with a declared workspace of library_workspace_bytes(name) (option `workspaces`).
// cuBLASLt's GELU epilogue is the tanh approximation: gelu(approximate="tanh") fuses, the
// erf gelu stays a generated kernel after the call.
//
// Decided per call:
//   - dtypes: the operands and the result all float32, all float16 or all bfloat16 (conv2d:
//     float32 or float16); accumulation is float32. Anything else stays (int8, int4, mixed).
//   - matmul batch dims (numpy broadcasting over dims[:-2]): b of rank 2, or b's batch dims
//     all 1 -> one 2-D GEMM over a's rows (a is compact, so its batches stack into rows);
//     a's batch dims all 1 (or a of rank 2) and b's equal to the result's -> cuBLASLt
//     batched with a batch stride of 0 for a; a's and b's batch dims equal -> batched
//     (cublas.batch_matmul without posts, cuBLASLt with them). Other broadcasts (a [2, 1, M, K]
//     with b [1, 3, K, N]) need two batch strides per operand and stay.
//   - size: a call whose multiply-adds are provably below max(min-work, kCudaMinWork) stays
//     generated code. kCudaMinWork = 65,536 (a 32 x 64 x 32 product): such a product is well
//     under a microsecond of an H100's time either way, while the library call adds its
//     launch and, for cuBLASLt, a descriptor lookup, and the generated kernel fuses with its
//     neighbours. (Set from the launch costs, not measured on a GPU here: no device.)
//   - weights dequantised from int8 / int4 or widened from a narrower float in the graph stay
//     generated code (rule_util.h is_dequantised): the dequantisation fuses into the
//     product's kernel, and cuBLAS would need the wide weight written out and read back.
//   - rank-1 operands, a linear weight of rank != 2, conv attributes that are not lists of
//     integers: stay. (conv2d's padding is one value per dim or for both, the same on both
//     sides of a dim, as cuDNN's legacy descriptor takes it; the runtime refuses a name
//     padded otherwise.)
#include "transform/dispatch/cuda_rules.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/runtime/cuda_library_call.h"
#include "relax/ir/ops.h"
#include "relax/ir/struct_info.h"
#include "relax/runtime/cuda_library.h"
#include "transform/dispatch/rule_util.h"

namespace relax::transform {
namespace {

using namespace rule_util;  // NOLINT(google-build-using-namespace): the rules' own helpers

constexpr int kCudaMaxRank = 8;            // the ranks the runtime functions take
constexpr int64_t kCudaMinWork = 1 << 16;  // multiply-adds; see the file comment

bool cuda_dtypes_supported(DataType a, DataType b, DataType out, bool bf16) {
  if (a != b || a != out) return false;
  return a == DataType::float32() || a == DataType::float16() || (bf16 && a == DataType::bfloat16());
}

// What the call gets besides its two operands, and its name's posts.
using runtime::cuda::Activation;
using runtime::cuda::LibraryKind;
using runtime::cuda::LibrarySpec;

// The call being built (the name's typed form) and the bias argument, when any.
struct CudaPosts {
  LibrarySpec spec;
  std::vector<Expr> args;
};

Expr cuda_library_call(const DispatchSite& site, const std::string& name, std::vector<Expr> args) {
  const StructInfo& out = site.matched().struct_info();
  if (site.declare_workspaces()) {
    absl::StatusOr<int64_t> bytes = runtime::cuda::library_workspace_bytes(name);
    if (bytes.ok() && *bytes > 0) {
      return op::call_dps_library(name, std::move(args), out, SymExpr::int_imm(*bytes, DataType::int64()));
    }
  }
  return op::call_dps_library(name, std::move(args), out);
}

// The activation post of the match, when it has one the library fuses ("" when there is
// none); nullopt when it has one the library does not fuse.
std::optional<Activation> fused_activation(const DispatchSite& site, bool gelu_tanh) {
  if (!site.match().has("act")) return Activation::kNone;
  const CallNode* act = op_call(site.bound_value(site.match()["act"]));
  if (act == nullptr) return std::nullopt;
  const std::string post = activation_post(*act);
  if (post == "relu") return Activation::kRelu;
  if (gelu_tanh && post == "gelu_tanh") return Activation::kGeluTanh;
  return std::nullopt;
}

// How a matmul's batch dims map onto one GEMM call.
enum class Batching { kFlat, kBroadcastA, kEqual, kUnsupported };

Batching matmul_batching(Analyzer& analyzer, const TensorStructInfoNode& a, const TensorStructInfoNode& b,
                         const TensorStructInfoNode& out) {
  auto batch = [](const TensorStructInfoNode& t) {
    return std::vector<SymExpr>(t.shape->begin(), t.shape->end() - 2);
  };
  auto all_ones = [&](const std::vector<SymExpr>& dims) {
    for (const SymExpr& d : dims) {
      if (!is_one(analyzer, d)) return false;
    }
    return true;
  };
  const std::vector<SymExpr> a_batch = batch(a), b_batch = batch(b), out_batch = batch(out);
  if (all_ones(b_batch)) return Batching::kFlat;
  if (all_ones(a_batch) && dims_equal(analyzer, b_batch, out_batch)) return Batching::kBroadcastA;
  if (dims_equal(analyzer, a_batch, b_batch) && dims_equal(analyzer, a_batch, out_batch)) return Batching::kEqual;
  return Batching::kUnsupported;
}

// matmul(a[..., M, K], b[..., K, N]) and linear(x[..., K], w[N, K][, bias[N]]), with a bias
// and an activation.
absl::StatusOr<std::optional<Expr>> build_cublas(const DispatchSite& site, const std::string& kind) {
  const Match& m = site.match();
  const CallNode* core = op_call(site.bound_value(m["core"]), kind.c_str());
  const TensorStructInfoNode* a = known_tensor(m["a"], kCudaMaxRank);
  const TensorStructInfoNode* b = known_tensor(m["b"], kCudaMaxRank);
  const TensorStructInfoNode* out = known_tensor(m["core"], kCudaMaxRank);
  if (core == nullptr || a == nullptr || b == nullptr || out == nullptr) return std::nullopt;
  if (!cuda_dtypes_supported(*a->dtype, *b->dtype, *out->dtype, /*bf16=*/true)) return std::nullopt;
  if (a->ndim < 2 || (kind == "matmul" ? b->ndim < 2 : b->ndim != 2)) return std::nullopt;
  // Multiply-adds: every output element takes K of them.
  if (site.is_small(product(*out->shape) * a->shape->back(), kCudaMinWork)) return std::nullopt;
  if (is_dequantised(site, m["b"])) return std::nullopt;
  const Batching batching =
      kind == "matmul" ? matmul_batching(site.analyzer(), *a, *b, *out) : Batching::kFlat;
  if (batching == Batching::kUnsupported) return std::nullopt;

  CudaPosts posts;
  auto add_bias = [&](const Expr& bias) {
    const TensorStructInfoNode* t = known_tensor(bias, 1);
    if (t == nullptr || t->ndim != 1 || *t->dtype != *out->dtype) return false;
    if (!site.analyzer().prove_equal((*t->shape)[0], out->shape->back())) return false;
    posts.spec.bias = true;
    posts.args.push_back(bias);
    return true;
  };
  if (m.has("linear_bias") && !add_bias(m["linear_bias"])) return std::nullopt;
  if (m.has("bias") && (m.has("linear_bias") || !add_bias(m["bias"]))) return std::nullopt;
  std::optional<Activation> act = fused_activation(site, /*gelu_tanh=*/true);
  if (!act) return std::nullopt;
  posts.spec.activation = *act;

  std::vector<Expr> args = {m["a"], m["b"]};
  args.insert(args.end(), posts.args.begin(), posts.args.end());
  const bool plain = !posts.spec.bias && posts.spec.activation == Activation::kNone;
  posts.spec.kind = batching == Batching::kEqual && plain && a->ndim > 2 ? LibraryKind::kBatchMatmul
                    : kind == "matmul"                                  ? LibraryKind::kMatmul
                                                                        : LibraryKind::kLinear;
  return cuda_library_call(site, runtime::cuda::to_name(posts.spec), std::move(args));
}

// conv2d(data NCHW, weight OIHW) [+ channel bias] [+ relu].
absl::StatusOr<std::optional<Expr>> build_cudnn_conv2d(const DispatchSite& site) {
  const Match& m = site.match();
  const CallNode* core = op_call(site.bound_value(m["core"]), "conv2d");
  const TensorStructInfoNode* data = known_tensor(m["a"], 4);
  const TensorStructInfoNode* weight = known_tensor(m["b"], 4);
  const TensorStructInfoNode* out = known_tensor(m["core"], 4);
  if (core == nullptr || data == nullptr || weight == nullptr || out == nullptr) return std::nullopt;
  if (data->ndim != 4 || weight->ndim != 4 || out->ndim != 4) return std::nullopt;
  if (!cuda_dtypes_supported(*data->dtype, *weight->dtype, *out->dtype, /*bf16=*/false)) return std::nullopt;
  // Multiply-adds: every output element takes (C / groups) * kernel taps of them.
  if (site.is_small(product(*out->shape) * product(*weight->shape, 1), kCudaMinWork)) return std::nullopt;
  std::optional<runtime::ConvWindow> window = conv_window(*core, 2);
  if (!window) return std::nullopt;

  LibrarySpec spec;
  spec.kind = LibraryKind::kConv2d;
  spec.conv = *std::move(window);
  std::vector<Expr> args = {m["a"], m["b"]};
  if (m.has("conv_bias")) {
    // The call's own bias; a second one added after it stays an add.
    if (m.has("bias")) return std::nullopt;
    Expr bias = conv_arg_bias(site, m["conv_bias"], *out);
    if (!bias.defined()) return std::nullopt;
    spec.bias = true;
    args.push_back(bias);
  } else if (m.has("bias")) {
    Expr bias = conv_bias_1d(site, m["bias"], *out);
    if (!bias.defined()) return std::nullopt;
    spec.bias = true;
    args.push_back(bias);
  }
  std::optional<Activation> act = fused_activation(site, /*gelu_tanh=*/false);
  if (!act) return std::nullopt;
  spec.activation = *act;
  return cuda_library_call(site, runtime::cuda::to_name(spec), std::move(args));
}

}  // namespace

std::vector<DispatchRule> make_cuda_rules() {
  const Pattern a = wildcard().capture("a");
  const Pattern b = wildcard().capture("b");
  auto rank1 = [](const Expr& e) { return rank_of(e) == 1; };

  std::vector<DispatchRule> rules;
  const Pattern linear =
      (is_op("linear")({a, b}) | is_op("linear")({a, b, wildcard().capture("linear_bias")})).capture("core");
  rules.push_back({"cublas.linear", "cublas", bias_activation_chain(linear, rank1, {"relu", "gelu"}),
                   [](const DispatchSite& site) { return build_cublas(site, "linear"); }});
  const Pattern matmul = is_op("matmul")({a, b}).capture("core");
  rules.push_back({"cublas.matmul", "cublas", bias_activation_chain(matmul, rank1, {"relu", "gelu"}),
                   [](const DispatchSite& site) { return build_cublas(site, "matmul"); }});
  const Pattern conv = conv_core("conv2d", a, b);
  auto channel_bias = [](const Expr& e) { return has_channel_bias_shape(e, 2); };
  rules.push_back({"cudnn.conv2d", "cudnn", bias_activation_chain(conv, channel_bias, {"relu"}), build_cudnn_conv2d});
  return rules;
}

}  // namespace relax::transform
