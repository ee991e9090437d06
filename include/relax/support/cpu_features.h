// The instruction-set features a compiled kernel library may require, the
// x86-64 ISA levels made of them, and what the CPU running this process has.
//
// A kernel library records the features its compiler was allowed to use (the
// code generator emits one `#ifdef <macro>` per known feature, so the record
// is exact whatever flags enabled them: -march=x86-64-v3, -march=native,
// -mavx2 ...). KernelLibrary::open compares that record with
// host_cpu_features() before any kernel runs, so a library built for a newer
// CPU is refused with a message instead of dying with SIGILL.
//
// Part of the runtime library (relax::runtime): it knows nothing of the compiler.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace relax {

/// One feature: its name in records and messages (GCC's spelling, as in
/// -m<name>) and the macro the compiler predefines when it may use it.
struct CpuFeature {
  std::string_view name;
  std::string_view macro;
};

/// Every feature a library record may name, in a fixed order (the levels'
/// features first, then further extensions that -march=native may enable).
/// Empty on hosts other than x86-64.
std::span<const CpuFeature> known_cpu_features();

/// The x86-64 ISA levels of the psABI: "x86-64" (the baseline, SSE2),
/// "x86-64-v2", "x86-64-v3", "x86-64-v4".
std::span<const std::string_view> isa_level_names();

/// The features a level requires beyond the baseline (cumulative: v3 includes
/// v2's); false for a name that is not a level (e.g. "native").
bool isa_level_features(std::string_view level, std::vector<std::string>* features);

/// The known features this CPU has and this OS enables (AVX and AVX-512 count
/// only when the OS saves their registers), read once with CPUID.
const std::vector<std::string>& host_cpu_features();

/// OK when every feature in `required` is in `available`; else
/// FailedPrecondition: "<what> was compiled for <level> (it needs <required>),
/// but this CPU lacks <missing> (it has: <available>)". `level` is the ISA
/// level the library was compiled for as its target named it (may be empty).
/// Kept apart from host_cpu_features so that the refusal is testable on any CPU.
absl::Status check_cpu_features(std::string_view what, std::string_view level,
                                const std::vector<std::string>& required,
                                const std::vector<std::string>& available);

}  // namespace relax
