// The VM's builtins (see builtins.h): the data-dependent operators, which
// allocate their own results.
//
// Each reads its inputs as compact row-major host tensors (a strided input is
// copied first) and compares elements by value: integers exactly (as int64 or
// uint64), floats as double (float16 and bfloat16 converted exactly), bool as
// its byte being non-zero. Results keep the input's element bytes, so no value
// is rounded on the way through.
#include "vm/builtins.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "relax/support/dtype_util.h"
#include "relax/support/float_format.h"

namespace relax::runtime {
namespace {

absl::Status arity(std::span<const Value> args, size_t expected, const char* roles) {
  if (args.size() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("expected ", expected, expected == 1 ? " argument" : " arguments",
                                                 " (", roles, "), got ", args.size()));
}

// Argument `index` (`role`) as a compact host tensor of a scalar dtype.
absl::StatusOr<Tensor> tensor_arg(std::span<const Value> args, size_t index, const char* role) {
  const Value& v = args[index];
  const std::string label = absl::StrCat("argument ", index, " (", role, ")");
  if (!v.is_tensor()) return absl::InvalidArgumentError(absl::StrCat(label, ": expected a tensor, got ", v.describe()));
  const Tensor& t = v.tensor_or_die();
  if (t.device().type != Device::Type::kCPU) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": expected a host tensor, got ", t.describe(), " on another device"));
  }
  if (!is_scalar_dtype(t.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": dtype ", t.dtype().to_string(), " is not supported"));
  }
  if (t.is_contiguous()) return t;
  absl::StatusOr<Tensor> copy = Tensor::empty(t.shape(), t.dtype());
  if (!copy.ok()) return copy.status();
  if (absl::Status s = copy->copy_from(t); !s.ok()) return s;
  return copy;
}

template <typename T>
T load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

int64_t load_signed(const uint8_t* p, int bits) {
  switch (bits) {
    case 8: return load<int8_t>(p);
    case 16: return load<int16_t>(p);
    case 32: return load<int32_t>(p);
    default: return load<int64_t>(p);
  }
}

uint64_t load_unsigned(const uint8_t* p, int bits) {
  switch (bits) {
    case 8: return load<uint8_t>(p);
    case 16: return load<uint16_t>(p);
    case 32: return load<uint32_t>(p);
    default: return load<uint64_t>(p);
  }
}

double load_float(const uint8_t* p, DataType t) {
  if (t.code == DataType::Code::kBFloat) return bfloat16_value(load<uint16_t>(p));
  switch (t.bits) {
    case 16: return float16_value(load<uint16_t>(p));
    case 32: return load<float>(p);
    default: return load<double>(p);
  }
}

// The elements of a compact tensor as comparison keys of one C++ type.
template <typename K>
std::vector<K> keys_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data());
  const size_t step = t.element_bytes();
  const DataType d = t.dtype();
  std::vector<K> keys(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < keys.size(); ++i, p += step) {
    if constexpr (std::is_same_v<K, double>) {
      keys[i] = load_float(p, d);
    } else if constexpr (std::is_same_v<K, int64_t>) {
      keys[i] = load_signed(p, d.bits);
    } else {
      keys[i] = load_unsigned(p, d.bits);  // unsigned integers, and bool as its byte
    }
  }
  return keys;
}

// Calls f with the tensor's keys: int64 for signed integers, uint64 for
// unsigned ones and bool, double for floats.
template <typename F>
auto with_keys(const Tensor& t, F&& f) {
  const DataType d = t.dtype();
  if (d.is_float()) return f(keys_of<double>(t));
  if (d.code == DataType::Code::kInt) return f(keys_of<int64_t>(t));
  return f(keys_of<uint64_t>(t));
}

// Whether each element is non-zero (NaN is; -0.0 is not).
std::vector<uint8_t> nonzero_mask(const Tensor& t) {
  return with_keys(t, [](const auto& keys) {
    std::vector<uint8_t> mask(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) mask[i] = keys[i] != 0;
    return mask;
  });
}

// A new 1-D tensor of t's dtype holding t's elements at `picks`, in order.
absl::StatusOr<Value> gather_elements(const Tensor& t, const std::vector<size_t>& picks) {
  absl::StatusOr<Tensor> out = Tensor::empty({static_cast<int64_t>(picks.size())}, t.dtype());
  if (!out.ok()) return out.status();
  const size_t step = t.element_bytes();
  const auto* src = static_cast<const uint8_t*>(t.data());
  auto* dst = static_cast<uint8_t*>(out->data());
  for (size_t i = 0; i < picks.size(); ++i) std::memcpy(dst + i * step, src + picks[i] * step, step);
  return Value(*std::move(out));
}

absl::StatusOr<Value> builtin_nonzero(std::span<const Value> args) {
  if (absl::Status s = arity(args, 1, "x"); !s.ok()) return s;
  absl::StatusOr<Tensor> x = tensor_arg(args, 0, "x");
  if (!x.ok()) return x.status();
  const std::vector<uint8_t> mask = nonzero_mask(*x);
  const auto count = static_cast<int64_t>(std::count(mask.begin(), mask.end(), uint8_t{1}));
  const int64_t ndim = x->ndim();
  absl::StatusOr<Tensor> out = Tensor::empty({ndim, count}, DataType::int64());
  if (!out.ok()) return out.status();
  int64_t* coords = out->data_as_or_die<int64_t>();
  const std::vector<int64_t>& shape = x->shape();
  int64_t column = 0;
  for (size_t flat = 0; flat < mask.size(); ++flat) {
    if (!mask[flat]) continue;
    // The row-major multi-index of `flat`, last dim first.
    auto rest = static_cast<int64_t>(flat);
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const int64_t extent = shape[static_cast<size_t>(d)];
      coords[d * count + column] = rest % extent;
      rest /= extent;
    }
    ++column;
  }
  return Value(*std::move(out));
}

template <typename K>
bool key_less(K a, K b) {
  if constexpr (std::is_same_v<K, double>) {
    if (std::isnan(a)) return false;  // NaNs sort last
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename K>
bool key_equal(K a, K b) {
  if constexpr (std::is_same_v<K, double>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return a == b;
}

absl::StatusOr<Value> builtin_unique(std::span<const Value> args) {
  if (absl::Status s = arity(args, 1, "x"); !s.ok()) return s;
  absl::StatusOr<Tensor> x = tensor_arg(args, 0, "x");
  if (!x.ok()) return x.status();
  std::vector<size_t> picks = with_keys(*x, [](const auto& keys) {
    using K = typename std::decay_t<decltype(keys)>::value_type;
    std::vector<size_t> order(keys.size());
    std::iota(order.begin(), order.end(), size_t{0});
    // Stable, so that of equal values (0.0 and -0.0) the first in x is kept.
    std::stable_sort(order.begin(), order.end(),
                     [&keys](size_t a, size_t b) { return key_less<K>(keys[a], keys[b]); });
    std::vector<size_t> kept;
    for (size_t i : order) {
      if (kept.empty() || !key_equal<K>(keys[kept.back()], keys[i])) kept.push_back(i);
    }
    return kept;
  });
  return gather_elements(*x, picks);
}

absl::StatusOr<Value> builtin_masked_select(std::span<const Value> args) {
  if (absl::Status s = arity(args, 2, "x, mask"); !s.ok()) return s;
  absl::StatusOr<Tensor> x = tensor_arg(args, 0, "x");
  if (!x.ok()) return x.status();
  absl::StatusOr<Tensor> mask = tensor_arg(args, 1, "mask");
  if (!mask.ok()) return mask.status();
  if (mask->dtype() != DataType::boolean()) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 1 (mask): expected a bool tensor, got ", mask->describe()));
  }
  if (mask->shape() != x->shape()) {
    return absl::InvalidArgumentError(absl::StrCat("argument 1 (mask) is ", mask->describe(),
                                                   ", expected the shape of argument 0 (x), ",
                                                   x->describe()));
  }
  const std::vector<uint8_t> selected = nonzero_mask(*mask);
  std::vector<size_t> picks;
  for (size_t i = 0; i < selected.size(); ++i) {
    if (selected[i]) picks.push_back(i);
  }
  return gather_elements(*x, picks);
}

struct BuiltinEntry {
  const char* name;
  BuiltinFunction fn;
};

// Alphabetical.
constexpr BuiltinEntry kBuiltins[] = {
    {"masked_select", builtin_masked_select},
    {"nonzero", builtin_nonzero},
    {"unique", builtin_unique},
};

}  // namespace

BuiltinFunction find_builtin(std::string_view name) {
  for (const BuiltinEntry& e : kBuiltins) {
    if (name == e.name) return e.fn;
  }
  return nullptr;
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  for (const BuiltinEntry& e : kBuiltins) names.emplace_back(e.name);
  return names;
}

}  // namespace relax::runtime
