// The engine, the streams and the counters of oneDNN's library functions (onednn_common.h).
#ifdef RELAX_WITH_ONEDNN

#include "onednn_common.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl_config.h>

#include <algorithm>

#include "relax/runtime/thread_budget.h"
#include "threads/thread_internal.h"

namespace relax::runtime::onednn {
namespace {

// omp_set_num_threads / omp_get_max_threads of the OpenMP runtime oneDNN itself runs on,
// found through oneDNN's own library (dlsym on its handle searches its dependencies), so
// relax links no OpenMP runtime of its own and cannot pick a different one. Null when oneDNN
// is not built on OpenMP, or its runtime cannot be found (oneDNN then runs as it pleases).
struct OmpApi {
  void (*set_num_threads)(int) = nullptr;
  int (*get_max_threads)() = nullptr;
};

const OmpApi& omp_api() {
  static const OmpApi api = [] {
    OmpApi a;
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&dnnl_primitive_execute), &info) == 0 || info.dli_fname == nullptr) {
      return a;
    }
    // Kept open: oneDNN stays loaded as long as this runtime anyway.
    void* handle = ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return a;
    a.set_num_threads = reinterpret_cast<void (*)(int)>(::dlsym(handle, "omp_set_num_threads"));
    a.get_max_threads = reinterpret_cast<int (*)()>(::dlsym(handle, "omp_get_max_threads"));
    if (a.set_num_threads == nullptr || a.get_max_threads == nullptr) a = OmpApi{};
#endif
    return a;
  }();
  return api;
}

}  // namespace

OmpThreads::OmpThreads(Claim, int32_t wanted) : threads_(claim_kernel_threads(wanted)), claimed_(true) {
  apply();
}

OmpThreads::OmpThreads(int32_t threads) : threads_(std::max<int32_t>(threads, 1)) { apply(); }

void OmpThreads::apply() {
  const OmpApi& omp = omp_api();
  if (omp.set_num_threads == nullptr) return;
  previous_ = omp.get_max_threads();
  if (previous_ != threads_) omp.set_num_threads(threads_);
}

OmpThreads::~OmpThreads() {
  const OmpApi& omp = omp_api();
  if (omp.set_num_threads != nullptr && previous_ > 0 && previous_ != threads_) omp.set_num_threads(previous_);
  if (claimed_) {
    // libgomp's idle team members spin on after the call: the budget's load sample counts them
    // as ours for a while, not as another process's.
    note_openmp_team(threads_);
    release_kernel_threads(threads_);
  }
}

const dnnl::engine& cpu_engine() {
  static const dnnl::engine* const engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

Counters& counters() {
  static Counters* const c = new Counters();
  return *c;
}

std::optional<dnnl::memory::data_type> dnnl_type(DataType dtype) {
  if (dtype == DataType::float32()) return dnnl::memory::data_type::f32;
  if (dtype == DataType::bfloat16()) return dnnl::memory::data_type::bf16;
  return std::nullopt;
}

dnnl::memory::desc plain_md(const std::vector<int64_t>& dims, DataType dtype) {
  dnnl::memory::dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(dims[i], 1);
  }
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), *dnnl_type(dtype),
                            strides);
}

}  // namespace relax::runtime::onednn

#endif  // RELAX_WITH_ONEDNN
