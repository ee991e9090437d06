// combine-parallel-matmul: products of one operand by several weights become one product by
// the weights joined along their columns, sliced after.
//
// What it does. In a dataflow block of a graph function with a `weights` attribute
// (transform/weights/weight_params.h), the bindings
//   q = matmul(x, wq); k = matmul(x2, wk); v = matmul(x3, wv)
// whose left operands are the same value (the same variable, or variables bound to
// structurally equal pure calls: three `reshape(h, (rows, 2048))`) and whose right operands are
// 2-D weights of the same form and depth become, at the first of them,
//   wqkv = concat((wq, wk, wv), axis=1)          -- weights alone: lift-weight-transforms
//   qkv = matmul(x, wqkv)                         -- computes it once, at bind
//   q = strided_slice(qkv, [-1], [0], [2048]); k = ...; v = ...
// One matmul reads the left operand once, gives the library or the generated kernel one
// larger product (both threads busy on a 256-column projection), and one pass over the
// weights per step. The forms of a weight operand, each joined under its own transformation:
//   - a weight parameter (any dtype);
//   - astype(w) of a weight parameter (a bf16 or f16 weight widened in the graph): the
//     stored weights are joined, then widened;
//   - dequantize(q, scales) of two weight parameters, quantised along the depth (axis 0): the
//     packed values and the scales are joined along the columns, then dequantised.
// Members of a group have the same form, dtypes, attributes and depth, and static column
// counts. The joined weights' variable is named after the weights ("layers_0_wq_wk_wv"), which
// names the bound tensor lift-weight-transforms makes of it.
//
// Invariants. Relies on a normalised module; every rewritten variable keeps its annotation
// (the slice has the product's shape). Functions without a group stay pointer-identical.
//
// Not handled: weights that are not parameters named as weights (constants: fold-constant would
// join them at compile time, a separate question), weights of more than two dims (batched
// matmuls), products whose weight comes first (matmul(w, x)), groups across blocks, linear.
#include <map>
#include <set>
#include <tuple>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/op/linalg.h"
#include "relax/ir/op/manipulate.h"
#include "relax/ir/op/quantize.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/shape/analyzer.h"
#include "relax/transform/passes.h"
#include "transform/purity.h"
#include "transform/weights/weight_params.h"

namespace relax::transform {
namespace {

const CallNode* op_call(const Expr& e, const char* name) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr) return nullptr;
  const auto* op = call->callee.as<OpNode>();
  return op != nullptr && op->name == name ? call : nullptr;
}

// A static 2-D tensor annotation's dims, or nullopt.
std::optional<std::pair<SymExpr, int64_t>> matrix_dims(const Expr& e) {
  const auto* t = e.struct_info().as<TensorStructInfoNode>();
  if (t == nullptr || !t->shape || t->shape->size() != 2) return std::nullopt;
  const std::optional<int64_t> cols = (*t->shape)[1].as_const();
  if (!cols) return std::nullopt;
  return std::make_pair((*t->shape)[0], *cols);
}

// One product `var = matmul(lhs, weight)` of a group.
struct Member {
  Var var;
  const CallNode* matmul = nullptr;  // the binding's value, in the block being rewritten
  std::vector<Var> leaves;  // the weight parameters: {w} or {packed, scales}
  int64_t cols = 0;
  const ExprNode* transform_var = nullptr;  // WeightForm::transform_var
};

// The weight operand of a product: its form (how the leaves become the matrix), its leaves.
struct WeightForm {
  // "param", "astype" or "dequantize", with the call's attributes and the leaves' dtypes:
  // members of one group have equal signatures.
  std::string signature;
  const CallNode* transform = nullptr;  // astype / dequantize, or null
  std::vector<Var> leaves;
  const ExprNode* transform_var = nullptr;  // the variable bound to `transform`
};

class ParallelMatmulCombiner : public ExprMutator {
 public:
  // `library_rows` > 0: float products of more rows than that (not provably fewer) may be a
  // library's, which measured slower on joined matrices: such groups are not joinable.
  // `vetoed`: the keys (weights' names) of groups some function cannot join.
  ParallelMatmulCombiner(const IRModule& mod, const FunctionNode& fn, const Expr& function,
                         const std::vector<Var>& weights, int64_t library_rows,
                         const std::set<std::string>* vetoed)
      : ExprMutator(&mod), function_(function), library_rows_(library_rows), vetoed_(vetoed) {
    for (const Var& w : weights) weights_.insert(w.get());
    for (const SymBound& b : fn.upper_bounds) analyzer_.bind(b.var, 0, b.upper);
  }

  /// Plans every block without rewriting: the keys of the groups found and whether each is joinable.
  std::map<std::string, bool> survey(const FunctionNode& fn) {
    std::map<std::string, bool> out;
    const auto* body = fn.body.as<SeqExprNode>();
    if (body == nullptr) return out;
    for (const BindingBlock& block : body->blocks) {
      if (!block.is_dataflow) continue;
      plan(block, /*keep_all=*/true);
      for (const Group& g : groups_in_block_) {
        if (g.members.size() < 2) continue;
        auto [it, fresh] = out.emplace(key_of(g), g.joinable);
        if (!fresh) it->second = it->second && g.joinable;
      }
    }
    groups_in_block_.clear();
    member_of_.clear();
    dropped_.clear();
    return out;
  }

  int64_t groups() const { return groups_; }
  int64_t combined() const { return combined_; }

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    if (!block.is_dataflow) return ExprMutator::visit_binding_block(block);
    plan(block, /*keep_all=*/false);
    BindingBlock out = ExprMutator::visit_binding_block(block);
    member_of_.clear();
    dropped_.clear();
    return out;
  }

  void visit_binding(const Binding& binding) override {
    if (dropped_.contains(binding.var.get())) return;  // a widening only the joined product replaces
    auto it = member_of_.find(binding.var.get());
    if (it == member_of_.end()) return ExprMutator::visit_binding(binding);
    Group& group = groups_in_block_[it->second.first];
    const size_t index = it->second.second;
    if (!group.product.defined()) emit_product(group);
    const Member& m = group.members[index];
    const int64_t begin = group.offsets[index];
    const Expr slice = op::strided_slice(group.product, {-1}, {SymExpr(begin)}, {SymExpr(begin + m.cols)});
    if (binding.var.is_dataflow()) {
      set_var_remap(binding.var, emit(slice, binding.var.name_hint()));
    } else {
      emit_binding({binding.var, emit(slice), false, StructInfo()});
    }
  }

 private:
  struct Group {
    std::vector<Member> members;
    WeightForm form;  // the first member's
    std::vector<int64_t> offsets;
    Expr product;  // once emitted
    bool joinable = true;
  };

  // The weights' names of a group, which name it across functions.
  static std::string key_of(const Group& g) {
    std::string key;
    for (const Member& m : g.members) {
      for (const Var& leaf : m.leaves) absl::StrAppend(&key, leaf.name_hint(), ",");
    }
    return key;
  }

  // Whether a library may compute `product` (a float-weight product of rows not provably within
  // library_rows).
  bool library_may_take(const Member& m) {
    if (library_rows_ <= 0) return false;
    const auto* t = m.var.struct_info().as<TensorStructInfoNode>();
    if (t == nullptr || !t->shape) return true;
    SymExpr rows(int64_t{1});
    for (size_t i = 0; i + 1 < t->shape->size(); ++i) rows = rows * (*t->shape)[i];
    const ConstIntBound bound = analyzer_.const_int_bound(rows);
    return !bound.has_upper() || bound.max_value > library_rows_;
  }

  std::optional<WeightForm> weight_form(const Expr& rhs) const {
    auto leaf = [&](const Expr& e) -> std::optional<Var> {
      if (!e.as<VarNode>() || !weights_.contains(e.get())) return std::nullopt;
      return Var::from_expr(e);
    };
    auto dtype_of = [](const Var& v) {
      const auto* t = v.struct_info().as<TensorStructInfoNode>();
      return t != nullptr && t->dtype ? t->dtype->to_string() : std::string("?");
    };
    if (std::optional<Var> w = leaf(rhs)) return WeightForm{"param " + dtype_of(*w), nullptr, {*w}};
    auto bound = bound_.find(rhs.get());
    if (bound == bound_.end()) return std::nullopt;
    const Expr& value = bound->second;
    if (const CallNode* cast = op_call(value, "astype")) {
      std::optional<Var> w = leaf(cast->args[0]);
      if (!w) return std::nullopt;
      return WeightForm{absl::StrCat("astype ", dtype_of(*w), " ", weights_detail::attrs_text(cast->attrs)), cast, {*w},
                        rhs.get()};
    }
    if (const CallNode* dq = op_call(value, "dequantize")) {
      std::optional<Var> packed = leaf(dq->args[0]);
      std::optional<Var> scales = leaf(dq->args[1]);
      if (!packed || !scales) return std::nullopt;
      // Quantised along the depth: the columns are independent and may be joined.
      auto axis = dq->attrs.find("axis");
      if (axis == dq->attrs.end()) return std::nullopt;
      const auto* a = std::get_if<int64_t>(&axis->second);
      if (a == nullptr || (*a != 0 && *a != -2)) return std::nullopt;
      return WeightForm{absl::StrCat("dequantize ", dtype_of(*packed), " ", dtype_of(*scales), " ",
                                     weights_detail::attrs_text(dq->attrs)),
                        dq,
                        {*packed, *scales},
                        rhs.get()};
    }
    return std::nullopt;
  }

  // The groups of `block`: products of one left operand by weights of one form.
  void plan(const BindingBlock& block, bool keep_all) {
    groups_in_block_.clear();
    for (const Binding& b : block.bindings) {
      if (!b.is_match_cast && b.var.is_dataflow()) bound_[b.var.get()] = b.value;
    }
    // Left operand (by value) -> form signature -> group index.
    std::unordered_map<Expr, std::map<std::string, size_t>, StructuralHash, StructuralEqual> by_lhs;
    for (const Binding& b : block.bindings) {
      if (b.is_match_cast) continue;
      const CallNode* mm = op_call(b.value, "matmul");
      if (mm == nullptr || mm->args.size() != 2) continue;
      std::optional<std::pair<SymExpr, int64_t>> dims = matrix_dims(mm->args[1]);
      if (!dims) continue;
      std::optional<WeightForm> form = weight_form(mm->args[1]);
      if (!form) continue;
      // The left operand's value: a variable bound to a pure call compares by that call.
      Expr lhs_key = mm->args[0];
      if (auto it = bound_.find(lhs_key.get()); it != bound_.end()) {
        const auto* call = it->second.as<CallNode>();
        if (call != nullptr && is_pure_call(*call)) lhs_key = it->second;
      }
      const std::string signature = absl::StrCat(form->signature, " depth ", dims->first.to_string(), " ",
                                                 weights_detail::attrs_text(mm->attrs));
      auto& slots = by_lhs[lhs_key];
      auto [slot, fresh] = slots.emplace(signature, groups_in_block_.size());
      if (fresh) {
        Group g;
        g.form = *form;
        groups_in_block_.push_back(std::move(g));
      }
      Group& group = groups_in_block_[slot->second];
      group.members.push_back({b.var, mm, form->leaves, dims->second, form->transform_var});
      // Dequantised weights have no library product here; float ones may.
      const bool dequantized = form->transform != nullptr && form->transform->args.size() == 2;
      if (!dequantized && library_may_take(group.members.back())) group.joinable = false;
    }
    // A member's widening or dequantisation that nothing else reads goes with it.
    absl::flat_hash_map<const ExprNode*, int64_t> uses, replaced;
    class Counter : public ExprVisitor {
     public:
      explicit Counter(absl::flat_hash_map<const ExprNode*, int64_t>& counts) : counts_(counts) {}
      void visit_var(const Var& v) override { ++counts_[v.get()]; }

     private:
      absl::flat_hash_map<const ExprNode*, int64_t>& counts_;
    } counter(uses);
    counter.visit_expr(function_);
    for (size_t g = 0; g < groups_in_block_.size(); ++g) {
      Group& group = groups_in_block_[g];
      if (group.members.size() < 2) continue;
      if (!keep_all && (!group.joinable || (vetoed_ != nullptr && vetoed_->contains(key_of(group))))) continue;
      int64_t offset = 0;
      for (size_t i = 0; i < group.members.size(); ++i) {
        group.offsets.push_back(offset);
        offset += group.members[i].cols;
        member_of_[group.members[i].var.get()] = {g, i};
        if (group.members[i].transform_var != nullptr) ++replaced[group.members[i].transform_var];
      }
    }
    for (const auto& [var, count] : replaced) {
      if (uses[var] == count) dropped_.insert(var);
    }
  }

  // The joined weights and the one product, where the group's first member was.
  void emit_product(Group& group) {
    ++groups_;
    combined_ += static_cast<int64_t>(group.members.size());
    const size_t leaves = group.form.leaves.size();
    std::vector<Expr> joined;
    for (size_t l = 0; l < leaves; ++l) {
      std::vector<Expr> parts;
      for (const Member& m : group.members) parts.push_back(visit_expr(m.leaves[l]));
      joined.push_back(emit(op::concat(std::move(parts), 1), joined_name(group, l)));
    }
    Expr weight;
    if (group.form.transform == nullptr) {
      weight = joined[0];
    } else {
      const CallNode& t = *group.form.transform;
      std::vector<Expr> args = t.args;
      for (size_t l = 0; l < leaves; ++l) args[l] = joined[l];
      weight = emit(make_call(t.callee, std::move(args), t.attrs, t.sinfo_args));
    }
    const Member& first = group.members[0];
    const CallNode& mm = *first.matmul;
    group.product = emit(make_call(mm.callee, {visit_expr(mm.args[0]), weight}, mm.attrs, mm.sinfo_args));
  }

  // "layers_0_wq_wk_wv" from layers_0_wq, layers_0_wk, layers_0_wv: the first name, then what
  // follows the common prefix in the others.
  static std::string joined_name(const Group& group, size_t leaf) {
    const std::string& first = group.members[0].leaves[leaf].name_hint();
    std::string out = first;
    for (size_t i = 1; i < group.members.size(); ++i) {
      const std::string& other = group.members[i].leaves[leaf].name_hint();
      size_t common = 0;
      while (common < first.size() && common < other.size() && first[common] == other[common]) ++common;
      // Back to the start of the part that differs (after a '_').
      while (common > 0 && first[common - 1] != '_') --common;
      absl::StrAppend(&out, "_", other.substr(common));
    }
    return out;
  }

  Expr function_;
  int64_t library_rows_ = 0;
  const std::set<std::string>* vetoed_ = nullptr;
  Analyzer analyzer_;
  absl::flat_hash_set<const ExprNode*> weights_;
  absl::flat_hash_set<const ExprNode*> dropped_;
  absl::flat_hash_map<const ExprNode*, Expr> bound_;
  std::vector<Group> groups_in_block_;
  absl::flat_hash_map<const ExprNode*, std::pair<size_t, size_t>> member_of_;
  int64_t groups_ = 0;
  int64_t combined_ = 0;
};

class CombineParallelMatmulPass : public Pass {
 public:
  explicit CombineParallelMatmulPass(int64_t library_rows)
      : Pass(PassInfo("combine-parallel-matmul",
                      "joins the weights of products sharing their left operand into one product, sliced after")
                 .with_option("library-rows", library_rows,
                              "float-weight products of rows not provably within this many may be a library's "
                              "(0: none): their weights stay separate, in every function that reads them")
                 .with_statistic("groups", "products by joined weights made")
                 .with_statistic("combined_matmuls", "products that became slices of a joined one")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    const int64_t library_rows = ctx.int_option(*this, "library-rows");
    // First every function's groups: weights that one function cannot join (a library's
    // product of many rows) stay separate in all, so that no function reads the separate
    // weights beside another's joined copy (twice the memory).
    std::vector<std::tuple<std::string, const FunctionNode*, Expr, std::vector<Var>>> functions;
    std::set<std::string> vetoed;
    for (const auto& [name, func] : mod.functions()) {
      const auto* fn = func.as<FunctionNode>();
      if (fn == nullptr) continue;
      absl::StatusOr<std::vector<Var>> weights = weights_detail::weight_params(name, *fn);
      if (!weights.ok()) return weights.status();
      if (weights->empty()) continue;
      ParallelMatmulCombiner surveyor(mod, *fn, func, *weights, library_rows, nullptr);
      for (const auto& [key, joinable] : surveyor.survey(*fn)) {
        if (!joinable) vetoed.insert(key);
      }
      functions.emplace_back(name, fn, func, *std::move(weights));
    }
    IRModule out = mod;
    int64_t groups = 0, combined = 0;
    for (const auto& [name, fn, func, weights] : functions) {
      ParallelMatmulCombiner combiner(mod, *fn, func, weights, library_rows, &vetoed);
      Expr rewritten = combiner.visit_expr(func);
      if (absl::Status s = combiner.status(); !s.ok()) {
        return absl::InternalError(absl::StrCat("@", name, ": ", s.message()));
      }
      if (rewritten.same_as(func)) continue;
      groups += combiner.groups();
      combined += combiner.combined();
      out.add(name, rewritten);
    }
    ctx.add_statistic("groups", groups);
    ctx.add_statistic("combined_matmuls", combined);
    return out;
  }
};

}  // namespace

PassPtr create_combine_parallel_matmul_pass(int64_t library_rows) {
  return std::make_shared<CombineParallelMatmulPass>(library_rows);
}

}  // namespace relax::transform
