// linear_rows for bf16: AVX-512 BF16 dot products of pairs (vdpbf16ps, as oneDNN's), 32 values
// a step, f32 sums, one rounding to bf16 per result; on a [K, N] weight widened to f32 and
// multiplied and added there (exact products, f32 sums, as the dot products).
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512bf16")
#include <cstring>

#include "runtime/linear_kn_kernel.h"
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
  /// 16 values widened to f32 (exact: a bf16 is an f32's upper half).
  static __m512 load_f32(__mmask16 m, const T* p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
  }
  /// 16 values rounded to nearest even as from_f32 does; NaN stays NaN.
  static void store_f32(__mmask16 m, T* p, __m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_or_si512(u, _mm512_set1_epi32(0x400000)));
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
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

void kn_block_bf16(const Problem& p, int64_t n0, int64_t n1) {
  kn_block<BF16>(p, n0, n1);
}

}  // namespace af::runtime::linear_rows_detail
