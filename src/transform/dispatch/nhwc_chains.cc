// The last step of dispatch-library with oneDNN (nhwc_chains.h): chains of oneDNN convolutions
// joined by elementwise ops pass their activations in NHWC to each other.
//
// A convolution of packed weights runs on activations in the layout oneDNN prefers, reordered
// from and to relax's NC[H]W around every call (runtime/onednn/onednn_conv.cc); in a
// convolutional network those reorders cost as much as the convolutions (PaddleOCR v4 rec: 60 of
// them a call, 10.6 of 24 ms). Between two convolutions there is mostly an elementwise chain (a
// folded batch norm, an activation) that does not care how its elements are laid out, as long
// as every full-size operand is laid out the same way. So where
//   a = onednn.conv1d/conv2d(x, ...)          (no residual add)
//   r... = elementwise ops of a, of each other, and of constants of one element
//   c = onednn.conv1d/conv2d(r_last or a, ...) (as its data; no residual add)
// and every value of the chain is read only inside it (r_last only as c's data), a's call
// writes its output in NHWC (`:nhwc_out`) and c's reads its data in NHWC (`:nhwc_in`): the
// tensors between them keep their NC[H]W dims and bytes but hold N[H]WC, which both oneDNN's
// depthwise (brdgmm) and 1x1 (brgconv) kernels read natively, and the two reorders are gone.
// (nChw16c was tried first: oneDNN's depthwise kernel wants NHWC, and a depthwise call with one
// side forced to nChw16c fell to its reference implementation, 10x slower.)
#include "transform/dispatch/nhwc_chains.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "relax/ir/op.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/visitor.h"
#include "relax/runtime/onednn_call.h"

namespace relax::transform {
namespace {

// A oneDNN convolution call (call_dps_library of an onednn.conv* name): its parsed name.
std::optional<runtime::onednn::OpSpec> conv_call(const Expr& value) {
  const auto* call = value.as<CallNode>();
  if (call == nullptr || call->args.size() < 2) return std::nullopt;
  const auto* op = call->callee.as<OpNode>();
  const auto* fn = call->args[0].as<ExternFuncNode>();
  if (op == nullptr || op->name != "call_dps_library" || fn == nullptr) return std::nullopt;
  if (!absl::StartsWith(fn->symbol, runtime::onednn::kFamilyPrefix)) return std::nullopt;
  absl::StatusOr<runtime::onednn::OpSpec> spec = runtime::onednn::parse_name(fn->symbol);
  // Convolutions only: oneDNN's deconvolution has no NHWC kernel to fall on.
  if (!spec.ok() || !spec->is_conv() || spec->kind == runtime::onednn::OpKind::kConv2dTranspose || spec->num_adds > 0) {
    return std::nullopt;
  }
  return *spec;
}

// Whether a tensor annotation is a float32 activation of 3 or 4 dims with known dims.
bool blockable(const StructInfo& sinfo) {
  const auto* t = sinfo.as<TensorStructInfoNode>();
  return t != nullptr && t->shape && (t->shape->size() == 3 || t->shape->size() == 4) && t->dtype &&
         *t->dtype == DataType::float32();
}

// Whether two tensor annotations have the same dims and dtype (devices aside).
bool same_tensor(const StructInfo& a, const StructInfo& b) {
  const auto* x = a.as<TensorStructInfoNode>();
  const auto* y = b.as<TensorStructInfoNode>();
  if (x == nullptr || y == nullptr || !x->shape || !y->shape || x->dtype != y->dtype || x->shape->size() != y->shape->size()) {
    return false;
  }
  for (size_t i = 0; i < x->shape->size(); ++i) {
    if (!SymExprEqual()((*x->shape)[i], (*y->shape)[i])) return false;
  }
  return true;
}

// Whether `e` is a tensor of one element (a constant broadcast to every position alike).
bool one_element(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape) return false;
  for (const SymExpr& d : *t->shape) {
    if (!d.is_const(1)) return false;
  }
  return true;
}

// The DataflowVars' values and uses (by binding variable) of one function.
class Uses : public ExprVisitor {
 public:
  absl::flat_hash_map<const ExprNode*, Expr> value;
  absl::flat_hash_map<const ExprNode*, std::vector<const ExprNode*>> users;  // by the user's binding var
  absl::flat_hash_set<const ExprNode*> escapes;  // used other than as an argument of a bound call
  std::vector<const ExprNode*> order;             // the binding variables, in order

  void visit_binding(const Binding& binding) override {
    order.push_back(binding.var.get());
    if (binding.var.is_dataflow() && !binding.is_match_cast) {
      value.emplace(binding.var.get(), binding.value);
    }
    current_ = binding.var.get();
    const auto* call = binding.is_match_cast ? nullptr : binding.value.as<CallNode>();
    if (call != nullptr) {
      for (const Expr& arg : call->args) note(arg);
    } else {
      in_other_ = true;
      ExprVisitor::visit_binding(binding);
      in_other_ = false;
    }
    current_ = nullptr;
  }
  void visit_var(const Var& var) override {
    if (in_other_ || current_ == nullptr) escapes.insert(var.get());
  }

 private:
  void note(const Expr& arg) {
    if (const auto* tuple = arg.as<TupleNode>()) {
      for (const Expr& f : tuple->fields) note(f);
      return;
    }
    if (arg.kind() == ExprKind::kDataflowVar || arg.kind() == ExprKind::kVar) users[arg.get()].push_back(current_);
  }
  const ExprNode* current_ = nullptr;
  bool in_other_ = false;
};

// The onednn call's data argument (the first field of its argument tuple).
Expr data_arg(const Expr& value) {
  const auto* call = value.as<CallNode>();
  const auto* args = call->args[1].as<TupleNode>();
  return args == nullptr || args->fields.empty() ? Expr() : args->fields[0];
}

class Renamer : public ExprMutator {
 public:
  Renamer(const IRModule& mod, const absl::flat_hash_map<const ExprNode*, std::string>& names)
      : ExprMutator(&mod), names_(names) {}
  Expr visit_call(const Expr& e, const CallNode& node) override {
    Expr visited = ExprMutator::visit_call(e, node);
    auto it = names_.find(&node);
    if (it == names_.end()) return visited;
    const auto* call = visited.as<CallNode>();
    std::vector<Expr> args = call->args;
    args[0] = make_extern_func(it->second, call->args[0].struct_info());
    return make_call(call->callee, args, call->attrs, call->sinfo_args, visited.struct_info());
  }

 private:
  const absl::flat_hash_map<const ExprNode*, std::string>& names_;
};

}  // namespace

absl::StatusOr<IRModule> join_nhwc_chains(const IRModule& mod, int64_t* joined) {
  IRModule out = mod;
  for (const auto& [name, fn] : mod.functions()) {
    const auto* f = fn.as<FunctionNode>();
    if (f == nullptr) continue;
    Uses uses;
    uses.visit_expr(fn);
    absl::flat_hash_map<const ExprNode*, runtime::onednn::OpSpec> specs;  // by the call node
    for (const auto& [var, value] : uses.value) {
      if (std::optional<runtime::onednn::OpSpec> spec = conv_call(value)) specs.emplace(value.get(), *spec);
    }
    if (specs.empty()) continue;
    absl::flat_hash_map<const ExprNode*, runtime::onednn::OpSpec> marked;
    for (size_t p = 0; p < uses.order.size(); ++p) {
      const ExprNode* var = uses.order[p];
      auto bound = uses.value.find(var);
      if (bound == uses.value.end()) continue;
      const Expr& value = bound->second;
      auto first = specs.find(value.get());
      if (first == specs.end() || !blockable(value.struct_info())) continue;
      // The chain from the convolution's output, in binding order: elementwise ops of chain
      // values and one-element constants join it; the first oneDNN convolution reading a chain
      // value as its data ends it; any other reader of a chain value breaks it.
      absl::flat_hash_set<const ExprNode*> in_chain = {var};
      const ExprNode* end = nullptr;
      bool ok = true;
      for (size_t q = p + 1; q < uses.order.size() && ok && end == nullptr; ++q) {
        auto user = uses.value.find(uses.order[q]);
        if (user == uses.value.end()) continue;
        const Expr& v = user->second;
        const auto* call = v.as<CallNode>();
        if (call == nullptr) continue;
        int reads = 0;
        auto count = [&](const Expr& arg) { reads += in_chain.contains(arg.get()) ? 1 : 0; };
        for (const Expr& arg : call->args) {
          if (const auto* tuple = arg.as<TupleNode>()) {
            for (const Expr& field : tuple->fields) count(field);
          } else {
            count(arg);
          }
        }
        if (reads == 0) continue;
        if (specs.contains(v.get())) {
          const Expr data = data_arg(v);
          ok = reads == 1 && data.defined() && in_chain.contains(data.get()) && blockable(data.struct_info());
          if (ok) end = v.get();
          continue;
        }
        const auto* op = call->callee.as<OpNode>();
        const OpInfo* info = op == nullptr ? nullptr : find_op(op->name);
        ok = info != nullptr && info->family == "elementwise" && same_tensor(v.struct_info(), value.struct_info());
        for (const Expr& arg : call->args) {
          ok = ok && (in_chain.contains(arg.get()) || one_element(arg) || arg.kind() == ExprKind::kPrimValue);
        }
        if (ok) in_chain.insert(uses.order[q]);
      }
      if (!ok || end == nullptr) continue;
      // Every chain value is read only inside the chain (and the last by the convolution).
      for (const ExprNode* c : in_chain) {
        if (uses.escapes.contains(c)) ok = false;
        for (const ExprNode* reader : uses.users[c]) {
          auto rv = uses.value.find(reader);
          ok = ok && (in_chain.contains(reader) || (rv != uses.value.end() && rv->second.get() == end));
        }
      }
      if (!ok) continue;
      marked.try_emplace(value.get(), first->second).first->second.nhwc_out = true;
      marked.try_emplace(end, specs.at(end)).first->second.nhwc_in = true;
    }
    if (marked.empty()) continue;
    absl::flat_hash_map<const ExprNode*, std::string> names;
    for (const auto& [call, spec] : marked) names.emplace(call, runtime::onednn::to_name(spec));
    if (joined != nullptr) *joined += static_cast<int64_t>(names.size());
    Renamer renamer(mod, names);
    Expr rewritten = renamer.visit_expr(fn);
    if (absl::Status s = renamer.status(); !s.ok()) return s;
    out.add(name, rewritten);
  }
  return out;
}

}  // namespace relax::transform
