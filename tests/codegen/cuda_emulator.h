// Runs the CUDA code generator's device functions on the host, for tests on
// machines without a GPU: the device source, with a small shim in front, is
// compiled by the host compiler into a shared object; a launch runs the grid's
// blocks one after another, each block as blockDim real threads, so that
// __syncthreads (a std::barrier of the block), warp shuffles (a barrier per
// warp around a slot per lane) and __shared__ arrays (function statics: one
// block at a time) behave as on a device. The threads are kept between blocks. A thread that returns leaves its
// barriers (arrive_and_drop), as an exited thread stops counting on a GPU.
//
// Not a GPU: no memory model beyond the barriers, no timing, and the two PTX
// conversions of the prelude (float to float16 / bfloat16) are replaced by the
// host's (relax/support/half_float.h). What it checks is what the generator
// decides: indexing, the thread and block mapping, reductions, the matvec and
// tiled matmul kernels, bounds guards.
//
//   CudaEmulator emu;
//   ASSERT_TRUE(emu.load(unit.device_source, cache_dir).ok());
//   api.cuda_launch = &CudaEmulator::cuda_launch;  // launches go to the loaded emulator
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "relax/codegen/compiler.h"
#include "relax/support/half_float.h"
#include "relax/support/target.h"

namespace relax::testing {

/// What the shim calls back into (its layout is repeated in kCudaEmulatorShim).
struct CudaEmulatorDim3 {
  unsigned x, y, z;
};
struct CudaEmulatorApi {
  CudaEmulatorDim3 (*thread_idx)();
  CudaEmulatorDim3 (*block_idx)();
  CudaEmulatorDim3 (*block_dim)();
  CudaEmulatorDim3 (*grid_dim)();
  void (*syncthreads)();
  unsigned long long (*shfl_down)(unsigned long long bits, int delta);
  unsigned long long (*shfl_idx)(unsigned long long bits, int lane);
  unsigned short (*half_bits)(float v, int brain);
};

inline constexpr char kCudaEmulatorShim[] = R"(// ---- the host shim of CudaEmulator (tests/codegen/cuda_emulator.h) ----
#include <math.h>
#include <stdint.h>
#include <string.h>
struct relax_emu_dim3 { unsigned x, y, z; };
struct relax_emu_api {
  relax_emu_dim3 (*thread_idx)();
  relax_emu_dim3 (*block_idx)();
  relax_emu_dim3 (*block_dim)();
  relax_emu_dim3 (*grid_dim)();
  void (*syncthreads)();
  unsigned long long (*shfl_down)(unsigned long long, int);
  unsigned long long (*shfl_idx)(unsigned long long, int);
  unsigned short (*half_bits)(float, int);
};
static const relax_emu_api* relax_emu = nullptr;
extern "C" void relax_emu_set_api(const relax_emu_api* api) { relax_emu = api; }
#define threadIdx (relax_emu->thread_idx())
#define blockIdx (relax_emu->block_idx())
#define blockDim (relax_emu->block_dim())
#define gridDim (relax_emu->grid_dim())
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
static inline void __syncthreads() { relax_emu->syncthreads(); }
template <typename T>
static inline T relax_emu_shuffle(T v, int value, unsigned long long (*how)(unsigned long long, int)) {
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof v);
  bits = how(bits, value);
  T r;
  memcpy(&r, &bits, sizeof r);
  return r;
}
template <typename T>
static inline T __shfl_down_sync(unsigned, T v, int delta) { return relax_emu_shuffle(v, delta, relax_emu->shfl_down); }
template <typename T>
static inline T __shfl_sync(unsigned, T v, int lane) { return relax_emu_shuffle(v, lane, relax_emu->shfl_idx); }
#define __expf expf
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline float __int_as_float(int u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline double __longlong_as_double(long long u) { double d; memcpy(&d, &u, sizeof d); return d; }
static inline long long __double_as_longlong(double d) { long long u; memcpy(&u, &d, sizeof u); return u; }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
// ---- the device source ----
)";

/// The device functions of one CudaUnit, compiled for the host.
class CudaEmulator {
 public:
  CudaEmulator() = default;
  CudaEmulator(const CudaEmulator&) = delete;
  CudaEmulator& operator=(const CudaEmulator&) = delete;
  ~CudaEmulator() {
    if (current() == this) current() = nullptr;
    if (handle_ != nullptr) dlclose(handle_);
  }

  /// Compiles `device_source` (generate_cuda's, or a .cu file's kernels) for the host and
  /// makes this the emulator that cuda_launch runs on. `trampolines`: more text after it (a
  /// kernel whose signature spans lines needs its relax_emu_call_<name> written by hand).
  absl::Status load(const std::string& device_source, const std::string& cache_dir,
                    const std::string& trampolines = "") {
    absl::StatusOr<std::string> source = host_source(device_source);
    if (!source.ok()) return source.status();
    source->append(trampolines);
    Target host;
    host.cache_dir = cache_dir;
    absl::StatusOr<CompiledLibrary> lib = compile_shared_object(*source, host, {"-w"});
    if (!lib.ok()) return lib.status();
    handle_ = dlopen(lib->library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) return absl::InternalError(absl::StrCat("dlopen: ", dlerror()));
    auto set_api = reinterpret_cast<void (*)(const CudaEmulatorApi*)>(dlsym(handle_, "relax_emu_set_api"));
    if (set_api == nullptr) return absl::InternalError("the emulated unit has no relax_emu_set_api");
    set_api(&api());
    current() = this;
    return absl::OkStatus();
  }

  /// The device source with the shim in front, the prelude's fixed-width typedefs and
  /// constants left to the host's headers, its PTX conversions replaced, and one trampoline
  /// per device function (relax_emu_call_<name>(void** params)).
  static absl::StatusOr<std::string> host_source(const std::string& device_source) {
    std::string body;
    std::string trampolines;
    int conversions = 0;
    const std::string kernel_start = "extern \"C\" __global__ void __launch_bounds__(";
    for (absl::string_view line : absl::StrSplit(device_source, '\n')) {
      if (absl::StartsWith(line, "typedef ") && absl::EndsWith(line, "_t;")) continue;
      if (absl::StartsWith(line, "#define INT") || absl::StartsWith(line, "#define UINT") ||
          absl::StartsWith(line, "#define NAN ") || absl::StartsWith(line, "#define HUGE_VAL")) {
        continue;
      }
      if (absl::StrContains(line, "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(r) : \"f\"(v));")) {
        absl::StrAppend(&body, "  r = relax_emu->half_bits(v, 0);\n");
        ++conversions;
        continue;
      }
      if (absl::StrContains(line, "asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(r) : \"f\"(v));")) {
        absl::StrAppend(&body, "  r = relax_emu->half_bits(v, 1);\n");
        ++conversions;
        continue;
      }
      if (absl::StrContains(line, "asm(")) {
        return absl::UnimplementedError(absl::StrCat("the emulator has no host form of: ", line));
      }
      if (absl::StartsWith(line, kernel_start) && absl::EndsWith(line, ") {") &&
          line.find(") ", kernel_start.size()) != absl::string_view::npos) {
        // extern "C" __global__ void __launch_bounds__(N) NAME(T a, U b) {  (the generator's
        // one-line form; a signature over several lines has a hand-written trampoline)
        const size_t name_at = line.find(") ", kernel_start.size()) + 2;
        const size_t open = line.find('(', name_at);
        const size_t close = line.rfind(')');
        const std::string name(line.substr(name_at, open - name_at));
        std::vector<std::string> args;
        int index = 0;
        for (absl::string_view param : absl::StrSplit(line.substr(open + 1, close - open - 1), ", ")) {
          if (param.empty()) continue;
          const std::string type(param.substr(0, param.rfind(' ')));
          args.push_back(absl::StrCat("*static_cast<", type, "*>(p[", index++, "])"));
        }
        absl::StrAppend(&trampolines, "extern \"C\" void relax_emu_call_", name, "(void** p) { ", name, "(",
                        absl::StrJoin(args, ", "), "); }\n");
      }
      absl::StrAppend(&body, line, "\n");
    }
    if (conversions != 0 && conversions != 2) {
      return absl::InternalError("the prelude's float16 / bfloat16 conversions were not both found");
    }
    return absl::StrCat(kCudaEmulatorShim, body, "\n// ---- trampolines ----\n", trampolines);
  }

  /// A RelaxRuntimeApi::cuda_launch running on the emulator loaded last.
  static int32_t cuda_launch(const void*, uint64_t, const char* name, const uint32_t grid[3], const uint32_t block[3],
                             uint32_t, void** params, char* error, int32_t capacity) {
    CudaEmulator* emu = current();
    std::string message;
    if (emu == nullptr) {
      message = "no CudaEmulator is loaded";
    } else if (auto call = reinterpret_cast<void (*)(void**)>(
                   dlsym(emu->handle_, absl::StrCat("relax_emu_call_", name).c_str()));
               call == nullptr) {
      message = absl::StrCat("no device function ", name);
    } else {
      emu->launches_.push_back(name);
      run_grid(call, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, params);
      return 0;
    }
    if (capacity > 0) {
      std::strncpy(error, message.c_str(), static_cast<size_t>(capacity) - 1);
      error[capacity - 1] = '\0';
    }
    return 1;
  }

  /// The device functions launched so far, in order.
  const std::vector<std::string>& launches() const { return launches_; }

 private:
  struct Block {
    CudaEmulatorDim3 grid, dim, idx;
    std::unique_ptr<std::barrier<>> all;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    std::vector<unsigned long long> slots;
    unsigned threads = 0;
  };
  struct ThreadState {
    Block* block = nullptr;
    unsigned linear = 0;
    CudaEmulatorDim3 idx{0, 0, 0};
  };
  static ThreadState& self() {
    static thread_local ThreadState state;
    return state;
  }
  /// Threads kept for the blocks (starting a thread per block thread made the tests slow):
  /// run(n, f) calls f(0) .. f(n - 1) on n of them at once and returns when all have.
  class Pool {
   public:
    ~Pool() {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      wake_.notify_all();
      for (std::thread& t : workers_) t.join();
    }
    void run(unsigned n, const std::function<void(unsigned)>& f) {
      std::unique_lock<std::mutex> lock(mu_);
      while (workers_.size() < n) {
        const auto index = static_cast<unsigned>(workers_.size());
        workers_.emplace_back([this, index] { work(index); });
      }
      job_ = &f;
      active_ = n;
      remaining_ = n;
      ++generation_;
      wake_.notify_all();
      done_.wait(lock, [this] { return remaining_ == 0; });
      job_ = nullptr;
    }

   private:
    void work(unsigned index) {
      uint64_t seen = 0;
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (index >= active_) continue;
        const std::function<void(unsigned)>* f = job_;
        lock.unlock();
        (*f)(index);
        lock.lock();
        if (--remaining_ == 0) done_.notify_one();
      }
    }
    std::mutex mu_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> workers_;
    const std::function<void(unsigned)>* job_ = nullptr;
    uint64_t generation_ = 0;
    unsigned active_ = 0, remaining_ = 0;
    bool stop_ = false;
  };
  static Pool& pool() {
    static Pool p;
    return p;
  }
  static CudaEmulator*& current() {
    static CudaEmulator* emu = nullptr;
    return emu;
  }

  static void run_grid(void (*call)(void**), CudaEmulatorDim3 grid, CudaEmulatorDim3 dim, void** params) {
    const unsigned threads = dim.x * dim.y * dim.z;
    for (unsigned bz = 0; bz < grid.z; ++bz) {
      for (unsigned by = 0; by < grid.y; ++by) {
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          Block b;
          b.grid = grid;
          b.dim = dim;
          b.idx = {bx, by, bz};
          b.threads = threads;
          b.all = std::make_unique<std::barrier<>>(threads);
          for (unsigned w = 0; w * 32 < threads; ++w) {
            b.warps.push_back(std::make_unique<std::barrier<>>(std::min(32u, threads - w * 32)));
          }
          b.slots.assign(threads, 0);
          pool().run(threads, [&b, call, params](unsigned t) {
            ThreadState& s = self();
            s.block = &b;
            s.linear = t;
            s.idx = {t % b.dim.x, (t / b.dim.x) % b.dim.y, t / (b.dim.x * b.dim.y)};
            call(params);
            b.all->arrive_and_drop();
            b.warps[t / 32]->arrive_and_drop();
            s.block = nullptr;
          });
        }
      }
    }
  }

  /// A warp shuffle: every lane publishes `bits`, then reads lane source(lane) of its warp
  /// (its own value when that lane is outside the warp).
  template <typename Source>
  static unsigned long long exchange(unsigned long long bits, Source source) {
    ThreadState& s = self();
    Block& b = *s.block;
    const unsigned warp = s.linear / 32, lane = s.linear % 32;
    const unsigned width = std::min(32u, b.threads - warp * 32);
    b.slots[s.linear] = bits;
    b.warps[warp]->arrive_and_wait();
    const unsigned from = static_cast<unsigned>(source(lane));
    const unsigned long long got = from < width ? b.slots[warp * 32 + from] : bits;
    b.warps[warp]->arrive_and_wait();
    return got;
  }

  static const CudaEmulatorApi& api() {
    static const CudaEmulatorApi table = {
        [] { return self().idx; },
        [] { return self().block->idx; },
        [] { return self().block->dim; },
        [] { return self().block->grid; },
        [] { self().block->all->arrive_and_wait(); },
        [](unsigned long long bits, int delta) { return exchange(bits, [delta](unsigned lane) { return lane + delta; }); },
        [](unsigned long long bits, int lane) { return exchange(bits, [lane](unsigned) { return lane; }); },
        [](float v, int brain) -> unsigned short { return brain != 0 ? bfloat16_bits(v) : float16_bits(v); },
    };
    return table;
  }

  void* handle_ = nullptr;
  std::vector<std::string> launches_;
};

}  // namespace relax::testing
