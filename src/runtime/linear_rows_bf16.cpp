// linear_rows for bf16: AVX-512 BF16 dot products of pairs (vdpbf16ps, as oneDNN's), 32 values
// a step, f32 sums, one rounding to bf16 per result.
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512bf16")
#include <cstring>

#include "runtime/linear_rows_kernel.h"

namespace af::runtime::linear_rows_detail {
namespace {

struct BF16 {
  using T = uint16_t;
  using V = __m512i;
  static constexpr int64_t kStep = 32;
  static __mmask32 mask(int64_t n) { return static_cast<__mmask32>((uint64_t{1} << n) - 1u); }
  static V load(const T* p) { return _mm512_loadu_si512(p); }
  static V load(__mmask32 m, const T* p) { return _mm512_maskz_loadu_epi16(m, p); }
  static __m512 dot(__m512 acc, V x, V w) {
    return _mm512_dpbf16_ps(acc, (__m512bh)x, (__m512bh)w);
  }
  static float to_f32(T v) {
    const uint32_t u = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  /// Rounded to nearest even; NaN stays NaN.
  static T from_f32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<T>((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<T>(u >> 16);
  }
};

}  // namespace

void rows_block_bf16(const Problem& p, int64_t n0, int64_t n1) {
  rows_block<BF16>(p, n0, n1);
}

}  // namespace af::runtime::linear_rows_detail
