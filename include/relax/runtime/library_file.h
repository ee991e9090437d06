// The integrity of the shared objects relax writes and loads.
//
// dlopen trusts its input: a truncated file faults (SIGBUS) inside the dynamic
// loader, and a flipped byte in code or in the dynamic-linking tables crashes
// the process or, worse, computes wrong results. So every shared object relax
// writes (JIT cache entries and AOT exports alike) is sealed: it ends in a
// 24-byte trailer that records the size and the FNV-1a 64 checksum
// (relax/support/fnv1a.h) of every byte before it:
//
//   u64 content size (little-endian)  u64 FNV-1a 64 of the content  "RLXSEAL1"
//
// The ELF loader ignores bytes after the section header table, so a sealed
// file loads like the unsealed one. KernelLibrary::open (and with it
// load_module) runs check_library_file before dlopen and never hands dlopen a
// file that fails it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace relax::runtime {

/// Bytes of the integrity trailer at the end of a sealed shared object.
inline constexpr size_t kLibraryTrailerSize = 24;

/// Bytes an object's content may carry (an AOT export holds them as a constant) to say that it
/// is sealed: check_library_file then reports the loss of its whole trailer as a truncation.
inline constexpr std::string_view kSealedMarker = "relax sealed library: RLXSEAL1 trailer follows";

/// Checks the file at `path` before it may be given to dlopen, in this order:
///   1. the path is a path: a relative one is taken relative to the working
///      directory, never looked up on the dynamic loader's search path;
///      missing: NotFound "no such file";
///   2. the trailer: when the file has one (its magic, or a size field equal
///      to the file's, is found at the end), a damaged trailer or a checksum
///      that differs is DataLoss;
///   3. the ELF structure: a 64-bit shared object of this machine
///      (InvalidArgument otherwise) whose program header table, every
///      segment's file bytes and section header table lie inside the file
///      (DataLoss naming the missing byte range otherwise: a truncated file);
///   4. a file that passes 3 but has no whole trailer: DataLoss naming the
///      trailer's missing byte range when it was cut inside its trailer (the
///      bytes after the ELF content begin the trailer of that content), or when
///      it lost exactly its whole trailer and its content carries
///      kSealedMarker (every AOT export does); otherwise FailedPrecondition
///      (written by an older relax or another tool; re-export it, or seal it).
/// Messages begin with `path`. Returns the absolute path that was checked.
absl::StatusOr<std::string> check_library_file(const std::string& path);

/// Seals the shared object at `path` in place: appends the trailer for its
/// current contents. A file that is already sealed is left as it is. For the
/// code generator (which seals every object it writes) and for kernel
/// libraries built by hand against relax/runtime/kernel_abi.h.
absl::Status seal_library_file(const std::string& path);

}  // namespace relax::runtime
