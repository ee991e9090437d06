// fuse-tir's merge of one primitive graph function into one PrimFunc
// (fuse_tir_merge.h; the design is at the top of fuse_tir.cc).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/ir/kernel_checks.h"
#include "relax/ir/struct_info.h"
#include "transform/fusion/fuse_tir_merge.h"

namespace relax::transform::fusion {
namespace {

using ExprNodeMap = absl::flat_hash_map<const ExprNode*, std::vector<Buffer>>;

/// An output of a member call: the binding's variable node and the output's index.
struct Slot {
  const ExprNode* producer;
  size_t index;
  bool operator==(const Slot& o) const { return producer == o.producer && index == o.index; }
};

/// One member call_tir of the group.
struct Member {
  const Binding* binding;
  const CallNode* call;
  std::vector<StructInfo> outputs;  ///< the output annotations (graph-level variables)
};

class GroupMerger {
 public:
  GroupMerger(const IRModule& mod, const std::string& name, const FunctionNode& func)
      : mod_(mod), name_(name), func_(func) {}

  absl::StatusOr<MergedGroup> merge() {
    if (absl::Status s = collect_members(); !s.ok()) return s;
    if (absl::Status s = build_signature(); !s.ok()) return s;
    if (absl::Status s = assign_buffers(); !s.ok()) return s;
    std::vector<Stmt> stmts;
    for (const Member& m : members_) {
      absl::StatusOr<std::optional<Stmt>> body = member_body(m);
      if (!body.ok()) return body.status();
      if (*body) stmts.push_back(**body);
    }
    Stmt body = stmts.size() == 1 ? stmts[0] : make_seq(std::move(stmts));
    // Intermediates that stayed buffers live for the whole kernel (the first
    // one outermost).
    for (auto it = intermediates_.rbegin(); it != intermediates_.rend(); ++it) {
      if (inlined_.contains(it->get())) continue;
      body = make_allocate(*it, body);
      ++result_.allocated;
    }
    std::vector<PrimParam> params = inputs_;
    for (const Buffer& b : outputs_) params.push_back({b, std::nullopt});
    for (const SymVar& v : shape_scalars_) params.push_back({std::nullopt, v});
    Attrs attrs;
    attrs["global_symbol"] = name_;
    attrs = with_nonempty_extents(std::move(attrs), nonempty_);
    result_.prim_func = make_prim_func(std::move(params), body, std::move(attrs));
    return result_;
  }

 private:
  absl::Status fail(const std::string& message) const {
    return absl::FailedPreconditionError(absl::StrCat("@", name_, ": ", message));
  }

  // The call_tir bindings (and items of their tuple results) of the body.
  absl::Status collect_members() {
    const auto* seq = func_.body.as<SeqExprNode>();
    if (seq == nullptr) return fail("the body is not a sequence of bindings");
    for (const BindingBlock& block : seq->blocks) {
      for (const Binding& b : block.bindings) {
        const std::string where = absl::StrCat("binding `", b.var.name_hint(), "`");
        if (b.is_match_cast) return fail(where + " is a match_cast");
        if (const auto* item = b.value.as<TupleGetItemNode>()) {
          auto it = item->tuple.as<VarNode>() != nullptr ? outputs_of_.find(item->tuple.get()) : outputs_of_.end();
          if (it == outputs_of_.end() || item->index < 0 || static_cast<size_t>(item->index) >= it->second.size()) {
            return fail(where + " takes an item of something other than a member's outputs");
          }
          aliases_.emplace(b.var.get(), it->second[item->index]);
          continue;
        }
        const auto* call = b.value.as<CallNode>();
        const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
        if (op == nullptr || op->name != "call_tir") return fail(where + " is not a call_tir");
        Member m{&b, call, {}};
        const StructInfo& out = call->sinfo_args.at(0);
        if (const auto* tuple = out.as<TupleStructInfoNode>()) {
          m.outputs = tuple->fields;
        } else {
          m.outputs = {out};
        }
        std::vector<Slot> slots;
        for (size_t i = 0; i < m.outputs.size(); ++i) slots.push_back({b.var.get(), i});
        if (out.as<TupleStructInfoNode>() != nullptr) {
          outputs_of_.emplace(b.var.get(), std::move(slots));
        } else {
          aliases_.emplace(b.var.get(), slots[0]);
        }
        members_.push_back(std::move(m));
      }
    }
    if (members_.empty()) return fail("the body has no call_tir");
    // The returned outputs, in order.
    std::vector<Expr> returned;
    if (const auto* tuple = seq->body.as<TupleNode>()) {
      returned = tuple->fields;
    } else {
      returned = {seq->body};
    }
    for (const Expr& r : returned) {
      if (auto it = aliases_.find(r.get()); it != aliases_.end()) {
        returned_.push_back(it->second);
      } else if (auto jt = outputs_of_.find(r.get()); jt != outputs_of_.end() && returned.size() == 1) {
        returned_ = jt->second;
      } else {
        return fail("the result is not an output of a member call (or a tuple of them)");
      }
    }
    for (size_t i = 0; i < returned_.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (returned_[i] == returned_[j]) return fail("the result returns one output twice");
      }
    }
    return absl::OkStatus();
  }

  // A graph-level expression over the fused kernel's variables.
  absl::StatusOr<SymExpr> to_kernel(const SymExpr& e) const {
    std::string missing;
    for_each_var(e, [&](const SymVar& v) {
      if (!g2k_.contains(v) && missing.empty()) missing = v.name();
    });
    if (!missing.empty()) {
      return fail(absl::StrCat("`", e.to_string(), "` uses `", missing, "`, which no parameter defines"));
    }
    return substitute(e, g2k_);
  }

  absl::StatusOr<Buffer> make_buffer(const std::string& name, const StructInfo& sinfo, BufferScope scope,
                                     const std::string& what) {
    const auto* t = sinfo.as<TensorStructInfoNode>();
    if (t == nullptr || !t->shape || !t->dtype) {
      return fail(absl::StrCat(what, " is ", sinfo.to_string(), ", not a Tensor of known shape and dtype"));
    }
    std::vector<SymExpr> shape;
    for (const SymExpr& d : *t->shape) {
      absl::StatusOr<SymExpr> k = to_kernel(d);
      if (!k.ok()) return k.status();
      shape.push_back(analyzer_.simplify(*k));
    }
    if (scope != BufferScope::kGlobal) {
      bool constant = true;
      for (const SymExpr& d : shape) constant &= d.as_const().has_value();
      scope = constant ? BufferScope::kLocal : BufferScope::kWorkspace;
    }
    return Buffer(name, *t->dtype, std::move(shape), {}, scope);
  }

  // The parameters: a buffer per Tensor, a scalar per Prim, and the variables
  // of a trailing Shape as trailing int64 scalars.
  absl::Status build_signature() {
    std::vector<StructInfo> sinfos;
    for (const Var& p : func_.params) sinfos.push_back(p.struct_info());
    for (const SymVar& v : defined_sym_vars(sinfos)) g2k_.emplace(v, SymVar(v.name(), v.dtype()));
    for (const SymVar& v : bare_dim_vars(sinfos)) {
      if (v.dtype() == DataType::int64()) analyzer_.bind(SymVar::from_expr(g2k_.at(v)), 0);
    }
    // A PrimFunc defines a variable by a bare buffer dim or a scalar parameter
    // only (a well-formed kernel does not solve `n * 2` for n), so a variable
    // that the group's parameters define only through an expression dim must
    // come in the trailing Shape (FUSION.md, Interface 2).
    absl::flat_hash_set<uint64_t> kernel_defined;
    for (const SymVar& v : bare_dim_vars(sinfos)) kernel_defined.insert(v.id());
    for (const StructInfo& sinfo : sinfos) {
      const auto* prim = sinfo.as<PrimStructInfoNode>();
      if (prim != nullptr && prim->value.defined() && prim->value.is_var()) {
        kernel_defined.insert(SymVar::from_expr(prim->value).id());
      }
    }
    for (const SymVar& v : defined_sym_vars(sinfos)) {
      if (!kernel_defined.contains(v.id())) {
        return fail(absl::StrCat("`", v.name(), "` is defined only through an expression dim of a parameter (",
                                 "a fused kernel needs it as a whole dim or in a trailing Shape)"));
      }
    }
    for (size_t i = 0; i < func_.params.size(); ++i) {
      const Var& p = func_.params[i];
      const StructInfo& sinfo = p.struct_info();
      const std::string what = absl::StrCat("parameter `", p.name_hint(), "`");
      if (sinfo.as<TensorStructInfoNode>() != nullptr) {
        absl::StatusOr<Buffer> b = make_buffer(p.name_hint(), sinfo, BufferScope::kGlobal, what);
        if (!b.ok()) return b.status();
        inputs_.push_back({*b, std::nullopt});
        buffers_of_.emplace(p.get(), std::vector<Buffer>{*b});
      } else if (const auto* prim = sinfo.as<PrimStructInfoNode>()) {
        // Kernels take integer and float scalars: a bool travels as int64.
        const DataType dtype = prim->dtype.is_bool() ? DataType::int64() : prim->dtype;
        SymVar scalar(p.name_hint(), dtype);
        if (prim->value.defined() && prim->value.is_var() && prim->value.dtype() == dtype) {
          scalar = SymVar::from_expr(g2k_.at(SymVar::from_expr(prim->value)));
        }
        inputs_.push_back({std::nullopt, scalar});
        scalar_of_.emplace(p.get(), prim->dtype.is_bool() ? cast(DataType::boolean(), scalar) : SymExpr(scalar));
      } else if (const auto* shape = sinfo.as<ShapeStructInfoNode>(); shape != nullptr && shape->values &&
                                                                    i + 1 == func_.params.size()) {
        for (const SymExpr& d : *shape->values) {
          if (!d.is_var()) return fail(absl::StrCat(what, " holds `", d.to_string(), "`, not a variable"));
          shape_scalars_.push_back(SymVar::from_expr(g2k_.at(SymVar::from_expr(d))));
        }
        result_.has_shape_param = true;
      } else {
        return fail(absl::StrCat(what, " is ", sinfo.to_string(),
                                 " (a fused kernel takes Tensors, Prims and one trailing Shape)"));
      }
    }
    return absl::OkStatus();
  }

  // The fused output buffers (returned outputs) and intermediates (the rest).
  absl::Status assign_buffers() {
    for (const Member& m : members_) {
      std::vector<Buffer> buffers;
      for (size_t i = 0; i < m.outputs.size(); ++i) {
        const Slot slot{m.binding->var.get(), i};
        std::string name = m.binding->var.name_hint();
        if (m.outputs.size() > 1) absl::StrAppend(&name, "_", i);
        size_t out_index = returned_.size();
        for (size_t k = 0; k < returned_.size(); ++k) {
          if (returned_[k] == slot) out_index = k;
        }
        const bool is_output = out_index < returned_.size();
        absl::StatusOr<Buffer> b = make_buffer(name, m.outputs[i],
                                               is_output ? BufferScope::kGlobal : BufferScope::kWorkspace,
                                               absl::StrCat("output ", i, " of `", m.binding->var.name_hint(), "`"));
        if (!b.ok()) return b.status();
        if (is_output) {
          slot_output_.emplace_back(out_index, *b);
        } else {
          intermediates_.push_back(*b);
        }
        buffers.push_back(*b);
      }
      buffers_of_.emplace(m.binding->var.get(), buffers);
    }
    outputs_.assign(returned_.size(), Buffer());
    for (const auto& [k, b] : slot_output_) outputs_[k] = b;
    // Items of tuple results name the buffer of their slot.
    for (const auto& [var, slot] : aliases_) {
      if (buffers_of_.contains(var)) continue;
      buffers_of_.emplace(var, std::vector<Buffer>{buffers_of_.at(slot.producer)[slot.index]});
    }
    return absl::OkStatus();
  }

  // The member's callee body rewritten into the fused kernel; nullopt when the
  // member's one output is an intermediate that its consumers compute inline.
  // Whether a member reading `m`'s output reads one element of it at several points of its
  // blocks (a matmul reads A[i, k] for every column j; a broadcast add reads B[j] for every
  // row): computed inline, the value would be computed that many times.
  bool reused_by_a_consumer(const Member& m) const {
    for (const Member& other : members_) {
      const auto* args = other.call->args.at(1).as<TupleNode>();
      const auto* gv = other.call->args.at(0).as<GlobalVarNode>();
      const auto* prim = gv != nullptr ? mod_.lookup(gv->name).as<PrimFuncNode>() : nullptr;
      if (args == nullptr || prim == nullptr) continue;
      for (size_t i = 0; i < args->fields.size() && i < prim->params.size(); ++i) {
        if (args->fields[i].get() != m.binding->var.get() || !prim->params[i].buffer) continue;
        if (reads_with_reuse(prim->body, *prim->params[i].buffer)) return true;
      }
    }
    return false;
  }

  absl::StatusOr<std::optional<Stmt>> member_body(const Member& m) {
    const std::string where = absl::StrCat("binding `", m.binding->var.name_hint(), "`");
    const auto* gv = m.call->args.at(0).as<GlobalVarNode>();
    const Expr callee = gv != nullptr ? mod_.lookup(gv->name) : Expr();
    const auto* prim = callee.as<PrimFuncNode>();
    if (prim == nullptr) return fail(where + " calls something other than a PrimFunc of the module");
    const auto* args = m.call->args.at(1).as<TupleNode>();
    if (args == nullptr) return fail(where + " passes its arguments other than as a tuple");
    std::vector<SymExpr> extra;
    if (m.call->args.size() == 3) {
      const auto* shape = m.call->args[2].struct_info().as<ShapeStructInfoNode>();
      if (shape == nullptr || !shape->values) return fail(where + " has extra_sym_args of unknown values");
      extra = *shape->values;
    }
    const std::vector<Buffer>& outs = buffers_of_.at(m.binding->var.get());
    if (prim->params.size() != args->fields.size() + outs.size() + extra.size()) {
      return fail(absl::StrCat(where, ": `", gv->name, "` has ", prim->params.size(), " parameters for ",
                               args->fields.size() + outs.size() + extra.size(), " arguments"));
    }
    ParamMatcher matcher;
    absl::flat_hash_map<const BufferNode*, Buffer> buffer_map;
    size_t p = 0;
    auto bind_buffer = [&](const PrimParam& param, const Buffer& actual) -> absl::Status {
      if (!param.buffer) return fail(absl::StrCat(where, ": parameter ", p, " of `", gv->name, "` is not a buffer"));
      buffer_map[param.buffer->get()] = actual;
      absl::Status s = matcher.bind_buffer(*param.buffer, actual,
                                           absl::StrCat("parameter `", param.buffer->name(), "` of `", gv->name, "`"));
      return s.ok() ? s : fail(where + ": " + std::string(s.message()));
    };
    auto bind_scalar = [&](const PrimParam& param, const SymExpr& actual) -> absl::Status {
      if (!param.scalar) return fail(absl::StrCat(where, ": parameter ", p, " of `", gv->name, "` is not a scalar"));
      matcher.bind_scalar(*param.scalar, actual);
      return absl::OkStatus();
    };
    for (const Expr& arg : args->fields) {
      const PrimParam& param = prim->params[p];
      absl::Status s;
      if (auto it = buffers_of_.find(arg.get()); it != buffers_of_.end() && it->second.size() == 1) {
        s = bind_buffer(param, it->second[0]);
      } else if (auto jt = scalar_of_.find(arg.get()); jt != scalar_of_.end()) {
        s = bind_scalar(param, jt->second);
      } else if (const auto* sinfo = arg.struct_info().as<PrimStructInfoNode>(); sinfo && sinfo->value.defined()) {
        absl::StatusOr<SymExpr> v = to_kernel(sinfo->value);
        s = v.ok() ? bind_scalar(param, *v) : v.status();
      } else {
        s = fail(absl::StrCat(where, ": argument ", p, " is neither a parameter, a member's output nor a known Prim"));
      }
      if (!s.ok()) return s;
      ++p;
    }
    for (const Buffer& b : outs) {
      if (absl::Status s = bind_buffer(prim->params[p], b); !s.ok()) return s;
      ++p;
    }
    for (const SymExpr& e : extra) {
      absl::StatusOr<SymExpr> v = to_kernel(e);
      if (!v.ok()) return v.status();
      if (absl::Status s = bind_scalar(prim->params[p], *v); !s.ok()) return s;
      ++p;
    }
    absl::StatusOr<SymVarMap<SymExpr>> vars = matcher.solve(analyzer_);
    if (!vars.ok()) return fail(where + ": " + std::string(vars.status().message()));
    // The member's required extents hold in the fused kernel, over its variables.
    for (const NonemptyExtent& e : nonempty_extents(prim->attrs)) {
      nonempty_.push_back({substitute(e.extent, *vars), e.what});
    }
    MemberRewriter rewriter(std::move(*vars), std::move(buffer_map), inlined_, block_names_);
    absl::StatusOr<Stmt> body = rewriter.rewrite(prim->body);
    if (!body.ok()) return fail(absl::StrCat(where, ": `", gv->name, "`: ", body.status().message()));
    // A producer of one intermediate, computed as one spatial block, is
    // eliminated: its consumers compute its value where they load it.
    if (outs.size() == 1 && outs[0]->scope != BufferScope::kGlobal) {
      std::optional<InlinedValue> v = inlinable_value(*body, outs[0], analyzer_);
      // Inlined, the value is computed at every load of it: once per element when each
      // element is read once, but once per reuse when a consumer reads an element at several
      // points (a matmul reads each element of an operand once per row of the other). A
      // value calling float functions (a rotary embedding's cos, sin and pow) that is reused
      // is worth computing once, into its buffer; cheap arithmetic (an int4 dequantisation's
      // shifts, masks and one multiply) is inlined all the same, saving the buffer's traffic.
      if (v && calls_float_functions(v->value) && reused_by_a_consumer(m)) v.reset();
      if (v) {
        inlined_.emplace(outs[0].get(), std::move(*v));
        ++result_.inlined;
        return std::optional<Stmt>();
      }
    }
    return std::optional<Stmt>(*body);
  }

  const IRModule& mod_;
  const std::string& name_;
  const FunctionNode& func_;
  Analyzer analyzer_;
  SymVarMap<SymExpr> g2k_;  ///< graph-level variable -> fused kernel variable
  std::vector<Member> members_;
  absl::flat_hash_map<const ExprNode*, Slot> aliases_;                ///< tensor var -> its slot
  absl::flat_hash_map<const ExprNode*, std::vector<Slot>> outputs_of_;  ///< tuple var -> its slots
  std::vector<Slot> returned_;
  ExprNodeMap buffers_of_;                               ///< var -> its buffer(s)
  absl::flat_hash_map<const ExprNode*, SymExpr> scalar_of_;  ///< Prim param -> its scalar
  std::vector<PrimParam> inputs_;
  std::vector<Buffer> outputs_;
  std::vector<std::pair<size_t, Buffer>> slot_output_;
  std::vector<SymVar> shape_scalars_;
  std::vector<Buffer> intermediates_;
  InlinedBuffers inlined_;
  std::vector<NonemptyExtent> nonempty_;  ///< the members' required extents, over the kernel's variables
  absl::flat_hash_set<std::string> block_names_;
  MergedGroup result_;
};

}  // namespace

absl::StatusOr<MergedGroup> merge_group(const IRModule& mod, const std::string& name, const FunctionNode& func) {
  return GroupMerger(mod, name, func).merge();
}

}  // namespace relax::transform::fusion
