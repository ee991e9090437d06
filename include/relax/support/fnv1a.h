// FNV-1a 64: the one checksum relax writes into its files.
//
// The serialised Executable (executable.h) and the integrity trailer of every
// shared object relax writes (relax/runtime/library_file.h) use it. Each step
// (xor a byte, multiply by an odd constant modulo 2^64) is a bijection of the
// state, so any change of a single byte always changes the result; it is a
// checksum against corruption, not a defence against a forger.
//
// Header-only, so that the runtime (which links nothing of the compiler) and
// the code generator share it.
#pragma once

#include <cstdint>
#include <span>

namespace relax {

/// The FNV-1a 64 offset basis: the hash of no bytes.
inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ULL;

/// FNV-1a 64 of `bytes`, continuing from `state` (kFnv1a64Basis to start), so
/// that a file can be hashed in pieces.
inline uint64_t fnv1a64(std::span<const uint8_t> bytes, uint64_t state = kFnv1a64Basis) {
  for (uint8_t b : bytes) {
    state ^= b;
    state *= 0x100000001b3ULL;
  }
  return state;
}

}  // namespace relax
