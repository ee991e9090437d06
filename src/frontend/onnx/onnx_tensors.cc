// The ONNX importer's readers of a model's messages (onnx_importer.h): node attributes, element
// types, and the tensors of initializers and Constant nodes (raw_data taken or copied, external
// data mapped), with the small int64/int32/bool ones read as shape values.
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frontend/onnx/onnx_importer.h"
#include "relax/runtime/mapped_file.h"

namespace relax::frontend::onnx_detail {

// ---- Attributes, dtypes, tensors --------------------------------------------------------------

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t int_attr(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a != nullptr ? a->i() : fallback;
}

float float_attr(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a != nullptr ? a->f() : fallback;
}

std::optional<std::vector<int64_t>> ints_attr(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* a = find_attr(node, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string string_attr(const onnx::NodeProto& node, std::string_view name, std::string fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a != nullptr ? a->s() : fallback;
}

std::string node_text(const onnx::NodeProto& node) {
  return absl::StrCat("node `", node.name(), "` (", node.op_type(), ")");
}

absl::Status node_error(const onnx::NodeProto& node, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(node_text(node), ": ", std::string(what)));
}

std::optional<DataType> dtype_of(int32_t elem_type) {
  using T = onnx::TensorProto;
  switch (elem_type) {
    case T::FLOAT: return DataType::float32();
    case T::DOUBLE: return DataType::float64();
    case T::FLOAT16: return DataType::float16();
    case T::BFLOAT16: return DataType::bfloat16();
    case T::INT64: return DataType::int64();
    case T::INT32: return DataType::int32();
    case T::INT16: return DataType{DataType::Code::kInt, 16, 1};
    case T::INT8: return DataType{DataType::Code::kInt, 8, 1};
    case T::UINT8: return DataType{DataType::Code::kUInt, 8, 1};
    case T::UINT16: return DataType{DataType::Code::kUInt, 16, 1};
    case T::UINT32: return DataType{DataType::Code::kUInt, 32, 1};
    case T::UINT64: return DataType{DataType::Code::kUInt, 64, 1};
    case T::BOOL: return DataType::boolean();
    default: return std::nullopt;
  }
}

namespace {

std::string elem_type_name(int32_t elem_type) {
  return onnx::TensorProto::DataType_IsValid(elem_type)
             ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type))
             : absl::StrCat("element type ", elem_type);
}

// Copies the typed field `values` into `t`, converting each element to T.
template <typename T, typename Field>
void copy_values(const Field& values, runtime::Tensor& t) {
  T* out = static_cast<T*>(t.data());
  int64_t i = 0;
  for (const auto& v : values) out[i++] = static_cast<T>(v);
}

}  // namespace

// Whether an external data location names a file under the model's folder (relative, no `..`).
bool file_beside_model(const std::string& location) {
  if (location.empty() || location.front() == '/') return false;
  for (const absl::string_view part : absl::StrSplit(location, '/')) {
    if (part == "..") return false;
  }
  return true;
}

absl::StatusOr<runtime::Tensor> tensor_of(const onnx::TensorProto& t, TensorSource* source) {
  const std::optional<DataType> dtype = dtype_of(t.data_type());
  if (!dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor `", t.name(), "`: ", elem_type_name(t.data_type()), " has no relax dtype"));
  }
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: a negative dim ", d));
    if (d > 0 && numel > (int64_t{1} << 48) / d) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: its dims multiply past 2^48 elements"));
    }
    numel *= d;
  }
  const size_t element = (dtype->bits + 7) / 8;
  const size_t bytes = static_cast<size_t>(numel) * element;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    // External data: a view of the mapped file (a copy only where the bytes are not aligned to
    // the element size), which the tensor keeps mapped.
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      uint64_t v = 0;
      const bool number = e.key() == "offset" || e.key() == "length";
      if (number && !absl::SimpleAtoi(e.value(), &v)) {
        return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: external data ", e.key(), " `", e.value(),
                                                       "` is not a number"));
      }
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = v;
      if (e.key() == "length") length = v;
    }
    if (!file_beside_model(location)) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: external data location `", location,
                                                     "` is not a file name beside the model"));
    }
    if (length && *length != bytes) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: external data length ", *length,
                                                     ", its shape and dtype need ", bytes, " bytes"));
    }
    const std::string dir = source == nullptr ? std::string() : source->dir;
    const std::string path = dir.empty() ? location : dir + "/" + location;
    std::shared_ptr<const runtime::MappedFile> file;
    if (source != nullptr) file = source->files[path];
    if (file == nullptr) {
      absl::StatusOr<std::shared_ptr<const runtime::MappedFile>> mapped = runtime::MappedFile::open(path, "external data file");
      if (!mapped.ok()) {
        return absl::Status(mapped.status().code(), absl::StrCat("tensor `", t.name(), "`: ", mapped.status().message()));
      }
      file = *mapped;
      if (source != nullptr) source->files[path] = file;
    }
    if (offset > file->size() || file->size() - offset < bytes) {
      return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: ", path, " holds fewer than ", bytes,
                                                     " bytes at offset ", offset, " (it has ", file->size(), ")"));
    }
    const char* data = file->bytes() + offset;
    if (bytes > 0 && reinterpret_cast<uintptr_t>(data) % element == 0) {
      void* address = const_cast<char*>(data);  // read-only pages: a write faults
      return runtime::Tensor::adopt(address, shape, *dtype, std::shared_ptr<void>(file, address));
    }
    absl::StatusOr<runtime::Tensor> copy = runtime::Tensor::empty(shape, *dtype);
    if (!copy.ok()) return copy.status();
    if (bytes > 0) std::memcpy(copy->data(), data, bytes);
    return copy;
  }
  if (t.has_raw_data() && source != nullptr && source->take_raw_data && t.raw_data().size() == bytes && bytes > 0) {
    // The bytes the parse put in the message become the tensor's: no copy. (The message is the
    // import's own, and each tensor of it is read once.)
    auto owner = std::make_shared<std::string>();
    owner->swap(*const_cast<onnx::TensorProto&>(t).mutable_raw_data());
    if (reinterpret_cast<uintptr_t>(owner->data()) % element == 0) {
      void* address = owner->data();
      return runtime::Tensor::adopt(address, shape, *dtype, std::shared_ptr<void>(owner, address));
    }
    owner->swap(*const_cast<onnx::TensorProto&>(t).mutable_raw_data());
  }
  // The data's size is checked against the dims before the tensor is allocated: a malformed
  // message may claim dims of gigabytes over a few bytes of data.
  using T = onnx::TensorProto;
  if (t.has_raw_data() && t.raw_data().size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: raw_data has ", t.raw_data().size(),
                                                   " bytes, its shape and dtype need ", bytes));
  }
  if (!t.has_raw_data()) {
    int64_t count = -1;
    switch (t.data_type()) {
      case T::FLOAT: count = t.float_data_size(); break;
      case T::DOUBLE: count = t.double_data_size(); break;
      case T::INT64: count = t.int64_data_size(); break;
      case T::INT32:
      case T::INT8:
      case T::UINT8:
      case T::BOOL: count = t.int32_data_size(); break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("tensor `", t.name(), "`: ", elem_type_name(t.data_type()),
                                                       " values outside raw_data are not read"));
    }
    if (count != numel) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor `", t.name(), "`: ", count, " values for a shape of ", numel, " elements"));
    }
  }
  absl::StatusOr<runtime::Tensor> out = runtime::Tensor::empty(shape, *dtype);
  if (!out.ok()) return out.status();
  if (t.has_raw_data()) {
    if (bytes > 0) std::memcpy(out->data(), t.raw_data().data(), bytes);
    return out;
  }
  // The typed field, its count checked above.
  switch (t.data_type()) {
    case T::FLOAT: copy_values<float>(t.float_data(), *out); break;
    case T::DOUBLE: copy_values<double>(t.double_data(), *out); break;
    case T::INT64: copy_values<int64_t>(t.int64_data(), *out); break;
    case T::INT32: copy_values<int32_t>(t.int32_data(), *out); break;
    case T::INT8: copy_values<int8_t>(t.int32_data(), *out); break;
    default: copy_values<uint8_t>(t.int32_data(), *out); break;  // UINT8, BOOL
  }
  return out;
}

std::optional<std::vector<SymExpr>> known_ints(const runtime::Tensor& t) {
  const bool i64 = t.dtype() == DataType::int64(), boolean = t.dtype().is_bool();
  if ((!i64 && !boolean && t.dtype() != DataType::int32()) || t.ndim() > 1 || t.numel() > 64) return std::nullopt;
  std::vector<SymExpr> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (boolean) {
      out.push_back(SymExpr(static_cast<const uint8_t*>(t.data())[i] != 0 ? 1 : 0));
      continue;
    }
    out.push_back(SymExpr(i64 ? static_cast<const int64_t*>(t.data())[i] : static_cast<const int32_t*>(t.data())[i]));
  }
  return out;
}

}  // namespace relax::frontend::onnx_detail
