// Constructors of the loop-level IR (prim_func.h).
//
// Each constructor checks the invariants a statement cannot be without -- a
// store has one integer index per buffer dimension and a value of the buffer's
// dtype, a condition is boolean, a loop ranges over integers -- and aborts
// (RELAX_CHECK) when one is broken: these are programming errors. Scoping (is
// a variable defined where it is used?) is not checked here; the
// PrimFuncBuilder reports it with source locations, and well_formed() checks
// whole modules.
//
// A PrimFunc's annotation is Func[(params) -> Tuple[()], impure]: a buffer
// parameter is annotated as the tensor it receives (its shape and dtype), an
// int64 scalar parameter `k` as Prim[int64, k] (so that, like a bare dim, it
// is defined by the call), another scalar as Prim[dtype]. The kernel writes
// its outputs into buffer arguments (destination-passing style), hence impure
// and returning the empty tuple.
#include "relax/ir/prim_func.h"

#include <string_view>
#include <utility>

#include "relax/ir/micro_kernel.h"
#include "relax/support/check.h"

namespace relax {
namespace {

bool is_int_value(const SymExpr& e) { return e.defined() && e.dtype().is_int() && e.dtype().lanes == 1; }

void check_indices(const Buffer& buffer, const std::vector<SymExpr>& indices, const char* what) {
  RELAX_CHECK(indices.size() == buffer.ndim())
      << what << " `" << buffer.name() << "` has " << indices.size()
      << " indices, but the buffer has rank " << buffer.ndim();
  // Integers, or int64 vectors (a vector store) of one lane count: the rule of loads.
  const std::string why = load_index_mismatch(buffer, indices);
  RELAX_CHECK(why.empty()) << what << " `" << buffer.name() << "`: " << why;
}

StructInfo param_sinfo(const PrimParam& p) {
  if (p.buffer) return tensor_sinfo(p.buffer->shape(), p.buffer->dtype());
  const SymVar& v = *p.scalar;
  if (v.dtype() == DataType::int64()) return prim_sinfo(v.dtype(), v);
  return prim_sinfo(v.dtype());
}

}  // namespace

std::string_view for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unrolled";
  }
  return "?";
}

Stmt make_for(SymVar loop_var, SymExpr min, SymExpr extent, ForKind kind, Stmt body) {
  RELAX_CHECK(loop_var.dtype().is_int()) << "loop variable `" << loop_var.name() << "` has dtype "
                                         << loop_var.dtype() << ", not an integer one";
  RELAX_CHECK(is_int_value(min)) << "the start of loop `" << loop_var.name() << "` is not an integer";
  RELAX_CHECK(is_int_value(extent)) << "the extent of loop `" << loop_var.name()
                                    << "` is not an integer";
  RELAX_CHECK(body.defined()) << "loop `" << loop_var.name() << "` has no body";
  return Stmt(std::make_shared<const ForNode>(std::move(loop_var), std::move(min),
                                              std::move(extent), kind, std::move(body)));
}

Stmt make_seq(std::vector<Stmt> stmts) {
  for (size_t i = 0; i < stmts.size(); ++i) {
    RELAX_CHECK(stmts[i].defined()) << "statement " << i << " of a sequence is undefined";
  }
  return Stmt(std::make_shared<const SeqStmtNode>(std::move(stmts)));
}

Stmt make_store(Buffer buffer, std::vector<SymExpr> indices, SymExpr value) {
  RELAX_CHECK(buffer.defined()) << "a store into an undefined buffer";
  check_indices(buffer, indices, "store to");
  RELAX_CHECK(value.defined()) << "a store to `" << buffer.name() << "` without a value";
  // A store takes what a load at the same indices gives: a vector with vector indices.
  const DataType expected = buffer_load(buffer, indices).dtype();
  RELAX_CHECK(value.dtype() == expected)
      << "store of " << value.dtype() << " `" << value << "` into `" << buffer.name()
      << "` of dtype " << buffer.dtype() << (expected != buffer.dtype() ? " at vector indices, expected " + expected.to_string() : std::string());
  return Stmt(std::make_shared<const BufferStoreNode>(std::move(buffer), std::move(indices),
                                                      std::move(value)));
}

Stmt make_if_then_else(SymExpr cond, Stmt then_case, Stmt else_case) {
  RELAX_CHECK(cond.defined() && cond.dtype().is_bool())
      << "the condition of an if is not boolean"
      << (cond.defined() ? ": `" + cond.to_string() + "`" : std::string());
  RELAX_CHECK(then_case.defined()) << "an if without a then part";
  return Stmt(std::make_shared<const IfThenElseNode>(std::move(cond), std::move(then_case),
                                                     std::move(else_case)));
}

Stmt make_let(SymVar var, SymExpr value, Stmt body) {
  RELAX_CHECK(value.defined()) << "let `" << var.name() << "` without a value";
  RELAX_CHECK(var.dtype() == value.dtype())
      << "let `" << var.name() << "` of dtype " << var.dtype() << " bound to " << value.dtype()
      << " `" << value << "`";
  RELAX_CHECK(body.defined()) << "let `" << var.name() << "` without a body";
  return Stmt(std::make_shared<const LetStmtNode>(std::move(var), std::move(value), std::move(body)));
}

Stmt make_allocate(Buffer buffer, Stmt body) {
  RELAX_CHECK(buffer.defined()) << "allocate of an undefined buffer";
  for (const SymExpr& d : buffer.shape()) {
    RELAX_CHECK(is_int_value(d)) << "a dimension of allocated buffer `" << buffer.name()
                                 << "` is not an integer";
  }
  RELAX_CHECK(body.defined()) << "allocate `" << buffer.name() << "` without a body";
  return Stmt(std::make_shared<const AllocateNode>(std::move(buffer), std::move(body)));
}

Stmt make_evaluate(SymExpr value) {
  RELAX_CHECK(value.defined()) << "evaluate of an undefined value";
  return Stmt(std::make_shared<const EvaluateNode>(std::move(value)));
}

Stmt make_block(std::string name, std::vector<IterVar> iter_vars, Stmt init, Stmt body) {
  for (const IterVar& iv : iter_vars) {
    RELAX_CHECK(iv.var.dtype().is_int())
        << "iteration variable `" << iv.var.name() << "` of block `" << name << "` is not an integer";
    RELAX_CHECK(is_int_value(iv.extent))
        << "the extent of `" << iv.var.name() << "` in block `" << name << "` is not an integer";
    RELAX_CHECK(is_int_value(iv.binding))
        << "the binding of `" << iv.var.name() << "` in block `" << name << "` is not an integer";
  }
  RELAX_CHECK(body.defined()) << "block `" << name << "` has no body";
  return Stmt(std::make_shared<const BlockNode>(std::move(name), std::move(iter_vars),
                                                std::move(init), std::move(body)));
}

ExternArg extern_scalar(SymExpr value) { return ExternArg{std::move(value), Buffer(), {}}; }

ExternArg extern_region(Buffer buffer, std::vector<SymExpr> indices) {
  return ExternArg{SymExpr(), std::move(buffer), std::move(indices)};
}

Stmt make_extern_call(std::string name, std::vector<ExternArg> args) {
  RELAX_CHECK(is_micro_kernel_name(name)) << "extern call of `" << name << "`: not a C identifier";
  for (size_t i = 0; i < args.size(); ++i) {
    const ExternArg& a = args[i];
    if (a.is_region()) {
      RELAX_CHECK(!a.value.defined()) << "argument " << i << " of extern call `" << name
                                      << "` is both a region and a scalar";
      check_indices(a.buffer, a.indices, "the region of");
    } else {
      RELAX_CHECK(a.value.defined()) << "argument " << i << " of extern call `" << name
                                     << "` is undefined";
      RELAX_CHECK(a.indices.empty()) << "scalar argument " << i << " of extern call `" << name
                                     << "` has indices";
    }
  }
  return Stmt(std::make_shared<const ExternCallNode>(std::move(name), std::move(args)));
}

Expr make_prim_func(std::vector<PrimParam> params, Stmt body, Attrs attrs) {
  std::vector<StructInfo> param_sinfos;
  for (size_t i = 0; i < params.size(); ++i) {
    const PrimParam& p = params[i];
    RELAX_CHECK(p.buffer.has_value() != p.scalar.has_value())
        << "PrimFunc parameter " << i << " must be either a buffer or a scalar";
    RELAX_CHECK(!p.buffer || p.buffer->defined()) << "PrimFunc parameter " << i
                                                  << " is an undefined buffer";
    param_sinfos.push_back(param_sinfo(p));
  }
  RELAX_CHECK(body.defined()) << "a PrimFunc needs a body";
  StructInfo sinfo = func_sinfo(std::move(param_sinfos), tuple_sinfo({}), /*pure=*/false);
  return Expr(std::make_shared<const PrimFuncNode>(std::move(params), std::move(body),
                                                   std::move(attrs), std::move(sinfo)));
}

}  // namespace relax
