// Byte copies and fills on CUDA devices (cuda_memory.h) through the calling thread's streams.
//
// Host <-> device copies are queued on the device's stream and waited for, so pageable host
// memory may be reused at once and the caller sees the data. A copy between two devices
// first waits for the source device's stream (the data may still be being written there),
// then copies on the destination's stream with cuMemcpyPeerAsync and waits for it.
#if defined(RELAX_WITH_CUDA)

#include "cuda_memory.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "cuda_context.h"
#include "cuda_driver.h"

namespace relax::runtime::cuda {
namespace {

CUdeviceptr device_pointer(const void* p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

absl::Status wait(CUstream stream, int device) {
  return check((*driver())->cuStreamSynchronize(stream),
               absl::StrCat("cuStreamSynchronize on cuda:", device));
}

}  // namespace

absl::Status copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                        size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  const bool dst_host = dst_device.type == Device::Type::kCPU;
  const bool src_host = src_device.type == Device::Type::kCPU;
  const std::string what =
      absl::StrCat(bytes, " bytes from ", src_device.to_string(), " to ", dst_device.to_string());
  if (dst_host && src_host) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda::copy_bytes: ", what, ": neither side is a CUDA device"));
  }
  if (src_host || dst_host) {
    const int device = src_host ? dst_device.index : src_device.index;
    absl::StatusOr<CUstream> stream = stream_for(device);
    if (!stream.ok()) return stream.status();
    const DriverApi& api = **driver();
    const CUresult r = src_host ? api.cuMemcpyHtoDAsync(device_pointer(dst), src, bytes, *stream)
                                : api.cuMemcpyDtoHAsync(dst, device_pointer(src), bytes, *stream);
    if (absl::Status s = check(
            r, absl::StrCat(src_host ? "cuMemcpyHtoDAsync of " : "cuMemcpyDtoHAsync of ", what));
        !s.ok()) {
      return s;
    }
    return wait(*stream, device);
  }
  if (src_device.index == dst_device.index) {
    absl::StatusOr<CUstream> stream = stream_for(dst_device.index);
    if (!stream.ok()) return stream.status();
    return check(
        (*driver())->cuMemcpyDtoDAsync(device_pointer(dst), device_pointer(src), bytes, *stream),
        absl::StrCat("cuMemcpyDtoDAsync of ", what));
  }
  absl::StatusOr<CUstream> src_stream = stream_for(src_device.index);
  if (!src_stream.ok()) return src_stream.status();
  if (absl::Status s = wait(*src_stream, src_device.index); !s.ok()) return s;
  absl::StatusOr<CUcontext> src_context = context_for(src_device.index);
  if (!src_context.ok()) return src_context.status();
  absl::StatusOr<CUcontext> dst_context = context_for(dst_device.index);
  if (!dst_context.ok()) return dst_context.status();
  absl::StatusOr<CUstream> dst_stream = stream_for(dst_device.index);
  if (!dst_stream.ok()) return dst_stream.status();
  if (absl::Status s = check(
          (*driver())->cuMemcpyPeerAsync(device_pointer(dst), *dst_context, device_pointer(src),
                                         *src_context, bytes, *dst_stream),
          absl::StrCat("cuMemcpyPeerAsync of ", what));
      !s.ok()) {
    return s;
  }
  return wait(*dst_stream, dst_device.index);
}

absl::Status zero_bytes(void* data, int device, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  absl::StatusOr<CUstream> stream = stream_for(device);
  if (!stream.ok()) return stream.status();
  return check((*driver())->cuMemsetD8Async(device_pointer(data), 0, bytes, *stream),
               absl::StrCat("cuMemsetD8Async of ", bytes, " bytes on cuda:", device));
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
