// Attention and rotary position embedding, on the (batch, seq, heads, head_dim) layout.
//
// attention(q, k, v, scale, causal_mask): q (b, n, Hq, d), k (b, m, Hkv, d),
// v (b, m, Hkv, dv) give (b, n, Hq, dv). Query head h reads KV head
// h / (Hq / Hkv) (grouped KV heads), so Hq must be provably divisible by Hkv;
// the KV length m may differ from the query length n. scale defaults to
// 1 / sqrt(d). causal_mask "none" (the default) masks nothing, "TopLeft" lets
// query i see keys j <= i, "BottomRight" keys j <= i + m - n (the KV-cache
// form: the last query sees every key). A query that sees no key (BottomRight
// with m < n) gives zeros. Dims that must agree (batch, m, Hkv, d) and do not
// provably are errors naming both; rank-only inputs give a rank-4 result.
//
// The kernel is four loop nests, each around one block, with the scores and
// the per-row statistics in workspace buffers of the compute dtype (float32
// for 16-bit storage); `allowed(i, j)` is the mask (true without one):
//   block scores     S[b, h, i, j] += Q[b, i, h, c] * K[b, j, h / g, c]     (reduce c; init 0)
//   block max        mx[b, h, i] = max(mx, allowed ? S * scale : -inf)      (reduce j)
//   block sum        sm[b, h, i] += allowed ? exp(S * scale - mx) : 0       (reduce j)
//   block attention  O[b, i, h, c] += (allowed ? exp(S * scale - mx) / sm : 0)
//                                     * V[b, j, h / g, c]                   (reduce j)
// (g = Hq / Hkv; for 16-bit storage the last block accumulates in a
// workspace and a fifth block, attention_out, rounds it into O.)
//
// rotary_embedding(x, positions, theta=10000): x (b, s, H, d) with d even,
// positions (s,) of an integer dtype, shared by every batch row, or (b, s),
// one row of positions per batch row (sequences of a batch at different
// lengths of a KV cache); the half-rotation (Llama) form with h = d / 2 and
// angle(p, i) = positions[p] * theta^(-2 i / d) (positions[b, p] for (b, s)):
//   out[.., i]     = x[.., i] * cos - x[.., i + h] * sin
//   out[.., i + h] = x[.., i + h] * cos + x[.., i] * sin          (i < h)
// Three nests, the tables in workspace buffers of the compute dtype:
//   block rotary_freq   freq[i] = theta^(-2 i / d)                      (h pow calls)
//   block rotary_table  cos_table[p, i] = cos(positions[p] * freq[i]), sin_table likewise
//                       (for (b, s) positions the tables are [b, p, i])
//   block rotary_embedding over (s, b, H, i < h): both columns of the pair,
//     out[.., i] and out[.., i + h], as above from cos_table[s, i] and sin_table[s, i]
// so the angles' cos and sin are computed s * h times, not b * s * H * d
// times, and the inner loop (over i) reads and writes contiguous elements
// with no select: it vectorises.
#include <limits>

#include "ir/op/deduce_rules.h"
#include "ir/op/nn_common.h"
#include "ir/op/op_util.h"
#include "relax/ir/op/nn.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary
using Vars = std::vector<SymVar>;

struct AttentionAttrs {
  std::optional<double> scale;
  std::string causal_mask = "none";
  template <typename V>
  void fields(V& v) {
    v("scale", scale);
    v("causal_mask", causal_mask, {"none", "TopLeft", "BottomRight"});
  }
};

struct RotaryAttrs {
  double theta = 10000;
  template <typename V>
  void fields(V& v) {
    v("theta", theta);
  }
};

// Checks dim `a_dim` of argument `a` against dim `b_dim` of argument `b` when
// both shapes are known.
absl::Status same_dim(const CallNode& call, DeduceContext& ctx, size_t a, size_t a_dim, size_t b,
                      size_t b_dim, const std::string& what) {
  const TensorStructInfoNode& ta = tensor_of(call, a);
  const TensorStructInfoNode& tb = tensor_of(call, b);
  if (!ta.shape || !tb.shape) return absl::OkStatus();
  return require_dim(call, ctx, a, a_dim, (*tb.shape)[b_dim],
                     what + ": " + nn_arg_label(call, b) + " dim " + std::to_string(b_dim));
}

absl::StatusOr<StructInfo> deduce_attention(const CallNode& call, const AttentionAttrs& attrs,
                                            DeduceContext& ctx) {
  const std::string op = "attention";
  absl::StatusOr<std::optional<DataType>> dtype = shared_dtype(call, {0, 1, 2});
  if (!dtype.ok()) return dtype.status();
  for (size_t i = 0; i < 3; ++i) {
    if (absl::Status s = require_rank(call, i, 4); !s.ok()) return s;
  }
  if (attrs.scale && !(*attrs.scale > 0)) {
    return op_error(op, "scale must be positive, got " + std::to_string(*attrs.scale));
  }
  struct Pair {
    size_t a, a_dim, b, b_dim;
    const char* what;
  };
  const Pair pairs[] = {
      {1, 0, 0, 0, "the batch"},       {2, 0, 0, 0, "the batch"},
      {2, 1, 1, 1, "the KV length"},   {2, 2, 1, 2, "the KV heads"},
      {1, 3, 0, 3, "the head dim"},
  };
  for (const Pair& p : pairs) {
    if (absl::Status s = same_dim(call, ctx, p.a, p.a_dim, p.b, p.b_dim, p.what); !s.ok()) return s;
  }
  const TensorStructInfoNode& q = tensor_of(call, 0);
  const TensorStructInfoNode& k = tensor_of(call, 1);
  const TensorStructInfoNode& v = tensor_of(call, 2);
  if (q.shape && k.shape) {
    if (absl::Status s = require_divisible(
            call, ctx, (*q.shape)[2], (*k.shape)[2],
            "the query heads (query dim 2) must be a multiple of the KV heads (key dim 2)");
        !s.ok()) {
      return s;
    }
  }
  if (!q.shape || !v.shape) return tensor_sinfo_rank(4, *dtype, q.device);
  return tensor_sinfo({(*q.shape)[0], (*q.shape)[1], (*q.shape)[2], (*v.shape)[3]}, *dtype,
                      q.device);
}

absl::StatusOr<Lowering> legalize_attention(const CallNode& call, const AttentionAttrs& attrs,
                                            Analyzer&) {
  const std::string op = "attention";
  const char* roles[] = {"query", "key", "value"};
  std::vector<std::vector<SymExpr>> dims;
  for (size_t i = 0; i < 3; ++i) {
    absl::StatusOr<const TensorStructInfoNode*> t = known_tensor(call, i, op, roles[i]);
    if (!t.ok()) return t.status();
    dims.push_back(*(*t)->shape);
  }
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op, DtypeClass::kFloat);
  if (!out_or.ok()) return out_or.status();
  const TensorStructInfoNode& out_sinfo = **out_or;
  const DataType dtype = *out_sinfo.dtype;
  const DataType acc = compute_dtype(dtype);
  // The dims the kernel relies on being shared are written as the query's
  // (and the key's), so that its entry check rejects arguments that lack them.
  const std::vector<SymExpr>& qd = dims[0];
  const std::vector<SymExpr> k_dims = {qd[0], dims[1][1], dims[1][2], qd[3]};
  const std::vector<SymExpr> v_dims = {qd[0], dims[1][1], dims[1][2], dims[2][3]};
  const std::vector<SymExpr> o_dims = {qd[0], qd[1], qd[2], dims[2][3]};

  KernelBuilder kb(op, {qd, k_dims, v_dims, o_dims});
  Buffer q = kb.input("Q", call.args[0]);
  Buffer k = kb.input("K", call.args[1], k_dims);
  Buffer v = kb.input("V", call.args[2], v_dims);
  Buffer o = kb.output("O", out_sinfo, o_dims);
  PrimFuncBuilder& pb = kb.body();
  const SymExpr batch = q.shape()[0], n = q.shape()[1], hq = q.shape()[2], d = q.shape()[3];
  const SymExpr m = k.shape()[1], hkv = k.shape()[2], dv = v.shape()[3];
  const SymExpr group = floordiv(hq, hkv);
  const SymExpr scale = attrs.scale ? SymExpr::float_imm(*attrs.scale, acc)
                                    : SymExpr::float_imm(1, acc) / sqrt(cast(acc, d));
  const SymExpr neg_inf = SymExpr::float_imm(-std::numeric_limits<double>::infinity(), acc);
  const SymExpr zero = SymExpr::float_imm(0, acc);
  // Whether query i sees key j (unset: no mask).
  auto allowed = [&](const SymExpr& i, const SymExpr& j) -> SymExpr {
    if (attrs.causal_mask == "TopLeft") return j <= i;
    if (attrs.causal_mask == "BottomRight") return j <= i + m - n;
    return SymExpr();
  };
  auto masked = [&](const SymExpr& i, const SymExpr& j, const SymExpr& value, const SymExpr& other) {
    SymExpr cond = allowed(i, j);
    return cond.defined() ? select(cond, value, other) : value;
  };

  Buffer scores = pb.allocate("scores", {batch, hq, n, m}, acc, BufferScope::kWorkspace);
  Buffer row_max = pb.allocate("row_max", {batch, hq, n}, acc, BufferScope::kWorkspace);
  Buffer row_sum = pb.allocate("row_sum", {batch, hq, n}, acc, BufferScope::kWorkspace);
  loop_block(
      pb, "scores", {batch, hq, n, m}, {d},
      [&](const Vars& s, const Vars&) { pb.store(scores, as_indices(s), zero); },
      [&](const Vars& s, const Vars& r) {
        SymExpr prod = load_as(q, {s[0], s[2], s[1], r[0]}, acc) *
                       load_as(k, {s[0], s[3], floordiv(s[1], group), r[0]}, acc);
        pb.store(scores, as_indices(s), buffer_load(scores, as_indices(s)) + prod);
      });
  auto scaled = [&](const SymExpr& b, const SymExpr& h, const SymExpr& i, const SymExpr& j) {
    return buffer_load(scores, {b, h, i, j}) * scale;
  };
  loop_block(
      pb, "max", {batch, hq, n}, {m},
      [&](const Vars& s, const Vars&) { pb.store(row_max, as_indices(s), neg_inf); },
      [&](const Vars& s, const Vars& r) {
        SymExpr value = masked(s[2], r[0], scaled(s[0], s[1], s[2], r[0]), neg_inf);
        pb.store(row_max, as_indices(s), max(buffer_load(row_max, as_indices(s)), value));
      });
  loop_block(
      pb, "sum", {batch, hq, n}, {m},
      [&](const Vars& s, const Vars&) { pb.store(row_sum, as_indices(s), zero); },
      [&](const Vars& s, const Vars& r) {
        SymExpr e = exp(scaled(s[0], s[1], s[2], r[0]) - buffer_load(row_max, as_indices(s)));
        pb.store(row_sum, as_indices(s), buffer_load(row_sum, as_indices(s)) + masked(s[2], r[0], e, zero));
      });
  // out[b, i, h, c] accumulates in `target` (the output, or a workspace for 16-bit storage).
  const bool direct = acc == dtype;
  Buffer target = direct ? o : pb.allocate("out_acc", o.shape(), acc, BufferScope::kWorkspace);
  loop_block(
      pb, op, o.shape(), {m},
      [&](const Vars& s, const Vars&) { pb.store(target, as_indices(s), zero); },
      [&](const Vars& s, const Vars& r) {
        const std::vector<SymExpr> row = {s[0], s[2], s[1]};
        SymExpr p = exp(scaled(s[0], s[2], s[1], r[0]) - buffer_load(row_max, row)) /
                    buffer_load(row_sum, row);
        SymExpr value = masked(s[1], r[0], p, zero) *
                        load_as(v, {s[0], r[0], floordiv(s[2], group), s[3]}, acc);
        pb.store(target, as_indices(s), buffer_load(target, as_indices(s)) + value);
      });
  if (!direct) {
    loop_block(pb, "attention_out", o.shape(), {}, nullptr, [&](const Vars& s, const Vars&) {
      pb.store(o, as_indices(s), as_dtype(buffer_load(target, as_indices(s)), dtype));
    });
  }
  return kb.finish();
}

absl::StatusOr<StructInfo> deduce_rotary(const CallNode& call, const RotaryAttrs& attrs,
                                         DeduceContext& ctx) {
  const std::string op = "rotary_embedding";
  if (absl::Status s = require_rank(call, 0, 4); !s.ok()) return s;
  const TensorStructInfoNode& pos = tensor_of(call, 1);
  if (pos.ndim != kUnknownNDim && pos.ndim != 1 && pos.ndim != 2) {
    return op_error(op, "argument 1 (positions): expected a tensor of rank 1 (s,) or 2 (b, s), got " +
                            call.args[1].struct_info().to_string());
  }
  if (!(attrs.theta > 0)) {
    return op_error(op, "theta must be positive, got " + std::to_string(attrs.theta));
  }
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (x.shape && pos.shape) {
    // (s,) or (b, s): the last dim is the sequence, a leading one the batch.
    const size_t seq_at = pos.shape->size() - 1;
    if (absl::Status s = require_dim(call, ctx, 1, seq_at, (*x.shape)[1], "x dim 1, the sequence"); !s.ok()) {
      return s;
    }
    if (seq_at == 1) {
      if (absl::Status s = require_dim(call, ctx, 1, 0, (*x.shape)[0], "x dim 0, the batch"); !s.ok()) return s;
    }
  }
  if (x.shape) {
    if (absl::Status s = require_divisible(call, ctx, (*x.shape)[3], 2,
                                           "the head dim (x dim 3) must be even");
        !s.ok()) {
      return s;
    }
    return tensor_sinfo(*x.shape, x.dtype, x.device);
  }
  return tensor_sinfo_rank(4, x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_rotary(const CallNode& call, const RotaryAttrs& attrs, Analyzer& analyzer) {
  const std::string op = "rotary_embedding";
  absl::StatusOr<const TensorStructInfoNode*> x_or = known_tensor(call, 0, op, "x");
  if (!x_or.ok()) return x_or.status();
  absl::StatusOr<const TensorStructInfoNode*> pos_or = known_tensor(call, 1, op, "positions");
  if (!pos_or.ok()) return pos_or.status();
  absl::StatusOr<const TensorStructInfoNode*> out_or = known_result(call, op, DtypeClass::kFloat);
  if (!out_or.ok()) return out_or.status();
  const std::vector<SymExpr>& x_dims = *(*x_or)->shape;
  // Per-row positions (b, s) make per-row tables; shared ones (s,) one table.
  const bool per_row = (*pos_or)->shape->size() == 2;
  const std::vector<SymExpr> pos_dims =
      per_row ? std::vector<SymExpr>{x_dims[0], x_dims[1]} : std::vector<SymExpr>{x_dims[1]};
  const DataType dtype = *(*out_or)->dtype;
  const DataType acc = compute_dtype(dtype);

  KernelBuilder kb(op, {x_dims, pos_dims, x_dims});
  Buffer x = kb.input("A", call.args[0]);
  Buffer pos = kb.input("positions", call.args[1], pos_dims);
  Buffer out = kb.output("B", **out_or, x_dims);
  PrimFuncBuilder& pb = kb.body();
  const SymExpr batch = x.shape()[0], seq = x.shape()[1], heads = x.shape()[2], d = x.shape()[3];
  const SymExpr half = analyzer.simplify(floordiv(d, 2));
  const SymExpr theta = SymExpr::float_imm(attrs.theta, acc);
  // The angle depends on the position and the column pair only: its
  // frequencies, then its cosines and sines, are tables computed once per
  // call, not once per head.
  Buffer freq = pb.allocate("freq", {half}, acc, BufferScope::kWorkspace);
  // The tables' leading dims are the positions' dims: (s, half) or (b, s, half).
  const std::vector<SymExpr> table_dims =
      per_row ? std::vector<SymExpr>{batch, seq, half} : std::vector<SymExpr>{seq, half};
  Buffer cos_table = pb.allocate("cos_table", table_dims, acc, BufferScope::kWorkspace);
  Buffer sin_table = pb.allocate("sin_table", table_dims, acc, BufferScope::kWorkspace);
  loop_block(pb, "rotary_freq", {half}, {}, nullptr, [&](const Vars& v, const Vars&) {
    pb.store(freq, {v[0]}, pow(theta, cast(acc, v[0] * -2) / cast(acc, d)));
  });
  loop_block(pb, "rotary_table", table_dims, {}, nullptr, [&](const Vars& v, const Vars&) {
    const Vars at(v.begin(), v.end() - 1);
    const SymExpr angle = load_as(pos, as_indices(at), acc) * buffer_load(freq, {v.back()});
    pb.store(cos_table, as_indices(v), cos(angle));
    pb.store(sin_table, as_indices(v), sin(angle));
  });
  // Loops (s, b, h, i), each point writing both columns of its pair from the
  // same two loads. The sequence loop is outermost so that the schedule's
  // fused row loop (all loops but i) recovers the row's indices without
  // dividing by the symbolic sequence length (by the batch instead, a
  // constant 1 in decoding and prefill alike): a division per row of 64
  // elements cost more than the row's arithmetic.
  loop_block(pb, op, {seq, batch, heads, half}, {}, nullptr, [&](const Vars& v, const Vars&) {
    const SymExpr p = v[0], b = v[1], h = v[2], i = v[3];
    const std::vector<SymExpr> first_at = {b, p, h, i}, second_at = {b, p, h, i + half};
    const SymExpr first = load_as(x, first_at, acc), second = load_as(x, second_at, acc);
    const std::vector<SymExpr> table_at = per_row ? std::vector<SymExpr>{b, p, i} : std::vector<SymExpr>{p, i};
    const SymExpr c = buffer_load(cos_table, table_at), sn = buffer_load(sin_table, table_at);
    pb.store(out, first_at, as_dtype(first * c - second * sn, dtype));
    pb.store(out, second_at, as_dtype(second * c + first * sn, dtype));
  });
  return kb.finish();
}

}  // namespace

void register_nn_attention_ops(OpTable& table) {
  table.def<AttentionAttrs>("attention",
                            "softmax(q k^T * scale, masked) v on (batch, seq, heads, head_dim), "
                            "grouped KV heads")
      .arg("query", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("key", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("value", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_attention)
      .legalize(legalize_attention);
  table.def<RotaryAttrs>("rotary_embedding",
                         "half-rotation rotary position embedding of x (batch, seq, heads, "
                         "head_dim) at positions (seq,) or (batch, seq)")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .arg("positions", ArgKind::kTensor, DtypeClass::kInt)
      .deduce(deduce_rotary)
      .legalize(legalize_rotary);
}

}  // namespace detail

namespace op {

Expr attention(Expr query, Expr key, Expr value, std::optional<double> scale,
               std::string causal_mask) {
  return make_call(make_op_or_die("attention"), {std::move(query), std::move(key), std::move(value)},
                   detail::encode_attrs(detail::AttentionAttrs{scale, std::move(causal_mask)}));
}

Expr rotary_embedding(Expr x, Expr positions, double theta) {
  return make_call(make_op_or_die("rotary_embedding"), {std::move(x), std::move(positions)},
                   detail::encode_attrs(detail::RotaryAttrs{theta}));
}

}  // namespace op
}  // namespace relax
