// Every built-in pass over the IR corpus of the printer tests (every node kind
// of both levels): the pass either declines with a user-facing error or hands
// on a module that is well formed and whose annotations are exactly what
// re-normalising gives (VerifyInstrument), and running it again on its own
// output is again verified.
#include <gtest/gtest.h>

#include "../ir/text_corpus.h"
#include "relax/ir/printer.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"

namespace relax::transform {
namespace {

TEST(BuiltInPasses, KeepEveryCorpusModuleWellFormedAndNormalised) {
  int verified = 0;
  for (const PassInfo& info : list_passes()) {
    for (const auto& [module_name, make] : text_corpus::all_modules()) {
      absl::StatusOr<PassPtr> pass = create_pass(info.name);
      ASSERT_TRUE(pass.ok()) << pass.status();
      PassContext ctx;
      ctx.add_instrument(std::make_shared<VerifyInstrument>());
      PassManager pm({*pass, *pass});
      absl::StatusOr<IRModule> out = pm.run(make(), ctx);
      if (!out.ok()) {
        // Declining (a module the pass cannot handle) is fine; breaking the module is not.
        EXPECT_NE(out.status().code(), absl::StatusCode::kInternal)
            << info.name << " on " << module_name << ": " << out.status();
        continue;
      }
      ++verified;
    }
  }
  EXPECT_GT(verified, 0);
}

}  // namespace
}  // namespace relax::transform
