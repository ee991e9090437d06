// relax::runtime::Tensor: an n-dimensional array on a device.
//
// A Tensor is a cheap handle: copies share the storage. Storage is either
// owned (allocated 64-byte aligned through an Allocator, or imported from
// DLPack, and released with the last handle) or borrowed (memory that the
// caller keeps alive). Shape and strides are in elements; empty strides mean
// compact row-major.
//
// Devices: a tensor lives on the host (Device::cpu()) or on a CUDA device
// (Device::cuda(i), relax/runtime/cuda.h). A CUDA tensor's data() is a device
// pointer, for kernels and library calls; the host reads its elements through a
// copy (to(Device::cpu()), copy_from), and data_as refuses it rather than hand
// out a device pointer as host data. Without a usable device, making a CUDA
// tensor fails with cuda::check_available()'s message.
//
// DLPack: to_dlpack() and from_dlpack() exchange tensors with other frameworks
// without copying (DLPack 0.6's DLManagedTensor, the form every version
// understands). Host (kDLCPU) and CUDA (kDLCUDA) tensors are imported, without
// touching the driver; pinned host (kDLCUDAHost) and managed (kDLCUDAManaged)
// memory are refused: relax has no device for memory that is both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <dlpack/dlpack.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "relax/runtime/allocator.h"
#include "relax/support/check.h"
#include "relax/support/data_type.h"
#include "relax/support/device.h"

namespace relax::runtime {

/// The element type of a tensor whose elements are of the C++ type T: bool is
/// bool, a floating-point type floatN, a signed integer type intN, an unsigned
/// one uintN (N its width in bits).
template <typename T>
constexpr DataType data_type_of() {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_arithmetic_v<U>, "data_type_of: T must be bool, an integer or a floating-point type");
  constexpr auto bits = static_cast<uint8_t>(sizeof(U) * 8);
  if constexpr (std::is_same_v<U, bool>) {
    return DataType::boolean();
  } else if constexpr (std::is_floating_point_v<U>) {
    static_assert(sizeof(U) == 4 || sizeof(U) == 8, "data_type_of: only float and double are tensor types");
    return DataType{DataType::Code::kFloat, bits, 1};
  } else {
    return DataType{std::is_signed_v<U> ? DataType::Code::kInt : DataType::Code::kUInt, bits, 1};
  }
}

/// An n-dimensional array on a device; a cheap, shared handle (see the file comment).
class Tensor {
 public:
  /// An undefined tensor (defined() is false); only defined() and describe() may be called.
  Tensor() = default;

  /// A new tensor on `device`, 64-byte aligned, contents zeroed, with storage from
  /// `allocator` (it must outlive the storage and give memory of `device`; when null,
  /// default_allocator() for the host, cuda::device_allocator(i) for Device::cuda(i)).
  /// A CUDA tensor is zeroed on the calling thread's stream of its device (cuMemsetD8).
  /// Errors: a negative dim, a size that overflows, a device that is neither the CPU nor
  /// CUDA, no usable CUDA device (check_available's message), an allocation failure.
  static absl::StatusOr<Tensor> empty(std::vector<int64_t> shape, DataType dtype,
                                      Device device = Device::cpu(),
                                      Allocator* allocator = nullptr);
  /// A new host tensor of `shape` holding `values` in row-major order:
  ///   Tensor::from_vector({2, 2}, std::vector<float>{1, 2, 3, 4})       // float32
  ///   Tensor::from_vector({3}, {1, 2, 3})                                // int32
  ///   Tensor::from_vector({2}, {0.1f, 0.2f}, DataType::bfloat16())
  /// The dtype is `dtype`, or data_type_of<T>() when absent. The C++ type of the
  /// values must be the dtype's (float for float32, int64_t for int64, bool for
  /// bool...), except that float16 and bfloat16 take float or double values, rounded
  /// to the nearest, ties to even (float_format.h). InvalidArgument naming both when
  /// the types differ, naming the expected and the actual count when `values` does not
  /// have one value per element of `shape`, and for a negative dim or a count that
  /// overflows.
  template <typename T>
  static absl::StatusOr<Tensor> from_vector(std::vector<int64_t> shape, const std::vector<T>& values,
                                            std::optional<DataType> dtype = std::nullopt) {
    if constexpr (std::is_same_v<T, bool>) {
      // std::vector<bool> packs its bits: copy them out to one bool per element.
      std::unique_ptr<bool[]> bytes(new bool[values.size()]);
      for (size_t i = 0; i < values.size(); ++i) bytes[i] = values[i];
      return from_values(std::move(shape), data_type_of<bool>(), bytes.get(), values.size(), dtype);
    } else {
      return from_values(std::move(shape), data_type_of<T>(), values.data(), values.size(), dtype);
    }
  }
  /// As above, from a braced list: Tensor::from_vector({2}, {1.5f, 2.5f}).
  template <typename T>
  static absl::StatusOr<Tensor> from_vector(std::vector<int64_t> shape, std::initializer_list<T> values,
                                            std::optional<DataType> dtype = std::nullopt) {
    return from_values(std::move(shape), data_type_of<T>(), values.begin(), values.size(), dtype);
  }

  /// A storage block: a uint8 tensor of shape (bytes,) on `device` whose address is a
  /// multiple of `alignment` (a power of two), from `allocator` (when null, as empty()
  /// chooses). Contents are NOT initialised: tensors placed in it with view() are written
  /// before they are read. Errors: a negative size, a bad alignment, a device that is
  /// neither the CPU nor CUDA, no usable CUDA device, an allocation failure.
  static absl::StatusOr<Tensor> storage(int64_t bytes, size_t alignment = kTensorAlignment,
                                        Allocator* allocator = nullptr,
                                        Device device = Device::cpu());
  /// A tensor of `shape` and `dtype` over this tensor's memory, starting `byte_offset`
  /// bytes after data(): no copy; it keeps the memory alive as this tensor does (a view of
  /// a borrowed tensor is borrowed too). This tensor must be contiguous and the view must
  /// lie inside it (byte_offset >= 0, byte_offset + the view's bytes <= nbytes()).
  /// InvalidArgument naming the numbers otherwise, or for a negative dim or an overflow.
  absl::StatusOr<Tensor> view(int64_t byte_offset, std::vector<int64_t> shape, DataType dtype) const;

  /// A view of memory the caller owns and keeps alive while the tensor is used.
  /// `strides` is empty (compact) or has one entry per dim; aborts otherwise.
  static Tensor borrow(void* data, std::vector<int64_t> shape, DataType dtype,
                       std::vector<int64_t> strides = {}, Device device = Device::cpu());

  /// A compact tensor over memory whose lifetime `owner` holds: `owner` (a mapping, a pool
  /// block, a file; its deleter the release) is kept until the tensor and every view of it
  /// have died. The caller has checked that `data` holds shape x dtype bytes on `device`.
  static Tensor adopt(void* data, std::vector<int64_t> shape, DataType dtype, std::shared_ptr<void> owner,
                      Device device = Device::cpu());

  /// Takes ownership of a DLPack tensor without copying: the producer's deleter runs
  /// (once) when the last handle to the result dies. data + byte_offset becomes data();
  /// null strides, or strides equal to the compact ones, become empty strides; other
  /// strides are kept. kDLCUDA becomes Device::cuda(device_id) (no driver call: the
  /// device is checked when the tensor is used). Errors (the caller then still owns
  /// `managed`): null, a negative ndim or dim, a null shape, an unsupported dtype or
  /// device (only kDLCPU and kDLCUDA), null data for a non-empty tensor, or a size that
  /// overflows.
  static absl::StatusOr<Tensor> from_dlpack(DLManagedTensor* managed);
  /// A view of a DLPack tensor that the caller keeps alive while the result is used
  /// (like borrow()); the same conversion and errors as from_dlpack().
  static absl::StatusOr<Tensor> from_dlpack_borrowed(const DLTensor& tensor);
  /// Exports this tensor without copying. The result keeps the storage alive until
  /// its deleter is called (the consumer must call it exactly once); its shape and
  /// strides arrays are owned by it, strides are always given (compact ones
  /// included), byte_offset is 0. A borrowed tensor's memory must outlive the
  /// deleter call. Aborts on an undefined tensor or one with an unknown device.
  DLManagedTensor* to_dlpack() const;

  /// Copies the elements of `src` into this tensor's storage (the two must not overlap
  /// unless they are the same view). Between host tensors either may be strided. A copy
  /// that involves a CUDA tensor needs that tensor contiguous (a strided host side is
  /// staged through a compact host copy); it is complete on return when it involves the
  /// host or two devices, and queued on the calling thread's stream when both are on one
  /// device (later work of the thread there sees it). Errors: an undefined tensor, a
  /// different shape or dtype, a strided CUDA tensor, a device that is neither the CPU nor
  /// CUDA, a driver error.
  absl::Status copy_from(const Tensor& src) const;

  /// A new compact tensor on `device` holding this tensor's elements: host to device,
  /// device to host, device to device, or host to host. The result never shares storage
  /// with this tensor, also when `device` is this tensor's own (compact() in
  /// tensor_compact.h is the no-copy-when-possible form). Errors: those of empty() on
  /// `device` and of copy_from.
  absl::StatusOr<Tensor> to(Device device) const;

  /// Whether this handle refers to a tensor.
  bool defined() const { return state_ != nullptr; }
  /// The first element (data pointer plus any DLPack byte offset).
  void* data() const;
  /// The element type.
  DataType dtype() const;
  /// Where the storage lives.
  Device device() const;
  /// The dims, outermost first.
  const std::vector<int64_t>& shape() const;
  /// Strides in elements; empty for compact row-major.
  const std::vector<int64_t>& strides() const;
  /// The number of dims.
  int ndim() const { return static_cast<int>(shape().size()); }
  /// The number of elements (1 for a scalar).
  int64_t numel() const;
  /// Bytes of one element (rounded up to whole bytes, times lanes).
  size_t element_bytes() const;
  /// numel() * element_bytes(): the size of a compact copy.
  size_t nbytes() const;
  /// Whether the elements are laid out compact row-major (dims of 1 may have any stride).
  bool is_contiguous() const;
  /// Whether this tensor keeps its storage alive (allocated, adopted or imported from DLPack),
  /// as opposed to borrowing it.
  bool owns_storage() const;
  /// Whether both tensors are defined and start at the same address.
  bool same_storage(const Tensor& other) const;

  /// The first element as a T*, where T is the C++ type of dtype() (see
  /// data_type_of): float for float32, int32_t for int32, bool for bool...
  /// InvalidArgument naming both types when T is another type (also one of
  /// the same size), FailedPrecondition for an undefined tensor and for a
  /// CUDA tensor (naming its device: its elements are not host memory; data()
  /// gives the device pointer, to(Device::cpu()) a host copy).
  template <typename T>
  absl::StatusOr<T*> data_as() const {
    if (absl::Status s = check_element_type(data_type_of<T>()); !s.ok()) return s;
    return static_cast<T*>(data());
  }
  /// As data_as, aborting (RELAX_CHECK) on a type mismatch or a CUDA tensor: for
  /// code that has checked dtype() and the device already.
  template <typename T>
  T* data_as_or_die() const {
    RELAX_CHECK(defined() && dtype() == data_type_of<T>() &&
                device().type != Device::Type::kCUDA)
        << "data_as_or_die<" << data_type_of<T>() << "> of " << describe();
    return static_cast<T*>(data());
  }

  /// "Tensor[(2, 3), float32]"; a tensor not on the host names its device:
  /// "Tensor[(2, 3), float32, cuda:0]".
  std::string describe() const;

 private:
  absl::Status check_element_type(DataType wanted) const;
  // from_vector behind its templates: `count` values of type `value_type` at `values`.
  static absl::StatusOr<Tensor> from_values(std::vector<int64_t> shape, DataType value_type,
                                            const void* values, size_t count,
                                            std::optional<DataType> dtype);

  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace relax::runtime
