// relax::Device: where a tensor lives. Header-only, shared by every layer.
#pragma once

#include <cstdint>
#include <string>

namespace relax {

/// A device type and index. kUnknown means "not annotated" at the graph level.
/// The type values match DLPack's DLDeviceType for the CPU and CUDA.
struct Device {
  enum class Type : uint8_t { kUnknown = 0, kCPU = 1, kCUDA = 2 };
  Type type = Type::kUnknown;
  int32_t index = 0;

  static constexpr Device cpu(int32_t index = 0) { return {Type::kCPU, index}; }
  static constexpr Device cuda(int32_t index = 0) { return {Type::kCUDA, index}; }
  bool operator==(const Device&) const = default;

  /// "cpu", "cuda:1", or "unknown".
  std::string to_string() const {
    switch (type) {
      case Type::kCPU: return index == 0 ? "cpu" : "cpu:" + std::to_string(index);
      case Type::kCUDA: return "cuda:" + std::to_string(index);
      case Type::kUnknown: break;
    }
    return "unknown";
  }
};

}  // namespace relax
