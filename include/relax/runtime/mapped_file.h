// A file mapped read-only into memory, shared by the tensors made over it (safetensors weights,
// an ONNX model's external data): Tensor::adopt with owner() keeps the mapping until the last
// such tensor dies. A write through a mapped tensor's data() faults.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace relax::runtime {

class MappedFile {
 public:
  /// Maps the regular file at `path`; NotFound when it does not exist, Unavailable when it
  /// cannot be opened or mapped, InvalidArgument when it is not a regular file. `what` names
  /// the file's role in messages ("safetensors file").
  static absl::StatusOr<std::shared_ptr<const MappedFile>> open(const std::string& path,
                                                               const std::string& what = "file");
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const char* bytes() const { return static_cast<const char*>(addr_); }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(void* addr, size_t size, std::string path) : addr_(addr), size_(size), path_(std::move(path)) {}
  void* addr_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace relax::runtime
