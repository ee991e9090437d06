// Library dispatch: graph-level sub-graphs become calls of library functions.
//
// The pass `dispatch-library` (create_dispatch_library_pass() in passes.h) rewrites what
// a dispatch rule matches into call_dps_library(<name>, (args...), sinfo=out)
// and leaves the rest to legalize-ops and generated code. A rule is a pattern
// (relax/transform/pattern.h) and a builder that makes the replacement from the
// match, or declines:
//
//   using namespace relax::transform;
//   DispatchRule rule;
//   rule.name = "mylib.exp2";
//   rule.pattern = is_op("exp")({is_op("exp")({wildcard().capture("x")})});
//   rule.build = [](const DispatchSite& site) -> absl::StatusOr<std::optional<Expr>> {
//     return op::call_dps_library("mylib.exp_exp", {site.match()["x"]},
//                                 site.matched().struct_info());
//   };
//   absl::Status s = register_dispatch_rule(std::move(rule));
//
// The built-in rules call oneDNN (the library "onednn"; the names are the contract between
// this pass and the oneDNN runtime family, relax/runtime/onednn.h) and, for the cuda target,
// cuBLAS(Lt) ("cublas") and cuDNN ("cudnn"; names in relax/runtime/cuda_library.h, the rules
// in docs/cuda.md). The oneDNN names:
//   onednn.matmul / onednn.linear   [+bias] [+relu|gelu_erf|gelu_tanh|silu|sigmoid|tanh] [+add]
//   onednn.conv1d{...} / onednn.conv2d{strides=..;padding=..;dilation=..;groups=..}  (same posts)
// with `:packed` when the weight operand is a constant for the module's life (an
// IR Constant, or a parameter named in the function's `weights` attribute:
//   func @main(x: ..., w: ...) -> ... attrs {weights = "w"} { ... }
// a comma-separated list of parameter names; `pack_weights = false` beside it keeps the
// weights' own layout).
//
// What every rule gets from the pass: a match is offered to the builder only
// when every binding it looked through is used by the match alone (an
// intermediate result that something else also uses is never swallowed, which
// would compute it twice); the builder then sees the match with the function's
// facts (its weights, the upper bounds of its symbolic variables).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/shape/analyzer.h"
#include "relax/transform/pass.h"
#include "relax/transform/pattern.h"

namespace relax::transform {

namespace dispatch_detail {
struct FunctionFacts;  // what the pass knows of the function a match is in (private to it)
}  // namespace dispatch_detail

/// One match of a rule, as its builder sees it.
class DispatchSite {
 public:
  DispatchSite(const Expr& matched, const Match& match, const dispatch_detail::FunctionFacts& facts,
               int64_t min_work, bool declare_workspaces = true, int64_t stream_rows = 0,
               bool bf16_products = false)
      : matched_(matched),
        match_(match),
        facts_(facts),
        min_work_(min_work),
        declare_workspaces_(declare_workspaces),
        stream_rows_(stream_rows),
        bf16_products_(bf16_products) {}

  /// The matched binding value (its annotation is the replacement's).
  const Expr& matched() const { return matched_; }
  /// The match: captures (as written: variables where the pattern looked through) and symbolic values.
  const Match& match() const { return match_; }
  /// `e` with DataflowVars of the function replaced by their bound values (recursively), so
  /// a builder can read the call behind a captured variable; `e` itself otherwise.
  Expr bound_value(const Expr& e) const;
  /// Whether `e` (through its bound value) is constant for the life of the module and a library
  /// may keep a prepacked copy of it: an IR Constant, or a parameter that the function's
  /// `weights` attribute names (unless the function's `pack_weights` attribute is false).
  bool is_weight(const Expr& e) const;
  /// Whether `work` (a count of multiply-adds, over the function's symbolic variables) is
  /// provably below the pass's min-work under the function's declared upper bounds (a
  /// variable without a bound can be any size, so work using it is never small).
  bool is_small(const SymExpr& work) const;
  /// is_small against the larger of the pass's min-work and `floor`: a library whose call
  /// costs more than the pass's default assumes (a GPU library call: a kernel launch at
  /// least) keeps more work as generated code.
  bool is_small(const SymExpr& work, int64_t floor) const;
  /// Whether a product's `rows` (the output's elements over its last dim) are provably at
  /// most the pass's stream-rows under the declared upper bounds: a matmul that streams its
  /// weight once, which the generated weight-streaming kernel does at the DRAM read rate.
  bool streams_weight(const SymExpr& rows) const;
  /// The analyzer that knows the function's bounds (each variable >= 0, <= its bound).
  Analyzer& analyzer() const;
  /// Whether a rule should declare its library's scratch as the call's workspace (option
  /// `workspaces`; off, a library allocates its scratch itself).
  bool declare_workspaces() const { return declare_workspaces_; }
  /// Whether a float32 product with a bfloat16 weight widened in the graph may become a
  /// library's bf16 x bf16 product, its rows rounded to bfloat16 (option `bf16-products`).
  bool bf16_products() const { return bf16_products_; }

 private:
  const Expr& matched_;
  const Match& match_;
  const dispatch_detail::FunctionFacts& facts_;
  int64_t min_work_;
  bool declare_workspaces_;
  int64_t stream_rows_;
  bool bf16_products_;
};

/// What a rule makes of one match: the replacement (a call whose annotation is the matched
/// value's), nullopt to decline (the bindings stay for other rules and for generated
/// code), or an error, which stops the pass.
using DispatchBuilder = std::function<absl::StatusOr<std::optional<Expr>>(const DispatchSite& site)>;

/// A dispatch rule.
struct DispatchRule {
  /// Unique among registered rules ("onednn.matmul", "mylib.exp_exp").
  std::string name;
  /// The library the rule calls: the rule applies only when the pass's libraries list it.
  /// Empty: the rule applies whenever the pass runs.
  std::string library;
  Pattern pattern = wildcard();
  DispatchBuilder build;
};

/// The built-in rules (oneDNN, then cuBLAS and cuDNN), in the order they are tried.
const std::vector<DispatchRule>& builtin_dispatch_rules();

/// Makes `rule` known to every dispatch-library pass made afterwards; user rules are tried
/// before the built-in ones, in registration order. AlreadyExists when the name is taken
/// (a built-in rule's included); InvalidArgument for an empty name or no builder.
/// Thread-safe.
absl::Status register_dispatch_rule(DispatchRule rule);

/// Every rule, in the order the pass tries them: the registered ones, then the built-in ones.
std::vector<DispatchRule> dispatch_rules();

/// The pass's defaults (each also a pass option of the same name, which overrides it).
struct DispatchLibraryOptions {
  /// The libraries calls may go to (option `libraries`: "onednn,mylib", or "none").
  std::vector<std::string> libraries = {"onednn"};
  /// A call whose multiply-adds are provably fewer stays generated code (option `min-work`):
  /// a oneDNN call has a fixed cost per call, which a small product's generated loop nest
  /// does not pay and, below about this size, does not exceed (docs/performance.md).
  int64_t min_work = 2048;
  /// Built-in rules declare the library's scratch (oneDNN's scratchpad, bounded over the
  /// sizes the declared upper bounds allow) as the call's workspace, so the memory plan holds
  /// it (option `workspaces`). Its size depends on the library's version and the CPU.
  bool workspaces = true;
  /// Chains of oneDNN convolutions joined by elementwise ops pass their activations in NHWC
  /// (option `nhwc-chains`; docs/cpu.md): `:nhwc_out` on the first call,
  /// `:nhwc_in` on the next, no reorders between.
  bool nhwc_chains = true;
  /// A float32 matmul with provably at most this many rows stays generated code (option
  /// `stream-rows`; 0: none): for a language model's decode step the generated
  /// weight-streaming kernels read the weights faster than oneDNN does. The default covers
  /// one row; the default pipeline raises it where the target has the AVX-512 rows kernels
  /// (cpu_schedule_options in schedule.h; docs/performance.md).
  int64_t stream_rows = 1;
  /// A float32 matmul or linear whose weight is a bfloat16 tensor widened in the graph
  /// (astype to float32) and whose rows are not provably within stream-rows (a prefill) goes
  /// to the library as a bfloat16 x bfloat16 product summed in float32, its rows rounded to
  /// bfloat16 first (option `bf16-products`): the CPU's bf16 dot products (AVX512-BF16, AMX
  /// tiles) instead of widened float32 FMAs. The result differs from the float32 product by
  /// the rows' rounding (at most 2^-9 of each row element). Off: such matmuls stay generated
  /// code. The default pipeline turns it on for targets with AVX512-BF16 unless -exact-float.
  bool bf16_products = false;
  /// Rules tried before the registered and built-in ones, for this pass only.
  std::vector<DispatchRule> extra_rules;
};

/// What the pass does, as a function: every match of the rules (extra ones first) whose
/// library `options` lists rewritten in the module's graph functions. Errors: a builder's,
/// or a `weights` attribute that is not a string of parameter names (naming the function).
absl::StatusOr<IRModule> dispatch_library(const IRModule& mod, const DispatchLibraryOptions& options = {});

/// The pass `dispatch-library` with `options` as its defaults.
PassPtr create_dispatch_library_pass(DispatchLibraryOptions options);

}  // namespace relax::transform
