#include "jit/hash.h"

namespace af::jit {
namespace {

using u128 = unsigned __int128;

// FNV-1a-128 parameters (http://www.isthe.com/chongo/tech/comp/fnv/): prime = 2^88 + 0x13b.
constexpr u128 kOffsetBasis =
    (static_cast<u128>(0x6c62272e07bb0142ULL) << 64) | static_cast<u128>(0x62b821756295c58dULL);
constexpr u128 kPrimeLow = 0x13b;
constexpr int kPrimeShift = 88;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Hash128::hex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(hi >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(lo >> (4 * i)) & 0xf];
  }
  return out;
}

std::optional<Hash128> Hash128::from_hex(std::string_view text) {
  if (text.size() != 32) return std::nullopt;
  Hash128 h;
  for (int i = 0; i < 32; ++i) {
    int v = hex_value(text[i]);
    if (v < 0) return std::nullopt;
    uint64_t& half = i < 16 ? h.hi : h.lo;
    half = (half << 4) | static_cast<uint64_t>(v);
  }
  return h;
}

Hasher128::Hasher128()
    : hi_(static_cast<uint64_t>(kOffsetBasis >> 64)), lo_(static_cast<uint64_t>(kOffsetBasis)) {}

Hasher128& Hasher128::update(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  u128 h = (static_cast<u128>(hi_) << 64) | lo_;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h = (h << kPrimeShift) + h * kPrimeLow;  // h * (2^88 + 0x13b) mod 2^128
  }
  hi_ = static_cast<uint64_t>(h >> 64);
  lo_ = static_cast<uint64_t>(h);
  return *this;
}

Hasher128& Hasher128::field(std::string_view s) {
  unsigned char len[8];
  uint64_t n = s.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  update(len, sizeof len);
  return update(s);
}

Hash128 Hasher128::digest() const {
  return Hash128{hi_, lo_};
}

Hash128 hash_bytes(const void* data, size_t size) {
  return Hasher128().update(data, size).digest();
}

}  // namespace af::jit
