// Fuzz target: the built-in passes, over modules in the IR text format (see README.md here).
//
// Input: module text. For every input that parses and is well formed, each built-in pass alone
// and the default pipeline run under the verify instrument. Oracle:
//   - no crash, and no pass breaks the module: the result is well formed with current
//     annotations (a pass may decline an input with a user-facing error, never with the
//     verify instrument's InternalError);
//   - the result prints and parses back to a structurally equal module.
// fold-constant's step budget is cut to 20,000 statements per fold so that one input stays fast.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/ir/module.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"
#include "relax/support/target.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/pipeline.h"

namespace relax::fuzz {
namespace {

void run(const transform::PassManager& pm, const IRModule& mod, const std::string& text) {
  transform::PassContext ctx;
  ctx.add_instrument(std::make_shared<transform::VerifyInstrument>());
  if (pm.contains("fold-constant")) ctx.set_option("fold-constant.max-steps", int64_t{20000});
  absl::StatusOr<IRModule> out = pm.run(mod, ctx);
  if (!out.ok()) {
    FUZZ_CHECK(out.status().code() != absl::StatusCode::kInternal)
        << "the pipeline `" << pm.to_string() << "` broke the module: " << out.status()
        << "\nmodule:\n" << excerpt(text);
    return;
  }
  const std::string printed = to_text(*out);
  absl::StatusOr<IRModule> back = parse_module(printed);
  FUZZ_CHECK(back.ok()) << "after `" << pm.to_string() << "` the module does not parse back: "
                        << back.status() << "\nprinted:\n" << excerpt(printed);
  FUZZ_CHECK(structural_equal(*out, *back))
      << "after `" << pm.to_string() << "` the module reads back different\nprinted:\n" << excerpt(printed);
}

void check(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  if (!mod.ok() || !well_formed(*mod).ok()) return;
  const std::string source(text);
  for (const transform::PassInfo& info : transform::list_passes()) {
    absl::StatusOr<transform::PassPtr> pass = transform::create_pass(info.name);
    FUZZ_CHECK(pass.ok()) << pass.status();
    run(transform::PassManager({*pass}), *mod, source);
  }
  run(transform::default_pipeline(Target()), *mod, source);
}

}  // namespace
}  // namespace relax::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  relax::fuzz::check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
