// topk(x, k, axis=-1, largest=true): the k largest (or smallest) elements of x along `axis`,
// sorted (largest first, or smallest first), and their int64 indices along the axis, as a Tuple
// (values, indices) of x's dims with the axis k long. Equal elements keep their order (the lower
// index first), as ONNX TopK and torch.topk do; k is a constant at most the axis' length; x is
// a float tensor.
//
// Kernel: per row of the other dims (in parallel), one pass over the axis keeping the best k
// sorted in the outputs -- each element moves the ones it beats one place down and takes the
// first place it beats, written without branches from the last place to the first:
//   block topk(o) { V[o, j] = worst; I[o, j] = -1 for j < k
//                   for e { for j' (j = k - 1 - j') { shift = x_e beats V[o, j - 1] (j > 0);
//                                                    take = !shift && x_e beats V[o, j]
//                                                    V[o, j], I[o, j] = shift ? (V, I)[o, j - 1]
//                                                                     : take ? (x_e, e) : kept } } }
// "Beats" is strictly greater (smaller), so a later equal element stays after an earlier one. NaN
// beats nothing.
#include <limits>

#include "ir/op/deduce_rules.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/compute.h"
#include "relax/ir/op/reduce.h"

namespace relax {
namespace detail {
namespace {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary
using Vars = std::vector<SymVar>;

struct TopkAttrs {
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
  template <typename V>
  void fields(V& v) {
    v("k", k);
    v("axis", axis);
    v("largest", largest);
  }
};

absl::StatusOr<StructInfo> deduce_topk(const CallNode& call, const TopkAttrs& attrs, DeduceContext& ctx) {
  const std::string op = "topk";
  const auto& x = *call.args[0].struct_info().as<TensorStructInfoNode>();
  if (attrs.k < 0) return op_error(op, "k is " + std::to_string(attrs.k) + ", expected k >= 0");
  if (x.ndim == kUnknownNDim) {
    return tuple_sinfo({tensor_sinfo_rank(kUnknownNDim, x.dtype, x.device), tensor_sinfo_rank(kUnknownNDim, DataType::int64(), x.device)});
  }
  absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
  if (!axis.ok()) return axis.status();
  if (!x.shape) {
    return tuple_sinfo({tensor_sinfo_rank(x.ndim, x.dtype, x.device), tensor_sinfo_rank(x.ndim, DataType::int64(), x.device)});
  }
  std::vector<SymExpr> dims = *x.shape;
  const SymExpr n = dims[static_cast<size_t>(*axis)];
  if (!ctx.analyzer.prove(SymExpr(attrs.k) <= n)) {
    return op_error(op, "k = " + std::to_string(attrs.k) + " is not provably at most dim " + std::to_string(*axis) +
                            " of x, `" + n.to_string() + "` (x " + call.args[0].struct_info().to_string() + ")");
  }
  dims[static_cast<size_t>(*axis)] = SymExpr(attrs.k);
  return tuple_sinfo({tensor_sinfo(dims, x.dtype, x.device), tensor_sinfo(dims, DataType::int64(), x.device)});
}

absl::StatusOr<Lowering> legalize_topk(const CallNode& call, const TopkAttrs& attrs, Analyzer&) {
  const std::string op = "topk";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> axis_or = checked_axis(call, attrs.axis, (*x)->ndim);
  if (!axis_or.ok()) return axis_or.status();
  const auto axis = static_cast<size_t>(*axis_or);
  const auto* result = call.struct_info().as<TupleStructInfoNode>();
  const auto* values = result == nullptr ? nullptr : result->fields[0].as<TensorStructInfoNode>();
  const auto* indices = result == nullptr ? nullptr : result->fields[1].as<TensorStructInfoNode>();
  if (values == nullptr || indices == nullptr || !values->shape || !indices->shape || !values->dtype) {
    return op_error(op, "the result " + call.struct_info().to_string() + " is not two Tensors of known shape");
  }
  KernelBuilder kb(op, {*(*x)->shape, *values->shape, *indices->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer v = kb.output("V", *values);
  Buffer ix = kb.output("I", *indices);
  PrimFuncBuilder& pb = kb.body();
  const DataType dtype = *values->dtype;
  const SymExpr n = a.shape()[axis];
  const SymExpr k(attrs.k);
  std::vector<SymExpr> others = a.shape();
  others.erase(others.begin() + static_cast<std::ptrdiff_t>(axis));
  const double worst_value = attrs.largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const SymExpr worst = SymExpr::float_imm(worst_value, dtype);
  auto at = [&](const Vars& o, const SymExpr& j) {
    std::vector<SymExpr> index(o.begin(), o.end());
    index.insert(index.begin() + static_cast<std::ptrdiff_t>(axis), j);
    return index;
  };
  auto beats = [&](const SymExpr& a_value, const SymExpr& b_value) { return attrs.largest ? b_value < a_value : a_value < b_value; };
  loop_block(pb, op, others, {}, nullptr, [&](const Vars& o, const Vars&) {
    pb.for_("j", 0, k, [&](SymVar j) {
      pb.store(v, at(o, j), worst);
      pb.store(ix, at(o, j), SymExpr(-1));
    });
    pb.for_("e", 0, n, [&](SymVar e) {
      const SymExpr value = buffer_load(a, at(o, e));
      pb.for_("jr", 0, k, [&](SymVar jr) {
        const SymExpr j = k - 1 - SymExpr(jr);
        const SymExpr above = max(j - 1, SymExpr(0));
        const SymExpr shift = j > SymExpr(0) && beats(value, buffer_load(v, at(o, above)));
        const SymExpr take = !shift && beats(value, buffer_load(v, at(o, j)));
        const SymExpr new_value = select(shift, buffer_load(v, at(o, above)), select(take, value, buffer_load(v, at(o, j))));
        const SymExpr new_index = select(shift, buffer_load(ix, at(o, above)), select(take, SymExpr(e), buffer_load(ix, at(o, j))));
        pb.store(ix, at(o, j), new_index);
        pb.store(v, at(o, j), new_value);
      });
    });
  });
  return kb.finish();
}

}  // namespace

void register_topk_ops(OpTable& table) {
  table.def<TopkAttrs>("topk", "the k largest (or smallest) elements along axis, sorted, and their int64 indices")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_topk)
      .legalize(legalize_topk);
}

}  // namespace detail

namespace op {

Expr topk(Expr x, int64_t k, int64_t axis, bool largest) {
  return make_call(make_op_or_die("topk"), {std::move(x)}, detail::encode_attrs(detail::TopkAttrs{k, axis, largest}));
}

}  // namespace op
}  // namespace relax
