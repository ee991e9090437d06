// relax::compile_shared_object: the host C++ compiler driver and JIT cache.
//
// Compiles one C++ source (normally generate_cpp's output) into a shared
// object in a cache directory, named by a 128-bit hash of the source, the
// resolved compiler path, that compiler's `--version` output (read once per
// process) and the flags. When that object already exists the call is a
// cache hit and nothing runs. The compiler runs without a shell (posix_spawn);
// its output goes to a log file. Objects are written under a temporary name and
// renamed into place, so that concurrent threads and processes never load a
// half-written file; compiles of one key are serialised by a lock file
// (relax_<key>.lock, flock), so that the same object is never built twice at
// once and the second caller finds it in the cache.
//
// The compiler is Target::compiler, else $RELAX_CXX, else $CXX, else "c++";
// the cache directory Target::cache_dir, else $RELAX_CACHE_DIR, else
// $XDG_CACHE_HOME/relax, else $HOME/.cache/relax. The flags are
//   -std=c++17 -shared -fPIC <opt_level> <isa_flags...> -fopenmp-simd <extra...>
// (no OpenMP runtime: parallel loops run on the runtime's thread pool).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "relax/support/target.h"

namespace relax {

/// A compiled (or cached) shared object.
struct CompiledLibrary {
  /// The shared object, in the cache directory.
  std::string library_path;
  /// The source next to it; empty when it was not kept (it is kept when
  /// Target::keep_source is set, and always when compiling failed).
  std::string source_path;
  /// The object existed already: nothing was compiled.
  bool cache_hit = false;
};

/// Compiles `source` for `target`, or finds it in the cache. Errors: the
/// cache directory cannot be made or written (Internal, naming it), the
/// compiler cannot be run (InvalidArgument, naming it), or it failed
/// (Internal, with its exit status, the start of its output -- at most 4000
/// characters; the whole of it stays in a log file next to the source -- and
/// the path of the kept source).
absl::StatusOr<CompiledLibrary> compile_shared_object(const std::string& source, const Target& target,
                                                      const std::vector<std::string>& extra_flags = {});

/// 32 hex digits naming `parts` (each length-prefixed, so that no two lists
/// collide by concatenation): the hash that keys the JIT cache, stable across
/// processes and machines. Also names other files kept in the cache directory.
std::string content_key(const std::vector<std::string>& parts);

/// The compiler compile_shared_object would run for `target`, as configured
/// (before the PATH lookup).
std::string resolve_compiler(const Target& target);
/// The cache directory compile_shared_object would use for `target`.
std::string resolve_cache_dir(const Target& target);
/// resolve_cache_dir(target), created when missing; InternalError naming it when it cannot be.
absl::StatusOr<std::string> ensure_cache_dir(const Target& target);

/// A top-level `__asm__` statement of a C++ source that embeds the file at `path` (.incbin, so
/// that large data costs no compile time) in section .rodata.<symbol>, 16-byte aligned, between
/// the hidden symbols <symbol>_begin and <symbol>_end; `nul_terminated`: one zero byte after
/// <symbol>_end (for loaders that read the data as a string).
std::string embed_file_asm(const std::string& symbol, const std::string& path, bool nul_terminated);

}  // namespace relax
