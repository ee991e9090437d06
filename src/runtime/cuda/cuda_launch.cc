// The kernel ABI's cuda_launch (cuda_launch.h): a cache of loaded device images and the
// launch on the current device's stream.
//
// One mutex guards the cache; a launch holds it only to find (or load) its image and
// function, never while the driver queues the launch. A PTX image is compiled by the driver
// when it is loaded; its error log goes into the message when that fails. A function that
// asks for more than 48 KiB of dynamic shared memory is allowed that much
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before its first such launch.
#if defined(RELAX_WITH_CUDA)

#include "cuda_launch.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cuda_context.h"
#include "cuda_driver.h"

namespace relax::runtime::cuda {
namespace {

/// Dynamic shared memory a launch gets without asking (CUDA's static limit).
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;

struct LoadedFunction {
  CUfunction function = nullptr;
  uint32_t shared_limit = kDefaultSharedLimit;  // what the function is allowed now
};

struct LoadedImage {
  CUmodule module = nullptr;
  uint64_t size = 0;
  const void* object = nullptr;  // base of the shared object holding the image (dladdr)
  absl::flat_hash_map<std::string, LoadedFunction> functions;
};

struct ImageCache {
  std::mutex mu;
  absl::flat_hash_map<std::pair<int, const void*>, LoadedImage> images;
};

// Never destroyed: kernels may run while the process exits.
ImageCache& image_cache() {
  static auto* const cache = new ImageCache();
  return *cache;
}

const void* object_base(const void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0) return nullptr;
  return info.dli_fbase;
}

/// Loads `image` into the current context (the caller made `device`'s current).
absl::StatusOr<CUmodule> load_image(const DriverApi& api, const void* image, uint64_t size) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  const bool elf = size >= 4 && std::memcmp(bytes,
                                            "\x7f"
                                            "ELF",
                                            4) == 0;
  if (!elf && (size == 0 || bytes[size - 1] != '\0')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the image (", size, " bytes) is neither a cubin (ELF) nor NUL-terminated PTX text"));
  }
  std::array<char, 4096> log{};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size()))};
  CUmodule module = nullptr;
  const CUresult r = api.cuModuleLoadDataEx(&module, image, 2, options, values);
  log.back() = '\0';
  if (absl::Status s = check(r, absl::StrCat("cuModuleLoadDataEx of the ", elf ? "cubin" : "PTX",
                                             " image (", size, " bytes)"));
      !s.ok()) {
    const std::string_view jit_log(log.data());
    if (jit_log.empty()) return s;
    return absl::Status(s.code(), absl::StrCat(s.message(), ": ", std::string(jit_log)));
  }
  return module;
}

/// The function to launch, loading its image first when needed; `device`'s context is
/// current (stream_for made it so).
absl::StatusOr<CUfunction> find_function(const DriverApi& api, int device, const void* image,
                                         uint64_t size, const char* name, uint32_t shared_bytes) {
  ImageCache& cache = image_cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto [it, inserted] = cache.images.try_emplace({device, image});
  LoadedImage& loaded = it->second;
  if (!inserted && loaded.size != size) {  // another image at a recycled address
    (void)api.cuModuleUnload(loaded.module);
    loaded = LoadedImage{};
    inserted = true;
  }
  if (inserted) {
    absl::StatusOr<CUmodule> module = load_image(api, image, size);
    if (!module.ok()) {
      cache.images.erase(it);
      return module.status();
    }
    loaded.module = *module;
    loaded.size = size;
    loaded.object = object_base(image);
  }
  auto fn = loaded.functions.find(absl::string_view(name));
  if (fn == loaded.functions.end()) {
    CUfunction function = nullptr;
    if (absl::Status s = check(api.cuModuleGetFunction(&function, loaded.module, name),
                               "cuModuleGetFunction: the image has no such kernel");
        !s.ok()) {
      return s;
    }
    fn = loaded.functions.emplace(name, LoadedFunction{function}).first;
  }
  LoadedFunction& f = fn->second;
  if (shared_bytes > f.shared_limit) {
    if (absl::Status s = check(
            api.cuFuncSetAttribute(f.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(shared_bytes)),
            absl::StrCat("cuFuncSetAttribute of ", shared_bytes,
                         " bytes of dynamic shared memory"));
        !s.ok()) {
      return s;
    }
    f.shared_limit = shared_bytes;
  }
  return f.function;
}

absl::Status launch(const void* image, uint64_t image_size, const char* name,
                    const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                    void** params) {
  if (image == nullptr || name == nullptr || grid == nullptr || block == nullptr) {
    return absl::InvalidArgumentError("a null image, name, grid or block");
  }
  const int device = current_device();
  absl::StatusOr<CUstream> stream = stream_for(device);
  if (!stream.ok()) return stream.status();
  const DriverApi& api = **driver();
  absl::StatusOr<CUfunction> function =
      find_function(api, device, image, image_size, name, shared_bytes);
  if (!function.ok()) return function.status();
  return check(api.cuLaunchKernel(*function, grid[0], grid[1], grid[2], block[0], block[1],
                                  block[2], shared_bytes, *stream, params, nullptr),
               absl::StrCat("cuLaunchKernel with grid (", grid[0], ", ", grid[1], ", ", grid[2],
                            "), block (", block[0], ", ", block[1], ", ", block[2], "), ",
                            shared_bytes, " bytes of shared memory"));
}

void write_error(char* error, int32_t capacity, std::string_view message) {
  if (error == nullptr || capacity <= 0) return;
  const size_t n = std::min(message.size(), static_cast<size_t>(capacity) - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace

int32_t launch_kernel(const void* image, uint64_t image_size, const char* name,
                      const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                      void** params, char* error, int32_t error_capacity) {
  try {
    const absl::Status s = launch(image, image_size, name, grid, block, shared_bytes, params);
    if (s.ok()) return 0;
    write_error(error, error_capacity,
                absl::StrCat("cuda_launch of kernel `", name != nullptr ? name : "(null)",
                             "` on cuda:", current_device(), ": ", s.message()));
  } catch (const std::exception& e) {  // out of memory in the cache: never across the C ABI
    write_error(error, error_capacity, absl::StrCat("cuda_launch: ", e.what()));
  }
  return 1;
}

void forget_images_of_object(const void* address) {
  ImageCache& cache = image_cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.images.empty()) return;
  const void* object = object_base(address);
  if (object == nullptr) return;
  for (auto it = cache.images.begin(); it != cache.images.end();) {
    auto current = it++;
    if (current->second.object != object) continue;
    // The module goes with its context; a failure (a driver shutting down) has no caller.
    if (context_for(current->first.first).ok()) {
      (void)(*driver())->cuModuleUnload(current->second.module);
    }
    cache.images.erase(current);
  }
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
