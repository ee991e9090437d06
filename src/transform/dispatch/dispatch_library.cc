// dispatch-library: sub-graphs that a library computes faster become library calls.
//
// What it does. Each dispatch rule (relax/transform/dispatch_library.h: a
// pattern and a builder) whose library the pass may call is matched against
// the dataflow blocks of every graph function with the pattern rewriter
// (relax/transform/pattern.h), one rule after the other: the pass's extra
// rules, then the registered ones, then the built-in oneDNN rules
// (onednn_rules.cc) and the cuBLAS/cuDNN rules (cuda_rules.cc), each rule
// applying only when its library is among the pass's libraries. A match's builder returns the replacement, normally
// call_dps_library(<name>, (args...), sinfo=<the matched value's>), or declines;
// what no rule takes is left as it was, for legalize-ops and generated code.
//
// Stages, per rule:
//   1. facts: per graph function, the values bound to its DataflowVars, its
//      weights (parameters its `weights` attribute names), an Analyzer with its
//      declared upper bounds, and the number of uses of every variable of the
//      module (recomputed for each rule, since the previous one rewrote);
//   2. rewrite: the rewriter offers each match, largest first; a match that
//      looked through a binding whose variable is also used outside the match
//      is declined here, before the builder sees it (swallowing it would
//      compute that intermediate twice: once for its other uses, once inside
//      the library call); a smaller match rooted at an earlier binding is then
//      offered in its turn, so `relu(matmul)` with the matmul also used
//      elsewhere becomes a plain library matmul and a generated relu;
//   3. the builder decides (dtype, ranks, size; see DispatchSite).
// The rewriter removes the bindings that a replacement made dead.
//
// Invariants. Relies on a normalised module; keeps annotations (a replacement
// has the matched value's annotation, so binding variables are kept).
//
// Not handled: matches across dataflow blocks or through non-dataflow
// variables (the pattern language does not look through them); a rule is
// never applied to what an earlier rule produced; the library's workspace is
// not declared here (a later step asks the runtime for its size).
#include "relax/transform/dispatch_library.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "relax/ir/visitor.h"
#include "relax/transform/passes.h"
#include "transform/dispatch/nhwc_chains.h"
#include "transform/dispatch/cuda_rules.h"
#include "transform/dispatch/onednn_rules.h"
#include "transform/weights/weight_params.h"

namespace relax::transform {

namespace dispatch_detail {

/// What the pass knows of one graph function while a rule is matched.
struct FunctionFacts {
  /// The values bound to the function's DataflowVars (nested blocks included).
  absl::flat_hash_map<const ExprNode*, Expr> bound;
  /// The parameters named in the function's `weights` attribute.
  absl::flat_hash_set<const ExprNode*> weights;
  /// Every declared upper bound bound as [0, bound].
  mutable Analyzer analyzer;
};

}  // namespace dispatch_detail

using dispatch_detail::FunctionFacts;

Expr DispatchSite::bound_value(const Expr& e) const {
  Expr cur = e;
  while (cur.defined() && cur.kind() == ExprKind::kDataflowVar) {
    auto it = facts_.bound.find(cur.get());
    if (it == facts_.bound.end()) break;
    cur = it->second;
  }
  return cur;
}

bool DispatchSite::is_weight(const Expr& e) const {
  const Expr value = bound_value(e);
  return value.kind() == ExprKind::kConstant || facts_.weights.contains(value.get());
}

bool DispatchSite::is_small(const SymExpr& work) const {
  const ConstIntBound bound = facts_.analyzer.const_int_bound(work);
  return bound.has_upper() && bound.max_value < min_work_;
}

bool DispatchSite::is_small(const SymExpr& work, int64_t floor) const {
  const ConstIntBound bound = facts_.analyzer.const_int_bound(work);
  return bound.has_upper() && bound.max_value < std::max(min_work_, floor);
}

bool DispatchSite::streams_weight(const SymExpr& rows) const {
  if (stream_rows_ <= 0) return false;
  const ConstIntBound bound = facts_.analyzer.const_int_bound(rows);
  return bound.has_upper() && bound.max_value <= stream_rows_;
}

Analyzer& DispatchSite::analyzer() const { return facts_.analyzer; }

namespace {

// The rules registered with register_dispatch_rule, in registration order.
struct Registry {
  std::mutex mutex;
  std::vector<DispatchRule> rules;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// The variables each binding of a function defines, and the values of its DataflowVars.
class BindingCollector : public ExprVisitor {
 public:
  explicit BindingCollector(FunctionFacts& facts) : facts_(facts) {}
  std::vector<const ExprNode*> binding_vars;

  void visit_binding(const Binding& binding) override {
    binding_vars.push_back(binding.var.get());
    if (binding.var.is_dataflow() && !binding.is_match_cast) facts_.bound.emplace(binding.var.get(), binding.value);
    ExprVisitor::visit_binding(binding);
  }

 private:
  FunctionFacts& facts_;
};

// The number of uses of each variable.
class UseCounter : public ExprVisitor {
 public:
  absl::flat_hash_map<const ExprNode*, int64_t> uses;
  void visit_var(const Var& var) override { ++uses[var.get()]; }
};

// The parameters named by `fn`'s `weights` attribute (transform/weights/weight_params.h), unless
// the function says its weights must not be prepacked (`pack_weights = false`).
absl::Status read_weights(const std::string& name, const FunctionNode& fn, FunctionFacts& facts) {
  absl::StatusOr<std::vector<Var>> params = weights_detail::weight_params(name, fn);
  if (!params.ok()) return params.status();
  auto pack = fn.attrs.find(weights_detail::kPackWeightsAttr);
  if (pack != fn.attrs.end()) {
    const auto* value = std::get_if<bool>(&pack->second);
    if (value == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("@", name, ": attribute `", weights_detail::kPackWeightsAttr,
                                                     "` must be a bool"));
    }
    if (!*value) return absl::OkStatus();
  }
  for (const Var& p : *params) facts.weights.insert(p.get());
  return absl::OkStatus();
}

// The facts of every graph function of a module, and where each binding is.
struct ModuleFacts {
  std::vector<std::unique_ptr<FunctionFacts>> functions;
  absl::flat_hash_map<const ExprNode*, const FunctionFacts*> function_of_binding;
  absl::flat_hash_map<const ExprNode*, int64_t> uses;
};

absl::StatusOr<std::unique_ptr<ModuleFacts>> module_facts(const IRModule& mod) {
  auto facts = std::make_unique<ModuleFacts>();
  UseCounter counter;
  for (const auto& [name, func] : mod.functions()) {
    const auto* fn = func.as<FunctionNode>();
    if (fn == nullptr) continue;
    auto f = std::make_unique<FunctionFacts>();
    if (absl::Status s = read_weights(name, *fn, *f); !s.ok()) return s;
    for (const SymBound& b : fn->upper_bounds) f->analyzer.bind(b.var, 0, b.upper);
    BindingCollector collector(*f);
    collector.visit_expr(func);
    for (const ExprNode* var : collector.binding_vars) facts->function_of_binding[var] = f.get();
    counter.visit_expr(func);
    facts->functions.push_back(std::move(f));
  }
  facts->uses = std::move(counter.uses);
  return facts;
}

// Whether every binding `m` looked through is used only inside the match (each look-through
// is one use of the variable it passed).
bool keeps_shared_intermediates(const Match& m, const ModuleFacts& facts) {
  absl::flat_hash_map<const ExprNode*, int64_t> inside;
  for (const Var& v : m.looked_through()) ++inside[v.get()];
  for (const auto& [var, count] : inside) {
    auto it = facts.uses.find(var);
    if (it == facts.uses.end() || it->second != count) return false;
  }
  return true;
}

struct Counts {
  int64_t library_calls = 0;
  int64_t shared_intermediates = 0;
  int64_t nhwc_calls = 0;
};

absl::StatusOr<IRModule> apply_rule(const IRModule& mod, const DispatchRule& rule,
                                    const DispatchLibraryOptions& options, Counts& counts) {
  absl::StatusOr<std::unique_ptr<ModuleFacts>> facts = module_facts(mod);
  if (!facts.ok()) return facts.status();
  const ModuleFacts& mf = **facts;
  int64_t accepted = 0;
  absl::StatusOr<IRModule> out = rewrite(
      mod, rule.pattern,
      [&](const Expr& matched, const Match& m) -> absl::StatusOr<Expr> {
        auto where = mf.function_of_binding.find(m.binding_var().get());
        if (where == mf.function_of_binding.end()) return matched;
        if (!keeps_shared_intermediates(m, mf)) {
          ++counts.shared_intermediates;
          return matched;
        }
        DispatchSite site(matched, m, *where->second, options.min_work, options.workspaces, options.stream_rows,
                          options.bf16_products);
        absl::StatusOr<std::optional<Expr>> replacement = rule.build(site);
        if (!replacement.ok()) {
          return absl::Status(replacement.status().code(),
                              absl::StrCat("rule ", rule.name, ": ", replacement.status().message()));
        }
        if (!replacement->has_value()) return matched;
        return **replacement;
      },
      &accepted);
  counts.library_calls += accepted;
  return out;
}

bool rule_applies(const DispatchRule& rule, const std::vector<std::string>& libraries) {
  return rule.library.empty() ||
         std::find(libraries.begin(), libraries.end(), rule.library) != libraries.end();
}

absl::StatusOr<IRModule> run_dispatch(const IRModule& mod, const DispatchLibraryOptions& options, Counts& counts) {
  std::vector<DispatchRule> rules = options.extra_rules;
  for (DispatchRule& r : dispatch_rules()) rules.push_back(std::move(r));
  IRModule cur = mod;
  for (const DispatchRule& rule : rules) {
    if (!rule_applies(rule, options.libraries)) continue;
    absl::StatusOr<IRModule> next = apply_rule(cur, rule, options, counts);
    if (!next.ok()) return next.status();
    cur = *std::move(next);
  }
  if (options.nhwc_chains && std::find(options.libraries.begin(), options.libraries.end(), "onednn") != options.libraries.end()) {
    return join_nhwc_chains(cur, &counts.nhwc_calls);
  }
  return cur;
}

// The option text of a list of libraries, and back.
std::string libraries_text(const std::vector<std::string>& libraries) {
  return libraries.empty() ? "none" : absl::StrJoin(libraries, ",");
}

absl::StatusOr<std::vector<std::string>> parse_libraries(const std::string& text) {
  std::vector<std::string> out;
  if (text == "none") return out;
  for (absl::string_view piece : absl::StrSplit(text, ',')) {
    const absl::string_view name = absl::StripAsciiWhitespace(piece);
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("option dispatch-library.libraries: \"", text,
                                                     "\": expected library names separated by commas, or none"));
    }
    out.emplace_back(name);
  }
  return out;
}

class DispatchLibraryPass : public Pass {
 public:
  explicit DispatchLibraryPass(DispatchLibraryOptions options)
      : Pass(PassInfo("dispatch-library",
                      "matmul/linear/conv with their bias, activation and residual add become library calls "
                      "(oneDNN) where the dtype and size suit; user rules too")
                 .with_option("libraries", libraries_text(options.libraries),
                              "the libraries calls may go to (comma-separated, or none)")
                 .with_option("min-work", options.min_work,
                              "calls with provably fewer multiply-adds stay generated code")
                 .with_option("stream-rows", options.stream_rows,
                              "float32 matmuls of provably at most this many rows stay generated code "
                              "(weight-streaming kernels; 0: none)")
                 .with_option("bf16-products", options.bf16_products,
                              "float32 matmuls of a bfloat16 weight widened in the graph, of rows not provably "
                              "within stream-rows, become bf16 x bf16 library products (the rows rounded to bf16)")
                 .with_option("workspaces", options.workspaces,
                              "declare the library's scratch (bounded over the declared upper bounds) as the "
                              "call's workspace, so the memory plan holds it")
                 .with_option("nhwc-chains", options.nhwc_chains,
                              "oneDNN convolutions joined by elementwise ops pass their activations in NHWC to each "
                              "other (no reorders between them)")
                 .with_statistic("library_calls", "matches replaced by a library call")
                 .with_statistic("nhwc_calls", "oneDNN convolutions marked :nhwc_in or :nhwc_out")
                 .with_statistic("shared_intermediates",
                                 "matches declined because they would swallow a result used elsewhere")),
        options_(std::move(options)) {}

  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    DispatchLibraryOptions options = options_;
    absl::StatusOr<std::vector<std::string>> libraries = parse_libraries(ctx.string_option(*this, "libraries"));
    if (!libraries.ok()) return libraries.status();
    options.libraries = *std::move(libraries);
    options.min_work = ctx.int_option(*this, "min-work");
    options.stream_rows = ctx.int_option(*this, "stream-rows");
    options.workspaces = ctx.bool_option(*this, "workspaces");
    options.bf16_products = ctx.bool_option(*this, "bf16-products");
    options.nhwc_chains = ctx.bool_option(*this, "nhwc-chains");
    Counts counts;
    absl::StatusOr<IRModule> out = run_dispatch(mod, options, counts);
    if (!out.ok()) return out.status();
    ctx.add_statistic("library_calls", counts.library_calls);
    ctx.add_statistic("shared_intermediates", counts.shared_intermediates);
    ctx.add_statistic("nhwc_calls", counts.nhwc_calls);
    return out;
  }

 private:
  DispatchLibraryOptions options_;
};

}  // namespace

const std::vector<DispatchRule>& builtin_dispatch_rules() {
  static const std::vector<DispatchRule>* rules = [] {
    auto* all = new std::vector<DispatchRule>(make_onednn_rules());
    for (DispatchRule& rule : make_cuda_rules()) all->push_back(std::move(rule));
    return all;
  }();
  return *rules;
}

absl::Status register_dispatch_rule(DispatchRule rule) {
  if (rule.name.empty()) return absl::InvalidArgumentError("register_dispatch_rule: the rule has no name");
  if (!rule.build) {
    return absl::InvalidArgumentError(absl::StrCat("register_dispatch_rule: rule ", rule.name, " has no builder"));
  }
  const std::vector<DispatchRule>& builtin = builtin_dispatch_rules();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto same_name = [&](const DispatchRule& other) { return other.name == rule.name; };
  if (std::any_of(builtin.begin(), builtin.end(), same_name) ||
      std::any_of(r.rules.begin(), r.rules.end(), same_name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("register_dispatch_rule: a rule named ", rule.name, " is already registered"));
  }
  r.rules.push_back(std::move(rule));
  return absl::OkStatus();
}

std::vector<DispatchRule> dispatch_rules() {
  std::vector<DispatchRule> rules;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    rules = r.rules;
  }
  const std::vector<DispatchRule>& builtin = builtin_dispatch_rules();
  rules.insert(rules.end(), builtin.begin(), builtin.end());
  return rules;
}

absl::StatusOr<IRModule> dispatch_library(const IRModule& mod, const DispatchLibraryOptions& options) {
  Counts counts;
  return run_dispatch(mod, options, counts);
}

PassPtr create_dispatch_library_pass(DispatchLibraryOptions options) {
  return std::make_shared<DispatchLibraryPass>(std::move(options));
}

PassPtr create_dispatch_library_pass() { return create_dispatch_library_pass(DispatchLibraryOptions()); }

}  // namespace relax::transform
