// summarize_tensor (run_driver.h): numpy's way of printing an array, closely enough that a
// user who knows numpy reads it at once.
//
// The stages: (1) choose the indices shown along each axis (all of them, or with more than
// 1000 elements the first and last 3 of each axis longer than 6, numpy's threshold and
// edgeitems); (2) format every shown element -- integers in decimal, bools as True/False,
// floats with at most 8 digits after the point and trailing zeros dropped ("1.", "0.25"), or
// in scientific notation for all of them when the magnitudes call for it (numpy's rule: a
// nonzero value below 1e-4 or at least 1e8, or a ratio above 1e3 between the largest and the
// smallest); (3) pad them to one width, floats aligned on the point; (4) lay them out in nested
// brackets, rows broken at 75 columns, one blank line more per axis between blocks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "relax/support/half_float.h"
#include "run_driver.h"

namespace relax::tools {

namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;
constexpr int64_t kEllipsis = -1;

template <typename T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double float_at(DataType dtype, const void* p) {
  switch (dtype.bits) {
    case 16: return dtype.code == DataType::Code::kBFloat ? bfloat16_value(load<uint16_t>(p))
                                                          : float16_value(load<uint16_t>(p));
    case 32: return load<float>(p);
    default: return load<double>(p);
  }
}

// The value of an element of any numeric or bool dtype (uint64 above 2^53 rounded).
double number_at(DataType dtype, const void* p) {
  if (dtype.is_float()) return float_at(dtype, p);
  const bool is_signed = dtype.code == DataType::Code::kInt;
  switch (dtype.bits) {
    case 8: return is_signed ? load<int8_t>(p) : load<uint8_t>(p);
    case 16: return is_signed ? load<int16_t>(p) : load<uint16_t>(p);
    case 32: return is_signed ? load<int32_t>(p) : load<uint32_t>(p);
    default: return is_signed ? static_cast<double>(load<int64_t>(p)) : static_cast<double>(load<uint64_t>(p));
  }
}

std::string integer_at(DataType dtype, const void* p) {
  const bool is_signed = dtype.code == DataType::Code::kInt;
  switch (dtype.bits) {
    case 8: return is_signed ? std::to_string(load<int8_t>(p)) : std::to_string(load<uint8_t>(p));
    case 16: return is_signed ? std::to_string(load<int16_t>(p)) : std::to_string(load<uint16_t>(p));
    case 32: return is_signed ? std::to_string(load<int32_t>(p)) : std::to_string(load<uint32_t>(p));
    default: return is_signed ? std::to_string(load<int64_t>(p)) : std::to_string(load<uint64_t>(p));
  }
}

// The double nearest the shortest decimal that reads back as `v` in its own precision (float32
// values as floats), so that 0.1f prints as 0.1 and not as 0.10000000149.
double shortest(double v, DataType dtype) {
  char buffer[64];
  const int max_digits = dtype.bits == 64 ? 17 : 9;
  for (int digits = 1; digits < max_digits; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, v);
    const bool same = dtype.bits == 64 ? std::strtod(buffer, nullptr) == v
                                       : std::strtof(buffer, nullptr) == static_cast<float>(v);
    if (same) return std::strtod(buffer, nullptr);
  }
  return v;
}

// "1.", "0.25", "-3.5": at most 8 digits after the point, trailing zeros dropped.
std::string fixed_text(double v) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), "%.8f", v);
  std::string s = buffer;
  while (s.back() == '0') s.pop_back();
  return s;
}

// "1.5e-05": the mantissa with trailing zeros dropped (keeping its point), then the exponent.
std::string scientific_text(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.8e", v);
  std::string s = buffer;
  const size_t e = s.find('e');
  std::string mantissa = s.substr(0, e);
  while (mantissa.back() == '0') mantissa.pop_back();
  return mantissa + s.substr(e);
}

class Printer {
 public:
  explicit Printer(const runtime::Tensor& t) : t_(t), shape_(t.shape()) {
    strides_ = t.strides();
    if (strides_.empty()) {
      strides_.assign(shape_.size(), 1);
      for (size_t i = shape_.size(); i-- > 1;) strides_[i - 1] = strides_[i] * shape_[i];
    }
    const bool summarize = t.numel() > kThreshold;
    for (int64_t n : shape_) {
      std::vector<int64_t> shown;
      if (summarize && n > 2 * kEdgeItems) {
        for (int64_t i = 0; i < kEdgeItems; ++i) shown.push_back(i);
        shown.push_back(kEllipsis);
        for (int64_t i = n - kEdgeItems; i < n; ++i) shown.push_back(i);
      } else {
        for (int64_t i = 0; i < n; ++i) shown.push_back(i);
      }
      shown_.push_back(std::move(shown));
    }
  }

  std::string print() {
    collect(0, 0);
    format();
    if (shape_.empty()) return texts_.empty() ? "" : texts_[0];
    std::string out;
    next_ = 0;
    render(0, 0, out);
    return out;
  }

 private:
  const void* element(int64_t offset) const {
    return static_cast<const char*>(t_.data()) + offset * static_cast<int64_t>(t_.element_bytes());
  }

  // Stage 1: the element offsets shown, in print order.
  void collect(size_t axis, int64_t offset) {
    if (axis == shape_.size()) {
      offsets_.push_back(offset);
      return;
    }
    for (int64_t i : shown_[axis]) {
      if (i != kEllipsis) collect(axis + 1, offset + i * strides_[axis]);
    }
  }

  // Stages 2 and 3.
  void format() {
    const DataType dtype = t_.dtype();
    if (dtype.is_float()) {
      std::vector<double> values;
      double max_abs = 0, min_abs = INFINITY;
      for (int64_t offset : offsets_) {
        const double v = shortest(float_at(dtype, element(offset)), dtype);
        values.push_back(v);
        if (std::isfinite(v) && v != 0) {
          max_abs = std::max(max_abs, std::fabs(v));
          min_abs = std::min(min_abs, std::fabs(v));
        }
      }
      const bool scientific =
          max_abs > 0 && (min_abs < 1e-4 || max_abs >= 1e8 || max_abs / min_abs > 1e3);
      for (double v : values) {
        if (std::isnan(v)) {
          texts_.push_back("nan");
        } else if (std::isinf(v)) {
          texts_.push_back(v > 0 ? "inf" : "-inf");
        } else {
          texts_.push_back(scientific ? scientific_text(v) : fixed_text(v));
        }
      }
      align_on_point();
      return;
    }
    for (int64_t offset : offsets_) {
      if (dtype.is_bool()) {
        texts_.push_back(load<uint8_t>(element(offset)) != 0 ? "True" : "False");
      } else {
        texts_.push_back(integer_at(dtype, element(offset)));
      }
    }
    size_t width = 0;
    for (const std::string& s : texts_) width = std::max(width, s.size());
    for (std::string& s : texts_) s.insert(0, width - s.size(), ' ');
  }

  // Pads finite values on the left to the widest part before the point and on the right to
  // the widest part from it, so that the points line up; nan and inf are right-aligned to the
  // same width, which grows on the left when they are wider (numpy's FloatingFormat).
  void align_on_point() {
    const auto finite = [](const std::string& s) { return s.find('.') != std::string::npos; };
    size_t before = 0, after = 0;
    for (const std::string& s : texts_) {
      if (!finite(s)) continue;
      const size_t dot = s.find('.');
      before = std::max(before, dot);
      after = std::max(after, s.size() - dot);
    }
    for (const std::string& s : texts_) {
      if (!finite(s)) before = std::max(before, s.size() > after ? s.size() - after : 0);
    }
    for (std::string& s : texts_) {
      if (!finite(s)) {
        s.insert(0, before + after - s.size(), ' ');
        continue;
      }
      const size_t dot = s.find('.');
      s.insert(0, before - dot, ' ');
      s.append(after - (s.size() - before), ' ');
    }
  }

  // Stage 4. `column` is where the opening bracket of this axis stands.
  void render(size_t axis, size_t column, std::string& out) {
    out += '[';
    const std::vector<int64_t>& shown = shown_[axis];
    const bool innermost = axis + 1 == shape_.size();
    size_t line = column + 1;  // the length of the current line
    for (size_t k = 0; k < shown.size(); ++k) {
      if (innermost) {
        const std::string& item = shown[k] == kEllipsis ? kDots : texts_[next_++];
        if (k > 0) {
          // numpy keeps room for the closing brackets on the last item of a line.
          const size_t closing = k + 1 == shown.size() ? axis + 1 : 0;
          if (line + 1 + item.size() + closing > kLineWidth) {
            out += '\n';
            out.append(column + 1, ' ');
            line = column + 1;
          } else {
            out += ' ';
            ++line;
          }
        }
        out += item;
        line += item.size();
        continue;
      }
      if (k > 0) {
        out.append(shape_.size() - axis - 1, '\n');
        out.append(column + 1, ' ');
      }
      if (shown[k] == kEllipsis) {
        out += kDots;
      } else {
        render(axis + 1, column + 1, out);
      }
    }
    out += ']';
  }

  static inline const std::string kDots = "...";

  const runtime::Tensor& t_;
  const std::vector<int64_t>& shape_;
  std::vector<int64_t> strides_;
  std::vector<std::vector<int64_t>> shown_;
  std::vector<int64_t> offsets_;
  std::vector<std::string> texts_;
  size_t next_ = 0;
};

}  // namespace

std::string summarize_tensor(const runtime::Tensor& tensor) {
  if (!tensor.defined()) return "(undefined)";
  if (tensor.device().type != Device::Type::kCPU) return "(not on the host)";
  const DataType dtype = tensor.dtype();
  const bool printable = dtype.lanes == 1 &&
                         (dtype.is_bool() || dtype.code == DataType::Code::kInt ||
                          dtype.code == DataType::Code::kUInt ||
                          (dtype.code == DataType::Code::kFloat &&
                           (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64))) &&
                         (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64);
  if (!printable) return "(values of " + dtype.to_string() + " are not printed)";
  return Printer(tensor).print();
}

absl::StatusOr<std::pair<double, double>> tensor_errors(const runtime::Tensor& got, const runtime::Tensor& want) {
  // Element by element as double: the largest |got - want|, and the largest |got - want| / |want|
  // over the elements whose |want| is above 1e-6 (relative error means nothing at zero).
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(got.describe(), " against ", want.describe()));
  }
  if (!got.is_contiguous() || !want.is_contiguous()) return absl::InvalidArgumentError("a strided tensor");
  const DataType d = got.dtype();
  const size_t size = got.element_bytes();
  const auto* a = static_cast<const char*>(got.data());
  const auto* b = static_cast<const char*>(want.data());
  double abs_error = 0, rel_error = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double x = number_at(d, a + i * static_cast<int64_t>(size));
    const double y = number_at(d, b + i * static_cast<int64_t>(size));
    if (std::isnan(x) != std::isnan(y)) return std::pair<double, double>(INFINITY, INFINITY);
    const double e = std::fabs(x - y);
    if (std::isnan(e)) continue;
    abs_error = std::max(abs_error, e);
    if (std::fabs(y) > 1e-6) rel_error = std::max(rel_error, e / std::fabs(y));
  }
  return std::pair<double, double>(abs_error, rel_error);
}

}  // namespace relax::tools
