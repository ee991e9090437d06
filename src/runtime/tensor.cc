// Tensor storage: allocation through an Allocator, borrowed views, the DLPack
// exchange, element copies and descriptions.
//
// CUDA tensors allocate from their device's pool (cuda::device_allocator) and move
// bytes through cuda/cuda_memory.h; this file holds no driver code, and compiles the
// same with or without CUDA (the CUDA calls then answer "built without CUDA").
//
// Every way of making a Tensor fills one State. `storage` is what keeps the bytes
// alive: an allocator block (freed through the allocator), an imported
// DLManagedTensor (its deleter runs), or nothing for a borrowed view. An exported
// DLManagedTensor holds a reference to the State, so the bytes outlive every Tensor
// handle until the consumer calls the deleter.
#include "relax/runtime/tensor.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cuda/cuda_memory.h"
#include "relax/runtime/cuda.h"
#include "relax/support/float_format.h"
#include "tensor_compact.h"

// DLDevice (and kDLCUDA) arrived in DLPack 0.5; 1.x replaces DLPACK_VERSION with two macros.
#if !defined(DLPACK_MAJOR_VERSION) && (!defined(DLPACK_VERSION) || DLPACK_VERSION < 50)
#error "relax needs DLPack 0.5 or newer"
#endif

namespace relax::runtime {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), shape.size() == 1 ? ",)" : ")");
}

size_t dtype_bytes(DataType dtype) {
  return (static_cast<size_t>(dtype.bits) * dtype.lanes + 7) / 8;
}

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

bool is_compact_layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (strides.empty()) return true;
  for (int64_t d : shape) {
    if (d == 0) return true;  // no elements: every layout is the compact one
  }
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool is_host(Device device) { return device.type == Device::Type::kCPU; }
bool is_cuda(Device device) { return device.type == Device::Type::kCUDA; }

/// The allocator of a new tensor on `device`: the caller's, else the device's pool.
/// Unimplemented for a device that is neither the host nor CUDA; check_available's
/// error for a CUDA device that cannot be used.
absl::StatusOr<Allocator*> allocator_for(Device device, Allocator* given, const char* what) {
  if (!is_host(device) && !is_cuda(device)) {
    return absl::UnimplementedError(absl::StrCat(what, ": allocation on ", device.to_string(),
                                                 " is not supported (only cpu and cuda)"));
  }
  if (given != nullptr) return given;
  if (is_host(device)) return &default_allocator();
  absl::StatusOr<PooledAllocator*> pool = cuda::device_allocator(device.index);
  if (!pool.ok()) {
    return absl::Status(pool.status().code(),
                        absl::StrCat(what, ": cannot allocate on ", device.to_string(), ": ",
                                     pool.status().message()));
  }
  return *pool;
}

}  // namespace

struct Tensor::State {
  std::shared_ptr<void> storage;  // keeps the bytes alive; null for a borrowed view
  void* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DataType dtype;
  Device device;
  bool owned = false;
};

absl::StatusOr<Tensor> Tensor::empty(std::vector<int64_t> shape, DataType dtype, Device device,
                                     Allocator* allocator) {
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Tensor::empty: dim ", i, " of shape ",
                                                     shape_text(shape), " is negative"));
    }
    if (__builtin_mul_overflow(numel, shape[i], &numel)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tensor::empty: the element count of shape ", shape_text(shape), " overflows int64"));
    }
  }
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), dtype_bytes(dtype), &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::empty: the byte size of shape ",
                                                   shape_text(shape), " of ", dtype.to_string(),
                                                   " overflows"));
  }
  absl::StatusOr<Allocator*> chosen = allocator_for(device, allocator, "Tensor::empty");
  if (!chosen.ok()) return chosen.status();
  allocator = *chosen;
  absl::StatusOr<void*> block = allocator->allocate(bytes, kTensorAlignment);
  if (!block.ok()) {
    return absl::Status(block.status().code(),
                        absl::StrCat("Tensor::empty: cannot allocate ", shape_text(shape), " of ",
                                     dtype.to_string(), " (", bytes, " bytes)",
                                     is_host(device) ? "" : " on " + device.to_string(), ": ",
                                     block.status().message()));
  }
  void* p = *block;
  // Blocks come back from the pool with old contents; the VM relies on zeroed tensors.
  if (is_host(device)) {
    std::memset(p, 0, bytes);
  } else if (absl::Status s = cuda::zero_bytes(p, device.index, bytes); !s.ok()) {
    allocator->free(p);
    return absl::Status(s.code(), absl::StrCat("Tensor::empty: ", s.message()));
  }
  Tensor t;
  t.state_ = std::make_shared<State>();
  t.state_->storage = std::shared_ptr<void>(p, [allocator](void* q) { allocator->free(q); });
  t.state_->data = p;
  t.state_->shape = std::move(shape);
  t.state_->dtype = dtype;
  t.state_->device = device;
  t.state_->owned = true;
  return t;
}

absl::StatusOr<Tensor> Tensor::storage(int64_t bytes, size_t alignment, Allocator* allocator,
                                       Device device) {
  if (bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::storage: size ", bytes, " bytes is negative"));
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::storage: alignment ", alignment, " is not a power of two"));
  }
  absl::StatusOr<Allocator*> chosen = allocator_for(device, allocator, "Tensor::storage");
  if (!chosen.ok()) return chosen.status();
  allocator = *chosen;
  absl::StatusOr<void*> block = allocator->allocate(static_cast<size_t>(bytes), alignment);
  if (!block.ok()) {
    return absl::Status(block.status().code(),
                        absl::StrCat("Tensor::storage: cannot allocate ", bytes, " bytes",
                                     is_host(device) ? "" : " on " + device.to_string(), ": ",
                                     block.status().message()));
  }
  void* p = *block;
  Tensor t;
  t.state_ = std::make_shared<State>();
  t.state_->storage = std::shared_ptr<void>(p, [allocator](void* q) { allocator->free(q); });
  t.state_->data = p;
  t.state_->shape = {bytes};
  t.state_->dtype = DataType{DataType::Code::kUInt, 8, 1};
  t.state_->device = device;
  t.state_->owned = true;
  return t;
}

absl::StatusOr<Tensor> compact(const Tensor& tensor) {
  if (tensor.is_contiguous()) return tensor;
  absl::StatusOr<Tensor> copy = Tensor::empty(tensor.shape(), tensor.dtype(), tensor.device());
  if (!copy.ok()) return copy.status();
  if (absl::Status s = copy->copy_from(tensor); !s.ok()) return s;
  return copy;
}

absl::StatusOr<Tensor> Tensor::view(int64_t byte_offset, std::vector<int64_t> shape,
                                    DataType dtype) const {
  RELAX_CHECK(defined()) << "Tensor::view of an undefined tensor";
  if (!is_contiguous()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot view ", describe(), " without a copy: it is not contiguous"));
  }
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim ", i, " of shape ", shape_text(shape), " is negative"));
    }
    if (__builtin_mul_overflow(numel, shape[i], &numel)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the element count of shape ", shape_text(shape), " overflows int64"));
    }
  }
  int64_t bytes = 0;
  int64_t end = 0;
  const int64_t size = static_cast<int64_t>(nbytes());
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(dtype_bytes(dtype)), &bytes) ||
      __builtin_add_overflow(byte_offset, bytes, &end) || byte_offset < 0 || end > size) {
    return absl::OutOfRangeError(absl::StrCat(
        "offset ", byte_offset, " + ", shape_text(shape), " ", dtype.to_string(), " (", numel,
        " * ", dtype_bytes(dtype), " bytes) does not fit in ", size, " bytes"));
  }
  Tensor t;
  t.state_ = std::make_shared<State>();
  t.state_->storage = state_->storage;
  t.state_->data = static_cast<char*>(data()) + byte_offset;
  t.state_->shape = std::move(shape);
  t.state_->dtype = dtype;
  t.state_->device = state_->device;
  t.state_->owned = state_->owned;
  return t;
}

Tensor Tensor::borrow(void* data, std::vector<int64_t> shape, DataType dtype,
                      std::vector<int64_t> strides, Device device) {
  RELAX_CHECK(strides.empty() || strides.size() == shape.size())
      << "Tensor::borrow: " << strides.size() << " strides for " << shape.size() << " dims";
  Tensor t;
  t.state_ = std::make_shared<State>();
  t.state_->data = data;
  t.state_->shape = std::move(shape);
  t.state_->strides = std::move(strides);
  t.state_->dtype = dtype;
  t.state_->device = device;
  return t;
}

Tensor Tensor::adopt(void* data, std::vector<int64_t> shape, DataType dtype, std::shared_ptr<void> owner,
                     Device device) {
  Tensor t = borrow(data, std::move(shape), dtype, {}, device);
  t.state_->storage = std::move(owner);
  t.state_->owned = true;
  return t;
}

absl::StatusOr<Tensor> Tensor::from_values(std::vector<int64_t> shape, DataType value_type,
                                           const void* values, size_t count,
                                           std::optional<DataType> dtype) {
  const DataType target = dtype.value_or(value_type);
  const bool is_16_bit_float = target == DataType::float16() || target == DataType::bfloat16();
  const bool from_float = value_type == DataType::float32() || value_type == DataType::float64();
  if (target != value_type && !(is_16_bit_float && from_float)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tensor::from_vector: values of type ", value_type.to_string(), " for a tensor of dtype ",
        target.to_string(), "; the values must be of the dtype's type (float16 and bfloat16 take "
        "float32 or float64 values)"));
  }
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Tensor::from_vector: dim ", i, " of shape ",
                                                     shape_text(shape), " is negative"));
    }
    if (__builtin_mul_overflow(numel, shape[i], &numel)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tensor::from_vector: the element count of shape ", shape_text(shape), " overflows int64"));
    }
  }
  if (static_cast<uint64_t>(numel) != count) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::from_vector: shape ", shape_text(shape),
                                                   " needs ", numel, " values, got ", count));
  }
  absl::StatusOr<Tensor> out = empty(std::move(shape), target);
  if (!out.ok()) return out.status();
  if (target == value_type) {
    if (count != 0) std::memcpy(out->data(), values, count * dtype_bytes(target));
    return out;
  }
  // A 16-bit float dtype from float or double values: one rounding from the value's double.
  auto* dst = static_cast<uint16_t*>(out->data());
  for (size_t i = 0; i < count; ++i) {
    const double v = value_type == DataType::float32() ? static_cast<const float*>(values)[i]
                                                       : static_cast<const double*>(values)[i];
    dst[i] = target == DataType::float16() ? float16_bits(v) : bfloat16_bits(v);
  }
  return out;
}

// ---------------------------------------------------------------------------
// DLPack.

namespace {

/// The device type as an int. Read through memcpy: a newer producer may send a value
/// outside this header's DLDeviceType enumerators, and loading that as the enum is
/// undefined behaviour.
int32_t dl_device_type(const DLDevice& device) {
  static_assert(sizeof(DLDeviceType) == sizeof(int32_t));
  int32_t type = 0;
  std::memcpy(&type, &device.device_type, sizeof type);
  return type;
}

/// "cuda:0", "opencl:1", "device_type 99:0": a DLPack device, for error messages.
std::string dl_device_text(const DLDevice& device) {
  const int32_t type = dl_device_type(device);
  const char* name = nullptr;
  switch (type) {
    case 1: name = "cpu"; break;
    case 2: name = "cuda"; break;
    case 3: name = "cuda_host"; break;
    case 4: name = "opencl"; break;
    case 7: name = "vulkan"; break;
    case 8: name = "metal"; break;
    case 9: name = "vpi"; break;
    case 10: name = "rocm"; break;
    case 11: name = "rocm_host"; break;
    case 12: name = "ext_dev"; break;
    case 13: name = "cuda_managed"; break;
    case 14: name = "oneapi"; break;
    case 15: name = "webgpu"; break;
    case 16: name = "hexagon"; break;
    default: break;
  }
  return absl::StrCat(name != nullptr ? std::string(name) : absl::StrCat("device_type ", type),
                      ":", device.device_id);
}

/// The converted fields of a DLTensor that passed validation.
struct ImportedFields {
  void* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DataType dtype;
  Device device;
};

absl::StatusOr<ImportedFields> import_fields(const DLTensor& t, const char* what) {
  if (t.ndim < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ndim is negative (", t.ndim, ")"));
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": shape is null for ndim ", t.ndim));
  }
  // kDLCUDAHost and kDLCUDAManaged memory is both host and device memory: no relax device.
  const int32_t device_type = dl_device_type(t.device);
  if (device_type != kDLCPU && device_type != kDLCUDA) {
    return absl::UnimplementedError(absl::StrCat(what, ": device ", dl_device_text(t.device),
                                                 " is not supported (only cpu and cuda)"));
  }
  ImportedFields f;
  f.device = device_type == kDLCPU ? Device::cpu(t.device.device_id)
                                   : Device::cuda(t.device.device_id);
  const int code = t.dtype.code;
  if (code != 0 && code != 1 && code != 2 && code != 3 && code != 4 && code != 6) {
    return absl::UnimplementedError(absl::StrCat(what, ": dtype code ", code,
                                                 code == 5 ? " (complex)" : "",
                                                 " is not supported"));
  }
  if (t.dtype.bits == 0 || t.dtype.lanes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": dtype with ", t.dtype.bits,
                                                   " bits and ", t.dtype.lanes, " lanes"));
  }
  f.dtype = DataType{static_cast<DataType::Code>(code), t.dtype.bits, t.dtype.lanes};
  f.shape.assign(t.shape, t.shape + t.ndim);
  int64_t numel = 1;
  for (size_t i = 0; i < f.shape.size(); ++i) {
    if (f.shape[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": dim ", i, " of shape ",
                                                     shape_text(f.shape), " is negative"));
    }
    if (__builtin_mul_overflow(numel, f.shape[i], &numel)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the element count of shape ", shape_text(f.shape), " overflows int64"));
    }
  }
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), dtype_bytes(f.dtype), &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the byte size of shape ",
                                                   shape_text(f.shape), " of ",
                                                   f.dtype.to_string(), " overflows"));
  }
  if (t.data == nullptr && numel > 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": data is null for shape ",
                                                   shape_text(f.shape), " (", numel,
                                                   " elements)"));
  }
  if (t.data != nullptr) f.data = static_cast<char*>(t.data) + t.byte_offset;
  if (t.strides != nullptr) {
    f.strides.assign(t.strides, t.strides + t.ndim);
    if (is_compact_layout(f.shape, f.strides)) f.strides.clear();
  }
  return f;
}

/// The manager context of an exported tensor: it keeps the Tensor's State (and so
/// the storage) alive and owns the shape and strides arrays.
struct ExportedTensor {
  std::shared_ptr<const void> keep_alive;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
};

void delete_exported(DLManagedTensor* self) {
  delete static_cast<ExportedTensor*>(self->manager_ctx);
}

}  // namespace

absl::StatusOr<Tensor> Tensor::from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) {
    return absl::InvalidArgumentError("Tensor::from_dlpack: the DLManagedTensor is null");
  }
  absl::StatusOr<ImportedFields> f = import_fields(managed->dl_tensor, "Tensor::from_dlpack");
  if (!f.ok()) return f.status();  // the caller keeps ownership
  Tensor t = borrow(f->data, std::move(f->shape), f->dtype, std::move(f->strides), f->device);
  t.state_->storage = std::shared_ptr<void>(managed, [](void* m) {
    auto* self = static_cast<DLManagedTensor*>(m);
    if (self->deleter != nullptr) self->deleter(self);
  });
  t.state_->owned = true;
  return t;
}

absl::StatusOr<Tensor> Tensor::from_dlpack_borrowed(const DLTensor& tensor) {
  absl::StatusOr<ImportedFields> f = import_fields(tensor, "Tensor::from_dlpack_borrowed");
  if (!f.ok()) return f.status();
  return borrow(f->data, std::move(f->shape), f->dtype, std::move(f->strides), f->device);
}

DLManagedTensor* Tensor::to_dlpack() const {
  RELAX_CHECK(defined()) << "to_dlpack of an undefined Tensor";
  RELAX_CHECK(state_->device.type != Device::Type::kUnknown)
      << "to_dlpack of " << describe() << ": the device is unknown";
  auto exported = std::make_unique<ExportedTensor>();
  exported->keep_alive = state_;
  exported->shape = state_->shape;
  exported->strides = state_->strides.empty() ? compact_strides(state_->shape) : state_->strides;
  DLTensor& t = exported->managed.dl_tensor;
  t.data = state_->data;
  // relax's device type values are DLPack's (kDLCPU = 1, kDLCUDA = 2).
  t.device = DLDevice{static_cast<DLDeviceType>(state_->device.type), state_->device.index};
  t.ndim = static_cast<int>(exported->shape.size());
  t.dtype = DLDataType{static_cast<uint8_t>(state_->dtype.code), state_->dtype.bits,
                       state_->dtype.lanes};
  t.shape = exported->shape.data();
  t.strides = exported->strides.data();
  t.byte_offset = 0;
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = delete_exported;
  return &exported.release()->managed;
}

// ---------------------------------------------------------------------------
// Copies and accessors.

namespace {

/// copy_from when one side (or both) is a CUDA tensor: one contiguous byte copy, a
/// strided host side staged through a compact host tensor.
absl::Status copy_with_device(const Tensor& dst, const Tensor& src) {
  const auto failed = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("Tensor::copy_from: copying ", src.describe(),
                                               " into ", dst.describe(), ": ", s.message()));
  };
  for (const Tensor* side : {&src, &dst}) {
    if (is_cuda(side->device()) && !side->is_contiguous()) {
      return failed(absl::UnimplementedError(absl::StrCat(
          "the ", side->device().to_string(), " side is strided; copies to, from and between "
          "CUDA devices need contiguous tensors")));
    }
  }
  if (!src.is_contiguous()) {  // a strided host source
    absl::StatusOr<Tensor> staged = compact(src);
    if (!staged.ok()) return failed(staged.status());
    return copy_with_device(dst, *staged);
  }
  if (!dst.is_contiguous()) {  // a strided host destination
    absl::StatusOr<Tensor> staged = Tensor::empty(dst.shape(), dst.dtype());
    if (!staged.ok()) return failed(staged.status());
    if (absl::Status s = copy_with_device(*staged, src); !s.ok()) return s;
    return dst.copy_from(*staged);
  }
  if (absl::Status s =
          cuda::copy_bytes(dst.data(), dst.device(), src.data(), src.device(), dst.nbytes());
      !s.ok()) {
    return failed(s);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Tensor::copy_from(const Tensor& src) const {
  if (!defined() || !src.defined()) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::copy_from: cannot copy ",
                                                   src.describe(), " into ", describe()));
  }
  if (shape() != src.shape() || dtype() != src.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::copy_from: cannot copy ", src.describe(), " into ", describe(),
                     shape() != src.shape() ? ": the shapes differ" : ": the dtypes differ"));
  }
  const auto known = [](Device d) { return is_host(d) || is_cuda(d); };
  if (!known(device()) || !known(src.device())) {
    return absl::UnimplementedError(absl::StrCat("Tensor::copy_from: copying ", src.describe(),
                                                 " into ", describe(),
                                                 " is supported between cpu and cuda only"));
  }
  if (numel() == 0) return absl::OkStatus();
  if (!is_host(device()) || !is_host(src.device())) return copy_with_device(*this, src);
  auto* dst_base = static_cast<char*>(data());
  const auto* src_base = static_cast<const char*>(src.data());
  if (is_contiguous() && src.is_contiguous()) {
    std::memmove(dst_base, src_base, nbytes());
    return absl::OkStatus();
  }
  if (dst_base == src_base && strides() == src.strides()) return absl::OkStatus();

  // Strided: walk every index of the outer dims (odometer order); the innermost dim is
  // one memcpy when both sides are unit-stride there, else one element at a time.
  const std::vector<int64_t>& dims = shape();
  const std::vector<int64_t> dst_strides = strides().empty() ? compact_strides(dims) : strides();
  const std::vector<int64_t> src_strides =
      src.strides().empty() ? compact_strides(dims) : src.strides();
  const auto elem = static_cast<int64_t>(element_bytes());
  const size_t rank = dims.size();
  const int64_t inner = dims[rank - 1];
  const int64_t dst_inner = dst_strides[rank - 1] * elem;
  const int64_t src_inner = src_strides[rank - 1] * elem;
  const bool inner_compact = dst_inner == elem && src_inner == elem;
  std::vector<int64_t> index(rank - 1, 0);
  while (true) {
    int64_t dst_off = 0;
    int64_t src_off = 0;
    for (size_t d = 0; d + 1 < rank; ++d) {
      dst_off += index[d] * dst_strides[d] * elem;
      src_off += index[d] * src_strides[d] * elem;
    }
    if (inner_compact) {
      std::memcpy(dst_base + dst_off, src_base + src_off, static_cast<size_t>(inner * elem));
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        std::memcpy(dst_base + dst_off + i * dst_inner, src_base + src_off + i * src_inner,
                    static_cast<size_t>(elem));
      }
    }
    size_t d = rank - 1;
    while (d > 0 && ++index[d - 1] == dims[d - 1]) index[--d] = 0;
    if (d == 0) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Tensor::to(Device device) const {
  if (!defined()) {
    return absl::FailedPreconditionError(
        absl::StrCat("Tensor::to(", device.to_string(), ") of an undefined tensor"));
  }
  // Storage plus a view: the copy overwrites every byte, so no zeroing first.
  absl::StatusOr<Tensor> block =
      storage(static_cast<int64_t>(nbytes()), kTensorAlignment, nullptr, device);
  if (!block.ok()) {
    return absl::Status(block.status().code(),
                        absl::StrCat("Tensor::to(", device.to_string(), ") of ", describe(), ": ",
                                     block.status().message()));
  }
  absl::StatusOr<Tensor> out = block->view(0, shape(), dtype());
  if (!out.ok()) return out.status();
  if (absl::Status s = out->copy_from(*this); !s.ok()) return s;
  return out;
}

void* Tensor::data() const { return state_->data; }
DataType Tensor::dtype() const { return state_->dtype; }
Device Tensor::device() const { return state_->device; }
const std::vector<int64_t>& Tensor::shape() const { return state_->shape; }
const std::vector<int64_t>& Tensor::strides() const { return state_->strides; }
bool Tensor::owns_storage() const { return state_->owned; }

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : state_->shape) n *= d;
  return n;
}

size_t Tensor::element_bytes() const { return dtype_bytes(state_->dtype); }

size_t Tensor::nbytes() const { return static_cast<size_t>(numel()) * element_bytes(); }

bool Tensor::is_contiguous() const { return is_compact_layout(state_->shape, state_->strides); }

bool Tensor::same_storage(const Tensor& other) const {
  return defined() && other.defined() && state_->data == other.state_->data;
}

absl::Status Tensor::check_element_type(DataType wanted) const {
  if (!defined()) {
    return absl::FailedPreconditionError(absl::StrCat("data_as<", wanted.to_string(), "> of an undefined tensor"));
  }
  if (is_cuda(state_->device)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "data_as<", wanted.to_string(), "> of ", describe(), ": the elements are in ",
        state_->device.to_string(), " memory, not host memory (data() is the device pointer; "
        "to(Device::cpu()) copies them to the host)"));
  }
  if (state_->dtype != wanted) {
    return absl::InvalidArgumentError(absl::StrCat("data_as<", wanted.to_string(), "> of ", describe(),
                                                   ": the elements are ", state_->dtype.to_string(), ", not ",
                                                   wanted.to_string()));
  }
  return absl::OkStatus();
}

std::string Tensor::describe() const {
  if (!defined()) return "Tensor[undefined]";
  return absl::StrCat("Tensor[", shape_text(state_->shape), ", ", state_->dtype.to_string(),
                      state_->device.type == Device::Type::kCPU ? "" : ", " + state_->device.to_string(),
                      "]");
}

}  // namespace relax::runtime
