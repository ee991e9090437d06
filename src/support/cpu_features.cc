// CPU features and ISA levels (relax/support/cpu_features.h).
//
// The host's features come from CPUID directly (not __builtin_cpu_supports,
// whose list of names differs between compilers and versions: GCC 12's lacks
// lzcnt, movbe and f16c). A feature whose registers the OS does not save
// (XCR0, read with XGETBV) counts as absent: AVX needs the YMM state, AVX-512
// also the opmask and ZMM states.
#include "relax/support/cpu_features.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace relax {
namespace {

#if defined(__x86_64__)

enum Reg : uint8_t { kEax, kEbx, kEcx, kEdx };
/// The register state a feature's instructions need the OS to save.
enum class OsState : uint8_t { kSse, kYmm, kZmm };

struct FeatureBit {
  CpuFeature feature;
  uint32_t leaf;
  uint32_t subleaf;
  Reg reg;
  uint8_t bit;
  OsState state;
};

// The levels' features first (in the order of kLevels below), then the rest.
constexpr FeatureBit kFeatures[] = {
    // x86-64-v2
    {{"sse3", "__SSE3__"}, 1, 0, kEcx, 0, OsState::kSse},
    {{"ssse3", "__SSSE3__"}, 1, 0, kEcx, 9, OsState::kSse},
    {{"sse4.1", "__SSE4_1__"}, 1, 0, kEcx, 19, OsState::kSse},
    {{"sse4.2", "__SSE4_2__"}, 1, 0, kEcx, 20, OsState::kSse},
    {{"popcnt", "__POPCNT__"}, 1, 0, kEcx, 23, OsState::kSse},
    // x86-64-v3
    {{"avx", "__AVX__"}, 1, 0, kEcx, 28, OsState::kYmm},
    {{"avx2", "__AVX2__"}, 7, 0, kEbx, 5, OsState::kYmm},
    {{"fma", "__FMA__"}, 1, 0, kEcx, 12, OsState::kYmm},
    {{"bmi", "__BMI__"}, 7, 0, kEbx, 3, OsState::kSse},
    {{"bmi2", "__BMI2__"}, 7, 0, kEbx, 8, OsState::kSse},
    {{"lzcnt", "__LZCNT__"}, 0x80000001u, 0, kEcx, 5, OsState::kSse},
    {{"movbe", "__MOVBE__"}, 1, 0, kEcx, 22, OsState::kSse},
    {{"f16c", "__F16C__"}, 1, 0, kEcx, 29, OsState::kYmm},
    // x86-64-v4
    {{"avx512f", "__AVX512F__"}, 7, 0, kEbx, 16, OsState::kZmm},
    {{"avx512bw", "__AVX512BW__"}, 7, 0, kEbx, 30, OsState::kZmm},
    {{"avx512cd", "__AVX512CD__"}, 7, 0, kEbx, 28, OsState::kZmm},
    {{"avx512dq", "__AVX512DQ__"}, 7, 0, kEbx, 17, OsState::kZmm},
    {{"avx512vl", "__AVX512VL__"}, 7, 0, kEbx, 31, OsState::kZmm},
    // Beyond the levels (what -march=native may add on recent CPUs).
    {{"avx512ifma", "__AVX512IFMA__"}, 7, 0, kEbx, 21, OsState::kZmm},
    {{"avx512vbmi", "__AVX512VBMI__"}, 7, 0, kEcx, 1, OsState::kZmm},
    {{"avx512vbmi2", "__AVX512VBMI2__"}, 7, 0, kEcx, 6, OsState::kZmm},
    {{"avx512vnni", "__AVX512VNNI__"}, 7, 0, kEcx, 11, OsState::kZmm},
    {{"avx512bitalg", "__AVX512BITALG__"}, 7, 0, kEcx, 12, OsState::kZmm},
    {{"avx512vpopcntdq", "__AVX512VPOPCNTDQ__"}, 7, 0, kEcx, 14, OsState::kZmm},
    {{"avx512vp2intersect", "__AVX512VP2INTERSECT__"}, 7, 0, kEdx, 8, OsState::kZmm},
    {{"avx512fp16", "__AVX512FP16__"}, 7, 0, kEdx, 23, OsState::kZmm},
    {{"avx512bf16", "__AVX512BF16__"}, 7, 1, kEax, 5, OsState::kZmm},
    {{"avxvnni", "__AVXVNNI__"}, 7, 1, kEax, 4, OsState::kYmm},
    {{"gfni", "__GFNI__"}, 7, 0, kEcx, 8, OsState::kSse},
    {{"vaes", "__VAES__"}, 7, 0, kEcx, 9, OsState::kYmm},
    {{"vpclmulqdq", "__VPCLMULQDQ__"}, 7, 0, kEcx, 10, OsState::kYmm},
    {{"aes", "__AES__"}, 1, 0, kEcx, 25, OsState::kSse},
    {{"pclmul", "__PCLMUL__"}, 1, 0, kEcx, 1, OsState::kSse},
    {{"sha", "__SHA__"}, 7, 0, kEbx, 29, OsState::kSse},
    {{"adx", "__ADX__"}, 7, 0, kEbx, 19, OsState::kSse},
    {{"sse4a", "__SSE4A__"}, 0x80000001u, 0, kEcx, 6, OsState::kSse},
};

constexpr size_t kNumFeatures = sizeof(kFeatures) / sizeof(kFeatures[0]);

// How many of kFeatures (from the front) each level requires.
constexpr std::pair<std::string_view, size_t> kLevels[] = {
    {"x86-64", 0}, {"x86-64-v2", 5}, {"x86-64-v3", 13}, {"x86-64-v4", 18}};

const std::array<CpuFeature, kNumFeatures>& feature_table() {
  static const std::array<CpuFeature, kNumFeatures> table = [] {
    std::array<CpuFeature, kNumFeatures> t{};
    for (size_t i = 0; i < kNumFeatures; ++i) t[i] = kFeatures[i].feature;
    return t;
  }();
  return table;
}

std::vector<std::string> detect_host_features() {
  uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  uint32_t max_extended = __get_cpuid_max(0x80000000u, nullptr);
  auto read = [&](uint32_t leaf, uint32_t subleaf, Reg reg) -> uint32_t {
    const uint32_t limit = leaf >= 0x80000000u ? max_extended : max_leaf;
    if (leaf > limit) return 0;
    uint32_t r[4] = {0, 0, 0, 0};
    if (__get_cpuid_count(leaf, subleaf, &r[0], &r[1], &r[2], &r[3]) == 0) return 0;
    return r[reg];
  };
  // XCR0: which register states the OS saves (only readable when it set OSXSAVE).
  uint64_t xcr0 = 0;
  if ((read(1, 0, kEcx) >> 27) & 1u) {
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  const bool ymm = (xcr0 & 0x6) == 0x6;     // SSE and AVX state
  const bool zmm = ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM0-15 upper halves, ZMM16-31
  std::vector<std::string> features;
  for (const FeatureBit& f : kFeatures) {
    if (((read(f.leaf, f.subleaf, f.reg) >> f.bit) & 1u) == 0) continue;
    if (f.state == OsState::kYmm && !ymm) continue;
    if (f.state == OsState::kZmm && !zmm) continue;
    features.emplace_back(f.feature.name);
  }
  return features;
}

#else  // not x86-64: no features are recorded or checked

constexpr std::pair<std::string_view, size_t> kLevels[] = {{"", 0}};

const std::array<CpuFeature, 0>& feature_table() {
  static const std::array<CpuFeature, 0> table{};
  return table;
}

std::vector<std::string> detect_host_features() { return {}; }

#endif

const std::array<std::string_view, sizeof(kLevels) / sizeof(kLevels[0])>& level_names() {
  static const auto names = [] {
    std::array<std::string_view, sizeof(kLevels) / sizeof(kLevels[0])> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = kLevels[i].first;
    return n;
  }();
  return names;
}

}  // namespace

std::span<const CpuFeature> known_cpu_features() { return feature_table(); }

std::span<const std::string_view> isa_level_names() { return level_names(); }

bool isa_level_features(std::string_view level, std::vector<std::string>* features) {
  for (const auto& [name, count] : kLevels) {
    if (name != level || name.empty()) continue;
    features->clear();
    for (size_t i = 0; i < count; ++i) features->emplace_back(feature_table()[i].name);
    return true;
  }
  return false;
}

const std::vector<std::string>& host_cpu_features() {
  static const std::vector<std::string>* const features = new std::vector<std::string>(detect_host_features());
  return *features;
}

absl::Status check_cpu_features(std::string_view what, std::string_view level,
                                const std::vector<std::string>& required,
                                const std::vector<std::string>& available) {
  std::vector<std::string> missing;
  for (const std::string& f : required) {
    if (std::find(available.begin(), available.end(), f) == available.end()) missing.push_back(f);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      std::string(what), " was compiled for ", level.empty() ? std::string("a custom ISA") : std::string(level),
      " (it needs ",
      absl::StrJoin(required, " "), "), but this CPU lacks ", absl::StrJoin(missing, " "), " (it has: ",
      available.empty() ? std::string("no extension beyond the x86-64 baseline") : absl::StrJoin(available, " "),
      "); compile it for a lower ISA level (target option -march=x86-64-v2 or -march=x86-64-v3)"));
}

}  // namespace relax
