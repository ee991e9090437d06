// Element-wise gathers and scatters by index tensors: gather_elements and scatter_nd.
//
// gather_elements(x, indices, axis=0): indices has x's rank, its dims at most x's off the axis;
// out (indices' dims) = x with the index at `axis` taken from indices: out[i] = x[i with
// i[axis] := indices[i]]. A negative index counts from the end; one still out of range is clamped
// (as take's "clip" mode).
//
// scatter_nd(data, indices, updates, reduction="none"): indices (..., k) names k leading
// coordinates of data per entry; updates has indices' leading dims then data's dims from k on.
// out = data with each entry's slice replaced (reduction "none"), or combined with it ("add",
// "mul"), entry after entry in order, so a coordinate named twice gets the later value (or both
// combined). Negative coordinates count from the end, clamped as above. The kernel is a parallel
// copy, then one serial loop over the entries:
//   block copy(i...)  out[i] = data[i]
//   for e... { for j... { out[idx(e), j] = updates[e, j]  (or out[...] + / * updates[e, j]) } }
#include "ir/op/deduce_rules.h"
#include "ir/op/manipulate_util.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/manipulate.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary
using Vars = std::vector<SymVar>;

struct GatherElementsAttrs {
  int64_t axis = 0;
  template <typename V>
  void fields(V& v) {
    v("axis", axis);
  }
};

struct ScatterNdAttrs {
  std::string reduction = "none";
  template <typename V>
  void fields(V& v) {
    v("reduction", reduction, {"none", "add", "mul"});
  }
};

// An index loaded as int64, a negative one counted from the end of `dim`, clamped to [0, dim).
SymExpr in_range(SymExpr k, const SymExpr& dim) {
  if (k.dtype() != DataType::int64()) k = cast(DataType::int64(), k);
  k = select(k < SymExpr(0), k + dim, k);
  return min(max(k, SymExpr(0)), dim - 1);
}

absl::StatusOr<StructInfo> deduce_gather_elements(const CallNode& call, const GatherElementsAttrs& attrs,
                                                  DeduceContext& ctx) {
  const std::string op = "gather_elements";
  const TensorStructInfoNode& x = tensor_of(call, 0);
  const TensorStructInfoNode& indices = tensor_of(call, 1);
  if (x.ndim == kUnknownNDim || indices.ndim == kUnknownNDim) return tensor_sinfo_rank(indices.ndim, x.dtype, x.device);
  if (x.ndim != indices.ndim) {
    return op_error(op, "argument 1 (indices) " + call.args[1].struct_info().to_string() + " has rank " +
                            std::to_string(indices.ndim) + ", expected x's rank " + std::to_string(x.ndim));
  }
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
  if (!axis.ok()) return axis.status();
  if (!indices.shape) return tensor_sinfo_rank(indices.ndim, x.dtype, x.device);
  if (x.shape) {
    for (size_t d = 0; d < x.shape->size(); ++d) {
      if (static_cast<int64_t>(d) == *axis) continue;
      if (!ctx.analyzer.prove((*indices.shape)[d] <= (*x.shape)[d])) {
        return op_error(op, "dim " + std::to_string(d) + " of argument 1 (indices) is `" + (*indices.shape)[d].to_string() +
                                "`, not provably at most x's `" + (*x.shape)[d].to_string() + "` (x " +
                                call.args[0].struct_info().to_string() + ")");
      }
    }
  }
  return tensor_sinfo(*indices.shape, x.dtype, x.device);
}

absl::StatusOr<Lowering> legalize_gather_elements(const CallNode& call, const GatherElementsAttrs& attrs,
                                                  Analyzer& analyzer) {
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, "gather_elements", "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, (*x)->ndim);
  if (!axis.ok()) return axis.status();
  const auto a = static_cast<size_t>(*axis);
  return injective(call, analyzer, [&](const std::vector<SymExpr>& i, const Inputs& in) {
    std::vector<SymExpr> at = i;
    at[a] = in_range(in.load(1, i), in.shape(0)[a]);
    return in.load(0, std::move(at));
  });
}

absl::StatusOr<StructInfo> deduce_scatter_nd(const CallNode& call, const ScatterNdAttrs&, DeduceContext& ctx) {
  const std::string op = "scatter_nd";
  const TensorStructInfoNode& data = tensor_of(call, 0);
  const TensorStructInfoNode& indices = tensor_of(call, 1);
  const TensorStructInfoNode& updates = tensor_of(call, 2);
  if (data.dtype && updates.dtype && *data.dtype != *updates.dtype) {
    return op_error(op, "argument 2 (updates) " + call.args[2].struct_info().to_string() + " has another dtype than data " +
                            call.args[0].struct_info().to_string());
  }
  if (data.shape && indices.shape && updates.shape) {
    const std::optional<int64_t> k = indices.shape->back().as_const();
    if (!k || *k < 1 || *k > static_cast<int64_t>(data.shape->size())) {
      return op_error(op, "the last dim of argument 1 (indices) " + call.args[1].struct_info().to_string() +
                              " must be a constant from 1 to data's rank " + std::to_string(data.shape->size()));
    }
    std::vector<SymExpr> expected(indices.shape->begin(), indices.shape->end() - 1);
    expected.insert(expected.end(), data.shape->begin() + *k, data.shape->end());
    bool same = expected.size() == updates.shape->size();
    for (size_t d = 0; same && d < expected.size(); ++d) same = ctx.analyzer.prove_equal(expected[d], (*updates.shape)[d]);
    if (!same) {
      std::string want;
      for (const SymExpr& e : expected) want += (want.empty() ? "" : ", ") + e.to_string();
      return op_error(op, "argument 2 (updates) is " + call.args[2].struct_info().to_string() + ", expected the dims (" +
                              want + "): indices' leading dims, then data's from dim " + std::to_string(*k));
    }
  }
  return call.args[0].struct_info();
}

absl::StatusOr<Lowering> legalize_scatter_nd(const CallNode& call, const ScatterNdAttrs& attrs, Analyzer&) {
  const std::string op = "scatter_nd";
  absl::StatusOr<const TensorStructInfoNode*> data = known_tensor(call, 0, op, "data");
  if (!data.ok()) return data.status();
  absl::StatusOr<const TensorStructInfoNode*> indices = known_tensor(call, 1, op, "indices");
  if (!indices.ok()) return indices.status();
  absl::StatusOr<const TensorStructInfoNode*> updates = known_tensor(call, 2, op, "updates");
  if (!updates.ok()) return updates.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op);
  if (!out.ok()) return out.status();
  KernelBuilder kb(op, {*(*data)->shape, *(*indices)->shape, *(*updates)->shape, *(*out)->shape});
  Buffer d = kb.input("D", call.args[0]);
  Buffer idx = kb.input("I", call.args[1]);
  Buffer u = kb.input("U", call.args[2]);
  Buffer o = kb.output("O", **out, *(*data)->shape);
  PrimFuncBuilder& pb = kb.body();
  loop_block(pb, "scatter_nd_copy", o.shape(), {}, nullptr,
             [&](const Vars& v, const Vars&) { pb.store(o, as_indices(v), buffer_load(d, as_indices(v))); });
  const size_t k = static_cast<size_t>(*idx.shape().back().as_const());
  const size_t entries = idx.shape().size() - 1;
  // Serial loops over the entries and the slice each one writes: a coordinate named twice gets
  // the later entry.
  std::vector<SymVar> vars;
  std::function<void(size_t)> nest = [&](size_t level) {
    if (level == u.shape().size()) {
      const std::vector<SymExpr> e(vars.begin(), vars.begin() + static_cast<std::ptrdiff_t>(entries));
      std::vector<SymExpr> at;
      for (size_t c = 0; c < k; ++c) {
        std::vector<SymExpr> where = e;
        where.push_back(SymExpr(static_cast<int64_t>(c)));
        at.push_back(in_range(buffer_load(idx, where), o.shape()[c]));
      }
      at.insert(at.end(), vars.begin() + static_cast<std::ptrdiff_t>(entries), vars.end());
      const SymExpr update = buffer_load(u, as_indices(vars));
      const SymExpr value = attrs.reduction == "add"   ? buffer_load(o, at) + update
                            : attrs.reduction == "mul" ? buffer_load(o, at) * update
                                                       : update;
      pb.store(o, at, value);
      return;
    }
    pb.for_(absl::StrCat("s", level), 0, u.shape()[level], [&](SymVar var) {
      vars.push_back(var);
      nest(level + 1);
      vars.pop_back();
    });
  };
  nest(0);
  return kb.finish();
}

}  // namespace

void register_manipulate_scatter_ops(OpTable& table) {
  table.def<GatherElementsAttrs>("gather_elements",
                                 "x at indices' positions with the index along `axis` taken from indices")
      .arg("x", ArgKind::kTensor)
      .arg("indices", ArgKind::kTensor, DtypeClass::kInt)
      .deduce(deduce_gather_elements)
      .legalize(legalize_gather_elements);
  table.def<ScatterNdAttrs>("scatter_nd",
                            "data with the slices at indices' coordinates replaced by (or combined with) updates")
      .arg("data", ArgKind::kTensor)
      .arg("indices", ArgKind::kTensor, DtypeClass::kInt)
      .arg("updates", ArgKind::kTensor)
      .deduce(deduce_scatter_nd)
      .legalize(legalize_scatter_nd);
}

}  // namespace detail

namespace op {

Expr gather_elements(Expr x, Expr indices, int64_t axis) {
  return make_call(make_op_or_die("gather_elements"), {std::move(x), std::move(indices)},
                   detail::encode_attrs(detail::GatherElementsAttrs{axis}));
}

Expr scatter_nd(Expr data, Expr indices, Expr updates, std::string reduction) {
  return make_call(make_op_or_die("scatter_nd"), {std::move(data), std::move(indices), std::move(updates)},
                   detail::encode_attrs(detail::ScatterNdAttrs{std::move(reduction)}));
}

}  // namespace op
}  // namespace relax
