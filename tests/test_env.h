// What a test binary knows of how it was built and run: whether a sanitizer instruments it,
// and the trial counts and seeds of the property tests (RELAX_FUZZ_TRIALS / RELAX_FUZZ_SEED).
//
// Property tests run their full default counts in the plain builds, where they check values.
// Under a sanitizer each trial costs 5-15 times more and what is being looked for is a memory
// or undefined-behaviour error, which a quarter of the trials reaches as well; so the defaults
// shrink by kSanitizerTrialDivisor there. RELAX_FUZZ_TRIALS, when set, is taken as it is in
// every build, so that a long search can be run by hand without editing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace relax::testing_util {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

/// How much smaller the default trial counts are under a sanitizer.
inline constexpr int64_t kSanitizerTrialDivisor = (kAddressSanitizer || kThreadSanitizer) ? 4 : 1;

/// The trial count of a property test: RELAX_FUZZ_TRIALS when set, else `fallback`
/// (divided by kSanitizerTrialDivisor under a sanitizer, and at least 1).
inline int64_t fuzz_trials(int64_t fallback) {
  if (const char* text = std::getenv("RELAX_FUZZ_TRIALS")) return std::atoll(text);
  return std::max<int64_t>(1, fallback / kSanitizerTrialDivisor);
}

/// The seed of a property test: RELAX_FUZZ_SEED when set, else `fallback`.
inline int64_t fuzz_seed(int64_t fallback) {
  const char* text = std::getenv("RELAX_FUZZ_SEED");
  return text ? std::atoll(text) : fallback;
}

}  // namespace relax::testing_util
