// compile_cuda_image and nvrtc_version (relax/codegen/cuda_codegen.h): NVRTC,
// loaded with dlopen on first use (libnvrtc.so.13, then the toolkit's
// /usr/local/cuda/lib64/libnvrtc.so.13), never linked, so relax builds and
// runs where the toolkit is missing and only compiling CUDA code needs it.
//
// One call: the key of (source, architecture, NVRTC version) names the cubin
// <cache dir>/relax_<key>.cubin; an existing non-empty file is a hit.
// Otherwise NVRTC compiles the source (--gpu-architecture=<arch>
// -default-device --std=c++17 -diag-suppress=177) and the cubin is written beside its final name
// and renamed into place, so a reader never sees a partial image (two
// processes may both compile; the second rename replaces identical bytes).
// A compile error returns NVRTC's log (at most 4000 characters), naming the
// device function that holds the first error's line.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "relax/codegen/compiler.h"
#include "relax/codegen/cuda_codegen.h"

#if RELAX_WITH_CUDA
#include <nvrtc.h>
#endif

namespace relax {
namespace {

#if RELAX_WITH_CUDA

constexpr size_t kMaxLogInStatus = 4000;

/// The NVRTC entry points used here.
struct Nvrtc {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  std::string version_text;
};

template <typename F>
bool load_symbol(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

/// NVRTC, loaded once per process; the error says what is missing.
const absl::StatusOr<Nvrtc>& nvrtc() {
  static const absl::StatusOr<Nvrtc> loaded = []() -> absl::StatusOr<Nvrtc> {
    void* handle = nullptr;
    std::string tried;
    for (const char* name : {"libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) break;
      const char* why = dlerror();
      absl::StrAppend(&tried, tried.empty() ? "" : "; ", name, ": ", why == nullptr ? "not found" : why);
    }
    if (handle == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("cannot load NVRTC (the CUDA 13 runtime compiler): ", tried));
    }
    Nvrtc n;
    const bool all = load_symbol(handle, "nvrtcVersion", &n.version) &&
                     load_symbol(handle, "nvrtcGetErrorString", &n.error_string) &&
                     load_symbol(handle, "nvrtcCreateProgram", &n.create) &&
                     load_symbol(handle, "nvrtcCompileProgram", &n.compile) &&
                     load_symbol(handle, "nvrtcGetProgramLogSize", &n.log_size) &&
                     load_symbol(handle, "nvrtcGetProgramLog", &n.log) &&
                     load_symbol(handle, "nvrtcGetCUBINSize", &n.cubin_size) &&
                     load_symbol(handle, "nvrtcGetCUBIN", &n.cubin) &&
                     load_symbol(handle, "nvrtcGetPTXSize", &n.ptx_size) &&
                     load_symbol(handle, "nvrtcGetPTX", &n.ptx) &&
                     load_symbol(handle, "nvrtcDestroyProgram", &n.destroy);
    if (!all) {
      return absl::FailedPreconditionError("NVRTC lacks an entry point relax needs (a CUDA 13 NVRTC is expected)");
    }
    int major = 0, minor = 0;
    if (n.version(&major, &minor) != NVRTC_SUCCESS) return absl::FailedPreconditionError("nvrtcVersion failed");
    n.version_text = absl::StrCat(major, ".", minor);
    return n;
  }();
  return loaded;
}

/// The device function whose definition holds line `line` (1-based) of `source`.
std::string function_at_line(const std::string& source, int64_t line) {
  std::string name;
  int64_t current = 1;
  size_t pos = 0;
  const std::string marker = "extern \"C\" __global__ void ";
  while (pos < source.size() && current <= line) {
    size_t end = source.find('\n', pos);
    if (end == std::string::npos) end = source.size();
    const std::string_view text(source.data() + pos, end - pos);
    if (text.substr(0, marker.size()) == marker) {
      const size_t open = text.find('(');
      const size_t start = text.rfind(' ', open);
      if (open != std::string_view::npos && start != std::string_view::npos) {
        name = std::string(text.substr(start + 1, open - start - 1));
      }
    }
    pos = end + 1;
    ++current;
  }
  return name;
}

/// "in device function X" for the first `(line): error` of NVRTC's log.
std::string error_place(const std::string& source, const std::string& log) {
  const size_t at = log.find("): error");
  if (at == std::string::npos) return std::string();
  const size_t open = log.rfind('(', at);
  int64_t line = 0;
  if (open == std::string::npos || !absl::SimpleAtoi(log.substr(open + 1, at - open - 1), &line)) {
    return std::string();
  }
  const std::string name = function_at_line(source, line);
  return name.empty() ? absl::StrCat(" (line ", line, ")") : absl::StrCat(" in device function ", name);
}

/// An NVRTC program: `source` compiled for `arch` (a real sm_XX gives a cubin,
/// a virtual compute_XX PTX only); NVRTC's log is left in *log. Destroyed with it.
class CompiledProgram {
 public:
  static absl::StatusOr<CompiledProgram> compile(const Nvrtc& n, const std::string& source, const std::string& arch,
                                                 std::string* log) {
    CompiledProgram p(n);
    if (nvrtcResult r = n.create(&p.program_, source.c_str(), "relax_cuda.cu", 0, nullptr, nullptr);
        r != NVRTC_SUCCESS) {
      return absl::InternalError(absl::StrCat("nvrtcCreateProgram: ", n.error_string(r)));
    }
    const std::string arch_flag = "--gpu-architecture=" + arch;
    // (177: a variable or function never referenced -- the prelude's helpers, a
    // block's iteration variables -- which only fills the log.)
    const char* options[] = {arch_flag.c_str(), "-default-device", "--std=c++17", "-diag-suppress=177"};
    const nvrtcResult compiled = n.compile(p.program_, 4, options);
    size_t log_size = 0;
    log->clear();
    if (n.log_size(p.program_, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log->resize(log_size);
      if (n.log(p.program_, log->data()) != NVRTC_SUCCESS) log->clear();
      while (!log->empty() && log->back() == '\0') log->pop_back();
    }
    if (compiled != NVRTC_SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat("NVRTC could not compile the CUDA source for ", arch,
                                                     error_place(source, *log), ": ", n.error_string(compiled), "\n",
                                                     log->substr(0, kMaxLogInStatus)));
    }
    return p;
  }
  CompiledProgram(CompiledProgram&& other) noexcept : n_(other.n_), program_(std::exchange(other.program_, nullptr)) {}
  CompiledProgram(const CompiledProgram&) = delete;
  CompiledProgram& operator=(const CompiledProgram&) = delete;
  CompiledProgram& operator=(CompiledProgram&&) = delete;
  ~CompiledProgram() {
    if (program_ != nullptr) n_->destroy(&program_);
  }

  /// One of the program's outputs (a size and a getter: the cubin or the PTX); empty on failure.
  std::string output(nvrtcResult (*size_of)(nvrtcProgram, size_t*), nvrtcResult (*get)(nvrtcProgram, char*)) const {
    size_t size = 0;
    std::string out;
    if (size_of(program_, &size) == NVRTC_SUCCESS && size > 0) {
      out.resize(size);
      if (get(program_, out.data()) != NVRTC_SUCCESS) out.clear();
    }
    return out;
  }

 private:
  explicit CompiledProgram(const Nvrtc& n) : n_(&n) {}
  const Nvrtc* n_;
  nvrtcProgram program_ = nullptr;
};

#endif  // RELAX_WITH_CUDA

}  // namespace

absl::StatusOr<std::string> nvrtc_version() {
#if RELAX_WITH_CUDA
  const absl::StatusOr<Nvrtc>& n = nvrtc();
  if (!n.ok()) return n.status();
  return n->version_text;
#else
  return absl::FailedPreconditionError("relax was built without CUDA");
#endif
}

absl::StatusOr<CompiledCudaImage> compile_cuda_image(const std::string& device_source, const Target& target) {
#if RELAX_WITH_CUDA
  const absl::StatusOr<Nvrtc>& loaded = nvrtc();
  if (!loaded.ok()) return loaded.status();
  const Nvrtc& n = *loaded;
  namespace fs = std::filesystem;
  absl::StatusOr<std::string> cache_dir = ensure_cache_dir(target);
  if (!cache_dir.ok()) return cache_dir.status();
  const std::string& dir = *cache_dir;
  std::error_code ec;
  const std::string key = content_key({"cuda-image", device_source, target.cuda_arch, n.version_text});
  CompiledCudaImage image;
  image.image_path = (fs::path(dir) / absl::StrCat("relax_", key, ".cubin")).string();
  if (fs::is_regular_file(image.image_path, ec) && fs::file_size(image.image_path, ec) > 0 && !ec) {
    image.cache_hit = true;
    return image;
  }
  absl::StatusOr<CompiledProgram> program = CompiledProgram::compile(n, device_source, target.cuda_arch, &image.log);
  if (!program.ok()) return program.status();
  const std::string cubin = program->output(n.cubin_size, n.cubin);
  if (cubin.empty()) return absl::InternalError(absl::StrCat("NVRTC gave no cubin for ", target.cuda_arch));
  static std::atomic<uint64_t> writes{0};
  const std::string tmp = absl::StrCat(image.image_path, ".tmp.", static_cast<int64_t>(::getpid()), ".", writes++);
  {
    std::ofstream file(tmp, std::ios::binary);
    file.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!file.good()) {
      fs::remove(tmp, ec);
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
  }
  fs::rename(tmp, image.image_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return absl::InternalError(absl::StrCat("cannot rename the cubin into ", image.image_path, ": ", ec.message()));
  }
  return image;
#else
  (void)device_source;
  (void)target;
  return absl::FailedPreconditionError("relax was built without CUDA");
#endif
}

absl::StatusOr<std::string> cuda_ptx(const std::string& device_source, const Target& target) {
#if RELAX_WITH_CUDA
  const absl::StatusOr<Nvrtc>& loaded = nvrtc();
  if (!loaded.ok()) return loaded.status();
  const Nvrtc& n = *loaded;
  if (!absl::StartsWith(target.cuda_arch, "sm_")) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda_ptx: the target's architecture is \"", target.cuda_arch, "\", expected sm_<version>"));
  }
  const std::string virtual_arch = "compute_" + target.cuda_arch.substr(3);
  std::string log;
  absl::StatusOr<CompiledProgram> program = CompiledProgram::compile(n, device_source, virtual_arch, &log);
  if (!program.ok()) return program.status();
  std::string ptx = program->output(n.ptx_size, n.ptx);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  if (ptx.empty()) return absl::InternalError(absl::StrCat("NVRTC gave no PTX for ", virtual_arch));
  return ptx;
#else
  (void)device_source;
  (void)target;
  return absl::FailedPreconditionError("relax was built without CUDA");
#endif
}

}  // namespace relax
