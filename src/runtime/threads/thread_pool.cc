// The process's pool of kernel worker threads (relax/runtime/thread_pool.h).
//
// A loop with a team is a Job on the caller's stack. The caller enters it in
// the queue with one ticket per worker it was granted, runs chunks itself,
// then withdraws the tickets no worker took and waits until the workers that
// took one have left the job. A worker takes a ticket and the job's address
// under the queue's mutex, runs chunks, and leaves by decrementing
// `attached` as its last touch of the job: after that the caller may return
// and the job's memory is gone, so the wake-up of a waiting caller goes
// through the pool's own condition variable, never through the job.
//
// A worker takes its first chunk together with its ticket, under the mutex: a
// ticket that finds every chunk taken (the caller ran them while the worker
// was waking up) attaches nothing and drops the job's other tickets, so a
// caller waits only for workers that hold a chunk, never for one that is
// still on its way (on a busy machine that way can take a time slice).
//
// Waiting. An idle worker, and a caller waiting for its workers, spin
// kSpinIterations pauses before they block -- unless the thread budget says
// the CPUs are contended (kernel_threads_contended(): RELAX_THREAD_WAIT=passive,
// or more runnable threads than CPUs under auto), when a spinning thread would
// only hold a CPU that a preempted team member or another process needs; then
// they block at once.
//
// One mutex guards the queue, the worker list and the sleep/wake-up
// bookkeeping; it is taken twice per worker per loop, which costs little next
// to the chunks of a loop large enough to get a team (Target::parallel_min_work).
#include "relax/runtime/thread_pool.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "relax/runtime/thread_budget.h"
#include "threads/thread_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace relax::runtime {
namespace {

// Spin iterations of an idle worker (and of a caller waiting for its workers)
// before it sleeps, when the CPUs are not contended: tens of microseconds (a
// pause is 40-140 cycles), about the gap between the kernels of one model call.
constexpr int kSpinIterations = 2000;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// libgomp's entry points, when it is loaded in the process (oneDNN's OpenMP runtime): the
// region call compiled `#pragma omp parallel` makes, and the member's index and count.
struct OpenMp {
  void (*parallel)(void (*)(void*), void*, unsigned, unsigned) = nullptr;
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
};

const OpenMp* loaded_openmp() {
  static const OpenMp api = [] {
    OpenMp a;
    a.parallel = reinterpret_cast<void (*)(void (*)(void*), void*, unsigned, unsigned)>(::dlsym(RTLD_DEFAULT, "GOMP_parallel"));
    a.thread_num = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    a.num_threads = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
    if (a.parallel == nullptr || a.thread_num == nullptr || a.num_threads == nullptr) a = OpenMp{};
    return a;
  }();
  return api.parallel == nullptr ? nullptr : &api;
}

// RELAX_KERNEL_TEAMS, or kAuto (an unknown value is reported on stderr).
KernelTeams environment_teams() {
  const char* text = std::getenv("RELAX_KERNEL_TEAMS");
  if (text == nullptr || *text == '\0' || std::strcmp(text, "auto") == 0) return KernelTeams::kAuto;
  if (std::strcmp(text, "pool") == 0) return KernelTeams::kPool;
  if (std::strcmp(text, "openmp") == 0) return KernelTeams::kOpenMp;
  std::fprintf(stderr, "relax: RELAX_KERNEL_TEAMS=%s is not auto, pool or openmp; using auto\n", text);
  return KernelTeams::kAuto;
}

// -1: not read yet; else a KernelTeams (set, or read from the environment).
std::atomic<int> g_teams{-1};

// libgomp's entry points when teams run on it now, else null.
const OpenMp* openmp_teams() {
  int t = g_teams.load(std::memory_order_relaxed);
  if (t < 0) {
    t = static_cast<int>(environment_teams());
    int unread = -1;
    if (!g_teams.compare_exchange_strong(unread, t, std::memory_order_relaxed)) t = unread;
  }
  return static_cast<KernelTeams>(t) == KernelTeams::kPool ? nullptr : loaded_openmp();
}

// True on a thread while it runs chunks: a parallel_for there runs inline.
thread_local bool t_in_parallel = false;

class ThreadPool;
ThreadPool& the_pool();

struct Job {
  RelaxParallelBodyFn body = nullptr;
  void* ctx = nullptr;
  int64_t begin = 0;
  int64_t end = 0;
  int64_t chunk = 1;   // elements per chunk (the last may be shorter)
  int32_t chunks = 1;  // one per member of the team
  int32_t tickets = 0;  // workers still wanted (guarded by the pool's mutex)
  std::atomic<int32_t> next{0};      // the next chunk to take
  std::atomic<int32_t> status{0};    // the first non-zero chunk result
  std::atomic<int32_t> attached{0};  // workers that took a ticket and have not left
};

class ThreadPool {
 public:
  int32_t run(int64_t begin, int64_t end, int32_t wanted, RelaxParallelBodyFn body, void* ctx) {
    if (end <= begin) return 0;
    const int64_t n = end - begin;
    if (t_in_parallel || wanted == 1 || n < 2 || stopped_.load(std::memory_order_acquire)) {
      return run_inline(begin, end, body, ctx);
    }
    const int32_t cap = static_cast<int32_t>(std::min<int64_t>(wanted > 0 ? wanted : n, n));
    const int32_t granted = claim_kernel_threads(cap);
    if (granted < 2) return run_inline(begin, end, body, ctx);
    if (const OpenMp* omp = openmp_teams(); omp != nullptr) {
      const int32_t status = run_openmp(*omp, begin, end, granted, body, ctx);
      release_kernel_threads(granted);
      return status;
    }
    Job job;
    job.body = body;
    job.ctx = ctx;
    job.begin = begin;
    job.end = end;
    job.chunk = (n + granted - 1) / granted;
    job.chunks = static_cast<int32_t>((n + job.chunk - 1) / job.chunk);
    if (!post(&job, job.chunks - 1)) {
      release_kernel_threads(granted);
      return run_inline(begin, end, body, ctx);
    }
    teams_.fetch_add(1, std::memory_order_relaxed);
    enter_running();
    t_in_parallel = true;
    run_chunks(job, /*worker=*/false, /*first=*/-1);
    t_in_parallel = false;
    leave_running();
    withdraw(&job);
    wait_detached(job);
    release_kernel_threads(granted);
    return job.status.load(std::memory_order_acquire);
  }

  ThreadPoolStats stats() {
    ThreadPoolStats s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      s.workers = static_cast<int32_t>(workers_.size());
    }
    s.running = running_.load();
    s.peak = peak_.load();
    s.teams = teams_.load();
    s.inline_runs = inline_runs_.load();
    s.worker_chunks = worker_chunks_.load();
    s.spins = spins_.load();
    s.blocks = blocks_.load();
    s.late_tickets = late_tickets_.load();
    s.openmp_teams = openmp_teams_.load();
    return s;
  }

  void reset_stats() {
    peak_.store(running_.load());
    teams_.store(0);
    openmp_teams_.store(0);
    inline_runs_.store(0);
    worker_chunks_.store(0);
    spins_.store(0);
    blocks_.store(0);
    late_tickets_.store(0);
  }

  int32_t spinning() const { return spinning_.load(std::memory_order_relaxed); }

  // Stops and joins the workers (at exit); later loops run inline.
  void shutdown() {
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_.store(true, std::memory_order_release);
      workers.swap(workers_);
    }
    work_cv_.notify_all();
    for (std::thread& w : workers) w.join();
  }

 private:
  // One libgomp parallel region of `threads`: member t runs chunks t, t + members, ... (the
  // runtime may give fewer members than asked).
  int32_t run_openmp(const OpenMp& omp, int64_t begin, int64_t end, int32_t threads, RelaxParallelBodyFn body,
                     void* ctx) {
    struct Region {
      const OpenMp* omp;
      RelaxParallelBodyFn body;
      void* ctx;
      int64_t begin, end, chunk;
      int32_t chunks;
      std::atomic<int32_t> status{0};
    } region{&omp, body, ctx, begin, end, 0, 0};
    region.chunk = (end - begin + threads - 1) / threads;
    region.chunks = static_cast<int32_t>((end - begin + region.chunk - 1) / region.chunk);
    openmp_teams_.fetch_add(1, std::memory_order_relaxed);
    omp.parallel(
        [](void* data) {
          auto* r = static_cast<Region*>(data);
          const int members = std::max(r->omp->num_threads(), 1);
          const bool was = t_in_parallel;
          t_in_parallel = true;
          for (int32_t c = r->omp->thread_num(); c < r->chunks; c += members) {
            if (r->status.load(std::memory_order_relaxed) != 0) break;
            const int64_t lo = r->begin + c * r->chunk;
            const int32_t s = call(r->body, r->ctx, lo, std::min(r->end, lo + r->chunk));
            if (s != 0) {
              int32_t none = 0;
              r->status.compare_exchange_strong(none, s, std::memory_order_relaxed);
            }
          }
          t_in_parallel = was;
        },
        &region, static_cast<unsigned>(threads), 0);
    note_openmp_team(threads);  // its members spin a while, as after a oneDNN primitive
    return region.status.load(std::memory_order_relaxed);
  }

  int32_t run_inline(int64_t begin, int64_t end, RelaxParallelBodyFn body, void* ctx) {
    inline_runs_.fetch_add(1, std::memory_order_relaxed);
    const bool was = t_in_parallel;
    t_in_parallel = true;
    const int32_t status = call(body, ctx, begin, end);
    t_in_parallel = was;
    return status;
  }

  static int32_t call(RelaxParallelBodyFn body, void* ctx, int64_t lo, int64_t hi) noexcept {
    try {
      return body(ctx, lo, hi);
    } catch (...) {
      return kParallelBodyThrew;
    }
  }

  // Runs chunk `first` (-1: none), then takes chunks until none is left (or one failed).
  void run_chunks(Job& job, bool worker, int32_t first) {
    for (;;) {
      if (job.status.load(std::memory_order_relaxed) != 0) return;
      const int32_t k = first >= 0 ? first : job.next.fetch_add(1, std::memory_order_relaxed);
      first = -1;
      if (k >= job.chunks) return;
      const int64_t lo = job.begin + k * job.chunk;
      const int64_t hi = std::min(job.end, lo + job.chunk);
      if (worker) worker_chunks_.fetch_add(1, std::memory_order_relaxed);
      const int32_t status = call(job.body, job.ctx, lo, hi);
      if (status != 0) {
        int32_t none = 0;
        job.status.compare_exchange_strong(none, status, std::memory_order_acq_rel);
      }
    }
  }

  void enter_running() {
    const int32_t now = running_.fetch_add(1, std::memory_order_relaxed) + 1;
    int32_t seen = peak_.load(std::memory_order_relaxed);
    while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
  void leave_running() { running_.fetch_sub(1, std::memory_order_relaxed); }

  // Enters `job` with `tickets` tickets, starting workers up to the budget;
  // false when the pool has stopped.
  bool post(Job* job, int32_t tickets) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_.load(std::memory_order_relaxed)) return false;
      const size_t want = static_cast<size_t>(std::max(kernel_thread_budget() - 1, tickets));
      if (workers_.size() < want) start_workers_locked(want);
      job->tickets = tickets;
      queue_.push_back(job);
      pending_.fetch_add(tickets, std::memory_order_release);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) {
      if (tickets == 1) {
        work_cv_.notify_one();
      } else {
        work_cv_.notify_all();
      }
    }
    return true;
  }

  // Takes back the tickets of `job` that no worker took.
  void withdraw(Job* job) {
    std::lock_guard<std::mutex> lock(mu_);
    if (job->tickets == 0) return;
    pending_.fetch_sub(job->tickets, std::memory_order_relaxed);
    job->tickets = 0;
    queue_.erase(std::find(queue_.begin(), queue_.end(), job));
  }

  // Waits until no worker is inside `job`.
  void wait_detached(Job& job) {
    if (job.attached.load(std::memory_order_acquire) == 0) return;
    if (!kernel_threads_contended()) {
      spins_.fetch_add(1, std::memory_order_relaxed);
      for (int i = 0; i < kSpinIterations; ++i) {
        if (job.attached.load(std::memory_order_acquire) == 0) return;
        cpu_relax();
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (job.attached.load(std::memory_order_acquire) == 0) return;
    blocks_.fetch_add(1, std::memory_order_relaxed);
    ++waiting_callers_;
    done_cv_.wait(lock, [&] { return job.attached.load(std::memory_order_acquire) == 0; });
    --waiting_callers_;
  }

  void start_workers_locked(size_t count) {
    if (!exit_hook_registered_) {
      exit_hook_registered_ = true;
      std::atexit([] { the_pool().shutdown(); });
    }
    while (workers_.size() < count) workers_.emplace_back([this] { worker_loop(); });
  }

  // A ticket of the first job in the queue with the chunk it takes (*first), or null when
  // every chunk of that job is taken: the job then leaves the queue with its other tickets,
  // and the worker never touches it again.
  Job* take_ticket_locked(int32_t* first) {
    Job* job = queue_.front();
    const int32_t k = job->next.fetch_add(1, std::memory_order_relaxed);
    if (k >= job->chunks) {
      late_tickets_.fetch_add(1, std::memory_order_relaxed);
      pending_.fetch_sub(job->tickets, std::memory_order_relaxed);
      job->tickets = 0;
      queue_.pop_front();
      return nullptr;
    }
    if (--job->tickets == 0) queue_.pop_front();
    pending_.fetch_sub(1, std::memory_order_relaxed);
    job->attached.fetch_add(1, std::memory_order_relaxed);
    *first = k;
    return job;
  }

  void worker_loop() {
    t_in_parallel = true;
    for (;;) {
      Job* job = nullptr;
      int32_t first = -1;
      if (!kernel_threads_contended() && pending_.load(std::memory_order_acquire) == 0) {
        spins_.fetch_add(1, std::memory_order_relaxed);
        spinning_.fetch_add(1, std::memory_order_relaxed);
        for (int i = 0; i < kSpinIterations && pending_.load(std::memory_order_acquire) == 0 &&
                        !stopped_.load(std::memory_order_relaxed);
             ++i) {
          cpu_relax();
        }
        spinning_.fetch_sub(1, std::memory_order_relaxed);
      }
      {
        std::unique_lock<std::mutex> lock(mu_);
        while (job == nullptr) {
          if (queue_.empty() && !stopped_.load(std::memory_order_relaxed)) {
            blocks_.fetch_add(1, std::memory_order_relaxed);
            sleeping_.fetch_add(1, std::memory_order_release);
            work_cv_.wait(lock, [&] { return !queue_.empty() || stopped_.load(std::memory_order_relaxed); });
            sleeping_.fetch_sub(1, std::memory_order_relaxed);
          }
          if (queue_.empty()) return;  // stopped
          job = take_ticket_locked(&first);
        }
      }
      enter_running();
      run_chunks(*job, /*worker=*/true, first);
      leave_running();
      {
        std::lock_guard<std::mutex> lock(mu_);
        job->attached.fetch_sub(1, std::memory_order_release);  // the last touch of the job
        if (waiting_callers_ > 0) done_cv_.notify_all();
      }
    }
  }

  friend ThreadPool& the_pool();

  std::mutex mu_;
  std::condition_variable work_cv_;  // workers wait here for tickets
  std::condition_variable done_cv_;  // callers wait here for their workers to leave
  std::deque<Job*> queue_;
  std::vector<std::thread> workers_;
  int32_t waiting_callers_ = 0;
  bool exit_hook_registered_ = false;
  std::atomic<bool> stopped_{false};
  std::atomic<int32_t> pending_{0};   // tickets in the queue (read by spinning workers)
  std::atomic<int32_t> sleeping_{0};  // workers waiting on work_cv_
  std::atomic<int32_t> running_{0};
  std::atomic<int32_t> peak_{0};
  std::atomic<int64_t> teams_{0};
  std::atomic<int64_t> openmp_teams_{0};
  std::atomic<int64_t> inline_runs_{0};
  std::atomic<int64_t> worker_chunks_{0};
  std::atomic<int32_t> spinning_{0};  // idle workers spinning on the queue now
  std::atomic<int64_t> spins_{0};
  std::atomic<int64_t> blocks_{0};
  std::atomic<int64_t> late_tickets_{0};
};

// Never destroyed (the workers are joined at exit instead): a caller on another thread may
// still reach the pool while the process exits, and then runs its loop inline.
ThreadPool& the_pool() {
  static ThreadPool* const pool = new ThreadPool();
  return *pool;
}

}  // namespace

int32_t parallel_for(int64_t begin, int64_t end, int32_t wanted, RelaxParallelBodyFn body, void* ctx) {
  return the_pool().run(begin, end, wanted, body, ctx);
}

ThreadPoolStats thread_pool_stats() { return the_pool().stats(); }

KernelTeams kernel_teams() {
  openmp_teams();  // reads the environment once
  return static_cast<KernelTeams>(g_teams.load(std::memory_order_relaxed));
}
void set_kernel_teams(std::optional<KernelTeams> teams) {
  g_teams.store(teams ? static_cast<int>(*teams) : static_cast<int>(environment_teams()), std::memory_order_relaxed);
}
int32_t thread_pool_spinning_workers() { return the_pool().spinning(); }
void reset_thread_pool_stats() { the_pool().reset_stats(); }

}  // namespace relax::runtime
