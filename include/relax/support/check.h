// Internal-invariant checks shared by every layer of relax.
//
// RELAX_CHECK is for conditions that only a bug inside relax (or a caller
// breaking a documented precondition) can violate. Input that comes from
// outside -- text, files, tensors passed to a call -- is reported through
// absl::Status instead, never through these macros.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace relax::detail {

/// Prints the failed condition with its location and message, then aborts.
[[noreturn]] inline void check_failed(const char* file, int line, const char* condition,
                                      const std::string& message) {
  std::fprintf(stderr, "%s:%d: relax check failed: %s%s%s\n", file, line, condition,
               message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Collects the streamed message of a failing check; aborts on destruction.
class CheckMessage {
 public:
  CheckMessage(const char* file, int line, const char* condition)
      : file_(file), line_(line), condition_(condition) {}
  CheckMessage(const CheckMessage&) = delete;
  CheckMessage& operator=(const CheckMessage&) = delete;
  [[noreturn]] ~CheckMessage() { check_failed(file_, line_, condition_, stream_.str()); }
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int line_;
  const char* condition_;
  std::ostringstream stream_;
};

/// Turns the streamed expression into void so both arms of ?: agree.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace relax::detail

/// Aborts with the condition, location and any streamed message when `cond` is false.
/// Usage: RELAX_CHECK(n >= 0) << "n was " << n;
#define RELAX_CHECK(cond)                \
  (cond) ? (void)0                       \
         : ::relax::detail::Voidify() &  \
               ::relax::detail::CheckMessage(__FILE__, __LINE__, #cond).stream()
