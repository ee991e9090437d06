// Fuzz target: runtime::load_module on mutated AOT libraries (see README.md in this folder).
//
// Input: the bytes of a shared object written by Module::export_library (the seeds are AOT
// libraries built in this tree). Each input is written to a temporary file and loaded in a
// forked child, since a mutated ELF file can crash the dynamic loader or the library's own
// code, which is not relax's to defend against. The child runs in two stages and tells the
// parent through a pipe how far it got:
//   1. what the loader and the library do on their own: dlopen, the library's constructors,
//      calling relax_abi_version, relax_kernels and relax_executable and reading what they
//      return (the kernel table and the embedded blob) -- a crash here is ignored;
//   2. load_module(path) -- it must return a Module or a Status. A crash, a sanitizer report or
//      a hang after stage 1 succeeded is a finding: the parent aborts.
// Nothing of an accepted library is called. When the embedded executable's header is intact,
// its checksum is recomputed over the mutated payload first, so that mutations of the payload
// reach the executable reader instead of stopping at the checksum.
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "relax/runtime/kernel_abi.h"
#include "relax/runtime/module.h"

namespace relax::fuzz {
namespace {

constexpr std::string_view kMagic("RLXEXEC\0", 8);
constexpr size_t kHeaderSize = 28;  // magic, u32 version, u64 payload size, u64 checksum
constexpr int kChildTimeoutMs = 5000;
// The signals a broken library or loader raises in stage 1.
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};

uint64_t fnv1a64(const uint8_t* bytes, size_t size) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t get_u64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

void put_u64(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Recomputes the checksum of each embedded executable whose header and payload lie within
// the file.
void repair_checksums(std::vector<uint8_t>& file) {
  const std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
  for (size_t at = text.find(kMagic); at != std::string_view::npos; at = text.find(kMagic, at + 1)) {
    if (file.size() - at < kHeaderSize) break;
    const uint64_t size = get_u64(&file[at + 12]);
    if (size > file.size() - at - kHeaderSize) continue;
    put_u64(&file[at + 20], fnv1a64(&file[at + kHeaderSize], size));
  }
}

// A private directory for the temporary files, made once.
const std::string& temp_dir() {
  static const std::string* const dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/relax-fuzz-library-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("fuzz_library: mkdtemp");
      std::abort();
    }
    return new std::string(pattern);
  }();
  return *dir;
}

// Stage 1 in the child: what dlopen and the library's own functions do, with relax not
// involved. Touches every byte load_module will read from the library's memory.
void run_library_alone(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return;
  volatile uint64_t sink = 0;
  if (auto version = reinterpret_cast<RelaxAbiVersionFn>(::dlsym(handle, "relax_abi_version"))) {
    sink = sink + static_cast<uint64_t>(version());
  }
  if (auto table_fn = reinterpret_cast<RelaxKernelTableFn>(::dlsym(handle, "relax_kernels"))) {
    int32_t count = -1;
    const RelaxKernelEntry* table = table_fn(&count);
    for (int32_t i = 0; table != nullptr && i < count; ++i) {
      if (table[i].name == nullptr) break;
      sink = sink + std::strlen(table[i].name);
    }
  }
  if (auto exe_fn = reinterpret_cast<RelaxExecutableFn>(::dlsym(handle, "relax_executable"))) {
    uint64_t size = 0;
    const uint8_t* data = exe_fn(&size);
    for (uint64_t i = 0; data != nullptr && i < size; ++i) sink = sink + data[i];
  }
  // The handle stays open, so load_module's dlopen finds the library already loaded.
}

// Ends the child at once on a fault in stage 1: the sanitizer's report (and its symbolizer)
// would cost a second for a crash that is not relax's.
[[noreturn]] void exit_on_fault(int) { ::_exit(3); }

[[noreturn]] void child(const std::string& path, int report_fd) {
  // Stage 1 under quick-exit handlers; stage 2 under the sanitizer's own again.
  struct sigaction quick {};
  quick.sa_handler = exit_on_fault;
  sigemptyset(&quick.sa_mask);
  struct sigaction saved[sizeof kFaultSignals / sizeof kFaultSignals[0]];
  for (size_t i = 0; i < std::size(kFaultSignals); ++i) ::sigaction(kFaultSignals[i], &quick, &saved[i]);
  run_library_alone(path);
  for (size_t i = 0; i < std::size(kFaultSignals); ++i) ::sigaction(kFaultSignals[i], &saved[i], nullptr);
  (void)!::write(report_fd, "L", 1);
  absl::StatusOr<runtime::Module> module = runtime::load_module(path);
  (void)module;
  (void)!::write(report_fd, "R", 1);
  ::_exit(0);
}

void check(const uint8_t* data, size_t size) {
  std::vector<uint8_t> file(data, data + size);
  repair_checksums(file);
  static uint64_t counter = 0;
  const std::string path = temp_dir() + "/input-" + std::to_string(counter++) + ".so";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    FUZZ_CHECK(f != nullptr) << "cannot write " << path;
    const size_t written = std::fwrite(file.data(), 1, file.size(), f);
    FUZZ_CHECK(std::fclose(f) == 0 && written == file.size()) << "cannot write " << path;
  }
  int fds[2];
  FUZZ_CHECK(::pipe(fds) == 0) << "pipe: " << std::strerror(errno);
  const pid_t pid = ::fork();
  FUZZ_CHECK(pid >= 0) << "fork: " << std::strerror(errno);
  if (pid == 0) {
    ::close(fds[0]);
    child(path, fds[1]);
  }
  ::close(fds[1]);
  // Read the child's reports until it closes the pipe (exits) or the time is up.
  std::string reports;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kChildTimeoutMs);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char c = 0;
    const ssize_t n = ::read(fds[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reports += c;
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::remove(path.c_str());
  const bool library_alone_ok = reports.find('L') != std::string::npos;
  const bool load_returned = reports.find('R') != std::string::npos;
  if (!library_alone_ok) return;  // the loader or the library itself failed: not relax's
  FUZZ_CHECK(load_returned && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "load_module did not return on a library that loads on its own ("
      << (timed_out ? "timed out"
                    : WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status)))
      << "); the child's report is above";
}

}  // namespace
}  // namespace relax::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  relax::fuzz::check(data, size);
  return 0;
}
