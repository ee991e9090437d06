// The pass infrastructure links without the passes: this binary links relax::transform
// as a plain static library and includes no header that names the built-in pass table
// (relax/transform/builtin_passes.h), so the linker leaves every built-in pass out; a pass of
// its own still registers, runs under a PassManager and takes options through a PassContext.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "relax/ir/module.h"
#include "relax/ir/parser.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"

namespace relax::transform {
namespace pass_infra_test {
namespace {

/// Counts the functions of a module, as a statistic; an option says by how much.
PassPtr count_functions() {
  return make_module_pass(PassInfo("count-functions", "counts the module's functions")
                              .with_option("weight", int64_t{1}, "added per function")
                              .with_statistic("functions", "functions seen, times the weight"),
                          [](const IRModule& module, PassContext& context) -> absl::StatusOr<IRModule> {
                            const Pass& self = *context.pass_stack().back();
                            const int64_t weight = context.int_option(self, "weight");
                            context.add_statistic("functions", weight * static_cast<int64_t>(module.functions().size()));
                            return module;
                          });
}

TEST(PassInfrastructure, LinksWithoutTheBuiltInPasses) {
  for (const PassInfo& info : list_passes()) ADD_FAILURE() << "linked: " << info.name;
  EXPECT_EQ(find_pass_info("fuse-ops"), nullptr);
  absl::StatusOr<PassManager> pipeline = parse_pipeline("fuse-ops");
  ASSERT_FALSE(pipeline.ok());
  EXPECT_THAT(std::string(pipeline.status().message()), testing::HasSubstr("unknown pass `fuse-ops`"));
}

TEST(PassInfrastructure, RunsARegisteredPassOfItsOwn) {
  ASSERT_TRUE(register_pass(count_functions).ok());
  ASSERT_NE(find_pass_info("count-functions"), nullptr);
  PassContext context;
  ASSERT_TRUE(context.set_option_text("count-functions.weight", "3").ok());
  EXPECT_FALSE(context.set_option_text("fuse-ops.max-depth", "3").ok());
  absl::StatusOr<PassManager> pipeline = parse_pipeline("count-functions");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  absl::StatusOr<IRModule> module = parse_module(R"(
module {
  func @main(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    return x
  }
  func @other(x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
    return x
  }
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<IRModule> out = pipeline->run(*module, context);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(context.statistics().at("count-functions").at("functions"), 6);
}

}  // namespace
}  // namespace pass_infra_test
}  // namespace relax::transform
