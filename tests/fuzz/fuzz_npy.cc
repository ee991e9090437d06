// Fuzz target: parse_npy (relax/runtime/npy.h; see README.md in this folder).
//
// Input: the bytes of a .npy file. Oracle:
//   - parse_npy returns a Tensor or an InvalidArgument naming the file (never crashes, never
//     another code: the bytes are all there is);
//   - a tensor that parses serializes (serialize_npy) to bytes that parse back to the same
//     dtype, shape and element bytes, and serialize to the same bytes again (numpy's layout is
//     a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using relax::runtime::Tensor;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Tensor> t = relax::runtime::parse_npy(bytes, "fuzz.npy");
  if (!t.ok()) {
    FUZZ_CHECK(t.status().code() == absl::StatusCode::kInvalidArgument) << t.status();
    FUZZ_CHECK(t.status().message().substr(0, 10) == "fuzz.npy: ") << t.status();
    return 0;
  }
  absl::StatusOr<std::string> written = relax::runtime::serialize_npy(*t);
  FUZZ_CHECK(written.ok()) << "a parsed " << t->describe() << " does not serialize: " << written.status();
  absl::StatusOr<Tensor> back = relax::runtime::parse_npy(*written, "written.npy");
  FUZZ_CHECK(back.ok()) << "serialize_npy writes bytes parse_npy rejects: " << back.status();
  FUZZ_CHECK(back->dtype() == t->dtype() && back->shape() == t->shape())
      << t->describe() << " reads back as " << back->describe();
  FUZZ_CHECK(t->nbytes() == 0 || std::memcmp(back->data(), t->data(), t->nbytes()) == 0)
      << "the elements of " << t->describe() << " change in a round trip";
  absl::StatusOr<std::string> again = relax::runtime::serialize_npy(*back);
  FUZZ_CHECK(again.ok() && *again == *written) << "the bytes of " << t->describe() << " are not a fixed point";
  return 0;
}
