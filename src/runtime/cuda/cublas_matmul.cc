// The function objects of "cublas.matmul", "cublas.linear" (cuBLASLt, with the BIAS / RELU /
// GELU epilogues) and "cublas.batch_matmul" (cuBLAS's strided batched GEMM).
//
// Row-major through column-major BLAS: a row-major [M, N] result is the column-major
// [N, M] matrix C^T = B^T A^T, and a row-major operand read column-major is its transpose.
// So every call passes our b (or linear's weight) as BLAS's A and our a (x) as BLAS's B with
// m = N, n = M: matmul's b [K, N] is column-major [N, K] with ld N (no transpose); linear's
// weight [N, K] is column-major [K, N] with ld K, transposed; a [M, K] is column-major
// [K, M] with ld K; the result is column-major [N, M] with ld N. The epilogue's bias vector
// runs along the column-major rows of D, i.e. along N: our bias [N] as it is.
//
// Batches (numpy broadcasting over dims[:-2]): b without batches (all 1) -> a's batches
// stack into M (a is compact); a without batches -> a batch stride of 0 for a; equal batch
// dims -> both strided. cublas.batch_matmul takes equal batch dims only.
//
// A call: check the arguments (cuda_library.h), work out M, N, K and the batching, make the
// device's context current and get the calling thread's stream (stream_for), then for
// cuBLASLt find or make the plan for this shape (descriptors, layouts and the algorithm that
// cublasLtMatmulAlgoGetHeuristic picks within the workspace and for the operands' and the
// bias's alignments; a batch stride of 0, cuBLASLt's default, broadcasts a) and enqueue cublasLtMatmul; for cuBLAS set the stream and the workspace and
// enqueue cublasGemmStridedBatchedEx_64. Nothing waits for the device: later work on the
// same stream runs after it. Accumulation is float32 for every dtype (CUBLAS_COMPUTE_32F).
#if defined(RELAX_WITH_CUDA)

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cublas_api.h"
#include "cuda_context.h"
#include "cuda_library.h"
#include "cuda_library_functions.h"

namespace relax::runtime::cuda {
namespace {

constexpr size_t kPlanCacheCapacity = 64;
constexpr uintptr_t kWorkspaceAlignment = 256;  // cublasSetWorkspace's requirement

const std::vector<DataType>& matmul_dtypes() {
  static const std::vector<DataType> dtypes = {DataType::float32(), DataType::float16(), DataType::bfloat16()};
  return dtypes;
}

cudaDataType_t cuda_type(DataType dtype) {
  if (dtype == DataType::float16()) return CUDA_R_16F;
  if (dtype == DataType::bfloat16()) return CUDA_R_16BF;
  return CUDA_R_32F;
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// One product's geometry, in our row-major terms.
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  bool a_broadcast = false;  // a's batch stride is 0
  bool transpose_b = false;  // linear: the weight is [N, K]
};

// The numpy broadcast of two batch shapes (right-aligned), or nullopt when they clash.
std::optional<std::vector<int64_t>> broadcast_batch(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// M, N, K and the batching of a call, checked against the output's and the bias's shapes.
absl::StatusOr<Gemm> gemm_of(const LibrarySpec& spec, const CallTensors& call) {
  const std::vector<int64_t>& a = call.inputs[0]->shape();
  const std::vector<int64_t>& b = call.inputs[1]->shape();
  const size_t out_index = spec.num_inputs();
  Gemm g;
  std::vector<int64_t> expected;
  if (spec.kind == LibraryKind::kLinear) {
    if (a.empty()) return argument_error(spec, 0, "expected a tensor of rank >= 1, got a scalar");
    if (b.size() != 2) return argument_error(spec, 1, absl::StrCat("expected [N, K], got ", dims_text(b)));
    g.k = a.back();
    g.n = b[0];
    g.m = product(a, 0, a.size() - 1);
    g.transpose_b = true;
    if (b[1] != g.k) {
      return argument_error(spec, 1, absl::StrCat("expected [N, ", g.k, "] (K of ", dims_text(a), "), got ", dims_text(b)));
    }
    expected.assign(a.begin(), a.end() - 1);
    expected.push_back(g.n);
  } else {
    if (a.size() < 2) return argument_error(spec, 0, absl::StrCat("expected [..., M, K], got ", dims_text(a)));
    if (b.size() < 2) return argument_error(spec, 1, absl::StrCat("expected [..., K, N], got ", dims_text(b)));
    g.m = a[a.size() - 2];
    g.k = a.back();
    g.n = b.back();
    if (b[b.size() - 2] != g.k) {
      return argument_error(spec, 1,
                            absl::StrCat("expected [..., ", g.k, ", N] (K of ", dims_text(a), "), got ", dims_text(b)));
    }
    const std::vector<int64_t> a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
    const int64_t a_count = product(a_batch, 0, a_batch.size()), b_count = product(b_batch, 0, b_batch.size());
    if (spec.kind == LibraryKind::kBatchMatmul && a_batch != b_batch) {
      return argument_error(spec, 1, absl::StrCat("expected the batch dims of ", dims_text(a), ", got ", dims_text(b)));
    }
    std::optional<std::vector<int64_t>> batch = broadcast_batch(a_batch, b_batch);
    if (!batch) {
      return argument_error(spec, 1, absl::StrCat("batch dims of ", dims_text(b), " do not broadcast with those of ",
                                                  dims_text(a)));
    }
    if (b_count == 1) {
      g.m *= a_count;  // a's batches stack into rows
    } else if (a_count == 1) {
      g.batch = b_count;
      g.a_broadcast = true;
    } else if (a_batch == b_batch) {
      g.batch = a_count;
    } else {
      return absl::UnimplementedError(absl::StrCat(spec.name, ": batch dims ", dims_text(a_batch), " and ",
                                                   dims_text(b_batch), " broadcast in both operands"));
    }
    expected = *batch;
    expected.push_back(a[a.size() - 2]);
    expected.push_back(g.n);
  }
  if (call.output->shape() != expected) {
    return argument_error(spec, out_index,
                          absl::StrCat("expected ", dims_text(expected), ", got ", dims_text(call.output->shape())));
  }
  if (spec.bias && call.inputs[2]->shape() != std::vector<int64_t>{g.n}) {
    return argument_error(spec, 2, absl::StrCat("expected [", g.n, "], got ", dims_text(call.inputs[2]->shape())));
  }
  return g;
}

// The part of the workspace a library may use: from its first 256-byte boundary.
std::pair<void*, size_t> usable_workspace(const CallTensors& call) {
  if (call.workspace == nullptr) return {nullptr, 0};
  const auto begin = reinterpret_cast<uintptr_t>(call.workspace->data());
  const uintptr_t aligned = (begin + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  const size_t skipped = aligned - begin;
  if (call.workspace->nbytes() <= skipped) return {nullptr, 0};
  return {reinterpret_cast<void*>(aligned), call.workspace->nbytes() - skipped};
}

// ---------------------------------------------------------------------------
// cuBLASLt

cublasLtEpilogue_t epilogue_of(const LibrarySpec& spec) {
  switch (spec.activation) {
    case Activation::kRelu: return spec.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::kGeluTanh: return spec.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::kNone: break;
  }
  return spec.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

// The descriptors of one shape and the algorithm chosen for them.
struct LtPlan {
  const CublasLtApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr;  // BLAS's A: our b / weight
  cublasLtMatrixLayout_t b_layout = nullptr;  // BLAS's B: our a / x
  cublasLtMatrixLayout_t d_layout = nullptr;  // C and D: our output
  cublasLtMatmulAlgo_t algo{};
  std::mutex mu;  // the bias pointer is set on the shared descriptor per call

  ~LtPlan() {
    if (api == nullptr) return;
    if (d_layout != nullptr) api->cublasLtMatrixLayoutDestroy(d_layout);
    if (b_layout != nullptr) api->cublasLtMatrixLayoutDestroy(b_layout);
    if (a_layout != nullptr) api->cublasLtMatrixLayoutDestroy(a_layout);
    if (desc != nullptr) api->cublasLtMatmulDescDestroy(desc);
  }
};

template <typename T>
absl::Status set_layout(const CublasLtApi& api, cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                        T value, const char* what) {
  return check_cublas(api.cublasLtMatrixLayoutSetAttribute(layout, attr, &value, sizeof value), what);
}

absl::StatusOr<std::shared_ptr<LtPlan>> make_lt_plan(const LibrarySpec& spec, const Gemm& g, DataType dtype,
                                                     cublasLtHandle_t handle, const CublasLtApi& api,
                                                     const std::array<int64_t, 4>& alignments, const void* bias,
                                                     size_t workspace) {
  auto plan = std::make_shared<LtPlan>();
  plan->api = &api;
  const cudaDataType_t type = cuda_type(dtype);
  auto fail = [&](absl::Status s) { return absl::Status(s.code(), absl::StrCat(spec.name, ": ", s.message())); };
  absl::Status s = check_cublas(api.cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                                "cublasLtMatmulDescCreate");
  if (!s.ok()) return fail(s);
  const int32_t transa = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  s = check_cublas(api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa),
                   "setting TRANSA");
  if (!s.ok()) return fail(s);
  const uint32_t epilogue = epilogue_of(spec);
  s = check_cublas(
      api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
      "setting the epilogue");
  if (!s.ok()) return fail(s);
  // The heuristic reads the bias pointer's alignment (it does not dereference it).
  if (bias != nullptr) {
    s = check_cublas(
        api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
        "setting the bias pointer");
    if (!s.ok()) return fail(s);
  }

  // BLAS's A: our b, column-major [N, K] ld N, or linear's weight: [K, N] ld K, transposed.
  const uint64_t a_rows = static_cast<uint64_t>(g.transpose_b ? g.k : g.n);
  const uint64_t a_cols = static_cast<uint64_t>(g.transpose_b ? g.n : g.k);
  struct LayoutSpec {
    cublasLtMatrixLayout_t* layout;
    uint64_t rows, cols;
    int64_t stride;
  };
  const LayoutSpec layouts[] = {
      {&plan->a_layout, a_rows, a_cols, g.k * g.n},
      {&plan->b_layout, static_cast<uint64_t>(g.k), static_cast<uint64_t>(g.m), g.a_broadcast ? 0 : g.m * g.k},
      {&plan->d_layout, static_cast<uint64_t>(g.n), static_cast<uint64_t>(g.m), g.m * g.n},
  };
  for (const LayoutSpec& l : layouts) {
    s = check_cublas(api.cublasLtMatrixLayoutCreate(l.layout, type, l.rows, l.cols, static_cast<int64_t>(l.rows)),
                     "cublasLtMatrixLayoutCreate");
    if (s.ok() && g.batch > 1) {
      s = set_layout(api, *l.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(g.batch),
                     "setting the batch count");
    }
    if (s.ok() && g.batch > 1) {
      s = set_layout(api, *l.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, l.stride, "setting the batch stride");
    }
    if (!s.ok()) return fail(s);
  }

  // The algorithm: the heuristic's first choice within the workspace and the alignments.
  cublasLtMatmulPreference_t preference = nullptr;
  s = check_cublas(api.cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  if (!s.ok()) return fail(s);
  const uint64_t max_workspace = workspace;
  const cublasLtMatmulPreferenceAttributes_t alignment_attrs[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  s = check_cublas(api.cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &max_workspace, sizeof max_workspace),
                   "setting the workspace preference");
  for (size_t i = 0; i < 4 && s.ok(); ++i) {
    const uint32_t alignment = static_cast<uint32_t>(alignments[i]);
    s = check_cublas(
        api.cublasLtMatmulPreferenceSetAttribute(preference, alignment_attrs[i], &alignment, sizeof alignment),
        "setting the alignment preference");
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s.ok()) {
    s = check_cublas(api.cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->a_layout, plan->b_layout,
                                                        plan->d_layout, plan->d_layout, preference, 1, &result, &found),
                     "cublasLtMatmulAlgoGetHeuristic");
  }
  api.cublasLtMatmulPreferenceDestroy(preference);
  if (!s.ok()) return fail(s);
  if (found == 0) {
    return absl::UnimplementedError(absl::StrCat(spec.name, ": cuBLASLt has no algorithm for M=", g.m, " N=", g.n,
                                                 " K=", g.k, " batch=", g.batch, " ", dtype.to_string(), " within ",
                                                 workspace, " workspace bytes"));
  }
  plan->algo = result.algo;
  return plan;
}

class LtMatmul {
 public:
  explicit LtMatmul(LibrarySpec spec) : spec_(std::move(spec)) {}

  absl::Status call(const std::vector<Value>& args) {
    absl::StatusOr<CallTensors> call = check_call(spec_, args, matmul_dtypes());
    if (!call.ok()) return call.status();
    absl::StatusOr<Gemm> g = gemm_of(spec_, *call);
    if (!g.ok()) return g.status();
    if (g->m == 0 || g->n == 0 || g->batch == 0) return absl::OkStatus();
    // cuBLASLt takes rows, columns and batch counts that fit in int32.
    for (int64_t extent : {g->m, g->n, g->k, g->batch}) {
      if (extent > std::numeric_limits<int32_t>::max()) {
        return absl::UnimplementedError(absl::StrCat(spec_.name, ": M=", g->m, " N=", g->n, " K=", g->k, " batch=",
                                                     g->batch, " is beyond cuBLASLt's int32 extents"));
      }
    }
    absl::StatusOr<CUstream> stream = stream_for(call->device.index);
    if (!stream.ok()) return stream.status();
    absl::StatusOr<const CublasLtApi*> api = cublaslt();
    if (!api.ok()) return api.status();
    absl::StatusOr<cublasLtHandle_t> handle = cublaslt_handle(call->device.index);
    if (!handle.ok()) return handle.status();

    const void* a = call->inputs[0]->data();
    const void* b = call->inputs[1]->data();
    const void* bias = spec_.bias ? call->inputs[2]->data() : nullptr;
    void* out = call->output->data();
    const auto [workspace, workspace_bytes] = usable_workspace(*call);
    // BLAS's A is our b, its B our a; C and D are the output.
    const std::array<int64_t, 4> alignments = {pointer_alignment(b), pointer_alignment(a), pointer_alignment(out),
                                               pointer_alignment(out)};
    const std::vector<int64_t> key = {static_cast<int64_t>(call->dtype.code), call->dtype.bits, call->device.index,
                                      g->m, g->n, g->k, g->batch, g->a_broadcast, alignments[0], alignments[1],
                                      alignments[2], bias == nullptr ? 0 : pointer_alignment(bias),
                                      static_cast<int64_t>(workspace_bytes)};
    std::shared_ptr<LtPlan> plan = plans_.find(key);
    if (plan == nullptr) {
      absl::StatusOr<std::shared_ptr<LtPlan>> made =
          make_lt_plan(spec_, *g, call->dtype, *handle, **api, alignments, bias, workspace_bytes);
      if (!made.ok()) return made.status();
      plan = plans_.insert(key, *std::move(made));
    }
    const float alpha = 1.0f, beta = 0.0f;
    std::lock_guard<std::mutex> lock(plan->mu);
    if (bias != nullptr) {
      absl::Status s = check_cublas((*api)->cublasLtMatmulDescSetAttribute(
                                        plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                                    "setting the bias pointer");
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat(spec_.name, ": ", s.message()));
    }
    absl::Status s = check_cublas(
        (*api)->cublasLtMatmul(*handle, plan->desc, &alpha, b, plan->a_layout, a, plan->b_layout, &beta, out,
                               plan->d_layout, out, plan->d_layout, &plan->algo, workspace, workspace_bytes, *stream),
        "cublasLtMatmul");
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(spec_.name, ": ", s.message()));
    return absl::OkStatus();
  }

 private:
  const LibrarySpec spec_;
  LruCache<LtPlan> plans_{kPlanCacheCapacity};
};

// ---------------------------------------------------------------------------
// cuBLAS strided batched GEMM

absl::Status batch_matmul(const LibrarySpec& spec, const std::vector<Value>& args) {
  absl::StatusOr<CallTensors> call = check_call(spec, args, matmul_dtypes());
  if (!call.ok()) return call.status();
  absl::StatusOr<Gemm> g = gemm_of(spec, *call);
  if (!g.ok()) return g.status();
  if (g->m == 0 || g->n == 0 || g->batch == 0) return absl::OkStatus();
  absl::StatusOr<CUstream> stream = stream_for(call->device.index);
  if (!stream.ok()) return stream.status();
  absl::StatusOr<const CublasApi*> api = cublas();
  if (!api.ok()) return api.status();
  absl::StatusOr<cublasHandle_t> handle = cublas_handle(call->device.index);
  if (!handle.ok()) return handle.status();
  const CublasApi& blas = **api;
  auto wrap = [&](absl::Status s) {
    return s.ok() ? s : absl::Status(s.code(), absl::StrCat(spec.name, ": ", s.message()));
  };
  const auto [workspace, workspace_bytes] = usable_workspace(*call);
  absl::Status s = check_cublas(blas.cublasSetStream_v2(*handle, *stream), "cublasSetStream");
  if (s.ok()) s = check_cublas(blas.cublasSetWorkspace_v2(*handle, workspace, workspace_bytes), "cublasSetWorkspace");
  if (!s.ok()) return wrap(s);
  const cudaDataType_t type = cuda_type(call->dtype);
  const float alpha = 1.0f, beta = 0.0f;
  // BLAS's A: our b (column-major [N, K], ld N); B: our a ([K, M], ld K); C: [N, M], ld N.
  return wrap(check_cublas(
      blas.cublasGemmStridedBatchedEx_64(*handle, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->m, g->k, &alpha,
                                         call->inputs[1]->data(), type, g->n, g->k * g->n, call->inputs[0]->data(),
                                         type, g->k, g->a_broadcast ? 0 : g->m * g->k, &beta, call->output->data(),
                                         type, g->n, g->m * g->n, g->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx"));
}

}  // namespace

absl::StatusOr<LibraryFunction> resolve_cublas_function(const std::string& name) {
  absl::StatusOr<LibrarySpec> spec = parse_library_name(name);
  if (!spec.ok()) return spec.status();
  if (spec->is_cudnn()) {
    return absl::InvalidArgumentError(absl::StrCat("library function name ", name, ": not a cuBLAS function"));
  }
  if (spec->kind == LibraryKind::kBatchMatmul) {
    return LibraryFunction([spec = *std::move(spec)](const std::vector<Value>& args) { return batch_matmul(spec, args); });
  }
  auto fn = std::make_shared<LtMatmul>(*std::move(spec));
  return LibraryFunction([fn](const std::vector<Value>& args) { return fn->call(args); });
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
