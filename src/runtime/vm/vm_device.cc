// The VM's device operations (vm_device.h): the host's own for the CPU, the CUDA runtime code's
// (src/runtime/cuda/) for a CUDA device. A runtime built without CUDA answers a CUDA device
// with the FailedPrecondition of relax/runtime/cuda.h ("built without CUDA"); Module::create
// asks check_usable first, so the other functions never see such a device there.
#include "vm/vm_device.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/runtime/cuda.h"

#if defined(RELAX_WITH_CUDA)
#include "cuda/cuda_context.h"
#include "cuda/cuda_driver.h"
#endif

namespace relax::runtime::vm_device {

namespace {

absl::Status unsupported(Device device) {
  return absl::InvalidArgumentError(
      absl::StrCat("device ", device.to_string(), " is neither the CPU nor a CUDA device"));
}

// A compact copy on `device` (a copy to or from the host is complete on return).
absl::StatusOr<Tensor> copy_tensor(const Tensor& tensor, Device device) {
  if (tensor.device() == device) return tensor;
  return tensor.to(device);
}

}  // namespace

absl::Status check_usable(Device device) {
  switch (device.type) {
    case Device::Type::kCPU: return absl::OkStatus();
    case Device::Type::kCUDA: {
      if (absl::Status s = cuda::check_available(); !s.ok()) return s;
      const int count = cuda::device_count();
      if (device.index >= count) {
        return absl::FailedPreconditionError(absl::StrCat(
            "there is no CUDA device ", device.index, ": the driver reports ", count,
            count == 1 ? " device" : " devices"));
      }
      return absl::OkStatus();
    }
    case Device::Type::kUnknown: break;
  }
  return unsupported(device);
}

absl::StatusOr<Allocator*> allocator_for(Device device) {
  switch (device.type) {
    case Device::Type::kCPU: return &default_allocator();
    case Device::Type::kCUDA: {
      absl::StatusOr<PooledAllocator*> pool = cuda::device_allocator(device.index);
      if (!pool.ok()) return pool.status();
      return static_cast<Allocator*>(*pool);
    }
    case Device::Type::kUnknown: break;
  }
  return unsupported(device);
}

absl::StatusOr<Value> copy_to(const Value& value, Device device) {
  if (value.is_tensor()) {
    absl::StatusOr<Tensor> t = copy_tensor(value.tensor_or_die(), device);
    if (!t.ok()) return t.status();
    return Value(*std::move(t));
  }
  if (!value.is_tuple()) return value;
  std::vector<Value> fields;
  fields.reserve(value.fields_or_die().size());
  for (const Value& f : value.fields_or_die()) {
    absl::StatusOr<Value> copy = copy_to(f, device);
    if (!copy.ok()) return copy.status();
    fields.push_back(*std::move(copy));
  }
  return Value::tuple(std::move(fields));
}

absl::StatusOr<Tensor> to_host(const Tensor& tensor) {
  if (tensor.device().type == Device::Type::kCPU) return tensor;
  return copy_tensor(tensor, Device::cpu());
}

absl::Status zero(void* data, int64_t bytes, Device device) {
  if (bytes <= 0) return absl::OkStatus();
  if (device.type == Device::Type::kCPU) {
    std::memset(data, 0, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  if (device.type != Device::Type::kCUDA) return unsupported(device);
#if defined(RELAX_WITH_CUDA)
  absl::StatusOr<const cuda::DriverApi*> api = cuda::driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUstream> stream = cuda::stream_for(device.index);
  if (!stream.ok()) return stream.status();
  return cuda::check((*api)->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(data), 0,
                                              static_cast<size_t>(bytes), *stream),
                     absl::StrCat("cuMemsetD8Async of ", bytes, " bytes on ", device.to_string()));
#else
  return cuda::check_available();
#endif
}

absl::Status activate(Device device) {
  if (device.type == Device::Type::kCPU) return absl::OkStatus();
  if (device.type != Device::Type::kCUDA) return unsupported(device);
#if defined(RELAX_WITH_CUDA)
  // Generated kernels launch on the thread's current device (their launchers name none).
  cuda::set_current_device(device.index);
  return cuda::stream_for(device.index).status();
#else
  return cuda::check_available();
#endif
}

DeviceFence::~DeviceFence() {
#if defined(RELAX_WITH_CUDA)
  if (event_ == nullptr) return;
  if (absl::StatusOr<const cuda::DriverApi*> api = cuda::driver(); api.ok()) {
    (void)(*api)->cuEventDestroy(static_cast<CUevent>(event_));
  }
#endif
}

absl::Status DeviceFence::before_call(Device device) {
  const std::thread::id self = std::this_thread::get_id();
  const bool other_thread = last_thread_ != std::thread::id() && last_thread_ != self;
  last_thread_ = self;
  if (device.type != Device::Type::kCUDA || !other_thread) return absl::OkStatus();
  if (!record_error_.ok()) {
    return absl::Status(record_error_.code(),
                        absl::StrCat("the end of the previous call on this context (on another thread) "
                                     "was not recorded: ", record_error_.message()));
  }
  if (!recorded_) return absl::OkStatus();
#if defined(RELAX_WITH_CUDA)
  absl::StatusOr<const cuda::DriverApi*> api = cuda::driver();
  if (!api.ok()) return api.status();
  absl::StatusOr<CUstream> stream = cuda::stream_for(device.index);
  if (!stream.ok()) return stream.status();
  return cuda::check((*api)->cuStreamWaitEvent(*stream, static_cast<CUevent>(event_), 0),
                     absl::StrCat("cuStreamWaitEvent on ", device.to_string(),
                                  " for the previous call on this context"));
#else
  return cuda::check_available();
#endif
}

void DeviceFence::after_call(Device device) {
  if (device.type != Device::Type::kCUDA) return;
#if defined(RELAX_WITH_CUDA)
  recorded_ = false;
  record_error_ = [&]() -> absl::Status {
    absl::StatusOr<const cuda::DriverApi*> api = cuda::driver();
    if (!api.ok()) return api.status();
    absl::StatusOr<CUstream> stream = cuda::stream_for(device.index);
    if (!stream.ok()) return stream.status();
    if (event_ == nullptr) {
      CUevent event = nullptr;
      if (absl::Status s = cuda::check((*api)->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                                       absl::StrCat("cuEventCreate on ", device.to_string()));
          !s.ok()) {
        return s;
      }
      event_ = event;
    }
    return cuda::check((*api)->cuEventRecord(static_cast<CUevent>(event_), *stream),
                       absl::StrCat("cuEventRecord on ", device.to_string()));
  }();
  recorded_ = record_error_.ok();
#endif
}

}  // namespace relax::runtime::vm_device
