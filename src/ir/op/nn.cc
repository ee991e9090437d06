// Neural-network operators: log_softmax here, the normalisations in
// nn_norm.cc, attention and rotary embedding in nn_attention.cc; the helpers
// of nn_common.h.
//
// log_softmax(x, axis=-1) keeps x's annotation; its axis must lie within x's
// rank when known. Its kernel is three loop nests, each around one block,
// with the per-slice maximum and sum of exponentials in two workspace buffers
// over the other dims (o), in the compute dtype (float32 for 16-bit x):
//   block max          max_elem[o] = max(max_elem[o], A[o, k])            (init -inf)
//   block sum          exp_sum[o] += exp(A[o, k] - max_elem[o])           (init 0)
//   block log_softmax  B[o, v] = A[o, v] - max_elem[o] - log(exp_sum[o])
#include <algorithm>
#include <limits>

#include "ir/op/deduce_rules.h"
#include "ir/op/nn_common.h"
#include "ir/op/op_registry.h"
#include "ir/op/op_util.h"
#include "relax/ir/op/nn.h"

namespace relax {
namespace detail {

using namespace compute;  // NOLINT(google-build-using-namespace): the kernel vocabulary

// ---------------------------------------------------------------------------
// Helpers (nn_common.h).

std::string nn_op_name(const CallNode& call) { return call.callee.as<OpNode>()->name; }

std::string nn_arg_label(const CallNode& call, size_t index) {
  const OpInfo* info = find_op(nn_op_name(call));
  const std::string role = info != nullptr && index < info->args.size()
                               ? info->args[index].role
                               : "arg" + std::to_string(index);
  return arg_label(index, role);
}

absl::StatusOr<std::optional<DataType>> shared_dtype(const CallNode& call,
                                                     const std::vector<size_t>& indices) {
  std::optional<DataType> joined;
  std::optional<size_t> from;
  for (size_t i : indices) {
    const TensorStructInfoNode& t = tensor_of(call, i);
    if (!t.dtype) continue;
    if (joined && *joined != *t.dtype) {
      return op_error(nn_op_name(call), "dtypes differ: " + nn_arg_label(call, *from) + " is " +
                                            joined->to_string() + ", " + nn_arg_label(call, i) +
                                            " is " + t.dtype->to_string());
    }
    joined = t.dtype;
    from = i;
  }
  return joined;
}

absl::Status require_rank(const CallNode& call, size_t index, int rank) {
  const TensorStructInfoNode& t = tensor_of(call, index);
  if (t.ndim == kUnknownNDim || t.ndim == rank) return absl::OkStatus();
  return op_error(nn_op_name(call), nn_arg_label(call, index) + ": expected a tensor of rank " +
                                        std::to_string(rank) + ", got " +
                                        call.args[index].struct_info().to_string());
}

absl::Status require_dim(const CallNode& call, DeduceContext& ctx, size_t index, size_t dim_index,
                         const SymExpr& expected, const std::string& expected_what) {
  const SymExpr& dim = (*tensor_of(call, index).shape)[dim_index];
  if (structural_equal(dim, expected) || ctx.analyzer.prove_equal(dim, expected)) {
    return absl::OkStatus();
  }
  return op_error(nn_op_name(call), nn_arg_label(call, index) + " dim " +
                                        std::to_string(dim_index) + " is " + quoted(dim) +
                                        ", expected " + quoted(expected) + " (" + expected_what +
                                        "); " + nn_arg_label(call, index) + " is " +
                                        call.args[index].struct_info().to_string());
}

namespace {

// The factors of a product (e itself when it is not one).
void factors_of(const SymExpr& e, std::vector<SymExpr>& out) {
  if (e.kind() == SymKind::kMul) {
    factors_of(e.operand(0), out);
    factors_of(e.operand(1), out);
  } else {
    out.push_back(e);
  }
}

// Whether `dividend` is provably a multiple of `divisor`: the Analyzer's
// proof, or, for products such as `2 * h` over `h` (which the Analyzer does
// not prove, as h might be 0), the divisor's factors found among the
// dividend's with a constant left that divides what remains.
bool provably_divisible(Analyzer& analyzer, const SymExpr& dividend, const SymExpr& divisor) {
  if (structural_equal(dividend, divisor)) return true;
  if (analyzer.prove_equal(floormod(dividend, divisor), 0)) return true;
  std::vector<SymExpr> rest, wanted;
  factors_of(dividend, rest);
  factors_of(divisor, wanted);
  int64_t constant = 1;
  for (const SymExpr& f : wanted) {
    if (std::optional<int64_t> c = f.as_const()) {
      constant *= *c;
      continue;
    }
    auto it = std::find_if(rest.begin(), rest.end(),
                           [&](const SymExpr& r) { return structural_equal(r, f); });
    if (it == rest.end()) return false;
    rest.erase(it);
  }
  if (constant == 0) return false;
  return analyzer.prove_equal(floormod(dims_product(rest), constant), 0);
}

}  // namespace

absl::Status require_divisible(const CallNode& call, DeduceContext& ctx, const SymExpr& dividend,
                               const SymExpr& divisor, const std::string& what) {
  if (provably_divisible(ctx.analyzer, dividend, divisor)) return absl::OkStatus();
  return op_error(nn_op_name(call), what + ": " + quoted(dividend) +
                                        " is not provably divisible by " + quoted(divisor));
}

SymExpr load_as(const Buffer& buffer, std::vector<SymExpr> index, DataType dtype) {
  return as_dtype(buffer_load(buffer, std::move(index)), dtype);
}

SymExpr dims_product(const std::vector<SymExpr>& dims) {
  SymExpr p(1);
  for (const SymExpr& d : dims) p = p * d;
  return p;
}

namespace {

absl::StatusOr<StructInfo> deduce_log_softmax(const CallNode& call, const SoftmaxAttrs& attrs,
                                              DeduceContext&) {
  const TensorStructInfoNode& x = tensor_of(call, 0);
  if (x.ndim != kUnknownNDim) {
    absl::StatusOr<int64_t> axis = checked_axis(call, attrs.axis, x.ndim);
    if (!axis.ok()) return axis.status();
  }
  return call.args[0].struct_info();
}

template <typename T>
std::vector<T> without_axis(const std::vector<T>& dims, size_t axis) {
  std::vector<T> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != axis) out.push_back(dims[i]);
  }
  return out;
}

std::vector<SymExpr> with_axis(const std::vector<SymVar>& others, size_t axis, const SymExpr& at) {
  std::vector<SymExpr> out = as_indices(others);
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), at);
  return out;
}

absl::StatusOr<Lowering> legalize_log_softmax(const CallNode& call, const SoftmaxAttrs& attrs,
                                              Analyzer&) {
  const std::string op = "log_softmax";
  absl::StatusOr<const TensorStructInfoNode*> x = known_tensor(call, 0, op, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<const TensorStructInfoNode*> out = known_result(call, op, DtypeClass::kFloat);
  if (!out.ok()) return out.status();
  absl::StatusOr<int64_t> axis_or =
      normalize_axis(op, attrs.axis, static_cast<int64_t>((*x)->shape->size()));
  if (!axis_or.ok()) return axis_or.status();
  const auto axis = static_cast<size_t>(*axis_or);
  const DataType dtype = *(*out)->dtype;
  const DataType acc = compute_dtype(dtype);

  KernelBuilder kb(op, {*(*x)->shape, *(*out)->shape});
  Buffer a = kb.input("A", call.args[0]);
  Buffer b = kb.output("B", **out);
  PrimFuncBuilder& pb = kb.body();
  const std::vector<SymExpr> others = without_axis(a.shape(), axis);
  Buffer max_elem = pb.allocate("max_elem", others, acc, BufferScope::kWorkspace);
  Buffer exp_sum = pb.allocate("exp_sum", others, acc, BufferScope::kWorkspace);
  const SymExpr neg_inf = SymExpr::float_imm(-std::numeric_limits<double>::infinity(), acc);
  using Vars = std::vector<SymVar>;
  loop_block(
      pb, "max", others, {a.shape()[axis]},
      [&](const Vars& o, const Vars&) { pb.store(max_elem, as_indices(o), neg_inf); },
      [&](const Vars& o, const Vars& k) {
        pb.store(max_elem, as_indices(o),
                 max(buffer_load(max_elem, as_indices(o)), load_as(a, with_axis(o, axis, k[0]), acc)));
      });
  loop_block(
      pb, "sum", others, {a.shape()[axis]},
      [&](const Vars& o, const Vars&) {
        pb.store(exp_sum, as_indices(o), SymExpr::float_imm(0, acc));
      },
      [&](const Vars& o, const Vars& k) {
        SymExpr shifted =
            load_as(a, with_axis(o, axis, k[0]), acc) - buffer_load(max_elem, as_indices(o));
        pb.store(exp_sum, as_indices(o), buffer_load(exp_sum, as_indices(o)) + exp(shifted));
      });
  loop_block(pb, op, a.shape(), {}, nullptr, [&](const Vars& v, const Vars&) {
    const std::vector<SymExpr> o = as_indices(without_axis(v, axis));
    SymExpr value = load_as(a, as_indices(v), acc) - buffer_load(max_elem, o) -
                    log(buffer_load(exp_sum, o));
    pb.store(b, as_indices(v), as_dtype(value, dtype));
  });
  return kb.finish();
}

}  // namespace

void register_nn_ops(OpTable& table) {
  table.def<SoftmaxAttrs>("log_softmax",
                             "x minus the log of the sum of exp(x) along axis (default -1)")
      .arg("x", ArgKind::kTensor, DtypeClass::kFloat)
      .deduce(deduce_log_softmax)
      .legalize(legalize_log_softmax);
  register_nn_norm_ops(table);
  register_nn_attention_ops(table);
  register_nn_recurrent_ops(table);
}

}  // namespace detail

namespace op {

Expr log_softmax(Expr x, int64_t axis) {
  return make_call(make_op_or_die("log_softmax"), {std::move(x)},
                   detail::encode_attrs(detail::SoftmaxAttrs{axis}));
}

}  // namespace op
}  // namespace relax
