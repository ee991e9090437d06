// What the fuzz targets of tests/fuzz/ share: FUZZ_CHECK, the oracle assertion.
//
//   FUZZ_CHECK(back.ok()) << "the printed text does not parse: " << back.status();
//
// A failed check prints the file, line, condition and message to stderr and aborts, which
// libFuzzer reports as a crash and saves the input as an artifact.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

namespace relax::fuzz {

/// Collects the message of a failed check; its destructor prints it and aborts.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": oracle failed: " << condition << "\n";
  }
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure() {
    const std::string text = stream_.str();
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
    std::abort();
  }
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

/// `text` cut to its first `limit` characters (with a note of how much was left out), so
/// that a failure message stays readable for large inputs.
inline std::string excerpt(std::string_view text, size_t limit = 2000) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "\n... (" + std::to_string(text.size() - limit) +
         " more characters)";
}

}  // namespace relax::fuzz

#define FUZZ_CHECK(condition) \
  if (condition) {            \
  } else                      \
    ::relax::fuzz::CheckFailure(__FILE__, __LINE__, #condition)
