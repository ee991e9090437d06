// Fuzz target: parse_module, the IR text format (see README.md in this folder).
//
// Input: module text. Oracle, for every input that parses:
//   - well_formed returns (ok or a Status; it must not crash);
//   - to_text parses back to a structurally equal module;
//   - to_json reads back (from_json) to a structurally equal module.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/ir/json.h"
#include "relax/ir/module.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/well_formed.h"

namespace relax::fuzz {
namespace {

void check(std::string_view text) {
  absl::StatusOr<IRModule> mod = parse_module(text);
  if (!mod.ok()) return;
  const absl::Status wf = well_formed(*mod);
  (void)wf;  // either answer is fine; it must answer

  const std::string printed = to_text(*mod);
  absl::StatusOr<IRModule> back = parse_module(printed);
  FUZZ_CHECK(back.ok()) << "the printed module does not parse: " << back.status()
                        << "\nprinted:\n" << excerpt(printed);
  FUZZ_CHECK(structural_equal(*mod, *back))
      << "the printed module reads back different\nprinted:\n" << excerpt(printed)
      << "\nread back, printed again:\n" << excerpt(to_text(*back));

  const std::string json = to_json(*mod);
  absl::StatusOr<IRModule> from = from_json(json);
  FUZZ_CHECK(from.ok()) << "to_json writes a document from_json rejects: " << from.status()
                        << "\nmodule:\n" << excerpt(printed);
  FUZZ_CHECK(structural_equal(*mod, *from))
      << "the JSON form reads back different\nmodule:\n" << excerpt(printed)
      << "\nread back:\n" << excerpt(to_text(*from));
}

}  // namespace
}  // namespace relax::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  relax::fuzz::check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
