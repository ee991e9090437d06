// The function objects of "cudnn.conv2d{...}[+bias][+relu]": cuDNN's legacy convolution API
// (still in cuDNN 9), data NCHW, weight OIHW, float32 or float16.
//
// A call: check the arguments (cuda_library.h) and the shapes (the output's is computed from
// the window and compared), make the device's context current and get the calling thread's
// stream (stream_for), find or make the plan for these shapes (the tensor, filter and
// convolution descriptors, and the algorithm: the first of cudnnGetConvolutionForwardAlgorithm_v7's
// ranking that succeeds within the workspace the call got), then enqueue
// cudnnConvolutionForward, cudnnAddTensor for the bias and cudnnActivationForward (in place)
// for relu, all on that stream.
//
// Precision: float32 convolves with CUDNN_FMA_MATH (float32 arithmetic, no TF32, as the
// generated kernels and the cuBLAS functions compute); float16 with tensor-op math and a
// float32 accumulator (CUDNN_DATA_FLOAT compute).
//
// Not handled (an Unimplemented error naming the window): padding that differs between
// the two sides of a dim (the legacy descriptor pads both alike; the dispatch rule does not
// emit it), dims beyond int.
#if defined(RELAX_WITH_CUDA)

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cuda_context.h"
#include "cuda_library.h"
#include "cuda_library_functions.h"
#include "cudnn_api.h"

namespace relax::runtime::cuda {
namespace {

constexpr size_t kPlanCacheCapacity = 64;

const std::vector<DataType>& conv_dtypes() {
  static const std::vector<DataType> dtypes = {DataType::float32(), DataType::float16()};
  return dtypes;
}

// Descriptors of one set of shapes and the algorithm chosen for them.
struct ConvPlan {
  const CudnnApi* api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t algo_workspace = 0;

  ~ConvPlan() {
    if (api == nullptr) return;
    for (cudnnTensorDescriptor_t t : {x, y, bias}) {
      if (t != nullptr) api->cudnnDestroyTensorDescriptor(t);
    }
    if (w != nullptr) api->cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) api->cudnnDestroyConvolutionDescriptor(conv);
    if (relu != nullptr) api->cudnnDestroyActivationDescriptor(relu);
  }
};

// The output's dims of a window, numpy-style floor division (negative when it does not fit).
int64_t output_extent(int64_t in, int64_t before, int64_t after, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t span = in + before + after - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

class CudnnConv2d {
 public:
  explicit CudnnConv2d(LibrarySpec spec) : spec_(std::move(spec)) {}

  absl::Status call(const std::vector<Value>& args) {
    absl::StatusOr<CallTensors> call = check_call(spec_, args, conv_dtypes());
    if (!call.ok()) return call.status();
    absl::Status shapes = check_shapes(*call);
    if (!shapes.ok()) return shapes;
    if (call->output->numel() == 0) return absl::OkStatus();
    absl::StatusOr<CUstream> stream = stream_for(call->device.index);
    if (!stream.ok()) return stream.status();
    absl::StatusOr<const CudnnApi*> api = cudnn();
    if (!api.ok()) return api.status();
    absl::StatusOr<cudnnHandle_t> handle = cudnn_handle(call->device.index);
    if (!handle.ok()) return handle.status();
    if (absl::Status s = check_cudnn((*api)->cudnnSetStream(*handle, *stream), "cudnnSetStream"); !s.ok()) {
      return wrap(s);
    }
    const size_t workspace_bytes = call->workspace == nullptr ? 0 : call->workspace->nbytes();
    std::vector<int64_t> key = {static_cast<int64_t>(call->dtype.bits), call->device.index,
                                static_cast<int64_t>(workspace_bytes)};
    for (const Tensor* t : call->inputs) key.insert(key.end(), t->shape().begin(), t->shape().end());
    std::shared_ptr<ConvPlan> plan = plans_.find(key);
    if (plan == nullptr) {
      absl::StatusOr<std::shared_ptr<ConvPlan>> made = make_plan(**api, *handle, *call, workspace_bytes);
      if (!made.ok()) return made.status();
      plan = plans_.insert(key, *std::move(made));
    }
    const CudnnApi& dnn = **api;
    const float one = 1.0f, zero = 0.0f;
    absl::Status s = check_cudnn(
        dnn.cudnnConvolutionForward(*handle, &one, plan->x, call->inputs[0]->data(), plan->w, call->inputs[1]->data(),
                                    plan->conv, plan->algo, plan->algo_workspace == 0 ? nullptr : call->workspace->data(),
                                    plan->algo_workspace, &zero, plan->y, call->output->data()),
        "cudnnConvolutionForward");
    if (s.ok() && spec_.bias) {
      s = check_cudnn(dnn.cudnnAddTensor(*handle, &one, plan->bias, call->inputs[2]->data(), &one, plan->y,
                                         call->output->data()),
                      "cudnnAddTensor (the bias)");
    }
    if (s.ok() && spec_.activation == Activation::kRelu) {
      s = check_cudnn(dnn.cudnnActivationForward(*handle, plan->relu, &one, plan->y, call->output->data(), &zero,
                                                 plan->y, call->output->data()),
                      "cudnnActivationForward (relu)");
    }
    return wrap(s);
  }

 private:
  absl::Status wrap(const absl::Status& s) const {
    return s.ok() ? s : absl::Status(s.code(), absl::StrCat(spec_.name, ": ", s.message()));
  }

  absl::Status check_shapes(const CallTensors& call) const {
    const std::vector<int64_t>& x = call.inputs[0]->shape();
    const std::vector<int64_t>& w = call.inputs[1]->shape();
    const Conv2dAttrs& c = spec_.conv;
    if (x.size() != 4) return argument_error(spec_, 0, absl::StrCat("expected NCHW (rank 4), got ", dims_text(x)));
    if (w.size() != 4) return argument_error(spec_, 1, absl::StrCat("expected OIHW (rank 4), got ", dims_text(w)));
    if (x[1] % c.groups != 0 || w[0] % c.groups != 0 || w[1] * c.groups != x[1]) {
      return argument_error(spec_, 1,
                            absl::StrCat("expected [O, ", x[1] / std::max<int64_t>(c.groups, 1), ", kh, kw] with O a "
                                         "multiple of groups=", c.groups, " for data ", dims_text(x), ", got ",
                                         dims_text(w)));
    }
    const std::vector<int64_t> expected = {
        x[0], w[0], output_extent(x[2], c.padding_before[0], c.padding_after[0], w[2], c.strides[0], c.dilation[0]),
        output_extent(x[3], c.padding_before[1], c.padding_after[1], w[3], c.strides[1], c.dilation[1])};
    if (call.output->shape() != expected) {
      return argument_error(spec_, spec_.num_inputs(),
                            absl::StrCat("expected ", dims_text(expected), ", got ", dims_text(call.output->shape())));
    }
    if (spec_.bias && call.inputs[2]->shape() != std::vector<int64_t>{w[0]}) {
      return argument_error(spec_, 2, absl::StrCat("expected [", w[0], "], got ", dims_text(call.inputs[2]->shape())));
    }
    if (c.padding_before != c.padding_after) {
      return absl::UnimplementedError(absl::StrCat(spec_.name, ": cuDNN pads both sides of a dim alike, got padding ",
                                                   c.padding_before[0], ",", c.padding_before[1], " before and ",
                                                   c.padding_after[0], ",", c.padding_after[1], " after"));
    }
    for (const Tensor* t : {call.inputs[0], call.inputs[1], call.output}) {
      for (int64_t d : t->shape()) {
        if (d > std::numeric_limits<int>::max()) {
          return absl::UnimplementedError(absl::StrCat(spec_.name, ": dim ", d, " of ", dims_text(t->shape()),
                                                       " is beyond cuDNN's int dims"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<ConvPlan>> make_plan(const CudnnApi& dnn, cudnnHandle_t handle, const CallTensors& call,
                                                      size_t workspace_bytes) const {
    auto plan = std::make_shared<ConvPlan>();
    plan->api = &dnn;
    const cudnnDataType_t type = call.dtype == DataType::float16() ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const std::vector<int64_t>& x = call.inputs[0]->shape();
    const std::vector<int64_t>& w = call.inputs[1]->shape();
    const std::vector<int64_t>& y = call.output->shape();
    const Conv2dAttrs& c = spec_.conv;
    auto i = [](int64_t v) { return static_cast<int>(v); };
    absl::Status s = check_cudnn(dnn.cudnnCreateTensorDescriptor(&plan->x), "cudnnCreateTensorDescriptor");
    if (s.ok()) s = check_cudnn(dnn.cudnnCreateTensorDescriptor(&plan->y), "cudnnCreateTensorDescriptor");
    if (s.ok()) s = check_cudnn(dnn.cudnnCreateFilterDescriptor(&plan->w), "cudnnCreateFilterDescriptor");
    if (s.ok()) s = check_cudnn(dnn.cudnnCreateConvolutionDescriptor(&plan->conv), "cudnnCreateConvolutionDescriptor");
    if (s.ok()) {
      s = check_cudnn(dnn.cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NCHW, type, i(x[0]), i(x[1]), i(x[2]), i(x[3])),
                      "the data's descriptor");
    }
    if (s.ok()) {
      s = check_cudnn(dnn.cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NCHW, type, i(y[0]), i(y[1]), i(y[2]), i(y[3])),
                      "the output's descriptor");
    }
    if (s.ok()) {
      s = check_cudnn(dnn.cudnnSetFilter4dDescriptor(plan->w, type, CUDNN_TENSOR_NCHW, i(w[0]), i(w[1]), i(w[2]), i(w[3])),
                      "the weight's descriptor");
    }
    if (s.ok()) {
      s = check_cudnn(dnn.cudnnSetConvolution2dDescriptor(plan->conv, i(c.padding_before[0]), i(c.padding_before[1]),
                                                          i(c.strides[0]), i(c.strides[1]), i(c.dilation[0]),
                                                          i(c.dilation[1]), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                      "the convolution's descriptor");
    }
    if (s.ok()) s = check_cudnn(dnn.cudnnSetConvolutionGroupCount(plan->conv, i(c.groups)), "the group count");
    const cudnnMathType_t math = type == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    if (s.ok()) s = check_cudnn(dnn.cudnnSetConvolutionMathType(plan->conv, math), "the math type");
    if (s.ok() && spec_.bias) {
      s = check_cudnn(dnn.cudnnCreateTensorDescriptor(&plan->bias), "cudnnCreateTensorDescriptor");
      if (s.ok()) {
        s = check_cudnn(dnn.cudnnSetTensor4dDescriptor(plan->bias, CUDNN_TENSOR_NCHW, type, 1, i(w[0]), 1, 1),
                        "the bias's descriptor");
      }
    }
    if (s.ok() && spec_.activation == Activation::kRelu) {
      s = check_cudnn(dnn.cudnnCreateActivationDescriptor(&plan->relu), "cudnnCreateActivationDescriptor");
      if (s.ok()) {
        s = check_cudnn(dnn.cudnnSetActivationDescriptor(plan->relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
                        "the relu's descriptor");
      }
    }
    if (!s.ok()) return wrap(s);

    // The algorithm: the heuristic's best that runs within the workspace.
    int max_count = 0;
    s = check_cudnn(dnn.cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count), "the algorithm count");
    if (!s.ok()) return wrap(s);
    std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked(static_cast<size_t>(std::max(max_count, 1)));
    int returned = 0;
    s = check_cudnn(dnn.cudnnGetConvolutionForwardAlgorithm_v7(handle, plan->x, plan->w, plan->conv, plan->y,
                                                               static_cast<int>(ranked.size()), &returned, ranked.data()),
                    "cudnnGetConvolutionForwardAlgorithm_v7");
    if (!s.ok()) return wrap(s);
    for (int r = 0; r < returned; ++r) {
      const cudnnConvolutionFwdAlgoPerf_t& perf = ranked[static_cast<size_t>(r)];
      if (perf.status != CUDNN_STATUS_SUCCESS || perf.memory > workspace_bytes) continue;
      // float32 stays float32 arithmetic: no algorithm of tensor-op (TF32) math.
      const bool tensor_op =
          perf.mathType == CUDNN_TENSOR_OP_MATH || perf.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
      if (math == CUDNN_FMA_MATH && tensor_op) continue;
      if (!check_cudnn(dnn.cudnnSetConvolutionMathType(plan->conv, math == CUDNN_FMA_MATH ? math : perf.mathType),
                       "the math type")
               .ok()) {
        continue;
      }
      size_t needed = 0;
      if (!check_cudnn(dnn.cudnnGetConvolutionForwardWorkspaceSize(handle, plan->x, plan->w, plan->conv, plan->y,
                                                                   perf.algo, &needed),
                       "cudnnGetConvolutionForwardWorkspaceSize")
               .ok() ||
          needed > workspace_bytes) {
        continue;
      }
      plan->algo = perf.algo;
      plan->algo_workspace = needed;
      return plan;
    }
    return absl::UnimplementedError(absl::StrCat(spec_.name, ": cuDNN has no algorithm for data ", dims_text(x),
                                                 " weight ", dims_text(w), " ", call.dtype.to_string(), " within ",
                                                 workspace_bytes, " workspace bytes"));
  }

  const LibrarySpec spec_;
  mutable LruCache<ConvPlan> plans_{kPlanCacheCapacity};
};

}  // namespace

absl::StatusOr<LibraryFunction> resolve_cudnn_function(const std::string& name) {
  absl::StatusOr<LibrarySpec> spec = parse_library_name(name);
  if (!spec.ok()) return spec.status();
  if (!spec->is_cudnn()) {
    return absl::InvalidArgumentError(absl::StrCat("library function name ", name, ": not a cuDNN function"));
  }
  auto fn = std::make_shared<CudnnConv2d>(*std::move(spec));
  return LibraryFunction([fn](const std::vector<Value>& args) { return fn->call(args); });
}

}  // namespace relax::runtime::cuda

#endif  // RELAX_WITH_CUDA
