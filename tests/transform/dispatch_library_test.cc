// dispatch-library beyond its before/after files (tests/transform/passes/dispatch-library):
// the rule registry, user rules (their library, their priority, declining, errors, and the
// shared-intermediate guard that every rule gets), the pass's options and statistics, and
// the default pipeline carrying a dispatched call down to an explicit library call.
#include "relax/transform/dispatch_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pattern_test_util.h"
#include "relax/ir/ops.h"
#include "relax/ir/printer.h"
#include "relax/ir/testing.h"
#include "relax/runtime/onednn.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/pipeline.h"

namespace relax::transform {
namespace {

using pattern_testing::parse;
using ::testing::HasSubstr;
using ::testing::Not;

// exp(exp(x)) -> call_dps_library(<function>, (x,)).
DispatchRule exp_exp_rule(std::string name, std::string library, std::string function) {
  DispatchRule rule;
  rule.name = std::move(name);
  rule.library = std::move(library);
  rule.pattern = is_op("exp")({is_op("exp")({wildcard().capture("x")})});
  rule.build = [function](const DispatchSite& site) -> absl::StatusOr<std::optional<Expr>> {
    return op::call_dps_library(function, {site.match()["x"]}, site.matched().struct_info());
  };
  return rule;
}

constexpr std::string_view kExpExp = R"(module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      y = exp(x)
      output gv = exp(y)
    }
    return gv
  }
})";

std::vector<std::string> names(const std::vector<DispatchRule>& rules) {
  std::vector<std::string> out;
  for (const DispatchRule& r : rules) out.push_back(r.name);
  return out;
}

TEST(DispatchRules, BuiltInRulesAreOneDnnsThenCudas) {
  EXPECT_EQ(names(builtin_dispatch_rules()),
            (std::vector<std::string>{"onednn.linear", "onednn.matmul", "onednn.conv1d", "onednn.conv2d",
                                      "onednn.conv2d_transpose", "cublas.linear", "cublas.matmul", "cudnn.conv2d"}));
  for (const DispatchRule& r : builtin_dispatch_rules()) {
    EXPECT_EQ(r.library, r.name.substr(0, r.name.find('.')));
  }
}

TEST(DispatchRules, RegistrationChecksTheRule) {
  DispatchRule unnamed = exp_exp_rule("", "", "f");
  EXPECT_EQ(register_dispatch_rule(unnamed).code(), absl::StatusCode::kInvalidArgument);
  DispatchRule no_builder = exp_exp_rule("test.no_builder", "", "f");
  no_builder.build = nullptr;
  absl::Status s = register_dispatch_rule(no_builder);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("test.no_builder has no builder"));
  s = register_dispatch_rule(exp_exp_rule("onednn.matmul", "", "f"));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(), HasSubstr("a rule named onednn.matmul is already registered"));
}

// A registered user rule is used by every pass made afterwards, before the built-in rules,
// and a second rule of the same name is refused. (Its library, which no target names, keeps
// it out of the other tests of this binary, which run the pass too.)
TEST(DispatchRules, RegisteredUserRuleIsUsedByThePass) {
  ASSERT_TRUE(register_dispatch_rule(exp_exp_rule("test.exp_exp", "test_registry_lib", "mylib.exp_exp")).ok());
  EXPECT_EQ(register_dispatch_rule(exp_exp_rule("test.exp_exp", "", "other")).code(),
            absl::StatusCode::kAlreadyExists);
  const std::vector<std::string> all = names(dispatch_rules());
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), "test.exp_exp");
  EXPECT_EQ(all.back(), "cudnn.conv2d");

  absl::StatusOr<PassPtr> pass = create_pass("dispatch-library");
  ASSERT_TRUE(pass.ok()) << pass.status();
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = PassManager({*pass}).run(parse(kExpExp), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(parse(kExpExp), *out);  // onednn only: the rule's library is not there
  ctx.set_option("dispatch-library.libraries", std::string("onednn,test_registry_lib"));
  out = PassManager({*pass}).run(parse(kExpExp), ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(parse(R"(module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    dataflow {
      output gv = call_dps_library(extern_func("mylib.exp_exp"), (x,), sinfo=Tensor[(n, 4), float32])
    }
    return gv
  }
})"),
                             *out);
  EXPECT_EQ(ctx.statistics().at("dispatch-library").at("library_calls"), 1);
}

// A rule of a library applies only when the pass may call that library.
TEST(DispatchRules, RuleOfALibraryNeedsThatLibrary) {
  DispatchLibraryOptions options;
  options.extra_rules = {exp_exp_rule("test.mine", "mylib", "mylib.exp_exp")};
  options.libraries = {"onednn"};
  absl::StatusOr<IRModule> out = dispatch_library(parse(kExpExp), options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), Not(HasSubstr("mylib.exp_exp")));
  options.libraries = {"onednn", "mylib"};
  out = dispatch_library(parse(kExpExp), options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), HasSubstr("mylib.exp_exp"));
}

// The pass's extra rules come before the built-in ones: a user's own matmul wins.
TEST(DispatchRules, ExtraRulesComeFirst) {
  DispatchRule mine;
  mine.name = "test.my_matmul";
  mine.pattern = is_op("matmul")({wildcard().capture("a"), wildcard().capture("b")});
  mine.build = [](const DispatchSite& site) -> absl::StatusOr<std::optional<Expr>> {
    return op::call_dps_library("mylib.matmul", {site.match()["a"], site.match()["b"]},
                                site.matched().struct_info());
  };
  DispatchLibraryOptions options;
  options.extra_rules = {mine};
  absl::StatusOr<IRModule> out = dispatch_library(parse(R"(module {
  func @main(x: Tensor[(n, 64), float32], w: Tensor[(64, 64), float32]) -> Tensor[(n, 64), float32] {
    dataflow {
      output gv = matmul(x, w)
    }
    return gv
  }
})"),
                                                  options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), HasSubstr("mylib.matmul"));
  EXPECT_THAT(to_text(*out), Not(HasSubstr("onednn")));
}

// A builder that declines leaves the bindings; one that fails stops the pass with its
// message, the rule's name and the place.
TEST(DispatchRules, DeclineAndError) {
  DispatchRule rule = exp_exp_rule("test.decline", "", "f");
  rule.build = [](const DispatchSite&) -> absl::StatusOr<std::optional<Expr>> { return std::nullopt; };
  DispatchLibraryOptions options;
  options.extra_rules = {rule};
  absl::StatusOr<IRModule> out = dispatch_library(parse(kExpExp), options);
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(parse(kExpExp), *out);

  rule.build = [](const DispatchSite&) -> absl::StatusOr<std::optional<Expr>> {
    return absl::InvalidArgumentError("no such kernel");
  };
  options.extra_rules = {rule};
  out = dispatch_library(parse(kExpExp), options);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("@main: binding gv: rule test.decline: no such kernel"));
}

// The pass, not the rule, keeps an intermediate that something else uses from being
// swallowed: the user rule's exp(exp(x)) is declined when exp(x) is also an output.
TEST(DispatchRules, UserRulesDoNotSwallowSharedIntermediates) {
  DispatchLibraryOptions options;
  options.extra_rules = {exp_exp_rule("test.shared", "", "mylib.exp_exp")};
  const IRModule mod = parse(R"(module {
  func @main(x: Tensor[(n, 4), float32]) -> Tuple[(Tensor[(n, 4), float32], Tensor[(n, 4), float32])] {
    dataflow {
      y = exp(x)
      z = exp(y)
      output gv = (z, y)
    }
    return gv
  }
})");
  absl::StatusOr<IRModule> out = dispatch_library(mod, options);
  ASSERT_TRUE(out.ok()) << out.status();
  RELAX_EXPECT_STRUCTURAL_EQ(mod, *out);
}

// The builder sees the function's facts: weights, bound values, and sizes under the bounds.
TEST(DispatchRules, SiteKnowsTheFunction) {
  const IRModule mod = parse(R"(module {
  func @main(x: Tensor[(n, 4), float32], w: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] upper_bounds {n: 8} attrs {weights = "w"} {
    dataflow {
      y = exp(x)
      output gv = add(y, w)
    }
    return gv
  }
})");
  std::vector<std::string> seen;
  DispatchRule probe;
  probe.name = "test.probe";
  probe.pattern = is_op("add")({wildcard().capture("y"), wildcard().capture("w")});
  probe.build = [&](const DispatchSite& site) -> absl::StatusOr<std::optional<Expr>> {
    const Expr y = site.match()["y"];
    const Expr w = site.match()["w"];
    seen.push_back(site.is_weight(w) ? "w is a weight" : "w is not a weight");
    seen.push_back(site.is_weight(y) ? "y is a weight" : "y is not a weight");
    const auto* call = site.bound_value(y).as<CallNode>();
    seen.push_back(call != nullptr ? call->callee.as<OpNode>()->name : "?");
    const SymExpr n = (*y.struct_info().as<TensorStructInfoNode>()->shape)[0];
    seen.push_back(site.is_small(n * 4) ? "n*4 small" : "n*4 not small");
    seen.push_back(site.is_small(n * 4096) ? "n*4096 small" : "n*4096 not small");
    return std::nullopt;
  };
  DispatchLibraryOptions options;
  options.extra_rules = {probe};
  ASSERT_TRUE(dispatch_library(mod, options).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"w is a weight", "y is not a weight", "exp", "n*4 small",
                                            "n*4096 not small"}));
}

TEST(DispatchLibraryPass, OptionsAreChecked) {
  absl::StatusOr<PassPtr> pass = create_pass("dispatch-library");
  ASSERT_TRUE(pass.ok());
  PassContext ctx;
  ctx.set_option("dispatch-library.libraries", std::string("onednn,,x"));
  absl::StatusOr<IRModule> out = PassManager({*pass}).run(parse(kExpExp), ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("option dispatch-library.libraries: \"onednn,,x\""));
}

// The default pipeline with oneDNN: the dispatched linear reaches code generation as an
// explicit library call, the rest (the exp) as a kernel; without libraries nothing is dispatched.
TEST(DispatchLibraryPass, DefaultPipelineLowersTheLibraryCall) {
  const IRModule mod = parse(R"(module {
  func @main(x: Tensor[(n, 64), float32], w: Tensor[(128, 64), float32], b: Tensor[(128,), float32]) -> Tensor[(n, 128), float32] {
    dataflow {
      y = linear(x, w, b)
      z = relu(y)
      output gv = exp(z)
    }
    return gv
  }
})");
  Target target;
  target.libraries = {"onednn"};
  PassContext ctx;
  ctx.add_instrument(std::make_shared<VerifyInstrument>());
  absl::StatusOr<IRModule> out = default_pipeline(target).run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string text = to_text(*out);
  EXPECT_THAT(text, HasSubstr("call_library_dps(extern_func(\"onednn.linear+bias+relu\")"));
  EXPECT_THAT(text, Not(HasSubstr("linear(")));

  target.libraries = {};
  out = default_pipeline(target).run(mod, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(to_text(*out), Not(HasSubstr("onednn")));
}

// With oneDNN in this runtime and every dim bounded, the call declares oneDNN's scratchpad
// as its workspace: at least what the runtime reports at the bound and at smaller sizes,
// a multiple of 64 bytes; without a bound on n, none.
TEST(DispatchLibraryPass, BoundedCallsDeclareTheScratchpadAsWorkspace) {
  if (!runtime::onednn_available()) GTEST_SKIP() << "built without oneDNN";
  auto declared = [&](const std::string& bounds) -> std::optional<int64_t> {
    absl::StatusOr<IRModule> out = dispatch_library(parse(absl::StrCat(R"(module {
  func @main(x: Tensor[(n, 256), float32], w: Tensor[(512, 256), float32]) -> Tensor[(n, 512), float32] )",
                                                                       bounds, R"( {
    dataflow {
      output gv = linear(x, w)
    }
    return gv
  }
})")));
    EXPECT_TRUE(out.ok()) << out.status();
    const std::string printed = to_text(*out);
    EXPECT_THAT(printed, HasSubstr("onednn.linear"));
    const size_t at = printed.find("prim(");
    if (at == std::string::npos) return std::nullopt;
    int64_t bytes = 0;
    EXPECT_TRUE(absl::SimpleAtoi(printed.substr(at + 5, printed.find(')', at) - at - 5), &bytes));
    return bytes;
  };
  std::optional<int64_t> bytes = declared("upper_bounds {n: 64}");
  int64_t most = 0;
  for (int64_t n : {1, 2, 4, 8, 16, 32, 64}) {
    absl::StatusOr<int64_t> need = runtime::onednn_workspace_bytes(
        "onednn.linear", {{n, 256}, {512, 256}, {n, 512}},
        {DataType::float32(), DataType::float32(), DataType::float32()});
    ASSERT_TRUE(need.ok()) << need.status();
    most = std::max(most, *need);
  }
  if (most == 0) {
    EXPECT_EQ(bytes, std::nullopt) << "no scratchpad needed, none declared";
  } else {
    ASSERT_TRUE(bytes.has_value());
    EXPECT_GE(*bytes, most);
    EXPECT_EQ(*bytes % 64, 0);
  }
  EXPECT_EQ(declared(""), std::nullopt) << "n unbounded: no workspace";
}

// bf16-products: a float32 product of a bfloat16 weight widened in the graph becomes oneDNN's
// bf16 x bf16 product of the rows converted to bf16 and the weight itself, unless its rows are
// provably within stream-rows; off, it stays (generated code widens the weight).
TEST(DispatchLibraryPass, Bfloat16WeightsWidenedInTheGraphBecomeBf16Products) {
  auto dispatched = [](const std::string& bound, bool bf16_products) {
    DispatchLibraryOptions options;
    options.stream_rows = 16;
    options.bf16_products = bf16_products;
    options.workspaces = false;
    absl::StatusOr<IRModule> out = dispatch_library(parse(absl::StrCat(R"(module {
  func @main(x: Tensor[(n, 64), float32], w: Tensor[(64, 128), bfloat16]) -> Tensor[(n, 128), float32] )",
                                                                       bound, R"( {
    dataflow {
      t = astype(w, dtype=float32)
      output gv = matmul(x, t)
    }
    return gv
  }
})")),
                                                options);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? to_text(*out) : std::string();
  };
  const std::string many = dispatched("upper_bounds {n: 512}", true);
  EXPECT_THAT(many, HasSubstr("call_dps_library(extern_func(\"onednn.matmul\"), (astype(x, dtype=bfloat16), w), sinfo="));
  EXPECT_THAT(many, Not(HasSubstr("t = astype(w")));
  EXPECT_THAT(dispatched("", true), HasSubstr("onednn.matmul")) << "n unbounded";
  EXPECT_THAT(dispatched("upper_bounds {n: 16}", true), Not(HasSubstr("onednn"))) << "16 rows stream the weight";
  EXPECT_THAT(dispatched("upper_bounds {n: 512}", false), Not(HasSubstr("onednn"))) << "bf16-products off";
}

}  // namespace
}  // namespace relax::transform
