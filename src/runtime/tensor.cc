// Tensor storage: aligned host allocation, borrowed views, and descriptions.
#include "relax/runtime/tensor.h"

#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace relax::runtime {

namespace {
constexpr size_t kAlignment = 64;

void free_aligned(void* p) { std::free(p); }
}  // namespace

struct Tensor::State {
  std::shared_ptr<void> storage;  // owns the bytes when the tensor owns its storage
  void* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DataType dtype;
  Device device;
  bool owned = false;
};

absl::StatusOr<Tensor> Tensor::empty(std::vector<int64_t> shape, DataType dtype, Device device) {
  if (device.type != Device::Type::kCPU) {
    return absl::UnimplementedError(
        absl::StrCat("Tensor::empty: allocation on ", device.to_string(), " is not supported"));
  }
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tensor::empty: dim ", i, " is negative (", shape[i], ")"));
    }
    if (__builtin_mul_overflow(numel, shape[i], &numel)) {
      return absl::InvalidArgumentError("Tensor::empty: element count overflows int64");
    }
  }
  const size_t element = (static_cast<size_t>(dtype.bits) * dtype.lanes + 7) / 8;
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), element, &bytes)) {
    return absl::InvalidArgumentError("Tensor::empty: byte size overflows");
  }
  // aligned_alloc needs a multiple of the alignment; never ask for zero bytes.
  const size_t rounded = ((bytes + kAlignment - 1) / kAlignment) * kAlignment + (bytes == 0 ? kAlignment : 0);
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("Tensor::empty: cannot allocate ", bytes, " bytes"));
  }
  std::memset(p, 0, rounded);
  Tensor t;
  t.state_ = std::make_shared<State>();
  t.state_->storage = std::shared_ptr<void>(p, free_aligned);
  t.state_->data = p;
  t.state_->shape = std::move(shape);
  t.state_->dtype = dtype;
  t.state_->device = device;
  t.state_->owned = true;
  return t;
}

Tensor Tensor::borrow(void* data, std::vector<int64_t> shape, DataType dtype,
                      std::vector<int64_t> strides, Device device) {
  Tensor t;
  t.state_ = std::make_shared<State>();
  t.state_->data = data;
  t.state_->shape = std::move(shape);
  t.state_->strides = std::move(strides);
  t.state_->dtype = dtype;
  t.state_->device = device;
  return t;
}

void* Tensor::data() const { return state_->data; }
DataType Tensor::dtype() const { return state_->dtype; }
Device Tensor::device() const { return state_->device; }
const std::vector<int64_t>& Tensor::shape() const { return state_->shape; }
const std::vector<int64_t>& Tensor::strides() const { return state_->strides; }
bool Tensor::owns_storage() const { return state_->owned; }

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : state_->shape) n *= d;
  return n;
}

size_t Tensor::element_bytes() const {
  return (static_cast<size_t>(state_->dtype.bits) * state_->dtype.lanes + 7) / 8;
}

size_t Tensor::nbytes() const { return static_cast<size_t>(numel()) * element_bytes(); }

bool Tensor::is_contiguous() const {
  if (state_->strides.empty()) return true;
  int64_t expected = 1;
  for (size_t i = state_->shape.size(); i-- > 0;) {
    if (state_->shape[i] != 1 && state_->strides[i] != expected) return false;
    expected *= state_->shape[i];
  }
  return true;
}

bool Tensor::same_storage(const Tensor& other) const {
  return defined() && other.defined() && state_->data == other.state_->data;
}

std::string Tensor::describe() const {
  if (!defined()) return "Tensor[undefined]";
  return absl::StrCat("Tensor[(", absl::StrJoin(state_->shape, ", "),
                      state_->shape.size() == 1 ? ",)" : ")", ", ", state_->dtype.to_string(),
                      state_->device.type == Device::Type::kCPU ? "" : ", " + state_->device.to_string(),
                      "]");
}

}  // namespace relax::runtime
