// build_llama: prefill and decode of a Llama-architecture decoder, with the public builder.
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/ir/builder.h"
#include "relax/ir/ops.h"
#include "relax/ir/struct_info.h"
#include "relax/models/llama.h"

namespace relax::models {
namespace {

namespace op = relax::op;

StructInfo f32(std::vector<SymExpr> shape) { return tensor_sinfo(std::move(shape), DataType::float32()); }

// The weights of one function, by file name; a matrix's value is the float32 (in, out) matrix
// the kernels read: the parameter itself, or its widening / dequantisation (an injective
// producer the matmul's kernel absorbs, so the float32 matrix is never stored).
class Weights {
 public:
  Weights(const LlamaConfig& config, FunctionBuilder& f) : config_(config) {
    for (const WeightSpec& w : weight_specs(config)) {
      std::vector<SymExpr> shape(w.shape.begin(), w.shape.end());
      params_.emplace(w.name, f.param(w.param, tensor_sinfo(std::move(shape), w.dtype)));
      names_.push_back(w.param);
    }
  }

  const Var& operator[](const std::string& name) const { return params_.at(name); }

  Expr matrix(const std::string& name) const {
    if (const std::optional<DataType> dtype = float_weight_dtype(config_.weights)) {
      return *dtype == DataType::float32() ? Expr(params_.at(name)) : op::astype(params_.at(name), DataType::float32());
    }
    return op::dequantize(params_.at(name + ".q4"), params_.at(name + ".scales"), config_.group_size,
                          /*axis=*/0, /*bits=*/4);
  }

  /// The row of the embedding table of each token, float32.
  Expr embed(const Expr& tokens) const {
    Expr rows = op::take(params_.at("embed"), tokens, 0);
    const DataType dtype = float_weight_dtype(config_.weights).value_or(DataType::float32());
    return dtype == DataType::float32() ? rows : op::astype(rows, DataType::float32());
  }

  /// The `weights` attribute: every weight parameter (bound once for the module's life).
  std::string attr() const { return absl::StrJoin(names_, ","); }

 private:
  const LlamaConfig& config_;
  std::map<std::string, Var> params_;
  std::vector<std::string> names_;
};

// One function: `name` over tokens (b, n), n symbolic for prefill, 1 for decode; b symbolic,
// or 1 for the one-sequence decode.
void build_function(ModuleBuilder& mb, const LlamaConfig& c, const std::string& name, bool decode,
                    bool prepack_weights, bool one_row = false) {
  FunctionBuilder f = mb.function(name);
  SymVar b_var("b"), n_var("n");
  const SymExpr n = decode ? SymExpr(int64_t{1}) : SymExpr(n_var);
  const SymExpr b = one_row ? SymExpr(int64_t{1}) : SymExpr(b_var);
  const SymExpr big_b(c.max_batch), capacity(c.max_context);
  Var tokens = f.param("tokens", tensor_sinfo({b, n}, DataType::int64()));
  Var seq_ids = f.param("seq_ids", tensor_sinfo({b}, DataType::int64()));
  Var kv_lengths = f.param("kv_lengths", tensor_sinfo({big_b}, DataType::int64()));
  std::vector<std::pair<Var, Var>> caches;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::vector<SymExpr> cache = {big_b, capacity, SymExpr(c.kv_heads), SymExpr(c.head_dim)};
    Var k = f.param(absl::StrCat("k_cache_", l), f32(cache));
    Var v = f.param(absl::StrCat("v_cache_", l), f32(cache));
    caches.emplace_back(k, v);
  }
  Weights w(c, f);
  if (!one_row) f.upper_bound(b_var, c.max_batch);
  if (!decode) f.upper_bound(n_var, c.max_context);
  // The weights are bound once: what is computed from them alone is computed then
  // (lift-weight-transforms), and a library may prepack them when asked.
  f.set_attr("weights", w.attr());
  if (!prepack_weights) f.set_attr("pack_weights", false);

  const SymExpr hidden(c.hidden), heads(c.heads), kv_heads(c.kv_heads), head_dim(c.head_dim);
  const SymExpr rows = SymExpr(b) * n;
  // x (b, n, in) W (in, out) as one (b * n, in) x (in, out) product, the form the matmul
  // schedules and the library dispatch recognise (a reshape of a contiguous tensor is free).
  auto project = [&](const Expr& x, const std::string& weight, std::vector<SymExpr> out_shape) {
    const SymExpr in = x.struct_info().as<TensorStructInfoNode>()->shape->back();
    return op::reshape(op::matmul(op::reshape(x, {rows, in}), w.matrix(weight)), std::move(out_shape));
  };
  Var logits;
  {
    auto df = f.dataflow();
    // Row r's tokens sit at positions kv_lengths[seq_ids[r]] + i.
    Var start = f.emit(op::expand_dims(op::take(kv_lengths, seq_ids, 0), 1), "start");
    Var positions = f.emit(op::add(start, op::arange(0, make_prim_value(n))), "positions");
    Var x = f.emit(w.embed(tokens), "x");
    for (int64_t l = 0; l < c.layers; ++l) {
      const std::string p = absl::StrCat("layers.", l, ".");
      Var h = f.emit(op::rms_norm(x, w[p + "attn_norm"], {-1}, c.norm_epsilon));
      Var q = f.emit(project(h, p + "wq", {b, n, heads, head_dim}));
      Var k = f.emit(project(h, p + "wk", {b, n, kv_heads, head_dim}));
      Var v = f.emit(project(h, p + "wv", {b, n, kv_heads, head_dim}));
      q = f.emit(op::rotary_embedding(q, positions, c.rope_theta));
      k = f.emit(op::rotary_embedding(k, positions, c.rope_theta));
      // Appends k and v to the layer's cache in place and attends over the sequence so far.
      Var attn = f.emit(op::call_dps_library("kv_cache.attention",
                                             {q, k, v, caches[static_cast<size_t>(l)].first,
                                              caches[static_cast<size_t>(l)].second, kv_lengths, seq_ids},
                                             f32({b, n, heads, head_dim})),
                        absl::StrCat("attn_", l));
      Var o = f.emit(op::reshape(attn, {b, n, heads * head_dim}));
      Var x1 = f.emit(op::add(x, project(o, p + "wo", {b, n, hidden})));
      Var h2 = f.emit(op::rms_norm(x1, w[p + "mlp_norm"], {-1}, c.norm_epsilon));
      Var gate = f.emit(op::silu(project(h2, p + "w_gate", {b, n, SymExpr(c.intermediate)})));
      Var up = f.emit(project(h2, p + "w_up", {b, n, SymExpr(c.intermediate)}));
      Var mlp = f.emit(op::multiply(gate, up));
      x = f.emit(op::add(x1, project(mlp, p + "w_down", {b, n, hidden})), absl::StrCat("x_", l + 1));
    }
    // Only each row's last token goes through the final norm and the LM head. The slice has
    // min(1, n) rows (n may be 0 as far as the annotations say); the match_cast checks at run
    // time that there is one (an empty prompt is an error naming the dim).
    Var slice = f.emit(op::strided_slice(x, {1}, {n - 1}, {n}));
    Var one = f.match_cast(slice, f32({b, SymExpr(int64_t{1}), hidden}), "last_token");
    Var last = f.emit(op::reshape(one, {b, hidden}), "last");
    Var normed = f.emit(op::rms_norm(last, w["final_norm"], {-1}, c.norm_epsilon));
    logits = f.emit_output(op::matmul(normed, w.matrix("lm_head")), "logits");
  }
  f.ret(logits);
}

}  // namespace

absl::StatusOr<IRModule> build_llama(const LlamaConfig& config, bool prepack_weights) {
  if (absl::Status s = config.validate(); !s.ok()) return s;
  ModuleBuilder mb;
  build_function(mb, config, "prefill", /*decode=*/false, prepack_weights);
  build_function(mb, config, "decode", /*decode=*/true, prepack_weights);
  // One sequence's step: every product has one row, which the weight-streaming kernels take.
  build_function(mb, config, "decode_one", /*decode=*/true, prepack_weights, /*one_row=*/true);
  return mb.build();
}

}  // namespace relax::models
