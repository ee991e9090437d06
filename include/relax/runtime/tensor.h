// relax::runtime::Tensor: an n-dimensional array on a device.
//
// A Tensor is a cheap handle: copies share the storage. Storage is either
// owned (allocated 64-byte aligned by the runtime, freed with the last handle)
// or borrowed (memory that the caller keeps alive). Shape and strides are in
// elements; empty strides mean compact row-major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/support/data_type.h"
#include "relax/support/device.h"

namespace relax::runtime {

class Tensor {
 public:
  Tensor() = default;

  /// A new host tensor, 64-byte aligned, contents zeroed. Errors: a negative
  /// dim, a size that overflows, or an allocation failure.
  static absl::StatusOr<Tensor> empty(std::vector<int64_t> shape, DataType dtype,
                                      Device device = Device::cpu());
  /// A view of memory the caller owns and keeps alive while the tensor is used.
  static Tensor borrow(void* data, std::vector<int64_t> shape, DataType dtype,
                       std::vector<int64_t> strides = {}, Device device = Device::cpu());

  bool defined() const { return state_ != nullptr; }
  void* data() const;
  DataType dtype() const;
  Device device() const;
  const std::vector<int64_t>& shape() const;
  /// Strides in elements; empty for compact row-major.
  const std::vector<int64_t>& strides() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t numel() const;
  /// Bytes of one element (rounded up to whole bytes, times lanes).
  size_t element_bytes() const;
  /// numel() * element_bytes(): the size of a compact copy.
  size_t nbytes() const;
  bool is_contiguous() const;
  /// Whether this tensor's storage is owned by the runtime (not borrowed).
  bool owns_storage() const;
  bool same_storage(const Tensor& other) const;

  /// A typed view of a contiguous host tensor; aborts on a dtype-size mismatch.
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data());
  }

  /// "Tensor[(2, 3), float32]".
  std::string describe() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace relax::runtime
