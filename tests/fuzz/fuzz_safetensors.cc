// Fuzz target: SafetensorsFile::open (relax/runtime/safetensors.h; see README.md in this folder).
//
// Input: the bytes of a safetensors file, written to a temporary file (open() maps a path).
// Oracle:
//   - open() returns a file or an InvalidArgument naming the path (never crashes, never another
//     code: the file exists and is regular);
//   - every tensor of a file that opens is readable, of its entry's dtype and shape, with the
//     bytes of its entry's range of the data section;
//   - write_safetensors of those tensors and the metadata writes a file that opens with the same
//     tensors (dtype, shape, bytes) and metadata, and writing that file's tensors again gives the
//     same bytes (the writer's layout is a fixed point).
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "relax/runtime/safetensors.h"

namespace {

using relax::runtime::SafetensorsFile;
using relax::runtime::Tensor;

std::string temp_file(const char* what) {
  return (std::filesystem::temp_directory_path() /
          ("relax_fuzz_safetensors_" + std::to_string(getpid()) + "_" + what))
      .string();
}

// Removes the temporary files when the process exits.
void remove_temp_files() {
  for (const char* what : {"input", "first", "second"}) std::filesystem::remove(temp_file(what));
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The tensors of `f` in its order, checked against their entries.
std::vector<std::pair<std::string, Tensor>> tensors_of(const SafetensorsFile& f) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const relax::runtime::SafetensorsEntry& e : f.entries()) {
    absl::StatusOr<Tensor> t = f.tensor(e.name, e.shape, e.dtype);
    FUZZ_CHECK(t.ok()) << "tensor '" << e.name << "' of a file that opened: " << t.status();
    FUZZ_CHECK(t->nbytes() == e.end - e.begin) << e.name;
    const auto* mapped = static_cast<const char*>(f.data_section()) + e.begin;
    FUZZ_CHECK(t->nbytes() == 0 || std::memcmp(t->data(), mapped, t->nbytes()) == 0) << e.name;
    out.emplace_back(e.name, *t);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string input = temp_file("input");
  static const std::string first = temp_file("first");
  static const std::string second = temp_file("second");
  static const bool cleanup = std::atexit(remove_temp_files) == 0;
  (void)cleanup;
  std::ofstream(input, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::open(input);
  if (!f.ok()) {
    FUZZ_CHECK(f.status().code() == absl::StatusCode::kInvalidArgument) << f.status();
    FUZZ_CHECK(f.status().message().substr(0, input.size() + 2) == input + ": ") << f.status();
    return 0;
  }
  const std::vector<std::pair<std::string, Tensor>> tensors = tensors_of(*f);
  absl::Status written = relax::runtime::write_safetensors(first, tensors, f->metadata());
  FUZZ_CHECK(written.ok()) << "the tensors of a file that opened do not write: " << written;
  absl::StatusOr<SafetensorsFile> back = SafetensorsFile::open(first);
  FUZZ_CHECK(back.ok()) << "write_safetensors wrote a file open() rejects: " << back.status();
  FUZZ_CHECK(back->metadata() == f->metadata()) << "the metadata changes in a round trip";
  const std::vector<std::pair<std::string, Tensor>> again = tensors_of(*back);
  FUZZ_CHECK(again.size() == tensors.size()) << again.size() << " tensors read back of " << tensors.size();
  for (const auto& [name, t] : tensors) {
    absl::StatusOr<Tensor> b = back->tensor(name, t.shape(), t.dtype());
    FUZZ_CHECK(b.ok()) << b.status();
    FUZZ_CHECK(t.nbytes() == 0 || std::memcmp(b->data(), t.data(), t.nbytes()) == 0) << "the bytes of " << name;
  }
  FUZZ_CHECK(relax::runtime::write_safetensors(second, again, back->metadata()).ok());
  FUZZ_CHECK(read_all(first) == read_all(second)) << "the writer's bytes are not a fixed point";
  return 0;
}
