// compile_shared_object (relax/codegen/compiler.h): the host-compiler driver
// and the JIT cache.
//
// Stages of one call:
//   1. resolve the compiler (Target, $RELAX_CXX, $CXX, c++) to a path through
//      $PATH, and its `--version` output (run once per process and path);
//   2. hash (source, compiler path, version, flags) into a 128-bit key; the
//      cache entry is <cache dir>/relax_<key>.so;
//   3. if the entry exists and passes runtime::check_library_file: a cache
//      hit, done (a damaged entry is a miss and is rebuilt over);
//   4. else take the key's lock file (flock), look again (another thread or
//      process may have built it meanwhile), write relax_<key>.cc, run the
//      compiler into relax_<key>.so.tmp.<pid>.<n>, seal it (the integrity
//      trailer of relax/runtime/library_file.h), rename that into place;
//   5. on failure keep the source and the compiler's log, and return both
//      paths with the start of the log.
// Readers never take the lock: they only ever see a complete object, because
// it appears by rename(2). The hash is our own (two seeded 64-bit hashes), not
// absl::Hash, whose values change between processes.
//
// Not handled: a timeout for the compiler, and cleaning old entries out of the
// cache (the directory only grows; deleting it is always safe).
#include "relax/codegen/compiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "relax/runtime/library_file.h"

extern char** environ;  // NOLINT: POSIX, for posix_spawn

namespace relax {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLogInStatus = 4000;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string errno_text(int err) { return std::strerror(err); }

// ---- hashing -----------------------------------------------------------------

uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t hash64(std::string_view data, uint64_t seed) {
  uint64_t h = fmix64(seed ^ (data.size() * 0x9e3779b97f4a7c15ULL));
  size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, data.data() + i, 8);
    h = (h ^ fmix64(chunk + seed)) * 0x9e3779b97f4a7c15ULL;
    h = (h << 27) | (h >> 37);
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < data.size(); ++k) {
    tail |= static_cast<uint64_t>(static_cast<unsigned char>(data[i + k])) << (8 * k);
  }
  h = (h ^ fmix64(tail + seed + 1)) * 0x9e3779b97f4a7c15ULL;
  return fmix64(h);
}

std::string hex(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 15];
  return s;
}


// ---- files -------------------------------------------------------------------

/// A name no other thread or process of this machine uses at the same time.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(static_cast<int64_t>(::getpid()), ".", counter.fetch_add(1));
}

absl::StatusOr<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat("cannot read ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::Status write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

/// Writes `text` to a temporary name beside `path` and renames it over `path`.
absl::Status write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp.", unique_suffix());
  if (absl::Status s = write_file(tmp, text); !s.ok()) {
    std::remove(tmp.c_str());
    return s;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", errno_text(err)));
  }
  return absl::OkStatus();
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// An exclusive flock on `path` (created if needed), released on destruction.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) {
      error_ = errno;
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      break;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  /// errno of a failure to open or lock, else 0.
  int error() const { return error_; }

 private:
  int fd_ = -1;
  int error_ = 0;
};

// ---- processes ----------------------------------------------------------------

/// `name` as an executable path: itself when it has a '/', else the first match
/// in $PATH; empty when there is none.
std::string find_executable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  for (absl::string_view dir : absl::StrSplit(env("PATH"), ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (is_file(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

/// Runs argv (no shell) with stdin from /dev/null and stdout and stderr into
/// `log_path`; returns its exit status, or a description of how it ended.
absl::StatusOr<int> run_process(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int err = ::posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot run `", argv[0], "`: ", errno_text(err)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", errno_text(errno)));
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    // posix_spawn reports a failed exec as exit status 127 on some systems.
    if (code == 127 && !is_file(argv[0])) {
      return absl::InvalidArgumentError(absl::StrCat("cannot run `", argv[0], "`"));
    }
    return code;
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrCat("`", argv[0], "` was killed by signal ", WTERMSIG(status)));
  }
  return absl::InternalError(absl::StrCat("`", argv[0], "` ended abnormally"));
}

/// `compiler --version`, once per process and compiler path.
absl::StatusOr<std::string> compiler_version(const std::string& compiler, const std::string& scratch_dir) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = versions.find(compiler);
    if (it != versions.end()) return it->second;
  }
  const std::string log = absl::StrCat(scratch_dir, "/relax_version.", unique_suffix(), ".log");
  absl::StatusOr<int> code = run_process({compiler, "--version"}, log);
  absl::StatusOr<std::string> text = read_file(log);
  std::remove(log.c_str());
  if (!code.ok()) return code.status();
  if (*code != 0 || !text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("`", compiler, " --version` failed (exit status ", *code, "); is it a C++ compiler?"));
  }
  std::lock_guard<std::mutex> lock(mutex);
  versions.emplace(compiler, *text);
  return *text;
}

std::string trimmed_log(const std::string& log) {
  if (log.size() <= kMaxLogInStatus) return log;
  return absl::StrCat(log.substr(0, kMaxLogInStatus), "\n[... ", log.size() - kMaxLogInStatus,
                      " more characters]");
}

}  // namespace

std::string content_key(const std::vector<std::string>& parts) {
  std::string material = "relax-jit-1";
  for (const std::string& p : parts) absl::StrAppend(&material, "\n", p.size(), ":", p);
  return hex(hash64(material, 0x243f6a8885a308d3ULL)) + hex(hash64(material, 0x13198a2e03707344ULL));
}

std::string resolve_compiler(const Target& target) {
  if (!target.compiler.empty()) return target.compiler;
  for (const char* var : {"RELAX_CXX", "CXX"}) {
    std::string v = env(var);
    if (!v.empty()) return v;
  }
  return "c++";
}

std::string resolve_cache_dir(const Target& target) {
  if (!target.cache_dir.empty()) return target.cache_dir;
  if (std::string v = env("RELAX_CACHE_DIR"); !v.empty()) return v;
  if (std::string v = env("XDG_CACHE_HOME"); !v.empty()) return v + "/relax";
  if (std::string v = env("HOME"); !v.empty()) return v + "/.cache/relax";
  return (fs::temp_directory_path() / "relax-cache").string();
}

absl::StatusOr<std::string> ensure_cache_dir(const Target& target) {
  const std::string dir = resolve_cache_dir(target);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return absl::InternalError(absl::StrCat("cannot create the kernel cache directory ", dir,
                                            ec ? ": " + ec.message() : std::string()));
  }
  return dir;
}

std::string embed_file_asm(const std::string& symbol, const std::string& path, bool nul_terminated) {
  return absl::StrCat("__asm__(\".section .rodata.", symbol, ",\\\"a\\\"\\n\"\n",
                      "        \".balign 16\\n\"\n",
                      "        \".globl ", symbol, "_begin\\n.hidden ", symbol, "_begin\\n\"\n",
                      "        \"", symbol, "_begin:\\n\"\n",
                      "        \".incbin \\\"", path, "\\\"\\n\"\n",
                      "        \".globl ", symbol, "_end\\n.hidden ", symbol, "_end\\n\"\n",
                      "        \"", symbol, "_end:\\n\"\n",
                      nul_terminated ? "        \".byte 0\\n\"\n" : "",
                      "        \".previous\\n\");\n");
}

absl::StatusOr<CompiledLibrary> compile_shared_object(const std::string& source, const Target& target,
                                                      const std::vector<std::string>& extra_flags) {
  absl::StatusOr<std::string> cache_dir = ensure_cache_dir(target);
  if (!cache_dir.ok()) return cache_dir.status();
  const std::string& dir = *cache_dir;
  const std::string configured = resolve_compiler(target);
  const std::string compiler = find_executable(configured);
  if (compiler.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot find the C++ compiler `", configured,
                     "` (set Target::compiler, $RELAX_CXX or $CXX to one that exists)"));
  }
  absl::StatusOr<std::string> version = compiler_version(compiler, dir);
  if (!version.ok()) return version.status();

  std::vector<std::string> flags = {"-std=c++17", "-shared", "-fPIC"};
  if (!target.opt_level.empty()) flags.push_back(target.opt_level);
  flags.insert(flags.end(), target.isa_flags.begin(), target.isa_flags.end());
  // `omp simd` pragmas only: parallel loops run on the runtime's thread pool (kernel_abi.h).
  flags.push_back("-fopenmp-simd");
#if defined(__x86_64__)
  // The kernels' vectors are 16 floats (schedule-cpu's vector-lanes): with AVX-512, g++'s own
  // loops (a lane-wise map, a broadcast) must use the same width. Its default preference for
  // 256-bit vectors built each 512-bit operand as two halves stored to the stack and read back
  // whole, a store-forwarding stall per operand (PaddleOCR's fused batch-norm and hard-swish
  // kernels: 47% of a call). Without AVX-512 the flag changes nothing.
  flags.push_back("-mprefer-vector-width=512");
#endif
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());

  const std::string key = content_key({source, compiler, *version, absl::StrJoin(flags, "\n")});
  const std::string stem = absl::StrCat(dir, "/relax_", key);
  CompiledLibrary result{stem + ".so", stem + ".cc", true};
  auto found = [&] {
    if (!is_file(result.source_path)) result.source_path.clear();
    return result;
  };
  // An entry counts only when it passes the loader's own check (sealed, checksum, ELF ranges):
  // a truncated or corrupted entry is a miss and is compiled again over it.
  auto cached = [&] { return is_file(result.library_path) && runtime::check_library_file(result.library_path).ok(); };
  if (cached()) return found();

  FileLock lock(stem + ".lock");
  if (lock.error() != 0) {
    return absl::InternalError(absl::StrCat("cannot lock ", stem, ".lock: ", errno_text(lock.error())));
  }
  if (cached()) return found();  // built while we waited
  result.cache_hit = false;

  if (absl::Status s = write_file_atomically(result.source_path, source); !s.ok()) return s;
  const std::string tmp_library = absl::StrCat(result.library_path, ".tmp.", unique_suffix());
  const std::string log_path = stem + ".log";
  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", tmp_library, result.source_path});
  absl::StatusOr<int> code = run_process(argv, log_path);
  if (!code.ok()) return code.status();
  if (*code != 0) {
    std::remove(tmp_library.c_str());
    absl::StatusOr<std::string> log = read_file(log_path);
    return absl::InternalError(absl::StrCat(
        "compiling ", result.source_path, " failed: `", absl::StrJoin(argv, " "), "` exited with status ", *code,
        "\n", trimmed_log(log.ok() ? *log : std::string("(no output)")), "\nsource kept at: ",
        result.source_path, "\ncompiler output in: ", log_path));
  }
  if (absl::Status s = runtime::seal_library_file(tmp_library); !s.ok()) {
    std::remove(tmp_library.c_str());
    return s;
  }
  if (std::rename(tmp_library.c_str(), result.library_path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_library.c_str());
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp_library, " to ", result.library_path, ": ", errno_text(err)));
  }
  std::remove(log_path.c_str());
  if (!target.keep_source) {
    std::remove(result.source_path.c_str());
    result.source_path.clear();
  }
  return result;
}

}  // namespace relax
