// The engine, the streams and the counters of oneDNN's library functions (onednn_common.h).
#ifdef RELAX_WITH_ONEDNN

#include "onednn_common.h"

#include <algorithm>

namespace relax::runtime::onednn {

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
