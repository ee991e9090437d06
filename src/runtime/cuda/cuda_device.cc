// relax/runtime/cuda.h with CUDA: availability, device descriptions, synchronisation.
// (The device pools are cuda_allocator.cc's; the answers of a build without CUDA are
// cuda_unavailable.cc's.)
#if defined(RELAX_WITH_CUDA)

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "cuda_context.h"
#include "cuda_driver.h"
#include "relax/runtime/cuda.h"

namespace relax::runtime::cuda {

bool built_with_cuda() { return true; }

absl::Status check_available() { return driver().status(); }

int device_count() {
  absl::StatusOr<const DriverApi*> api = driver();
  return api.ok() ? (*api)->device_count : 0;
}

absl::StatusOr<DeviceInfo> device_info(int index) {
  if (absl::Status s = check_device(index); !s.ok()) return s;
  const DriverApi& api = **driver();
  const std::string where = absl::StrCat(" of cuda:", index);
  CUdevice device = 0;
  if (absl::Status s = check(api.cuDeviceGet(&device, index), "cuDeviceGet" + where); !s.ok()) {
    return s;
  }
  DeviceInfo info;
  std::array<char, 256> name{};
  if (absl::Status s =
          check(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()) - 1, device),
                "cuDeviceGetName" + where);
      !s.ok()) {
    return s;
  }
  info.name = name.data();
  size_t total = 0;
  if (absl::Status s = check(api.cuDeviceTotalMem(&total, device), "cuDeviceTotalMem" + where);
      !s.ok()) {
    return s;
  }
  info.total_memory = static_cast<int64_t>(total);
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  struct Attribute {
    CUdevice_attribute attribute;
    const char* name;
    int* out;
  };
  const Attribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR",
       &info.compute_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR",
       &info.compute_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", &info.multiprocessors},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE", &memory_clock_khz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "GLOBAL_MEMORY_BUS_WIDTH", &bus_width_bits},
  };
  for (const Attribute& a : attributes) {
    if (absl::Status s = check(api.cuDeviceGetAttribute(a.out, a.attribute, device),
                               absl::StrCat("cuDeviceGetAttribute ", a.name, where));
        !s.ok()) {
      return s;
    }
  }
  // Double data rate: two transfers per clock over the whole bus. A driver that reports
  // no clock (0) leaves the bandwidth unknown.
  info.peak_memory_bandwidth =
      2.0 * static_cast<double>(memory_clock_khz) * 1000.0 * (bus_width_bits / 8.0);
  return info;
}

absl::Status synchronize(int index) {
  absl::StatusOr<CUstream> stream = stream_for(index);
  if (!stream.ok()) return stream.status();
  return check((*driver())->cuStreamSynchronize(*stream),
               absl::StrCat("cuStreamSynchronize on cuda:", index));
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
