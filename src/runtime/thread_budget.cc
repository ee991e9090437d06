// The process's budget of kernel threads (relax/runtime/thread_budget.h).
//
// One mutex: a claim is made once per parallel loop that is large enough to
// get a team (Target::parallel_min_work), so a lock costs little next to the
// hand-off to the pool's workers it guards. A claim never waits: when no team is free the caller
// runs the loop alone. (Waiting for threads was tried: on 2 loaded cores the
// wake-up of a waiting caller cost more than the team saved.)
#include "relax/runtime/thread_budget.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "cuda/cuda_launch.h"
#include "relax/runtime/thread_pool.h"

namespace relax::runtime {
namespace {

int32_t machine_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int32_t>(n) : 1;
}

// The default budget: RELAX_NUM_THREADS when it is a positive integer, else the
// CPUs of machine_threads(). Read when first needed and again after
// set_kernel_thread_budget(0). A value that is not one is reported on stderr
// (there is no caller to return a status to: the budget is read lazily, by the
// first parallel loop) and the CPUs are used.
int32_t default_threads() {
  const int32_t cpus = machine_threads();
  const char* text = std::getenv("RELAX_NUM_THREADS");
  if (text == nullptr || *text == '\0') return cpus;
  int32_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [last, error] = std::from_chars(text, end, value);
  if (error == std::errc() && last == end && value > 0) return value;
  std::fprintf(stderr,
               "relax: RELAX_NUM_THREADS=%s is not a positive integer; kernels use the %d CPUs this "
               "process may run on\n",
               text, static_cast<int>(cpus));
  return cpus;
}

class ThreadBudget {
 public:
  int32_t budget() {
    std::lock_guard<std::mutex> lock(mu_);
    return budget_locked();
  }

  void set_budget(int32_t threads) {
    std::lock_guard<std::mutex> lock(mu_);
    configured_ = std::max<int32_t>(threads, 0);
    if (configured_ == 0) default_ = 0;  // read the environment again
  }

  int32_t claim(int32_t wanted) {
    std::lock_guard<std::mutex> lock(mu_);
    const int32_t budget = budget_locked();
    const int32_t cap = wanted > 0 ? std::min(wanted, budget) : budget;
    const int32_t free = cap - running_;
    if (free < 2) {  // no team: the caller runs the loop alone, uncounted
      ++serial_;
      return 1;
    }
    running_ += free;
    peak_ = std::max(peak_, running_);
    ++claims_;
    return free;
  }

  void release(int32_t granted) {
    if (granted < 2) return;
    std::lock_guard<std::mutex> lock(mu_);
    running_ -= granted;
  }

  KernelThreadStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return KernelThreadStats{running_, peak_, claims_, serial_};
  }

  void reset_stats() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_ = running_;
    claims_ = 0;
    serial_ = 0;
  }

 private:
  int32_t budget_locked() {
    if (configured_ > 0) return configured_;
    if (default_ == 0) default_ = default_threads();
    return default_;
  }

  std::mutex mu_;
  int32_t configured_ = 0;  // set_kernel_thread_budget's, 0: the default
  int32_t default_ = 0;     // default_threads(), read once, when first needed
  int32_t running_ = 0;
  int32_t peak_ = 0;
  int64_t claims_ = 0;
  int64_t serial_ = 0;
};

// Never destroyed: kernels on other threads may still release while the process exits.
ThreadBudget& the_budget() {
  static ThreadBudget* const budget = new ThreadBudget();
  return *budget;
}

int32_t claim_threads(int32_t wanted) { return the_budget().claim(wanted); }
void release_threads(int32_t granted) { the_budget().release(granted); }
int32_t pool_parallel_for(int64_t begin, int64_t end, int32_t wanted, RelaxParallelBodyFn body, void* ctx) {
  return parallel_for(begin, end, wanted, body, ctx);
}

// cuda_launch: src/runtime/cuda/cuda_launch.cc; null in a runtime built without CUDA (a CUDA
// kernel's launcher then fails with a message of its own).
#if defined(RELAX_WITH_CUDA)
constexpr decltype(RelaxRuntimeApi::cuda_launch) kCudaLaunch = &cuda::launch_kernel;
#else
constexpr decltype(RelaxRuntimeApi::cuda_launch) kCudaLaunch = nullptr;
#endif
const RelaxRuntimeApi kApi = {&claim_threads, &release_threads, &pool_parallel_for, kCudaLaunch};

}  // namespace

int32_t claim_kernel_threads(int32_t wanted) { return claim_threads(wanted); }
void release_kernel_threads(int32_t granted) { release_threads(granted); }

int32_t kernel_thread_budget() { return the_budget().budget(); }
void set_kernel_thread_budget(int32_t threads) { the_budget().set_budget(threads); }
KernelThreadStats kernel_thread_stats() { return the_budget().stats(); }
void reset_kernel_thread_stats() { the_budget().reset_stats(); }
const RelaxRuntimeApi* kernel_runtime_api() { return &kApi; }

}  // namespace relax::runtime
