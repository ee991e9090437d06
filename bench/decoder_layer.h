// The Llama-style decoder layer the benchmarks compile (fusion_bench, memory_bench), and the
// helpers they share. Header-only: each bench/<name>.cc is its own program.
//
// One layer: RMSNorm, q/k/v projections, rotary embedding of q and k, the new keys and values
// appended to the KV cache (concat), causal attention of the n new tokens over the m cached ones
// and each other (permute, matmul, scale, triu mask, softmax, matmul), the output projection and
// residual, RMSNorm, a SwiGLU MLP and residual. Returns (out, keys, values).
#pragma once

#include <time.h>  // clock_gettime(CLOCK_THREAD_CPUTIME_ID)

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/prim_func.h"
#include "relax/transform/pass.h"

namespace relax_bench {

/// Prints `program: message` and aborts (a benchmark whose setup fails measures nothing).
[[noreturn]] inline void fail(const char* program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  std::abort();
}

/// CPU seconds of the calling thread: a one-thread target's kernels run on it alone, so other
/// processes sharing the cores do not count into it as they do into wall time.
inline double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Empties every kernel's body: the graph allocates and calls as before, the kernels do nothing
/// (added at the end of a pipeline, it leaves the VM's own cost per call to be measured).
class HollowKernels final : public relax::transform::PrimFuncPass {
 public:
  HollowKernels() : PrimFuncPass(relax::transform::PassInfo("hollow-kernels", "empties every kernel body")) {}

 protected:
  absl::StatusOr<relax::Expr> run_on_prim_func(const relax::transform::FunctionRef& f,
                                                relax::transform::PassContext&) override {
    const auto* prim = f.func.as<relax::PrimFuncNode>();
    if (prim == nullptr) return f.func;
    return relax::make_prim_func(prim->params, relax::make_seq({}), prim->attrs);
  }
};

/// The sizes of a decoder layer and what is symbolic.
struct DecoderLayerShape {
  int64_t dim = 256;
  int64_t heads = 4;
  int64_t head_dim = 64;
  int64_t ffn = 688;
  /// x is (b, n, dim) and the caches (b, m, heads, head_dim) with a symbolic b; otherwise x is
  /// (n, dim) and the caches (1, m, heads, head_dim).
  bool batched = false;
  /// Declared upper bounds, by variable name (b, n, m).
  std::vector<std::pair<std::string, int64_t>> upper_bounds;
  /// Layers in sequence, each with its own caches and weights (see decoder_layer).
  int layers = 1;
};

/// main(x, positions, k_cache, v_cache, norm1, wq, wk, wv, wo, norm2, wgate, wup, wdown), the
/// caches and weights repeated per layer when there are several; returns (out, keys, values),
/// the keys and values repeated per layer.
inline relax::IRModule decoder_layer(const DecoderLayerShape& s, const char* program) {
  using relax::DataType;
  using relax::SymExpr;
  using relax::SymVar;
  SymVar b("b"), n("n"), m("m");
  const SymExpr total = SymExpr(m) + SymExpr(n);
  const SymExpr batch = s.batched ? SymExpr(b) : SymExpr(int64_t{1});
  std::vector<SymExpr> tokens = {n};  // the leading dims of x
  if (s.batched) tokens.insert(tokens.begin(), SymExpr(b));
  auto with = [](std::vector<SymExpr> lead, std::vector<SymExpr> rest) {
    lead.insert(lead.end(), rest.begin(), rest.end());
    return lead;
  };
  relax::ModuleBuilder mb;
  relax::FunctionBuilder f = mb.function("main");
  auto tensor = [](std::vector<SymExpr> shape) { return relax::tensor_sinfo(std::move(shape), DataType::float32()); };
  relax::Var x = f.param("x", tensor(with(tokens, {s.dim})));
  relax::Var positions = f.param("positions", relax::tensor_sinfo({n}, DataType::int64()));
  // Per layer: its caches and weights (named k_cache, ... for one layer; k_cache_3, ... else).
  struct LayerParams {
    relax::Var k_cache, v_cache, norm1, wq, wk, wv, wo, norm2, wgate, wup, wdown;
  };
  std::vector<LayerParams> layers;
  for (int l = 0; l < s.layers; ++l) {
    const std::string suffix = s.layers == 1 ? "" : "_" + std::to_string(l);
    auto param = [&](const char* name, std::vector<SymExpr> shape) { return f.param(name + suffix, tensor(std::move(shape))); };
    layers.push_back({param("k_cache", {batch, m, s.heads, s.head_dim}), param("v_cache", {batch, m, s.heads, s.head_dim}),
                      param("norm1", {s.dim}), param("wq", {s.dim, s.dim}), param("wk", {s.dim, s.dim}),
                      param("wv", {s.dim, s.dim}), param("wo", {s.dim, s.dim}), param("norm2", {s.dim}),
                      param("wgate", {s.dim, s.ffn}), param("wup", {s.dim, s.ffn}), param("wdown", {s.ffn, s.dim})});
  }
  for (const auto& [name, bound] : s.upper_bounds) f.upper_bound(name == "b" ? b : name == "n" ? n : m, bound);
  relax::Var result;
  {
    auto df = f.dataflow();
    namespace op = relax::op;
    const std::vector<int64_t> heads_first{0, 2, 1, 3};
    const std::vector<SymExpr> split = {batch, n, s.heads, s.head_dim};
    std::vector<relax::Expr> outputs = {relax::Expr()};  // the last layer's out, then each layer's keys, values
    for (const LayerParams& p : layers) {
      const auto& [k_cache, v_cache, norm1, wq, wk, wv, wo, norm2, wgate, wup, wdown] = p;
      relax::Var h = f.emit(op::rms_norm(x, norm1, {-1}, 1e-5));
      relax::Var q = f.emit(op::reshape(op::matmul(h, wq), split));
      relax::Var k = f.emit(op::reshape(op::matmul(h, wk), split));
      relax::Var v = f.emit(op::reshape(op::matmul(h, wv), split));
      q = f.emit(op::rotary_embedding(q, positions, 10000));
      k = f.emit(op::rotary_embedding(k, positions, 10000));
      relax::Var keys = f.emit(op::concat({k_cache, k}, 1), "keys");      // (batch, m + n, H, d)
      relax::Var values = f.emit(op::concat({v_cache, v}, 1), "values");  // (batch, m + n, H, d)
      // scores (batch, H, n, m + n): query i (position m + i) sees keys j <= m + i.
      relax::Var scores = f.emit(op::multiply(op::matmul(op::permute_dims(q, heads_first),
                                                         op::permute_dims(keys, std::vector<int64_t>{0, 2, 3, 1})),
                                              1.0 / std::sqrt(static_cast<double>(s.head_dim))));
      relax::Var mask = f.emit(op::triu(op::full(relax::make_shape_expr({n, total}), -1e9, DataType::float32()),
                                        relax::make_prim_value(SymExpr(m) + 1)));
      relax::Var probs = f.emit(op::softmax(op::add(scores, mask), -1));
      relax::Var attn = f.emit(op::matmul(probs, op::permute_dims(values, heads_first)));
      relax::Var o = f.emit(op::reshape(op::permute_dims(attn, heads_first), with(tokens, {s.dim})));
      relax::Var x1 = f.emit(op::add(x, op::matmul(o, wo)));
      relax::Var h2 = f.emit(op::rms_norm(x1, norm2, {-1}, 1e-5));
      relax::Var gate = f.emit(op::silu(op::matmul(h2, wgate)));
      relax::Var up = f.emit(op::matmul(h2, wup));
      relax::Var out = f.emit(op::add(x1, op::matmul(op::multiply(gate, up), wdown)));
      outputs[0] = out;
      outputs.push_back(keys);
      outputs.push_back(values);
      x = out;
    }
    result = f.emit_output(relax::make_tuple(outputs), "result");
  }
  f.ret(result);
  absl::StatusOr<relax::IRModule> mod = mb.build();
  if (!mod.ok()) fail(program, "decoder layer: " + std::string(mod.status().message()));
  return *mod;
}

}  // namespace relax_bench
