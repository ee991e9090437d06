// The checks and conversions a call's arguments pass before the VM binds them
// (VirtualMachine::check_devices, VirtualMachine::compact_arguments): every tensor
// on the module's device, and strided tensors (through tuples) replaced by compact
// copies, so that kernels never see strides.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensor_compact.h"
#include "vm/vm.h"

namespace relax::runtime {

namespace {

// The first tensor of `v` (through tuples) that is not on `device`, with its place in `v`
// (", field 1") in `path`; null when there is none.
const Tensor* tensor_elsewhere(const Value& v, Device device, std::string* path) {
  if (v.is_tensor()) return v.tensor_or_die().device() == device ? nullptr : &v.tensor_or_die();
  if (!v.is_tuple()) return nullptr;
  const std::vector<Value>& fields = v.fields_or_die();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (const Tensor* t = tensor_elsewhere(fields[i], device, path)) {
      *path = absl::StrCat(", field ", i, *path);
      return t;
    }
  }
  return nullptr;
}

}  // namespace

absl::Status VirtualMachine::check_devices(const VMFunction& fn, std::span<const Value> args) const {
  const Device device = exec_->device;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string path;
    const Tensor* t = tensor_elsewhere(args[i], device, &path);
    if (t == nullptr) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        fn.name, ": argument ", fn.param_names[i], path, " is on ", t->device().to_string(),
        ", but the module runs on ", device.to_string(),
        " (copy it there first, e.g. with Tensor::to)"));
  }
  return absl::OkStatus();
}

namespace {

bool has_strided_tensor(const Value& v) {
  if (v.is_tensor()) return !v.tensor_or_die().is_contiguous();
  if (!v.is_tuple()) return false;
  for (const Value& f : v.fields_or_die()) {
    if (has_strided_tensor(f)) return true;
  }
  return false;
}

// `v` with each strided tensor (through tuples) replaced by a compact copy; `path` names the
// place in messages (", field 1").
absl::StatusOr<Value> compact_value(const Value& v, const std::string& path, const std::string& where) {
  if (v.is_tensor()) {
    const Tensor& t = v.tensor_or_die();
    absl::StatusOr<Tensor> copy = compact(t);
    if (copy.ok()) return Value(*std::move(copy));
    return absl::InvalidArgumentError(absl::StrCat(
        where, path, " is not contiguous (shape (", absl::StrJoin(t.shape(), ", "), "), strides (",
        absl::StrJoin(t.strides(), ", "), ")) and no compact copy of it could be made: ",
        copy.status().message()));
  }
  std::vector<Value> fields = v.fields_or_die();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!has_strided_tensor(fields[i])) continue;
    absl::StatusOr<Value> f = compact_value(fields[i], absl::StrCat(path, ", field ", i), where);
    if (!f.ok()) return f.status();
    fields[i] = *std::move(f);
  }
  return Value::tuple(std::move(fields));
}

}  // namespace

absl::Status VirtualMachine::compact_arguments(const VMFunction& fn, std::vector<Value>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!has_strided_tensor(args[i])) continue;
    absl::StatusOr<Value> v =
        compact_value(args[i], "", absl::StrCat(fn.name, ": argument ", fn.param_names[i], " (#", i, ")"));
    if (!v.ok()) return v.status();
    args[i] = *std::move(v);
  }
  return absl::OkStatus();
}

}  // namespace relax::runtime
