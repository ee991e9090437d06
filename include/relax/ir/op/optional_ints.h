// A list of ints that an operator constructor may be given or not: a
// reduction's axes, permute_dims's axes, a stride list.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

namespace relax::op {

/// An optional list of ints, written as C++ users write one: a braced list
/// (`op::sum(x, {-1})`, `op::permute_dims(k, {1, 0})`), a std::vector<int64_t>,
/// a std::optional of one, or `std::nullopt` / nothing for "absent". Empty
/// braces `{}` are absent too (as they were for std::optional); an empty list
/// is `std::vector<int64_t>{}`.
class OptionalInts {
 public:
  OptionalInts() = default;
  OptionalInts(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  OptionalInts(std::initializer_list<int64_t> values)  // NOLINT(google-explicit-constructor)
      : value_(std::vector<int64_t>(values)) {}
  OptionalInts(std::vector<int64_t> values)  // NOLINT(google-explicit-constructor)
      : value_(std::move(values)) {}
  OptionalInts(std::optional<std::vector<int64_t>> values)  // NOLINT(google-explicit-constructor)
      : value_(std::move(values)) {}

  bool has_value() const { return value_.has_value(); }
  const std::optional<std::vector<int64_t>>& get() const& { return value_; }
  std::optional<std::vector<int64_t>> get() && { return std::move(value_); }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator std::optional<std::vector<int64_t>>() const& { return value_; }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator std::optional<std::vector<int64_t>>() && { return std::move(value_); }

 private:
  std::optional<std::vector<int64_t>> value_;
};

}  // namespace relax::op
