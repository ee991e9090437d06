// Private to fuse-tir (src/transform/fusion/fuse_tir.cc): merging one
// primitive graph function into one PrimFunc, and the pieces of that work
// (matching a callee's symbolic variables, rewriting a callee's body).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/ir/prim_func.h"
#include "relax/shape/analyzer.h"

namespace relax::transform::fusion {

/// The result of merging one primitive graph function.
struct MergedGroup {
  Expr prim_func;               ///< the fused PrimFunc (global_symbol = the function's name)
  bool has_shape_param = false; ///< the function's last parameter is a Shape: its values are the
                                ///< call's extra_sym_args
  int64_t inlined = 0;          ///< intermediates eliminated by inlining their producer
  int64_t allocated = 0;        ///< intermediates kept as buffers allocated in the kernel
};

/// Merges the primitive graph function `func` (called `name` in `mod`) into one
/// PrimFunc, or says why it cannot (FailedPrecondition naming the function and
/// the binding, parameter or dim in the way).
absl::StatusOr<MergedGroup> merge_group(const IRModule& mod, const std::string& name,
                                        const FunctionNode& func);

/// A callee's symbolic variables in terms of the fused kernel's: each pair is a
/// callee dim or scalar parameter and the fused kernel's expression bound to it.
class ParamMatcher {
 public:
  /// A callee buffer parameter bound to a fused-kernel buffer: same dtype and
  /// rank, or an error.
  absl::Status bind_buffer(const Buffer& callee, const Buffer& actual, const std::string& what);
  /// A callee scalar parameter bound to a fused-kernel value (converted to the
  /// parameter's dtype when it has another).
  void bind_scalar(const SymVar& callee, const SymExpr& actual);

  /// The image of every callee variable: scalars first, then bare-variable dims,
  /// then (until nothing changes) variables that a linear dim solves for
  /// (relax/shape/solve.h); then every dim is proven equal to its actual
  /// expression with `analyzer`. An error names the dim that is not determined
  /// or not proven.
  absl::StatusOr<SymVarMap<SymExpr>> solve(Analyzer& analyzer) const;

 private:
  struct Pair {
    SymExpr callee;
    SymExpr actual;
    std::string what;
  };
  std::vector<std::pair<SymVar, SymExpr>> scalars_;
  std::vector<Pair> dims_;
};

/// What a load of an eliminated intermediate stands for: the producer's stored
/// value, a function of its iteration variables `vars` (one per dim).
struct InlinedValue {
  std::vector<SymVar> vars;
  SymExpr value;
};
using InlinedBuffers = absl::flat_hash_map<const BufferNode*, InlinedValue>;

/// Rewrites one member's callee body into the fused kernel: its symbolic
/// variables through the solved map, its buffer parameters onto the fused
/// buffers, loads of eliminated intermediates replaced by their values, and
/// every variable it binds (loop, iteration and let variables) and buffer it
/// allocates made fresh, so that no two members share one; block names are
/// made unique through `block_names`.
class MemberRewriter {
 public:
  MemberRewriter(SymVarMap<SymExpr> vars, absl::flat_hash_map<const BufferNode*, Buffer> buffers,
                 const InlinedBuffers& inlined, absl::flat_hash_set<std::string>& block_names)
      : vars_(std::move(vars)), buffers_(std::move(buffers)), inlined_(inlined), block_names_(block_names) {}

  /// The rewritten statement, or an error naming a variable or buffer the
  /// callee uses without defining it.
  absl::StatusOr<Stmt> rewrite(const Stmt& body);

 private:
  Stmt stmt(const Stmt& s);
  SymExpr value(const SymExpr& e);
  Buffer buffer(const BufferNode* node);
  SymVar fresh(const SymVar& old);

  SymVarMap<SymExpr> vars_;
  absl::flat_hash_map<const BufferNode*, Buffer> buffers_;
  const InlinedBuffers& inlined_;
  absl::flat_hash_set<std::string>& block_names_;
  std::string error_;
};

/// When `body` computes `out` as one spatial block -- loops from 0 around a
/// block without init whose every iteration variable is spatial and bound to
/// its own loop, covering `out` exactly, whose one statement stores
/// `out[v0, ..., vk] = value` with value reading neither `out` nor the loop
/// variables -- the value as a function of the iteration variables.
std::optional<InlinedValue> inlinable_value(const Stmt& body, const Buffer& out, Analyzer& analyzer);

/// Whether `value` calls a float intrinsic (exp, sin, pow, sqrt, ...: a library call or a
/// long polynomial each, where +, *, casts, shifts and masks are one instruction).
bool calls_float_functions(const SymExpr& value);

/// Whether `body` may read one element of `buffer` at several points: a load of it outside
/// a compute block, or inside one with an index list that leaves out a spatial iteration
/// variable of the block (B[vi1] in a block over (vi0, vi1); A[vi0, vk] in a matmul's block
/// over (vi0, vi1, vk)).
bool reads_with_reuse(const Stmt& body, const Buffer& buffer);

}  // namespace relax::transform::fusion
