// The pass infrastructure: PassManager edits and pipeline text, fixed-point
// groups, PassContext options / disabled passes / opt levels / statistics, the
// adaptors (pointer identity, error prefixes, re-normalisation), the
// instruments, and the default pipeline.
#include "relax/transform/pass_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/ir/well_formed.h"
#include "relax/transform/instrument.h"
#include "relax/transform/legalize_ops.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/pipeline.h"

namespace relax::transform {
namespace {

using ::testing::HasSubstr;

IRModule parse_or_die(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  RELAX_CHECK(mod.ok()) << mod.status().message();
  return *mod;
}

constexpr std::string_view kAddExp = R"(
module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      lv: Tensor[(n, 4), float32] = add(x, x)
      output gv: Tensor[(n, 4), float32] = exp(lv)
    }
    return gv
  }
})";

// A pass that does nothing but count its runs.
PassPtr counting_pass(std::string name, int* runs) {
  return make_module_pass(PassInfo(std::move(name), "counts"), [runs](const IRModule& mod, PassContext&) {
    ++*runs;
    return absl::StatusOr<IRModule>(mod);
  });
}

PassPtr noop(std::string name) {
  return make_module_pass(PassInfo(std::move(name), "nothing"),
                          [](const IRModule& mod, PassContext&) { return absl::StatusOr<IRModule>(mod); });
}

// ---------------------------------------------------------------------------
// Editing and printing.

TEST(PassManager, EditsFindPassesByNameInNestedGroups) {
  PassManager pm({noop("a"), fixed_point({noop("b"), noop("c")}), noop("d")});
  EXPECT_EQ(pm.to_string(), "a,fixed-point(b,c),d");
  ASSERT_TRUE(pm.insert_after("b", noop("x")).ok());
  ASSERT_TRUE(pm.insert_before("a", noop("y")).ok());
  EXPECT_EQ(pm.to_string(), "y,a,fixed-point(b,x,c),d");
  ASSERT_TRUE(pm.replace("c", noop("z")).ok());
  ASSERT_TRUE(pm.remove("a").ok());
  EXPECT_EQ(pm.to_string(), "y,fixed-point(b,x,z),d");
  EXPECT_TRUE(pm.contains("x"));
  EXPECT_FALSE(pm.contains("a"));
  absl::Status missing = pm.remove("nope");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("no pass `nope` in the pipeline `y,fixed-point(b,x,z),d`"));
  EXPECT_FALSE(pm.insert_after("nope", noop("q")).ok());
}

TEST(PassManager, RemoveTakesEveryOccurrence) {
  PassManager pm({noop("a"), noop("b"), noop("a"), sequence({noop("a"), noop("c")})});
  ASSERT_TRUE(pm.remove("a").ok());
  EXPECT_EQ(pm.to_string(), "b,sequence(c)");
}

TEST(PipelineText, ParsesAndPrintsBack) {
  for (std::string text : {"legalize-ops", "legalize-ops,legalize-ops",
                           "legalize-ops,fixed-point(legalize-ops)",
                           "fixed-point{max-iterations=3}(legalize-ops,sequence(legalize-ops))"}) {
    absl::StatusOr<PassManager> pm = parse_pipeline(text);
    ASSERT_TRUE(pm.ok()) << text << ": " << pm.status();
    EXPECT_EQ(pm->to_string(), text);
  }
  absl::StatusOr<PassManager> spaced = parse_pipeline(" legalize-ops , fixed-point( legalize-ops ) ");
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_EQ(spaced->to_string(), "legalize-ops,fixed-point(legalize-ops)");
}

TEST(PipelineText, ErrorsNameTheColumn) {
  struct Case {
    std::string text;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"legalize-ops,cse2", "pipeline:14: unknown pass `cse2`; known passes: legalize-ops"},
           {"", "pipeline:1: the pipeline is empty"},
           {"legalize-ops,", "pipeline:14: expected a pass name, found the end"},
           {"fixed-point(legalize-ops", "pipeline:25: expected `)`"},
           {"fixed-point", "pipeline:1: `fixed-point` takes a parenthesised list of passes"},
           {"fixed-point{max-iterations=0}(legalize-ops)", "expected {max-iterations=N} with N >= 1"},
           {"legalize-ops)", "pipeline:13: expected `,` or the end, found `)`"},
       }) {
    absl::StatusOr<PassManager> pm = parse_pipeline(c.text);
    ASSERT_FALSE(pm.ok()) << c.text;
    EXPECT_THAT(pm.status().message(), HasSubstr(c.error)) << c.text;
  }
}

TEST(PassRegistry, UserPassesBecomeReachableFromText) {
  ASSERT_TRUE(register_pass([] { return noop("my-user-pass"); }).ok());
  EXPECT_EQ(register_pass([] { return noop("my-user-pass"); }).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(register_pass([] { return noop("Bad_Name"); }).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(register_pass([] { return noop("fixed-point"); }).code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<PassManager> pm = parse_pipeline("legalize-ops,my-user-pass");
  ASSERT_TRUE(pm.ok()) << pm.status();
  EXPECT_NE(find_pass_info("my-user-pass"), nullptr);
  PassManager added;
  EXPECT_TRUE(added.add("my-user-pass").ok());
  EXPECT_EQ(added.add("unknown-pass").code(), absl::StatusCode::kNotFound);
}

// ---------------------------------------------------------------------------
// Running.

TEST(FixedPoint, RepeatsUntilTheModuleStopsChanging) {
  // Each round removes one function; the group stops one round after the last removal.
  IRModule mod = parse_or_die(R"(
    module {
      func @a(x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { return x }
      func @b(x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { return x }
      func @main(x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { return x }
    })");
  PassPtr drop_first = make_module_pass(
      PassInfo("drop-first", "removes the first function unless it is main"),
      [](const IRModule& m, PassContext&) -> absl::StatusOr<IRModule> {
        IRModule out = m;
        if (m.functions().front().first != "main") out.remove(m.functions().front().first);
        return out;
      });
  PassManager pm({fixed_point({drop_first})});
  PassContext ctx;
  absl::StatusOr<IRModule> out = pm.run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->functions().size(), 1u);
  EXPECT_EQ(ctx.statistics().at("fixed-point").at("iterations"), 3);
  EXPECT_FALSE(ctx.statistics().at("fixed-point").contains("unconverged"));

  // Bounded: two rounds cannot reach the end.
  PassManager bounded({fixed_point({drop_first}, 1)});
  PassContext ctx2;
  out = bounded.run(mod, ctx2);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->functions().size(), 2u);
  EXPECT_EQ(ctx2.statistics().at("fixed-point").at("unconverged"), 1);
}

TEST(FixedPoint, AStructurallyEqualRebuildCountsAsNoChange) {
  IRModule mod = parse_or_die(kAddExp);
  int runs = 0;
  // Re-parses the module each time: new nodes, same structure.
  PassPtr reparse = make_module_pass(PassInfo("reparse", "rebuilds"), [&runs](const IRModule& m, PassContext&) {
    ++runs;
    return parse_module(to_text(m));
  });
  PassContext ctx;
  ASSERT_TRUE(PassManager({fixed_point({reparse})}).run(mod, ctx).ok());
  EXPECT_EQ(runs, 1);
}

struct OptionPass : Pass {
  OptionPass()
      : Pass(PassInfo("option-pass", "reads options")
                 .with_option("limit", int64_t{8}, "a limit")
                 .with_option("mode", std::string("fast"), "a mode")
                 .with_statistic("seen", "times run")) {}
  absl::StatusOr<IRModule> run(const IRModule& mod, PassContext& ctx) override {
    limit = ctx.int_option(*this, "limit");
    mode = ctx.string_option(*this, "mode");
    ctx.add_statistic("seen", 2);
    return mod;
  }
  int64_t limit = 0;
  std::string mode;
};

TEST(PassContext, OptionsAreTypedAndChecked) {
  IRModule mod = parse_or_die(kAddExp);
  auto pass = std::make_shared<OptionPass>();
  PassManager pm({pass});
  PassContext defaults;
  ASSERT_TRUE(pm.run(mod, defaults).ok());
  EXPECT_EQ(pass->limit, 8);
  EXPECT_EQ(pass->mode, "fast");
  EXPECT_EQ(defaults.statistics().at("option-pass").at("seen"), 2);

  PassContext set;
  set.set_option("option-pass.limit", int64_t{3});
  ASSERT_TRUE(pm.run(mod, set).ok());
  EXPECT_EQ(pass->limit, 3);

  PassContext unknown;
  unknown.set_option("option-pass.limt", int64_t{3});
  absl::StatusOr<IRModule> out = pm.run(mod, unknown);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("unknown option `option-pass.limt`: no pass of the pipeline declares it; declared "
                        "options: option-pass.limit (int), option-pass.mode (string)"));

  PassContext wrong_type;
  wrong_type.set_option("option-pass.limit", std::string("many"));
  out = pm.run(mod, wrong_type);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("option `option-pass.limit` is of type int, given a string (many)"));
}

TEST(PassContext, OptionsFromTextFollowThePassTable) {
  ASSERT_TRUE(register_pass([] { return std::make_shared<OptionPass>(); }).ok() ||
              find_pass_info("option-pass") != nullptr);
  PassContext ctx;
  EXPECT_TRUE(ctx.set_option_text("option-pass.limit", "12").ok());
  EXPECT_EQ(std::get<int64_t>(ctx.options().at("option-pass.limit")), 12);
  EXPECT_THAT(ctx.set_option_text("option-pass.limit", "twelve").message(),
              HasSubstr("option `option-pass.limit`: expected a value of type int, got `twelve`"));
  EXPECT_THAT(ctx.set_option_text("option-pass.nothing", "1").message(),
              HasSubstr("pass option-pass has no option `nothing`"));
  EXPECT_THAT(ctx.set_option_text("no-such-pass.x", "1").message(), HasSubstr("unknown pass `no-such-pass`"));
  EXPECT_THAT(ctx.set_option_text("limit", "1").message(), HasSubstr("expected <pass>.<option>"));
}

TEST(PassContext, DisabledPassesAndOptLevelsSkipPasses) {
  IRModule mod = parse_or_die(kAddExp);
  int a = 0;
  int b = 0;
  PassPtr high = make_module_pass(PassInfo("high-level", "O3 only").at_opt_level(3),
                                  [&b](const IRModule& m, PassContext&) {
                                    ++b;
                                    return absl::StatusOr<IRModule>(m);
                                  });
  PassManager pm({counting_pass("counted", &a), high, fixed_point({counting_pass("counted", &a)})});
  PassContext ctx;
  ctx.disable_pass("counted");
  ASSERT_TRUE(pm.run(mod, ctx).ok());
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 0);  // opt level 2
  ctx.opt_level = 3;
  ASSERT_TRUE(pm.run(mod, ctx).ok());
  EXPECT_EQ(b, 1);

  PassContext typo;
  typo.disable_pass("countd");
  absl::StatusOr<IRModule> out = pm.run(mod, typo);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("cannot disable unknown pass `countd`"));
}

TEST(PassManager, RequiredPassesMustComeFirst) {
  IRModule mod = parse_or_die(kAddExp);
  PassPtr needs = make_module_pass(PassInfo("needs-legal", "after legalization").requires_pass("legalize-ops"),
                                   [](const IRModule& m, PassContext&) { return absl::StatusOr<IRModule>(m); });
  absl::StatusOr<PassManager> ok = parse_pipeline("legalize-ops");
  ASSERT_TRUE(ok.ok());
  ok->add(needs);
  EXPECT_TRUE(ok->run(mod).ok());
  absl::StatusOr<IRModule> out = PassManager({needs}).run(mod);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(out.status().message(),
              HasSubstr("pass needs-legal requires legalize-ops to run before it in the pipeline `needs-legal`"));
}

// ---------------------------------------------------------------------------
// Adaptors.

TEST(FunctionPass, KeepsUntouchedFunctionsAndNamesTheFunctionInErrors) {
  IRModule mod = parse_or_die(R"(
    module {
      func @keep(x: Tensor[(2,), float32]) -> Tensor[(2,), float32] { return x }
      func @main(x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
        y: Tensor[(2,), float32] = add(x, x)
        return y
      }
    })");
  PassPtr fails_on_main = make_function_pass(
      PassInfo("picky", "fails on main"), [](const FunctionRef& f, PassContext&) -> absl::StatusOr<Expr> {
        if (f.name == "main") return absl::InvalidArgumentError("cannot handle this");
        return f.func;
      });
  absl::StatusOr<IRModule> out = PassManager({fails_on_main}).run(mod);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "pass picky: @main: cannot handle this");

  PassPtr identity = make_function_pass(PassInfo("identity", "nothing"),
                                        [](const FunctionRef& f, PassContext&) { return absl::StatusOr<Expr>(f.func); });
  out = PassManager({identity}).run(mod);
  ASSERT_TRUE(out.ok());
  for (size_t i = 0; i < mod.functions().size(); ++i) {
    EXPECT_TRUE(out->functions()[i].second.same_as(mod.functions()[i].second));
  }
}

TEST(DataflowBlockPass, RenormalisesWhatTheRewriteBuilt) {
  // add(x, x) becomes multiply(x, 2f32) built without annotations; the pass
  // adaptor annotates it and the result is well formed.
  IRModule mod = parse_or_die(kAddExp);
  PassPtr rewrite = make_dataflow_block_pass(
      PassInfo("add-to-multiply", "x + x -> x * 2"),
      [](const BindingBlock& block, const FunctionRef&, PassContext&) -> absl::StatusOr<BindingBlock> {
        BindingBlock out = block;
        for (Binding& b : out.bindings) {
          const auto* call = b.value.as<CallNode>();
          const auto* op = call != nullptr ? call->callee.as<OpNode>() : nullptr;
          if (op != nullptr && op->name == "add") {
            b.value = make_call(make_op_or_die("multiply"),
                                {call->args[0], make_prim_value(SymExpr::float_imm(2.0, DataType::float32()))});
          }
        }
        return out;
      });
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({rewrite}).run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), HasSubstr("lv: Tensor[(n, 4), float32] = multiply(x, prim(2f32))"));
}

// ---------------------------------------------------------------------------
// Instruments.

TEST(Instruments, TimingHasARowPerPassNestedUnderItsGroup) {
  IRModule mod = parse_or_die(kAddExp);
  int runs = 0;
  PassManager pm({counting_pass("first", &runs), fixed_point({counting_pass("inner", &runs)})});
  PassContext ctx;
  auto timing = std::make_shared<TimingInstrument>();
  ctx.add_instrument(timing);
  ASSERT_TRUE(pm.run(mod, ctx).ok());
  ASSERT_EQ(timing->rows().size(), 3u);
  EXPECT_EQ(timing->rows()[0].name, "first");
  EXPECT_EQ(timing->rows()[1].name, "fixed-point");
  EXPECT_EQ(timing->rows()[2].name, "inner");
  EXPECT_EQ(timing->rows()[2].depth, 1);
  EXPECT_EQ(timing->rows()[2].runs, 1);
  EXPECT_THAT(timing->report(), HasSubstr("Pass execution timing report"));
  EXPECT_THAT(timing->report(), HasSubstr("    inner"));
}

TEST(Instruments, PrintIRBeforeAndAfterChosenPasses) {
  IRModule mod = parse_or_die(kAddExp);
  std::ostringstream out;
  PrintIROptions options;
  options.after.insert("legalize-ops");
  options.out = &out;
  PassContext ctx;
  ctx.add_instrument(std::make_shared<PrintIRInstrument>(options));
  absl::StatusOr<PassManager> pm = parse_pipeline("legalize-ops");
  ASSERT_TRUE(pm.ok());
  ASSERT_TRUE(pm->run(mod, ctx).ok());
  EXPECT_THAT(out.str(), HasSubstr("// ----- IR after pass legalize-ops -----"));
  EXPECT_THAT(out.str(), HasSubstr("call_tir(@add"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("IR before")));

  const std::string folder = (std::filesystem::path(::testing::TempDir()) / "relax_print_ir").string();
  std::filesystem::remove_all(folder);
  PrintIROptions to_files;
  to_files.before_all = true;
  to_files.after_all = true;
  to_files.folder = folder;
  PassContext ctx2;
  ctx2.add_instrument(std::make_shared<PrintIRInstrument>(to_files));
  ASSERT_TRUE(pm->run(mod, ctx2).ok());
  EXPECT_TRUE(std::filesystem::exists(folder + "/01-legalize-ops-before.relax"));
  std::ifstream after(folder + "/02-legalize-ops-after.relax");
  std::stringstream text;
  text << after.rdbuf();
  EXPECT_TRUE(parse_module(text.str()).ok()) << "a printed module reads back";
}

TEST(Instruments, VerifyCatchesABrokenModuleAndAStaleAnnotation) {
  IRModule mod = parse_or_die(kAddExp);
  // Drops every binding of main: `gv` is then used undefined.
  PassPtr breaker = make_module_pass(PassInfo("breaker", "breaks"), [](const IRModule& m, PassContext&) {
    const auto* f = m.lookup("main").as<FunctionNode>();
    const auto* seq = f->body.as<SeqExprNode>();
    IRModule out = m;
    out.add("main", make_function(f->params, make_seq_expr({}, seq->body, seq->body.struct_info()), f->ret,
                                  f->pure, f->upper_bounds, f->attrs));
    return absl::StatusOr<IRModule>(out);
  });
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({breaker}).run(mod, ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("pass breaker: the module is not well formed after the pass"));

  // A rebuilt call annotated coarser than deduction (rank only): well formed,
  // but stale, and the check blames the pass because its input was current.
  PassPtr stale = make_module_pass(PassInfo("stale", "stale annotation"), [](const IRModule& m, PassContext&) {
    const auto* f = m.lookup("main").as<FunctionNode>();
    const auto* seq = f->body.as<SeqExprNode>();
    const Binding& b = seq->blocks[0].bindings[0];
    const auto* call = b.value.as<CallNode>();
    StructInfo coarse = tensor_sinfo_rank(2, DataType::float32());
    Expr rebuilt = make_call(call->callee, call->args, call->attrs, call->sinfo_args, coarse);
    BindingBlock block = seq->blocks[0];
    block.bindings[0] = {Var(b.var.name_hint(), coarse), rebuilt, false, StructInfo()};
    block.bindings[1].value = make_call(make_op_or_die("exp"), {block.bindings[0].var}, {}, {}, coarse);
    block.bindings[1].var = Var(block.bindings[1].var.name_hint(), coarse);
    IRModule result = m;
    result.add("main", make_function(f->params, make_seq_expr({block}, block.bindings[1].var, coarse), coarse,
                                  f->pure, f->upper_bounds, f->attrs));
    return absl::StatusOr<IRModule>(result);
  });
  PassContext ctx2;
  ctx2.add_instrument(std::make_shared<VerifyInstrument>());
  out = PassManager({stale}).run(mod, ctx2);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("pass stale: the pass left a stale annotation: @main: binding lv: "
                                                "annotated Tensor[ndim=2, float32], deduction gives "
                                                "Tensor[(n, 4), float32]"));
}

// ---------------------------------------------------------------------------
// The default pipeline (docs/passes.md is generated from the pass table: tests/tools/docs_test.cc).

TEST(DefaultPipeline, LegalizesEverythingAndStaysWellFormed) {
  PassManager pm = default_pipeline(Target());
  EXPECT_TRUE(pm.contains("legalize-ops"));
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = pm.run(parse_or_die(kAddExp), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), ::testing::Not(HasSubstr("= add(")));
}

}  // namespace
}  // namespace relax::transform

namespace relax::transform {
namespace {

TEST(LegalizeOpsPass, AUserRuleReplacesTheBuiltInOne) {
  // exp(x) legalized by a user rule that replaces the call by its operand:
  // no kernel for exp, the built-in rule for add still applies.
  LegalizeRule identity = [](const CallNode& call, Analyzer&) -> absl::StatusOr<Lowering> {
    Lowering out;
    out.replacement = call.args[0];
    return out;
  };
  PassManager pm({create_legalize_ops_pass({{"exp", identity}})});
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = pm.run(parse_or_die(kAddExp), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<IRModule> expected = parse_module(R"(
    module {
      func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
        dataflow {
          lv: Tensor[(n, 4), float32] = call_tir(@add, (x, x), sinfo=Tensor[(n, 4), float32])
          output gv: Tensor[(n, 4), float32] = lv
        }
        return gv
      }
      prim_func @add(A: Buffer[(n, 4), float32], B: Buffer[(n, 4), float32], C: Buffer[(n, 4), float32])
          attrs {global_symbol = "add"} {
        for i0 in range(n) parallel {
          for i1 in range(4) {
            block add(vi0 = spatial(n, i0), vi1 = spatial(4, i1)) {
              C[vi0, vi1] = A[vi0, vi1] + B[vi0, vi1]
            }
          }
        }
      }
    })");
  ASSERT_TRUE(expected.ok()) << expected.status();
  RELAX_EXPECT_STRUCTURAL_EQ(*out, *expected);
  EXPECT_EQ(ctx.statistics().at("legalize-ops").at("legalized_calls"), 2);
  EXPECT_EQ(ctx.statistics().at("legalize-ops").at("kernels_added"), 1);

  // A rule's error names the function and binding, behind the pass's name.
  LegalizeRule refuses = [](const CallNode&, Analyzer&) -> absl::StatusOr<Lowering> {
    return absl::InvalidArgumentError("exp: not today");
  };
  out = PassManager({create_legalize_ops_pass({{"exp", refuses}})}).run(parse_or_die(kAddExp));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "pass legalize-ops: @main: binding `gv`: exp: not today");
}

}  // namespace
}  // namespace relax::transform

namespace relax::transform {
namespace {

// Renames the loop variable of every kernel whose loop is called `i` to `k`;
// fails on a kernel named `bad`.
class RenameLoops : public PrimFuncPass {
 public:
  RenameLoops() : PrimFuncPass(PassInfo("rename-loops", "renames loops").with_statistic("seen", "kernels seen")) {}

 protected:
  absl::StatusOr<Expr> run_on_prim_func(const FunctionRef& f, PassContext& ctx) override {
    ctx.add_statistic("seen");
    if (f.name == "bad") return absl::InvalidArgumentError("cannot rename");
    return parse_prim_func_renamed(f);
  }

 private:
  static absl::StatusOr<Expr> parse_prim_func_renamed(const FunctionRef& f) {
    if (f.name != "copy") return f.func;  // unchanged: must stay the same node
    absl::StatusOr<IRModule> m = parse_module(R"(
      module {
        prim_func @copy(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
          for k in range(n) {
            B[k] = A[k]
          }
        }
      })");
    if (!m.ok()) return m.status();
    return m->lookup("copy");
  }
};

TEST(PrimFuncPass, VisitsEveryKernelKeepsUntouchedOnesAndNamesTheKernelInErrors) {
  constexpr std::string_view kKernels = R"(
    module {
      prim_func @copy(A: Buffer[(n,), float32], B: Buffer[(n,), float32]) {
        for i in range(n) {
          B[i] = A[i]
        }
      }
      prim_func @zero(A: Buffer[(4,), float32]) {
        for i in range(4) {
          A[i] = 0f32
        }
      }
      func @main(x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
        y = call_tir(@copy, (x,), sinfo=Tensor[(n,), float32])
        return y
      }
    })";
  IRModule mod = parse_or_die(kKernels);
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({std::make_shared<RenameLoops>()}).run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->lookup("copy").same_as(mod.lookup("copy")));
  EXPECT_TRUE(out->lookup("zero").same_as(mod.lookup("zero")));
  EXPECT_TRUE(out->lookup("main").same_as(mod.lookup("main")));
  EXPECT_THAT(to_text(*out), HasSubstr("for k in range(n)"));
  EXPECT_EQ(ctx.statistics().at("rename-loops").at("seen"), 2);
  EXPECT_THAT(statistics_report(ctx), HasSubstr("rename-loops.seen"));

  IRModule bad = parse_or_die(R"(
    module {
      prim_func @bad(A: Buffer[(4,), float32]) {
        for i in range(4) {
          A[i] = 0f32
        }
      }
    })");
  out = PassManager({std::make_shared<RenameLoops>()}).run(bad);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "pass rename-loops: @bad: cannot rename");
}

}  // namespace
}  // namespace relax::transform
