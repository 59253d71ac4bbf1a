// linear_rows for f32: AVX-512F fused multiply-adds, 16 values a step (both weight layouts).
#pragma GCC target("avx512f,avx512bw,avx512vl")
#include "runtime/linear_kn_kernel.h"
#include "runtime/linear_rows_kernel.h"

namespace af::runtime::linear_rows_detail {
namespace {

struct F32 {
  using T = float;
  using V = __m512;
  static constexpr int64_t kStep = 16;
  static __mmask16 mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static V load(__mmask16 m, const T* p) { return _mm512_maskz_loadu_ps(m, p); }
  static __m512 dot(__m512 acc, V x, V w) { return _mm512_fmadd_ps(x, w, acc); }
  static __m512 load_f32(__mmask16 m, const T* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store_f32(__mmask16 m, T* p, __m512 v) { _mm512_mask_storeu_ps(p, m, v); }
  static float to_f32(T v) { return v; }
  static T from_f32(float f) { return f; }
};

}  // namespace

void rows_block_f32(const Problem& p, int64_t n0, int64_t n1) {
  rows_block<F32>(p, n0, n1);
}

void kn_block_f32(const Problem& p, int64_t n0, int64_t n1) {
  kn_block<F32>(p, n0, n1);
}

}  // namespace af::runtime::linear_rows_detail
