// Fuzz target: from_json, the JSON form of an IRModule (see README.md in this folder).
//
// Input: a JSON document. Oracle, for every input that reads:
//   - to_json reads back and writes the same document again; when well_formed passes, the module
//     read back is structurally equal too. (Structural equality matches variables by their
//     definitions, so it is only defined where every use follows its definition: a binding
//     `gv = gv(x)` that uses its own variable, which the reader leaves to well_formed, compares
//     unequal even to itself read twice. The byte-identical document is the check there.)
//   - well_formed and to_text return (on any module read, well-formed or not);
//   - when well_formed passes, the text parses back (parse_module) to a structurally equal
//     module. (Text of IR that is not well formed need not parse: the parser re-checks what
//     the JSON reader leaves to well_formed.)
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
  absl::StatusOr<IRModule> mod = from_json(text);
  if (!mod.ok()) return;

  const std::string json = to_json(*mod);
  absl::StatusOr<IRModule> back = from_json(json);
  FUZZ_CHECK(back.ok()) << "to_json writes a document from_json rejects: " << back.status()
                        << "\ndocument:\n" << excerpt(json);
  const std::string again = to_json(*back);
  FUZZ_CHECK(again == json) << "writing the module read back gives another document\nfirst:\n"
                            << excerpt(json) << "\nsecond:\n" << excerpt(again);

  const absl::Status wf = well_formed(*mod);
  const std::string printed = to_text(*mod);
  if (!wf.ok()) return;
  FUZZ_CHECK(structural_equal(*mod, *back))
      << "the document reads back different: "
      << first_difference(*mod, *back).value_or("(no difference found)") << "\ndocument:\n"
      << excerpt(json);
  absl::StatusOr<IRModule> parsed = parse_module(printed);
  FUZZ_CHECK(parsed.ok()) << "a well-formed module prints as text that does not parse: "
                          << parsed.status() << "\ntext:\n" << excerpt(printed);
  FUZZ_CHECK(structural_equal(*mod, *parsed))
      << "a well-formed module reads back from its text different\ntext:\n" << excerpt(printed)
      << "\nread back:\n" << excerpt(to_text(*parsed));
}

}  // namespace
}  // namespace relax::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  relax::fuzz::check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
