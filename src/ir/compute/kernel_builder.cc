// Shared pieces of the legalization rules: operand checks, kernel parameters
// over fresh symbolic variables, loop nests around one block, broadcasting.
#include "relax/ir/compute.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "relax/ir/struct_info.h"
#include "relax/support/dtype_util.h"

namespace relax::compute {

absl::Status error(const std::string& op, const std::string& message) {
  return absl::InvalidArgumentError(op + ": " + message);
}

absl::StatusOr<const TensorStructInfoNode*> known_tensor(const CallNode& call, size_t index,
                                                         const std::string& op,
                                                         const std::string& role) {
  const StructInfo& sinfo = call.args[index].struct_info();
  const std::string label = "argument " + std::to_string(index) + " (" + role + ")";
  const auto* tensor = sinfo.as<TensorStructInfoNode>();
  if (tensor == nullptr) {
    return error(op, label + ": expected a Tensor, got " + sinfo.to_string());
  }
  if (!tensor->shape) {
    return error(op, label + ": expected a Tensor of known shape, got " + sinfo.to_string() +
                              " (rank-only and unknown shapes are not legalized yet)");
  }
  if (!tensor->dtype) {
    return error(op, label + ": expected a Tensor of known dtype, got " + sinfo.to_string());
  }
  if (!is_scalar_dtype(*tensor->dtype)) {
    return error(op, label + " " + sinfo.to_string() + " has dtype " + tensor->dtype->to_string() +
                         ", which kernels do not compute with");
  }
  return tensor;
}

absl::StatusOr<const TensorStructInfoNode*> known_result(const CallNode& call,
                                                         const std::string& op,
                                                         DtypeClass allowed) {
  const StructInfo& sinfo = call.struct_info();
  const auto* tensor = sinfo.as<TensorStructInfoNode>();
  if (tensor == nullptr || !tensor->shape || !tensor->dtype) {
    return error(
        op, "the result " + sinfo.to_string() + " is not a Tensor of known shape and dtype");
  }
  if (!is_scalar_dtype(*tensor->dtype)) {
    return error(op, "the result " + sinfo.to_string() + " has dtype " +
                         tensor->dtype->to_string() + ", which kernels do not compute with");
  }
  if (absl::Status s = check_dtype(op, *tensor->dtype, allowed, "the result " + sinfo.to_string());
      !s.ok()) {
    return s;
  }
  return tensor;
}

absl::Status check_dtype(const std::string& op, DataType dtype, DtypeClass allowed,
                         const std::string& what) {
  if (dtype_in_class(dtype, allowed)) return absl::OkStatus();
  return error(op, what + " has dtype " + dtype.to_string() + ", but the kernel computes with " +
                       std::string(dtype_class_text(allowed)) + " values");
}

absl::StatusOr<int64_t> normalize_axis(const std::string& op, int64_t axis, int64_t ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    return error(
        op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(ndim));
  }
  return a;
}

// ---------------------------------------------------------------------------
// KernelBuilder

KernelBuilder::KernelBuilder(const std::string& op,
                             const std::vector<std::vector<SymExpr>>& buffer_dims)
    : op_(op), b_(op) {
  absl::flat_hash_set<uint64_t> whole_dim;  // ids of variables that some dim is exactly
  std::vector<SymVar> vars;                 // every variable, in first-occurrence order
  absl::flat_hash_set<uint64_t> seen;
  for (const std::vector<SymExpr>& dims : buffer_dims) {
    for (const SymExpr& d : dims) {
      if (d.is_var()) whole_dim.insert(SymVar::from_expr(d).id());
      for_each_var(d, [&](const SymVar& v) {
        if (seen.insert(v.id()).second) vars.push_back(v);
      });
    }
  }
  // The scalars come last in the kernel, but a buffer dim must name their
  // variables, which scalar_param creates: they are declared first here and
  // moved behind the other parameters by finish().
  for (const SymVar& v : vars) {
    if (whole_dim.contains(v.id())) {
      to_kernel_.emplace(v, SymVar(v.name(), v.dtype()));
    } else {
      to_kernel_.emplace(v, b_.scalar_param(v.name(), v.dtype()));
      extra_args_.push_back(v);
    }
  }
}

std::vector<SymExpr> KernelBuilder::dims(const std::vector<SymExpr>& graph_dims) const {
  std::vector<SymExpr> out;
  out.reserve(graph_dims.size());
  for (const SymExpr& d : graph_dims) out.push_back(substitute(d, to_kernel_));
  return out;
}

Buffer KernelBuilder::input(const std::string& name, const Expr& arg) {
  const auto* t = arg.struct_info().as<TensorStructInfoNode>();
  return input(name, arg, *t->shape);
}

Buffer KernelBuilder::input(const std::string& name, const Expr& arg,
                            const std::vector<SymExpr>& graph_dims) {
  const auto* t = arg.struct_info().as<TensorStructInfoNode>();
  args_.push_back(arg);
  return b_.buffer_param(name, dims(graph_dims), *t->dtype);
}

SymExpr KernelBuilder::scalar_input(const std::string& name, const Expr& arg) {
  const auto* p = arg.struct_info().as<PrimStructInfoNode>();
  args_.push_back(arg);
  if (p->dtype.is_bool()) return as_dtype(b_.scalar_param(name, DataType::int64()), p->dtype);
  return b_.scalar_param(name, p->dtype);
}

Buffer KernelBuilder::output(const std::string& name, const TensorStructInfoNode& out) {
  return output(name, out, *out.shape);
}

Buffer KernelBuilder::output(const std::string& name, const TensorStructInfoNode& out,
                             const std::vector<SymExpr>& graph_dims) {
  return b_.buffer_param(name, dims(graph_dims), *out.dtype);
}

namespace {

// The PrimFuncBuilder names the C++ line that made each diagnostic
// ("file:line: message"); here that line is in relax's own source tree, which
// a user-facing message never shows. Keeps each message without its prefix.
std::string without_locations(const std::string& messages) {
  std::string out;
  size_t start = 0;
  while (start <= messages.size()) {
    size_t end = messages.find('\n', start);
    if (end == std::string::npos) end = messages.size();
    std::string_view line(messages.data() + start, end - start);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      size_t digits = colon + 1;
      while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
      if (digits > colon + 1 && line.substr(digits, 2) == ": ") line.remove_prefix(digits + 2);
    }
    if (start > 0) out += '\n';
    out += line;
    start = end + 1;
  }
  return out;
}

}  // namespace

absl::StatusOr<Lowering> KernelBuilder::finish() {
  absl::StatusOr<Expr> built = b_.build();
  if (!built.ok()) {
    return absl::Status(
        built.status().code(),
        "the " + op_ + " kernel: " + without_locations(std::string(built.status().message())));
  }
  const auto* func = built->as<PrimFuncNode>();
  const size_t leading = extra_args_.size();
  std::vector<PrimParam> params(func->params.begin() + static_cast<std::ptrdiff_t>(leading),
                                func->params.end());
  params.insert(params.end(), func->params.begin(),
                func->params.begin() + static_cast<std::ptrdiff_t>(leading));
  Lowering out;
  out.prim_func = make_prim_func(std::move(params), func->body, func->attrs);
  out.args = args_;
  out.extra_sym_args = extra_args_;
  return out;
}

// ---------------------------------------------------------------------------
// Loops and indices.

namespace {

void nest(PrimFuncBuilder& b, const std::string& name, const std::vector<SymExpr>& spatial,
          const std::vector<SymExpr>& reduce, const IterFn& init, const IterFn& body,
          std::vector<SymVar>& loop_vars) {
  const size_t depth = loop_vars.size();
  if (depth == spatial.size() + reduce.size()) {
    std::vector<PrimFuncBuilder::IterSpec> iters;
    for (size_t i = 0; i < loop_vars.size(); ++i) {
      iters.push_back(i < spatial.size()
                          ? PrimFuncBuilder::spatial(spatial[i], loop_vars[i])
                          : PrimFuncBuilder::reduce(reduce[i - spatial.size()], loop_vars[i]));
    }
    auto split = [&](const IterFn& fn) -> PrimFuncBuilder::BlockFn {
      if (!fn) return PrimFuncBuilder::BlockFn();
      return [&spatial, fn](const std::vector<SymVar>& v) {
        std::vector<SymVar> s(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(spatial.size()));
        std::vector<SymVar> r(v.begin() + static_cast<std::ptrdiff_t>(spatial.size()), v.end());
        fn(s, r);
      };
    };
    b.block(name, std::move(iters), split(init), split(body));
    return;
  }
  const bool is_spatial = depth < spatial.size();
  const SymExpr& extent = is_spatial ? spatial[depth] : reduce[depth - spatial.size()];
  const std::string loop_name =
      is_spatial ? "i" + std::to_string(depth) : "k" + std::to_string(depth - spatial.size());
  const ForKind kind = depth == 0 && is_spatial ? ForKind::kParallel : ForKind::kSerial;
  b.for_(loop_name, 0, extent, kind, [&](SymVar v) {
    loop_vars.push_back(v);
    nest(b, name, spatial, reduce, init, body, loop_vars);
    loop_vars.pop_back();
  });
}

}  // namespace

void loop_block(PrimFuncBuilder& b, const std::string& name, const std::vector<SymExpr>& spatial,
                const std::vector<SymExpr>& reduce, const IterFn& init, const IterFn& body) {
  std::vector<SymVar> loop_vars;
  if (reduce.empty() && init) {
    // Nothing to reduce (a reduction with axis=[]): a block has an init part
    // only with a reduction variable, so the init runs at the start of the body.
    const IterFn both = [&](const std::vector<SymVar>& s, const std::vector<SymVar>& r) {
      init(s, r);
      body(s, r);
    };
    nest(b, name, spatial, reduce, nullptr, both, loop_vars);
    return;
  }
  nest(b, name, spatial, reduce, init, body, loop_vars);
}

absl::StatusOr<BroadcastMap> broadcast_map(const std::string& op, const std::string& what,
                                           const std::vector<SymExpr>& operand,
                                           const std::vector<SymExpr>& out, Analyzer& analyzer) {
  if (operand.size() > out.size()) {
    return error(op, what + " has rank " + std::to_string(operand.size()) +
                              ", more than the result's " + std::to_string(out.size()));
  }
  const size_t offset = out.size() - operand.size();
  BroadcastMap map;
  for (size_t j = 0; j < operand.size(); ++j) {
    const SymExpr& d = operand[j];
    const SymExpr& o = out[offset + j];
    if (structural_equal(d, o) || analyzer.prove_equal(d, o)) {
      map.push_back(static_cast<int64_t>(offset + j));
    } else if (analyzer.prove_equal(d, 1)) {
      map.push_back(-1);
    } else {
      return error(op, what + " dim " + std::to_string(j) + " `" + d.to_string() +
                                "` neither equals the result's dim `" + o.to_string() +
                                "` nor is 1");
    }
  }
  return map;
}

std::vector<SymExpr> broadcast_index(const BroadcastMap& map, const std::vector<SymVar>& out_vars) {
  std::vector<SymExpr> indices;
  indices.reserve(map.size());
  for (int64_t pos : map) indices.push_back(pos < 0 ? SymExpr(0) : SymExpr(out_vars[pos]));
  return indices;
}

std::vector<SymExpr> as_indices(const std::vector<SymVar>& vars) {
  return std::vector<SymExpr>(vars.begin(), vars.end());
}

}  // namespace relax::compute
