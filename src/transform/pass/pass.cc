// Pass, its adaptors, PassContext and run_pass (relax/transform/pass.h).
//
// The adaptors keep unchanged functions pointer-identical (a pass that did
// nothing hands back the very module nodes it was given, which the fixed-point
// group and the IR printers rely on to be cheap) and name the function in any
// error. run_pass is the one place where a pass is skipped, instrumented and
// its error prefixed, so that nested groups behave like the top level.
#include "relax/transform/pass.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "relax/ir/normalize.h"
#include "relax/ir/visitor.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_registry.h"

namespace relax::transform {

std::string_view option_type_name(OptionType type) {
  switch (type) {
    case OptionType::kBool: return "bool";
    case OptionType::kInt: return "int";
    case OptionType::kFloat: return "float";
    case OptionType::kString: return "string";
  }
  return "?";
}

OptionType option_type(const OptionValue& value) { return static_cast<OptionType>(value.index()); }

std::string option_value_to_string(const OptionValue& value) {
  switch (option_type(value)) {
    case OptionType::kBool: return std::get<bool>(value) ? "true" : "false";
    case OptionType::kInt: return std::to_string(std::get<int64_t>(value));
    case OptionType::kFloat: return absl::StrCat(std::get<double>(value));
    case OptionType::kString: return std::get<std::string>(value);
  }
  return "";
}

absl::StatusOr<OptionValue> parse_option_value(OptionType type, std::string_view text) {
  auto wrong = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a value of type ", std::string(option_type_name(type)), ", got `", std::string(text), "`"));
  };
  switch (type) {
    case OptionType::kBool:
      if (text == "true" || text == "1") return OptionValue(true);
      if (text == "false" || text == "0") return OptionValue(false);
      return wrong();
    case OptionType::kInt: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(std::string(text), &v)) return wrong();
      return OptionValue(v);
    }
    case OptionType::kFloat: {
      double v = 0;
      if (!absl::SimpleAtod(std::string(text), &v)) return wrong();
      return OptionValue(v);
    }
    case OptionType::kString:
      break;
  }
  return OptionValue(std::string(text));
}

Pass::Pass(PassInfo info) : info_(std::move(info)) {
  RELAX_CHECK(!info_.name.empty()) << "a pass needs a name";
}

// ---------------------------------------------------------------------------
// Adaptors.

namespace {

// `func` with the StructInfo of every node a rewrite left unannotated.
absl::StatusOr<Expr> normalized_function(const Expr& func, const IRModule& mod) {
  Analyzer analyzer;
  DeduceContext ctx{analyzer, &mod};
  return normalize(func, ctx);
}

std::string function_error(const std::string& name, const absl::Status& s) {
  return absl::StrCat("@", name, ": ", s.message());
}

// The FunctionPass / PrimFuncPass loop: `fn` on every function of one kind.
template <typename Node, typename Fn>
absl::StatusOr<IRModule> for_each_function(const IRModule& mod, Fn&& fn) {
  IRModule out = mod;
  for (const auto& [name, func] : mod.functions()) {
    if (func.template as<Node>() == nullptr) continue;
    FunctionRef ref{name, func, mod};
    absl::StatusOr<Expr> rewritten = fn(ref);
    if (!rewritten.ok()) {
      return absl::Status(rewritten.status().code(), function_error(name, rewritten.status()));
    }
    if (rewritten->same_as(func)) continue;
    if (rewritten->template as<Node>() == nullptr) {
      return absl::InternalError(
          absl::StrCat("@", name, ": the pass returned a different kind of function"));
    }
    absl::StatusOr<Expr> normalized = normalized_function(*rewritten, mod);
    if (!normalized.ok()) return absl::InvalidArgumentError(function_error(name, normalized.status()));
    out.add(name, *normalized);
  }
  return out;
}

bool same_bindings(const BindingBlock& a, const BindingBlock& b) {
  if (a.is_dataflow != b.is_dataflow || a.bindings.size() != b.bindings.size()) return false;
  for (size_t i = 0; i < a.bindings.size(); ++i) {
    const Binding& x = a.bindings[i];
    const Binding& y = b.bindings[i];
    if (!x.var.same_as(y.var) || !x.value.same_as(y.value) || x.is_match_cast != y.is_match_cast ||
        !x.cast_sinfo.same_as(y.cast_sinfo)) {
      return false;
    }
  }
  return true;
}

// Hands each dataflow block to the pass, then re-normalises what it returned.
class BlockRewriter : public ExprMutator {
 public:
  using BlockFn = std::function<absl::StatusOr<BindingBlock>(const BindingBlock&)>;
  BlockRewriter(const IRModule& mod, BlockFn fn) : ExprMutator(&mod), fn_(std::move(fn)) {}

  BindingBlock visit_binding_block(const BindingBlock& block) override {
    if (!block.is_dataflow || !error_.ok()) return ExprMutator::visit_binding_block(block);
    absl::StatusOr<BindingBlock> rewritten = fn_(block);
    if (!rewritten.ok()) {
      error_ = rewritten.status();
      return ExprMutator::visit_binding_block(block);
    }
    if (same_bindings(*rewritten, block)) return ExprMutator::visit_binding_block(block);
    // Values the rewrite built without annotations get theirs here; the base
    // then gives a binding whose annotation changed a fresh variable.
    for (Binding& b : rewritten->bindings) {
      if (b.value.struct_info().defined()) continue;
      absl::StatusOr<Expr> value = normalize(b.value, deduce_context());
      if (!value.ok()) {
        error_ = absl::InvalidArgumentError(
            absl::StrCat("binding `", b.var.name_hint(), "`: ", value.status().message()));
        return ExprMutator::visit_binding_block(block);
      }
      b.value = *value;
    }
    return ExprMutator::visit_binding_block(*rewritten);
  }

  const absl::Status& error() const { return error_; }

 private:
  BlockFn fn_;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<IRModule> FunctionPass::run(const IRModule& mod, PassContext& ctx) {
  return for_each_function<FunctionNode>(
      mod, [&](const FunctionRef& f) { return run_on_function(f, ctx); });
}

absl::StatusOr<IRModule> PrimFuncPass::run(const IRModule& mod, PassContext& ctx) {
  return for_each_function<PrimFuncNode>(
      mod, [&](const FunctionRef& f) { return run_on_prim_func(f, ctx); });
}

absl::StatusOr<IRModule> DataflowBlockPass::run(const IRModule& mod, PassContext& ctx) {
  return for_each_function<FunctionNode>(mod, [&](const FunctionRef& f) -> absl::StatusOr<Expr> {
    BlockRewriter rewriter(mod, [&](const BindingBlock& block) { return run_on_block(block, f, ctx); });
    Expr out = rewriter.visit_expr(f.func);
    if (!rewriter.error().ok()) return rewriter.error();
    if (absl::Status s = rewriter.status(); !s.ok()) return s;
    return out;
  });
}

namespace {

class LambdaModulePass : public Pass {
 public:
  using Fn = std::function<absl::StatusOr<IRModule>(const IRModule&, PassContext&)>;
  LambdaModulePass(PassInfo info, Fn fn) : Pass(std::move(info)), fn_(std::move(fn)) {}
  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override { return fn_(mod, ctx); }

 private:
  Fn fn_;
};

class LambdaFunctionPass : public FunctionPass {
 public:
  using Fn = std::function<absl::StatusOr<Expr>(const FunctionRef&, PassContext&)>;
  LambdaFunctionPass(PassInfo info, Fn fn) : FunctionPass(std::move(info)), fn_(std::move(fn)) {}

 protected:
  absl::StatusOr<Expr> run_on_function(const FunctionRef& f, PassContext& ctx) override {
    return fn_(f, ctx);
  }

 private:
  Fn fn_;
};

class LambdaBlockPass : public DataflowBlockPass {
 public:
  using Fn = std::function<absl::StatusOr<BindingBlock>(const BindingBlock&, const FunctionRef&, PassContext&)>;
  LambdaBlockPass(PassInfo info, Fn fn) : DataflowBlockPass(std::move(info)), fn_(std::move(fn)) {}

 protected:
  absl::StatusOr<BindingBlock> run_on_block(const BindingBlock& block, const FunctionRef& f,
                                            PassContext& ctx) override {
    return fn_(block, f, ctx);
  }

 private:
  Fn fn_;
};

}  // namespace

PassPtr make_module_pass(PassInfo info,
                         std::function<absl::StatusOr<IRModule>(const IRModule&, PassContext&)> fn) {
  return std::make_shared<LambdaModulePass>(std::move(info), std::move(fn));
}

PassPtr make_function_pass(PassInfo info,
                           std::function<absl::StatusOr<Expr>(const FunctionRef&, PassContext&)> fn) {
  return std::make_shared<LambdaFunctionPass>(std::move(info), std::move(fn));
}

PassPtr make_dataflow_block_pass(
    PassInfo info,
    std::function<absl::StatusOr<BindingBlock>(const BindingBlock&, const FunctionRef&, PassContext&)> fn) {
  return std::make_shared<LambdaBlockPass>(std::move(info), std::move(fn));
}

// ---------------------------------------------------------------------------
// PassContext.

namespace {

const PassOption* find_option(const PassInfo& info, std::string_view name) {
  for (const PassOption& o : info.options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

}  // namespace

absl::Status PassContext::set_option_text(std::string_view key, std::string_view text) {
  size_t dot = key.find('.');
  if (dot == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("option `", std::string(key), "`: expected <pass>.<option>, e.g. fold-constant.max-elements"));
  }
  const std::string pass(key.substr(0, dot));
  const std::string name(key.substr(dot + 1));
  const PassInfo* info = find_pass_info(pass);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("option `", std::string(key), "`: unknown pass `", pass, "`"));
  const PassOption* option = find_option(*info, name);
  if (option == nullptr) {
    return absl::NotFoundError(absl::StrCat("option `", std::string(key), "`: pass ", pass, " has no option `", name, "`"));
  }
  absl::StatusOr<OptionValue> value = parse_option_value(option->type(), text);
  if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat("option `", std::string(key), "`: ", value.status().message()));
  set_option(std::string(key), *std::move(value));
  return absl::OkStatus();
}

const OptionValue& PassContext::option(const Pass& pass, std::string_view name) const {
  const PassOption* declared = find_option(pass.info(), name);
  RELAX_CHECK(declared != nullptr) << "pass " << pass.name() << " reads option `" << name
                                   << "`, which it does not declare";
  auto it = options_.find(absl::StrCat(pass.name(), ".", std::string(name)));
  if (it == options_.end()) return declared->default_value;
  // PassManager::run checked the type before any pass ran.
  RELAX_CHECK(option_type(it->second) == declared->type())
      << "option " << it->first << " has the wrong type";
  return it->second;
}

void PassContext::add_statistic(std::string_view name, int64_t delta) {
  RELAX_CHECK(!pass_stack_.empty()) << "add_statistic outside a running pass";
  const Pass& pass = *pass_stack_.back();
  bool declared = false;
  for (const PassStatistic& s : pass.info().statistics) declared |= s.name == name;
  RELAX_CHECK(declared) << "pass " << pass.name() << " counts statistic `" << name
                        << "`, which it does not declare";
  statistics_[pass.name()][std::string(name)] += delta;
}

// ---------------------------------------------------------------------------
// run_pass.

absl::StatusOr<IRModule> run_pass(Pass& pass, const IRModule& mod, PassContext& ctx) {
  if (ctx.is_disabled(pass.name()) || ctx.opt_level < pass.info().min_opt_level) {
    for (const auto& instrument : ctx.instruments()) instrument->skipped_pass(pass, ctx);
    return mod;
  }
  for (const auto& instrument : ctx.instruments()) instrument->before_pass(pass, mod, ctx);
  ctx.pass_stack_.push_back(&pass);
  absl::StatusOr<IRModule> out = pass.run(mod, ctx);
  ctx.pass_stack_.pop_back();
  if (!out.ok()) {
    // A composite's error already names the pass that failed.
    if (pass.children() != nullptr) return out.status();
    return absl::Status(out.status().code(), absl::StrCat("pass ", pass.name(), ": ", out.status().message()));
  }
  for (const auto& instrument : ctx.instruments()) {
    if (absl::Status s = instrument->after_pass(pass, mod, *out, ctx); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("pass ", pass.name(), ": ", s.message()));
    }
  }
  return out;
}

}  // namespace relax::transform
