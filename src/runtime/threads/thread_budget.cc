// The process's budget of kernel threads (relax/runtime/thread_budget.h).
//
// One mutex: a claim is made once per parallel loop that is large enough to
// get a team (Target::parallel_min_work), so a lock costs little next to the
// hand-off to the pool's workers it guards. A claim never waits: when no team is free the caller
// runs the loop alone. (Waiting for threads was tried: on 2 loaded cores the
// wake-up of a waiting caller cost more than the team saved.)
//
// The load sample (ThreadWait::kAuto and kPassive with the default budget) is
// taken under the mutex by the claim that finds it older than
// kLoadSampleInterval: one sched_getaffinity and one read of /proc/loadavg, a
// few microseconds once per millisecond at most.
#include "relax/runtime/thread_budget.h"

#include <fcntl.h>
#include <sched.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "cuda/cuda_launch.h"
#include "relax/runtime/thread_pool.h"
#include "threads/thread_internal.h"

namespace relax::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// How often a claim refreshes the load sample.
constexpr Clock::duration kLoadSampleInterval = std::chrono::milliseconds(1);
// How long after a oneDNN call its OpenMP team's idle members are counted as this process's
// runnable threads: libgomp's default spin (GOMP_SPINCOUNT 300,000 pauses, "about 3 ms" by its
// own estimate; 4-6 ms measured here) with a margin; none when the environment made libgomp
// passive (it reads these variables when it is loaded, as this does when first needed).
Clock::duration openmp_spin_window() {
  static const Clock::duration window = [] {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const char* count = std::getenv("GOMP_SPINCOUNT");
    const bool passive = (policy != nullptr && ::strcasecmp(policy, "passive") == 0) ||
                         (count != nullptr && std::strcmp(count, "0") == 0);
    return passive ? Clock::duration::zero() : Clock::duration(std::chrono::milliseconds(10));
  }();
  return window;
}

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

// The default budget: RELAX_NUM_THREADS when it is a positive integer (and then
// *from_environment is set), else the CPUs of machine_threads(). Read when first needed and again after
// set_kernel_thread_budget(0). A value that is not one is reported on stderr
// (there is no caller to return a status to: the budget is read lazily, by the
// first parallel loop) and the CPUs are used.
int32_t default_threads(bool* from_environment) {
  *from_environment = false;
  const int32_t cpus = machine_threads();
  const char* text = std::getenv("RELAX_NUM_THREADS");
  if (text == nullptr || *text == '\0') return cpus;
  int32_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [last, error] = std::from_chars(text, end, value);
  if (error == std::errc() && last == end && value > 0) {
    *from_environment = true;
    return value;
  }
  std::fprintf(stderr,
               "relax: RELAX_NUM_THREADS=%s is not a positive integer; kernels use the %d CPUs this "
               "process may run on\n",
               text, static_cast<int>(cpus));
  return cpus;
}

// RELAX_THREAD_WAIT, or kAuto (an unknown value is reported on stderr).
ThreadWait environment_wait() {
  const char* text = std::getenv("RELAX_THREAD_WAIT");
  if (text == nullptr || *text == '\0' || std::strcmp(text, "auto") == 0) return ThreadWait::kAuto;
  if (std::strcmp(text, "spin") == 0) return ThreadWait::kSpin;
  if (std::strcmp(text, "passive") == 0) return ThreadWait::kPassive;
  std::fprintf(stderr, "relax: RELAX_THREAD_WAIT=%s is not auto, spin or passive; using auto\n", text);
  return ThreadWait::kAuto;
}

int32_t online_cpus() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int32_t>(n) : 0;
}

// The runnable threads of the machine: the numerator of /proc/loadavg's fourth field
// ("0.52 0.58 0.59 3/812 4242"); -1 when it cannot be read.
int32_t runnable_threads(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  const char* p = text;
  for (int field = 0; field < 3; ++field) {  // skip the three averages
    p = std::strchr(p, ' ');
    if (p == nullptr) return -1;
    ++p;
  }
  int32_t runnable = -1;
  const auto [last, error] = std::from_chars(p, text + n, runnable);
  if (error != std::errc() || *last != '/') return -1;
  return runnable;
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
    int32_t free = cap - running_;
    if (wait_locked() != ThreadWait::kSpin) {
      sample_load_locked();
      // The free CPUs bound the team (the claimer included) beside the teams running now; an
      // explicit budget is kept as given.
      if (free >= 2 && configured_ == 0 && !default_from_env_ && free_cpus_ - running_ < free) {
        free = std::max(free_cpus_ - running_, 1);
        ++load_capped_;
      }
    }
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
    return KernelThreadStats{running_, peak_, claims_, serial_, load_capped_, free_cpus_};
  }

  void reset_stats() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_ = running_;
    claims_ = 0;
    serial_ = 0;
    load_capped_ = 0;
  }

  ThreadWait wait() {
    std::lock_guard<std::mutex> lock(mu_);
    return wait_locked();
  }

  void set_wait(std::optional<ThreadWait> wait) {
    std::lock_guard<std::mutex> lock(mu_);
    wait_ = wait;
    wait_read_ = wait.has_value();
    publish_contended_locked(contended_sample_);
  }

  // Lock-free: read by spinning threads.
  bool contended() const { return contended_.load(std::memory_order_relaxed); }

  void set_load_file(std::string path) {
    std::lock_guard<std::mutex> lock(mu_);
    load_file_ = std::move(path);
    sampled_ = Clock::time_point();
  }

  void note_openmp_team(int32_t threads) {
    if (threads < 2) return;
    std::lock_guard<std::mutex> lock(mu_);
    openmp_spinners_ = threads - 1;
    openmp_until_ = Clock::now() + openmp_spin_window();
  }

 private:
  int32_t budget_locked() {
    if (configured_ > 0) return configured_;
    if (default_ == 0) {
      default_ = default_threads(&default_from_env_);
    }
    return default_;
  }

  ThreadWait wait_locked() {
    if (!wait_read_) {
      wait_ = environment_wait();
      wait_read_ = true;
      publish_contended_locked(contended_sample_);
    }
    return *wait_;
  }

  // Refreshes free_cpus_ and the contention flag when the sample is older than the interval
  // (always when a test's load file is set).
  void sample_load_locked() {
    const Clock::time_point now = Clock::now();
    if (load_file_.empty() && now - sampled_ < kLoadSampleInterval) return;
    sampled_ = now;
    const int32_t cpus = machine_threads();
    free_cpus_ = cpus;
    contended_sample_ = false;
    // The machine's count tells about our CPUs only when they are all the machine's.
    if (load_file_.empty() && cpus != online_cpus()) return publish_contended_locked(false);
    const int32_t runnable = runnable_threads(load_file_.empty() ? "/proc/loadavg" : load_file_);
    if (runnable < 0) return publish_contended_locked(false);
    const int32_t openmp = now < openmp_until_ ? openmp_spinners_ : 0;
    const int32_t own = 1 + running_ + thread_pool_spinning_workers() + openmp;
    const int32_t others = std::max(runnable - own, 0);
    free_cpus_ = std::max(cpus - others, 1);
    contended_sample_ = runnable > cpus;
    publish_contended_locked(contended_sample_);
  }

  void publish_contended_locked(bool sampled) {
    const ThreadWait wait = wait_locked();
    contended_.store(wait == ThreadWait::kPassive || (wait == ThreadWait::kAuto && sampled),
                     std::memory_order_relaxed);
  }

  std::mutex mu_;
  int32_t configured_ = 0;  // set_kernel_thread_budget's, 0: the default
  int32_t default_ = 0;     // default_threads(), read once, when first needed
  bool default_from_env_ = false;  // default_ is RELAX_NUM_THREADS's, not the CPUs'
  std::optional<ThreadWait> wait_;  // the policy (set, or read from the environment)
  bool wait_read_ = false;
  std::string load_file_;  // a test's stand-in for /proc/loadavg
  Clock::time_point sampled_;  // when the load was last sampled
  int32_t free_cpus_ = 0;  // the CPUs free at the last sample
  bool contended_sample_ = false;  // the last sample saw more runnable threads than CPUs
  std::atomic<bool> contended_{false};  // what the pool reads: the sample under the policy
  int32_t openmp_spinners_ = 0;  // oneDNN's last OpenMP team less its caller
  Clock::time_point openmp_until_;  // until when they count as ours
  int32_t running_ = 0;
  int32_t peak_ = 0;
  int64_t claims_ = 0;
  int64_t serial_ = 0;
  int64_t load_capped_ = 0;
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

// The calling thread's scratch block (RelaxRuntimeApi::thread_scratch): grown to the largest
// request, kept for the thread's next call, freed when the thread ends. Held here, in the
// runtime, because a kernel library may be dlclose'd while the pool's threads live on.
struct ThreadScratch {
  void* data = nullptr;
  uint64_t bytes = 0;
  ThreadScratch() = default;
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;
  ~ThreadScratch() { std::free(data); }
};

void* thread_scratch(uint64_t bytes) {
  thread_local ThreadScratch scratch;
  if (scratch.bytes < bytes) {
    std::free(scratch.data);
    const uint64_t rounded = (bytes + 4095) / 4096 * 4096;
    scratch.data = std::aligned_alloc(64, rounded);
    scratch.bytes = scratch.data == nullptr ? 0 : rounded;
  }
  return scratch.data;
}

// cuda_launch: src/runtime/cuda/cuda_launch.cc; null in a runtime built without CUDA (a CUDA
// kernel's launcher then fails with a message of its own).
#if defined(RELAX_WITH_CUDA)
constexpr decltype(RelaxRuntimeApi::cuda_launch) kCudaLaunch = &cuda::launch_kernel;
#else
constexpr decltype(RelaxRuntimeApi::cuda_launch) kCudaLaunch = nullptr;
#endif
const RelaxRuntimeApi kApi = {&claim_threads, &release_threads, &pool_parallel_for, kCudaLaunch, &thread_scratch};

}  // namespace

int32_t claim_kernel_threads(int32_t wanted) { return claim_threads(wanted); }
void release_kernel_threads(int32_t granted) { release_threads(granted); }

int32_t kernel_thread_budget() { return the_budget().budget(); }
void set_kernel_thread_budget(int32_t threads) { the_budget().set_budget(threads); }
ThreadWait kernel_thread_wait() { return the_budget().wait(); }
void set_kernel_thread_wait(std::optional<ThreadWait> wait) { the_budget().set_wait(wait); }
bool kernel_threads_contended() { return the_budget().contended(); }
void set_kernel_load_file(std::string path) { the_budget().set_load_file(std::move(path)); }
void note_openmp_team(int32_t threads) { the_budget().note_openmp_team(threads); }
KernelThreadStats kernel_thread_stats() { return the_budget().stats(); }
void reset_kernel_thread_stats() { the_budget().reset_stats(); }
const RelaxRuntimeApi* kernel_runtime_api() { return &kApi; }

}  // namespace relax::runtime
