// Fuzz target: import_onnx, the ONNX importer (relax/frontend/onnx.h; see README.md in this
// folder).
//
// Input: the bytes of an ONNX model. Oracle:
//   - import_onnx returns a module or a Status (never crashes): bytes that do not parse, a model
//     the ONNX checker refuses, an unsupported opset or node, a shape it cannot know;
//   - an imported module is well formed and prints to text that parses back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/frontend/onnx.h"
#include "relax/ir/parser.h"
#include "relax/ir/printer.h"
#include "relax/ir/well_formed.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<relax::frontend::OnnxModel> m = relax::frontend::import_onnx(bytes);
  if (!m.ok()) return 0;
  const absl::Status wf = relax::well_formed(m->module);
  FUZZ_CHECK(wf.ok()) << "an imported module is not well formed: " << wf;
  const std::string text = relax::to_text(m->module);
  absl::StatusOr<relax::IRModule> back = relax::parse_module(text);
  FUZZ_CHECK(back.ok()) << "the imported module's text does not parse: " << back.status() << "\n"
                        << relax::fuzz::excerpt(text);
  return 0;
}
