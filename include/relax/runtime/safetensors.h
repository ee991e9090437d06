// Reading and writing safetensors files (https://huggingface.co/docs/safetensors): named tensors,
// memory-mapped at load and handed out without copying.
//
//   absl::StatusOr<SafetensorsFile> file = SafetensorsFile::open("model.safetensors");
//   absl::StatusOr<Tensor> w = file->tensor("lm_head.weight", {32000, 2048}, DataType::float32());
//
// The format: an 8-byte little-endian uint64 N, then N bytes of UTF-8 JSON (possibly padded
// with trailing spaces): an object mapping each tensor's name to
//   {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
// plus an optional "__metadata__" object of string values; then the data section, the
// tensors' bytes (little-endian, row-major), offsets relative to its start (byte 8 + N).
//
// Reading. open() maps the file read-only (a write through a tensor's data() faults) and checks
// the whole header before it returns: the length (at least 8 bytes of file, a header of at most
// 100,000,000 bytes that fits in the file), the JSON (an object, no duplicate names), each entry
// (dtype, shape and data_offsets present and well typed, a known dtype, dims non-negative and
// their product not overflowing, begin <= end <= the data section's size, end - begin ==
// product(shape) * element size), and the layout the spec requires: sorted by offset, each
// tensor begins where the previous one ended (no overlap, no hole) and the last ends at the end
// of the file. Every failure is an InvalidArgument (NotFound / an I/O error for the file itself)
// naming the file, the tensor where there is one, and the expected and actual values; nothing
// reads outside the mapping.
//
// Zero copy and alignment. tensor() returns a view of the mapped bytes; the view keeps the
// mapping alive, so tensors may outlive the SafetensorsFile. The spec does not align data: a
// tensor whose address is not a multiple of its element size (possible with an odd header
// length or a preceding tensor of an odd size) is copied into a new 64-byte-aligned tensor
// instead (is_zero_copy() tells which). Files written here align every tensor (below).
//
// Writing. SafetensorsWriter streams a file whose tensors are declared up front and whose data
// arrives one tensor at a time, in any order, so a model larger than memory can be written; it
// writes to "<path>.tmp.<pid>.<n>" and renames it over `path` in finish() (a writer destroyed
// before finish() removes the temporary file). The layout: the header is padded with spaces so
// that the data section starts at a multiple of 64, and tensors are placed -- without holes,
// which the spec forbids -- first those whose byte size is a multiple of 64 (each then begins at
// a multiple of 64), then the rest by decreasing element size (each begins at a multiple of its
// element size). write_safetensors() is the one-call form for tensors already in memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/mapped_file.h"
#include "relax/runtime/tensor.h"
#include "relax/support/data_type.h"

namespace relax::runtime {

/// The safetensors dtype string of `dtype` ("F32", "BF16", "U8", "BOOL", ...), or
/// InvalidArgument naming it when safetensors has no such dtype.
absl::StatusOr<std::string> safetensors_dtype_name(DataType dtype);
/// The DataType of a safetensors dtype string; InvalidArgument naming the string and the
/// supported ones otherwise (F8_E4M3 and F8_E5M2 are safetensors dtypes relax lacks).
absl::StatusOr<DataType> safetensors_dtype(const std::string& name);

/// One tensor of a safetensors file as its header describes it.
struct SafetensorsEntry {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  /// Byte offsets [begin, end) in the data section.
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// A safetensors file mapped into memory (see the file comment). Copies share the mapping.
class SafetensorsFile {
 public:
  /// Maps and checks the file at `path`.
  static absl::StatusOr<SafetensorsFile> open(const std::string& path);

  /// The path given to open().
  const std::string& path() const { return path_; }
  /// The tensors' names in the order of their data in the file.
  std::vector<std::string> names() const;
  /// The tensors as the header describes them, in the order of their data.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  /// The entry of `name`, or null.
  const SafetensorsEntry* find(const std::string& name) const;
  /// The "__metadata__" object (empty when absent).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  /// The tensor `name`: a view of the mapped bytes that keeps the mapping alive, or an aligned
  /// copy when its data is misaligned for its dtype (file comment). NotFound naming the file,
  /// the tensor count and a few names when there is no such tensor.
  absl::StatusOr<Tensor> tensor(const std::string& name) const;
  /// As above, also checking the shape and dtype: InvalidArgument naming the tensor, the file
  /// and the expected and actual shape or dtype.
  absl::StatusOr<Tensor> tensor(const std::string& name, const std::vector<int64_t>& shape,
                                DataType dtype) const;
  /// Whether tensor(name) returns a view of the mapping (false when it must copy, or when there
  /// is no such tensor).
  bool is_zero_copy(const std::string& name) const;
  /// The address of the first byte of the data section (for checks that tensors are views).
  const void* data_section() const;
  /// The size of the data section in bytes.
  uint64_t data_section_size() const;
  /// Gives the mapped pages that lie wholly inside tensor `name`'s bytes back to the kernel
  /// (madvise MADV_DONTNEED): for a tensor that is read once (copied, joined into another)
  /// while the mapping lives on. Its bytes stay readable (a later read faults them in from the
  /// file again). Returns the bytes released (0 for an unknown name or a tensor under a page).
  uint64_t release_pages(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  const char* tensor_data(const SafetensorsEntry& entry) const;

  std::shared_ptr<const MappedFile> mapping_;
  std::string path_;
  uint64_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

/// Writes a safetensors file tensor by tensor (see the file comment):
///   absl::StatusOr<SafetensorsWriter> w = SafetensorsWriter::create(path, {{"a", f32, {2, 3}}, ...});
///   for (...) RETURN_IF_ERROR(w->write("a", tensor_a));
///   RETURN_IF_ERROR(w->finish());
class SafetensorsWriter {
 public:
  /// A tensor to come: its name, dtype and shape (begin/end are assigned by create()).
  using Declaration = SafetensorsEntry;

  /// Opens "<path>.tmp.<pid>.<n>" and writes the header for `tensors`. InvalidArgument naming the
  /// path and the tensor for a duplicate or empty name, a name "__metadata__", a dtype
  /// safetensors lacks, a negative dim or an overflowing size; an I/O error naming the path.
  static absl::StatusOr<SafetensorsWriter> create(const std::string& path, std::vector<Declaration> tensors,
                                                  const std::map<std::string, std::string>& metadata = {});
  SafetensorsWriter(SafetensorsWriter&& other) noexcept;
  SafetensorsWriter& operator=(SafetensorsWriter&& other) noexcept;
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;
  /// Removes the temporary file unless finish() succeeded.
  ~SafetensorsWriter();

  /// Writes the data of the declared tensor `name` (a host tensor of the declared shape and
  /// dtype, strided or not). Errors name the path and the tensor: not declared, already
  /// written, another shape or dtype, an I/O error.
  absl::Status write(const std::string& name, const Tensor& tensor);
  /// Checks that every declared tensor was written (naming the first that was not), closes the
  /// file and renames it to the path.
  absl::Status finish();

  /// The layout chosen: the declarations with their data offsets, in the order of the file.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }

 private:
  SafetensorsWriter() = default;
  void abandon();

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  uint64_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, size_t> index_;
  std::vector<bool> written_;
};

/// Writes `tensors` (host tensors, names unique) and `metadata` to a safetensors file at `path`
/// through SafetensorsWriter (same layout and errors).
absl::Status write_safetensors(const std::string& path,
                               const std::vector<std::pair<std::string, Tensor>>& tensors,
                               const std::map<std::string, std::string>& metadata = {});

}  // namespace relax::runtime
