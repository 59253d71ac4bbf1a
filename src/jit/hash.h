// A 128-bit content hash for the JIT cache: FNV-1a-128 (the published FNV parameters).
// NOT cryptographic: it detects edits and corruption, not an attacker. The cache's trust boundary
// is the private 0700 directory (docs/cache.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace af::jit {

/// A 128-bit digest; prints as 32 lowercase hex digits (high half first).
struct Hash128 {
  uint64_t hi = 0;
  uint64_t lo = 0;

  /// 32 lowercase hex digits.
  std::string hex() const;
  /// Parses 32 hex digits; nullopt on anything else.
  static std::optional<Hash128> from_hex(std::string_view text);

  bool operator==(const Hash128& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const Hash128& o) const { return !(*this == o); }
};

/// Incremental FNV-1a-128. `field()` length-prefixes its input so that a sequence of fields
/// hashes unambiguously ("ab","c" differs from "a","bc").
class Hasher128 {
 public:
  Hasher128();
  /// Mixes raw bytes.
  Hasher128& update(const void* data, size_t size);
  /// Mixes raw bytes of a string.
  Hasher128& update(std::string_view s) { return update(s.data(), s.size()); }
  /// Mixes the length of `s` (8 bytes, little endian) then its bytes.
  Hasher128& field(std::string_view s);
  /// The digest of everything mixed so far (the hasher stays usable).
  Hash128 digest() const;

 private:
  uint64_t hi_, lo_;  // the 128-bit FNV state
};

/// FNV-1a-128 of a byte range.
Hash128 hash_bytes(const void* data, size_t size);

}  // namespace af::jit
