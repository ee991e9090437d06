// fuse-tir: each group that fuse-ops made (a graph function marked
// `primitive = true`, FUSION.md Interface 2) becomes one PrimFunc of the same
// name, and each call of it a call_tir.
//
// What it does. For a primitive function
//
//   func @fused_matmul_add_relu(x: Tensor[(b, 16), f32], w: Tensor[(16, 32), f32],
//                               c: Tensor[(32,), f32]) -> Tensor[(b, 32), f32]
//       attrs {primitive = true, private = true} {
//     dataflow { lv0 = call_tir(@matmul, (x, w), ...); lv1 = call_tir(@add, (lv0, c), ...);
//                output gv = call_tir(@relu, (lv1,), ...) }
//     return gv
//   }
//
// the pass builds `prim_func @fused_matmul_add_relu(x, w, c, gv)` holding the
// matmul's loops writing a local buffer lv0, then relu's loops computing
// max(lv0[i, j] + c[j], 0) into gv (add was inlined), and rewrites every call
// `@fused_matmul_add_relu(x, w, c)` in the other graph functions into
// `call_tir(@fused_matmul_add_relu, (x, w, c), sinfo=<the call's annotation>)`.
//
// Stages, per primitive function (fuse_tir_merge.cc):
//   1. the signature: a buffer per Tensor parameter (its annotation's dims over
//      fresh kernel variables, one per symbolic variable the parameters
//      define), a scalar per Prim parameter (a bool one as int64, the way
//      kernels take scalars), then an output buffer per returned tensor (a
//      tuple result gives several), then an int64 scalar per variable of a
//      trailing `Shape[(m, ...)]` parameter: the call passes those values as
//      its extra_sym_args. Every variable the body needs is thus a bare dim of
//      a buffer or a scalar parameter, which is how a well-formed kernel
//      defines its variables (the code generator binds both;
//      cpp_codegen_args.cc). A variable the parameters define only through an
//      expression dim (`x: Tensor[(n * 2,)]` without n in the Shape) keeps the
//      group as it is;
//   2. per member call_tir, in order, the callee's variables in kernel terms
//      (fuse_tir_rewrite.cc, ParamMatcher): a callee scalar takes the value
//      bound to it (a Prim argument, an extra_sym_arg); a bare-variable dim of
//      a callee buffer takes the dim of the buffer bound to it; a variable that
//      appears only inside expression dims (`n - 1`, `n * 2`) is solved from
//      one of them (solve_linear: the only unknown, degree 1, a constant
//      coefficient dividing exactly; a well-formed kernel never needs this,
//      as it defines each variable by a whole dim or a scalar, but an
//      unverified one may); then every dim (`k - 1` against `n - 1` once k is
//      n) is proven equal to the bound buffer's with the Analyzer;
//   3. the callee body is copied with those variables substituted, its buffer
//      parameters replaced by the fused buffers (a group parameter, a fused
//      output, or an intermediate), and every loop, iteration and let variable
//      and every buffer it allocates made fresh, so that members calling one
//      kernel twice do not share variables; block names are made unique
//      (`add`, `add_1`) and blocks keep their iteration kinds, so loop-pattern
//      analysis reads the result as it read the members;
//   4. an intermediate (an output no one outside the group sees) whose
//      producer is one spatial block storing `T[v0, ..., vk] = value`
//      (indices exactly its iteration variables, each bound to its own loop
//      covering T, no init, value reading neither T nor the loop variables) is
//      eliminated: every later load `T[e0, ..., ek]` becomes value with
//      vi := ei, and the producer's loops go. Elementwise, broadcast and
//      injective producers are of that form; a reduction (a reduction
//      variable, an init) never is, so a reduction is never duplicated or
//      moved into its consumers. An elementwise producer read by a reduction
//      is inlined into the reduction's loop body;
//   5. the other intermediates stay buffers, allocated around the whole body
//      (local when of constant shape, workspace otherwise);
//   6. attributes: global_symbol = the function's name.
// A kernel structurally equal (up to its name) to one merged before in the
// same run is not added again: the group's calls call the earlier one (a
// decoder's 32 layers make the same groups 32 times; one kernel each is made
// and compiled), and the group's function leaves the module.
// Then the call sites: the call's arguments without the trailing Shape become
// the call_tir's arguments, that Shape's values its extra_sym_args, and the
// call's annotation (the return annotation in the caller's variables) its
// output annotation.
//
// A primitive function is left as a graph function (it still runs: the VM calls
// graph functions), and its calls untouched, when it cannot be merged; the
// statistic `kept_functions` counts them, and the option `strict` makes the
// first one an error that says why. The reasons (each a
// FailedPrecondition from merge_group naming the binding or dim):
//   - a binding other than call_tir (or an item of a call_tir's tuple result),
//     a match_cast, a call_tir_inplace or call_dps_library;
//   - a callee that is not a PrimFunc of the module, or whose parameter kinds
//     (buffer or scalar) do not follow the call;
//   - a parameter that is not a Tensor of known shape and dtype, a Prim, or a
//     trailing Shape of bare variables; a variable defined only through an
//     expression dim of a parameter; a returned value that is a parameter,
//     one output returned twice, or a nested tuple;
//   - a member argument that is not a group parameter, a member output or a
//     Prim of known value (a constant tensor, say);
//   - a callee dim that cannot be matched: a variable that no dim determines
//     (only in `n * n`, `floordiv(n, 2)`), a linear dim whose coefficient does
//     not divide the bound dim, or a dim the Analyzer cannot prove equal to
//     the bound buffer's dim (a `n - 1` dim bound to `m`).
//
// Not handled: producers are inlined only in the one-block form above (a
// producer with several blocks, or writing through a let, stays a loop nest
// writing a buffer); add and relu after a matmul become a second loop nest over
// the matmul's output rather than an epilogue inside the matmul's block; an
// intermediate buffer lives for the whole kernel (no reuse between two).
//
// Invariants. Relies on Interface 2 of FUSION.md and a well-formed module; the
// result is well formed: the fused kernel defines every variable it uses
// (stage 1), each call_tir passes the kernel's parameters in order. The member
// PrimFuncs stay in the module (dce removes the ones nothing calls any more).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "relax/ir/normalize.h"
#include "relax/ir/ops.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"
#include "transform/fusion/fuse_tir_merge.h"

namespace relax::transform {
namespace {

bool is_primitive(const FunctionNode& f) {
  auto it = f.attrs.find("primitive");
  return it != f.attrs.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
}

/// What a merged group's calls become: call_tir of `kernel` (the group's own name, or that of
/// an equal kernel merged before it), its trailing Shape (when it has one) as extra_sym_args.
struct Merged {
  bool has_shape_param = false;
  std::string kernel;
};

/// The kernel without its global_symbol (which names it), for finding equal kernels.
Expr anonymous(const Expr& kernel) {
  const auto* f = kernel.as<PrimFuncNode>();
  Attrs attrs = f->attrs;
  attrs.erase("global_symbol");
  return make_prim_func(f->params, f->body, std::move(attrs));
}

/// Rewrites calls of merged groups into call_tir of their kernels.
class CallSiteRewriter : public ExprMutator {
 public:
  CallSiteRewriter(const IRModule& mod, const absl::flat_hash_map<std::string, Merged>& merged)
      : ExprMutator(&mod), mod_(mod), merged_(merged) {}

  Expr visit_call(const Expr& e, const CallNode& node) override {
    Expr visited = ExprMutator::visit_call(e, node);
    const auto* call = visited.as<CallNode>();
    const auto* gv = call != nullptr ? call->callee.as<GlobalVarNode>() : nullptr;
    auto it = gv != nullptr ? merged_.find(gv->name) : merged_.end();
    if (it == merged_.end()) return visited;
    std::vector<Expr> args = call->args;
    std::vector<SymExpr> extra;
    if (it->second.has_shape_param) {
      // fuse-ops passes the trailing Shape with known values (a ShapeExpr).
      const auto* shape = args.back().struct_info().as<ShapeStructInfoNode>();
      if (shape != nullptr && shape->values) extra = *shape->values;
      args.pop_back();
    }
    absl::StatusOr<Expr> rewritten = normalize(
        op::call_tir(mod_.global_var(it->second.kernel), std::move(args), call->struct_info(), std::move(extra)),
        deduce_context());
    if (rewritten.ok()) return *rewritten;
    if (error_.ok()) error_ = rewritten.status();
    return visited;
  }

  /// The first error met (a call_tir whose deduction failed), OK when none.
  const absl::Status& error() const { return error_; }

 private:
  const IRModule& mod_;
  const absl::flat_hash_map<std::string, Merged>& merged_;
  absl::Status error_;
};

class FuseTirPass : public Pass {
 public:
  FuseTirPass()
      : Pass(PassInfo("fuse-tir",
                      "each primitive graph function (a fused group) becomes one PrimFunc, its calls call_tir")
                 .with_option("strict", false,
                              "a primitive function that cannot be merged is an error naming why, instead of staying")
                 .with_statistic("fused_functions", "primitive functions merged into one PrimFunc")
                 .with_statistic("kept_functions", "primitive functions that could not be merged, left as they are")
                 .with_statistic("shared_kernels", "merged functions whose kernel equals one merged before (calls share it)")
                 .with_statistic("inlined_intermediates", "intermediates computed inline by their consumers")
                 .with_statistic("allocated_intermediates", "intermediates kept as buffers inside a fused kernel")) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    IRModule out = mod;
    absl::flat_hash_map<std::string, Merged> merged;  // group name -> its calls' kernel
    // The kernels made so far, by structural hash (without their names): a model repeats its
    // layers, and each layer's groups merge into the same kernels, made and compiled once.
    absl::flat_hash_map<size_t, std::vector<std::pair<Expr, std::string>>> made;
    int64_t kept = 0, inlined = 0, allocated = 0, shared = 0;
    for (const auto& [name, func] : mod.functions()) {
      const auto* f = func.as<FunctionNode>();
      if (f == nullptr || !is_primitive(*f)) continue;
      absl::StatusOr<fusion::MergedGroup> group = fusion::merge_group(mod, name, *f);
      if (!group.ok()) {
        if (ctx.bool_option(*this, "strict")) return group.status();
        ++kept;
        continue;
      }
      inlined += group->inlined;
      allocated += group->allocated;
      const Expr key = anonymous(group->prim_func);
      std::vector<std::pair<Expr, std::string>>& same_hash = made[structural_hash(key)];
      auto equal = std::find_if(same_hash.begin(), same_hash.end(),
                                [&](const auto& entry) { return structural_equal(entry.first, key); });
      if (equal != same_hash.end()) {
        merged.emplace(name, Merged{group->has_shape_param, equal->second});
        out.remove(name);  // its calls call the equal kernel
        ++shared;
        continue;
      }
      same_hash.emplace_back(key, name);
      merged.emplace(name, Merged{group->has_shape_param, name});
      out.add(name, group->prim_func);
    }
    ctx.add_statistic("fused_functions", static_cast<int64_t>(merged.size()));
    ctx.add_statistic("shared_kernels", shared);
    ctx.add_statistic("kept_functions", kept);
    ctx.add_statistic("inlined_intermediates", inlined);
    ctx.add_statistic("allocated_intermediates", allocated);
    if (merged.empty()) return mod;
    CallSiteRewriter rewriter(out, merged);
    IRModule result = rewriter.visit_module(out);
    if (absl::Status s = rewriter.error().ok() ? rewriter.status() : rewriter.error(); !s.ok()) {
      return absl::InternalError("rewriting the calls of fused groups: " + std::string(s.message()));
    }
    return result;
  }
};

}  // namespace

PassPtr create_fuse_tir_pass() { return std::make_shared<FuseTirPass>(); }

}  // namespace relax::transform
