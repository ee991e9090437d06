// Fuzz target: Executable::deserialize (see README.md in this folder).
//
// Input: a serialised executable. Each input is read twice: as given (so the header, size and
// checksum checks are exercised), and with its header repaired -- the payload size and the
// FNV-1a checksum recomputed over the bytes after the header -- so that mutations reach the
// payload reader instead of stopping at the checksum. Oracle, for each reading:
//   - deserialize returns an Executable or a Status (never crashes);
//   - when it returns one, serialize() reads back to an executable that serializes to the same
//     bytes, disassemble() works, and Module::create (without kernels) returns a Module or a
//     Status. Nothing is called.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/module.h"

namespace relax::fuzz {
namespace {

using runtime::Executable;

// The blob header: magic (8 bytes), version (u32), payload size (u64), checksum (u64).
constexpr size_t kSizeOffset = 12;
constexpr size_t kChecksumOffset = 20;
constexpr size_t kHeaderSize = 28;

uint64_t fnv1a64(std::span<const uint8_t> bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (uint8_t b : bytes) {
    hash ^= b;
    hash *= 1099511628211ull;
  }
  return hash;
}

void put_u64(std::vector<uint8_t>& bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

void check(std::span<const uint8_t> bytes) {
  absl::StatusOr<Executable> exec = Executable::deserialize(bytes);
  if (!exec.ok()) return;
  const std::vector<uint8_t> blob = exec->serialize();
  absl::StatusOr<Executable> back = Executable::deserialize(blob);
  FUZZ_CHECK(back.ok()) << "serialize() writes a blob deserialize rejects: " << back.status()
                        << "\nexecutable:\n" << excerpt(exec->disassemble());
  FUZZ_CHECK(back->serialize() == blob)
      << "the executable read back serializes differently\nfirst:\n" << excerpt(exec->disassemble())
      << "\nread back:\n" << excerpt(back->disassemble());
  absl::StatusOr<runtime::Module> module = runtime::Module::create(*std::move(exec), nullptr);
  (void)module;  // a Module or a Status (kernels or library functions missing)
}

}  // namespace
}  // namespace relax::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  relax::fuzz::check(bytes);
  if (size >= relax::fuzz::kHeaderSize) {
    std::vector<uint8_t> repaired(data, data + size);
    const std::span<const uint8_t> payload = bytes.subspan(relax::fuzz::kHeaderSize);
    relax::fuzz::put_u64(repaired, relax::fuzz::kSizeOffset, payload.size());
    relax::fuzz::put_u64(repaired, relax::fuzz::kChecksumOffset, relax::fuzz::fnv1a64(payload));
    relax::fuzz::check(repaired);
  }
  return 0;
}
