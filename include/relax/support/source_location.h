// relax::SourceLocation: the file and line of a caller, for diagnostics.
//
// Used as a default argument, `SourceLocation loc = SourceLocation::current()`
// records where the function was called from, like std::source_location.
// relax has its own because clang 14 with libstdc++ 12 (a supported pair)
// provides no std::source_location; __builtin_FILE and __builtin_LINE exist in
// every supported compiler and behave the same way in default arguments.
#pragma once

#include <cstdint>
#include <string>

namespace relax {

class SourceLocation {
 public:
  /// An unknown location ("", line 0).
  constexpr SourceLocation() = default;

  /// The location of the expression that calls current() -- in a default
  /// argument, the location of the call that uses the default.
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          uint32_t line = __builtin_LINE()) noexcept {
    return SourceLocation(file, line);
  }

  constexpr const char* file_name() const { return file_; }
  constexpr uint32_t line() const { return line_; }
  /// "file:line".
  std::string to_string() const { return std::string(file_) + ":" + std::to_string(line_); }

 private:
  constexpr SourceLocation(const char* file, uint32_t line) : file_(file), line_(line) {}
  const char* file_ = "";
  uint32_t line_ = 0;
};

}  // namespace relax
