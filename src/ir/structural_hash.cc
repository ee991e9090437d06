// Structural hashing, consistent with structural_equal.
//
// The walker visits one tree in the order structural_equal.cc compares two, and
// numbers each variable the first time it meets it at a binding place (both
// trees of an equal pair meet their bound variables at the same places, so they
// number them alike). A bound variable hashes as its number; a free one as its
// identity. Lengths, kinds and flags are mixed in as well, so that reordering
// or regrouping changes the hash.
#include <algorithm>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "relax/ir/structural_equal.h"
#include "structural_common.h"

namespace relax {
namespace {

using detail::BindMode;

// Tags that keep different shapes of data apart in the hash.
enum class Tag : uint64_t {
  kUndefined = 0x51,
  kBoundVar,
  kFreeVar,
  kBoundBuffer,
  kFreeBuffer,
  kFunction,
  kAttrs,
};

class HashWalker {
 public:
  size_t result() const { return static_cast<size_t>(h_); }

  void module(const IRModule& mod) {
    std::vector<const std::pair<std::string, Expr>*> sorted;
    for (const auto& f : mod.functions()) sorted.push_back(&f);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* x, const auto* y) { return x->first < y->first; });
    mix(sorted.size());
    for (const auto* f : sorted) {
      reset();
      mix(Tag::kFunction);
      mix_string(f->first);
      expr(f->second);
    }
    reset();
    attrs(mod.attrs());
  }

  void expr(const Expr& e) {
    if (!e.defined()) return mix(Tag::kUndefined);
    mix(static_cast<uint64_t>(e.kind()));
    switch (e.kind()) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar:
        return var_use(e);
      case ExprKind::kGlobalVar:
        return mix_string(e.as<GlobalVarNode>()->name);
      case ExprKind::kConstant:
        return constant(e.as<ConstantNode>()->data);
      case ExprKind::kTuple:
        return expr_list(e.as<TupleNode>()->fields);
      case ExprKind::kTupleGetItem:
        mix(e.as<TupleGetItemNode>()->index);
        return expr(e.as<TupleGetItemNode>()->tuple);
      case ExprKind::kCall:
        return call(*e.as<CallNode>());
      case ExprKind::kShapeExpr:
        return sym_list(e.as<ShapeExprNode>()->values, BindMode::kUse);
      case ExprKind::kPrimValue:
        return sym(e.as<PrimValueNode>()->value, BindMode::kUse);
      case ExprKind::kStringImm:
        return mix_string(e.as<StringImmNode>()->value);
      case ExprKind::kIf: {
        const auto* n = e.as<IfNode>();
        expr(n->cond);
        expr(n->then_branch);
        return expr(n->else_branch);
      }
      case ExprKind::kSeqExpr:
        return seq(*e.as<SeqExprNode>());
      case ExprKind::kFunction:
        return function(*e.as<FunctionNode>());
      case ExprKind::kExternFunc:
        mix_string(e.as<ExternFuncNode>()->symbol);
        return sinfo(e.struct_info(), BindMode::kUse);
      case ExprKind::kOp:
        return mix_string(e.as<OpNode>()->name);
      case ExprKind::kPrimFunc:
        return prim_func(*e.as<PrimFuncNode>());
    }
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return mix(Tag::kUndefined);
    mix(static_cast<uint64_t>(s.kind()));
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* n = s.as<ForNode>();
        sym(n->min, BindMode::kUse);
        sym(n->extent, BindMode::kUse);
        mix(static_cast<uint64_t>(n->for_kind));
        sym(n->loop_var, BindMode::kDefine);
        return stmt(n->body);
      }
      case StmtKind::kSeq: {
        const auto& stmts = s.as<SeqStmtNode>()->stmts;
        mix(stmts.size());
        for (const Stmt& x : stmts) stmt(x);
        return;
      }
      case StmtKind::kBufferStore: {
        const auto* n = s.as<BufferStoreNode>();
        buffer_use(n->buffer);
        sym_list(n->indices, BindMode::kUse);
        return sym(n->value, BindMode::kUse);
      }
      case StmtKind::kIfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        sym(n->cond, BindMode::kUse);
        stmt(n->then_case);
        return stmt(n->else_case);
      }
      case StmtKind::kLetStmt: {
        const auto* n = s.as<LetStmtNode>();
        sym(n->value, BindMode::kUse);
        sym(n->var, BindMode::kDefine);
        return stmt(n->body);
      }
      case StmtKind::kAllocate:
        buffer_def(s.as<AllocateNode>()->buffer);
        return stmt(s.as<AllocateNode>()->body);
      case StmtKind::kEvaluate:
        return sym(s.as<EvaluateNode>()->value, BindMode::kUse);
      case StmtKind::kBlock:
        return block(*s.as<BlockNode>());
    }
  }

  void sinfo(const StructInfo& s, BindMode mode) {
    if (!s.defined()) return mix(Tag::kUndefined);
    mix(static_cast<uint64_t>(s.kind()));
    switch (s.kind()) {
      case StructInfoKind::kObject:
        return;
      case StructInfoKind::kPrim:
        mix_dtype(s.as<PrimStructInfoNode>()->dtype);
        return sym(s.as<PrimStructInfoNode>()->value, mode);
      case StructInfoKind::kShape:
        mix(s.as<ShapeStructInfoNode>()->ndim);
        return dims(s.as<ShapeStructInfoNode>()->values, mode);
      case StructInfoKind::kTensor: {
        const auto* n = s.as<TensorStructInfoNode>();
        mix(n->ndim);
        mix(n->dtype.has_value());
        if (n->dtype) mix_dtype(*n->dtype);
        mix(static_cast<uint64_t>(n->device.type));
        mix(n->device.index);
        return dims(n->shape, mode);
      }
      case StructInfoKind::kTuple: {
        const auto& fields = s.as<TupleStructInfoNode>()->fields;
        mix(fields.size());
        for (const StructInfo& f : fields) sinfo(f, mode);
        return;
      }
      case StructInfoKind::kFunc: {
        const auto* n = s.as<FuncStructInfoNode>();
        mix(n->params.has_value());
        mix(n->pure);
        if (n->params) {
          prebind(detail::binding_sym_vars(*n->params));
          mix(n->params->size());
          for (const StructInfo& p : *n->params) sinfo(p, BindMode::kDefine);
        }
        return sinfo(n->ret, BindMode::kUse);
      }
    }
  }

  // Only a top-level bare variable may be bound (as in structural_equal.cc).
  void sym(const SymExpr& e, BindMode mode) {
    if (!e.defined()) return mix(Tag::kUndefined);
    mix(static_cast<uint64_t>(e.kind()));
    mix_dtype(e.dtype());
    if (e.kind() == SymKind::kVar) return sym_var(SymVar::from_expr(e), mode);
    mix(static_cast<uint64_t>(e->value()));
    mix(e.num_operands());
    if (e.kind() == SymKind::kBufferLoad) buffer_use(e->buffer_node());
    for (size_t i = 0; i < e.num_operands(); ++i) sym(e.operand(i), BindMode::kUse);
  }

 private:
  template <typename T>
  void mix(T value) {
    const auto v = static_cast<uint64_t>(value);
    // A 64-bit mix (boost::hash_combine's shape with a stronger multiplier).
    h_ ^= (v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2)) * 0xff51afd7ed558ccdULL;
  }
  void mix_string(const std::string& s) { mix(absl::HashOf(s)); }
  void mix_dtype(DataType t) {
    mix((static_cast<uint64_t>(t.code) << 24) | (static_cast<uint64_t>(t.bits) << 16) | t.lanes);
  }

  void reset() {
    var_index_.clear();
    sym_index_.clear();
    buf_index_.clear();
    next_index_ = 0;
  }

  void var_use(const Expr& v) {
    auto it = var_index_.find(v.get());
    if (it != var_index_.end()) {
      mix(Tag::kBoundVar);
      return mix(it->second);
    }
    mix(Tag::kFreeVar);
    mix(reinterpret_cast<uintptr_t>(v.get()));
  }

  void var_def(const Var& v, BindMode annotation_mode) {
    mix(static_cast<uint64_t>(v.kind()));
    sinfo(v.struct_info(), annotation_mode);
    if (!var_index_.contains(v.get())) var_index_[v.get()] = next_index_++;
  }

  // As EqualWalker::prebind: numbers, in order, the variables a parameter list binds.
  void prebind(const std::vector<SymVar>& vars) {
    for (const SymVar& v : vars) {
      if (!sym_index_.contains(v.id())) sym_index_[v.id()] = next_index_++;
    }
  }

  void sym_var(const SymVar& v, BindMode mode) {
    auto it = sym_index_.find(v.id());
    if (it == sym_index_.end() && mode == BindMode::kDefine) {
      it = sym_index_.emplace(v.id(), next_index_++).first;
    }
    if (it != sym_index_.end()) {
      mix(Tag::kBoundVar);
      return mix(it->second);
    }
    mix(Tag::kFreeVar);
    mix(v.id());
  }

  void sym_list(const std::vector<SymExpr>& values, BindMode mode) {
    mix(values.size());
    for (const SymExpr& v : values) sym(v, mode);
  }

  void dims(const std::optional<std::vector<SymExpr>>& values, BindMode mode) {
    mix(values.has_value());
    if (values) sym_list(*values, mode);
  }

  void buffer_use(const Buffer& b) { buffer_use(b.get()); }
  void buffer_use(const BufferNode* b) {
    auto it = buf_index_.find(b);
    if (it != buf_index_.end()) {
      mix(Tag::kBoundBuffer);
      return mix(it->second);
    }
    mix(Tag::kFreeBuffer);
    mix(reinterpret_cast<uintptr_t>(b));
  }

  void buffer_def(const Buffer& b) {
    mix_dtype(b.dtype());
    mix(static_cast<uint64_t>(b->scope));
    sym_list(b.shape(), BindMode::kDefine);
    sym_list(b->strides, BindMode::kDefine);
    if (!buf_index_.contains(b.get())) buf_index_[b.get()] = next_index_++;
  }

  void constant(const runtime::Tensor& t) {
    mix_dtype(t.dtype());
    mix(t.shape().size());
    for (int64_t d : t.shape()) mix(d);
    std::optional<std::string> bytes = detail::host_bytes(t);
    mix(bytes ? absl::HashOf(*bytes) : reinterpret_cast<uintptr_t>(t.data()));
  }

  void attrs(const Attrs& a) {
    mix(Tag::kAttrs);
    mix(a.size());
    for (const auto& [key, value] : a) {
      mix_string(key);
      mix(value.index());
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, double>) {
              mix(detail::double_bits(x));
            } else if constexpr (std::is_same_v<T, std::string>) {
              mix_string(x);
            } else if constexpr (std::is_same_v<T, DataType>) {
              mix_dtype(x);
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
              mix(x.size());
              for (int64_t i : x) mix(i);
            } else if constexpr (std::is_same_v<T, std::vector<SymExpr>>) {
              sym_list(x, BindMode::kUse);
            } else {
              mix(x);
            }
          },
          value);
    }
  }

  void expr_list(const std::vector<Expr>& exprs) {
    mix(exprs.size());
    for (const Expr& x : exprs) expr(x);
  }

  void call(const CallNode& n) {
    expr(n.callee);
    expr_list(n.args);
    attrs(n.attrs);
    mix(n.sinfo_args.size());
    for (const StructInfo& s : n.sinfo_args) sinfo(s, BindMode::kUse);
  }

  void seq(const SeqExprNode& n) {
    mix(n.blocks.size());
    for (const BindingBlock& block : n.blocks) {
      mix(block.is_dataflow);
      mix(block.bindings.size());
      for (const Binding& b : block.bindings) {
        mix(b.is_match_cast);
        expr(b.value);
        if (b.is_match_cast) {
          prebind(detail::binding_sym_vars({b.cast_sinfo}));
          sinfo(b.cast_sinfo, BindMode::kDefine);
        }
        var_def(b.var, BindMode::kUse);
      }
    }
    expr(n.body);
  }

  void function(const FunctionNode& n) {
    prebind(detail::binding_sym_vars(n.params));
    mix(n.params.size());
    for (const Var& p : n.params) var_def(p, BindMode::kDefine);
    mix(n.upper_bounds.size());
    for (const SymBound& b : n.upper_bounds) {
      mix(b.upper);
      sym(b.var, BindMode::kUse);
    }
    attrs(n.attrs);
    mix(n.pure);
    sinfo(n.ret, BindMode::kUse);
    expr(n.body);
  }

  void prim_func(const PrimFuncNode& n) {
    prebind(detail::binding_sym_vars(n.params));
    mix(n.params.size());
    for (const PrimParam& p : n.params) {
      mix(p.buffer.has_value());
      if (p.buffer) {
        buffer_def(*p.buffer);
      } else {
        sym(*p.scalar, BindMode::kDefine);
      }
    }
    attrs(n.attrs);
    stmt(n.body);
  }

  void block(const BlockNode& n) {
    mix_string(n.name);
    mix(n.iter_vars.size());
    for (const IterVar& iv : n.iter_vars) {
      mix(static_cast<uint64_t>(iv.type));
      sym(iv.extent, BindMode::kUse);
      sym(iv.binding, BindMode::kUse);
      sym(iv.var, BindMode::kDefine);
    }
    stmt(n.init);
    stmt(n.body);
  }

  uint64_t h_ = 0x2545f4914f6cdd1dULL;
  uint64_t next_index_ = 0;
  absl::flat_hash_map<const ExprNode*, uint64_t> var_index_;
  absl::flat_hash_map<uint64_t, uint64_t> sym_index_;
  absl::flat_hash_map<const BufferNode*, uint64_t> buf_index_;
};

}  // namespace

size_t structural_hash(const Expr& e) {
  HashWalker w;
  w.expr(e);
  return w.result();
}

size_t structural_hash(const Stmt& s) {
  HashWalker w;
  w.stmt(s);
  return w.result();
}

size_t structural_hash(const StructInfo& sinfo) {
  HashWalker w;
  w.sinfo(sinfo, BindMode::kUse);
  return w.result();
}

size_t structural_hash(const IRModule& mod) {
  HashWalker w;
  w.module(mod);
  return w.result();
}

}  // namespace relax
