/* AVX2 + FMA + F16C layer of autofuse_cpu.h: 8 float lanes in a __m256; a mask is a __m256
 * whose lanes are all ones (true) or all zeros (false). Included by autofuse_cpu.h only. */
#ifndef AUTOFUSE_CPU_AVX2_H
#define AUTOFUSE_CPU_AVX2_H

#include <immintrin.h>
#include <sleef.h>

#define AF_LANES 8
#define AF_ISA "avx2"

/* Eight f32 values. */
struct af_vf {
  __m256 v;
};
/* Eight booleans (comparison results, bool tensors). */
struct af_vm {
  __m256 m;
};

/* ---- constants ---- */
AF_INLINE af_vf af_splat(float x) {
  return {_mm256_set1_ps(x)};
}
AF_INLINE af_vm af_mask_splat(bool b) {
  return {_mm256_castsi256_ps(_mm256_set1_epi32(b ? -1 : 0))};
}
/* Lanes [0, n) set, for 0 <= n <= 8. */
AF_INLINE __m256i af_first_lanes_(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* ---- f32 memory ---- */
AF_INLINE af_vf af_load_f32(const float* p) {
  return {_mm256_loadu_ps(p)};
}
/* Lanes [0, n) from p, the rest 0; never touches p[n..7]. */
AF_INLINE af_vf af_load_f32_n(const float* p, int64_t n) {
  return {_mm256_maskload_ps(p, af_first_lanes_(n))};
}
AF_INLINE void af_store_f32(float* p, af_vf v) {
  _mm256_storeu_ps(p, v.v);
}
/* Writes lanes [0, n) only. */
AF_INLINE void af_store_f32_n(float* p, af_vf v, int64_t n) {
  _mm256_maskstore_ps(p, af_first_lanes_(n), v.v);
}
/* Non-temporal store of a full vector to a 32-byte aligned address. */
AF_INLINE void af_stream_f32(float* p, af_vf v) {
  _mm256_stream_ps(p, v.v);
}
/* Orders earlier non-temporal stores before later stores. */
AF_INLINE void af_stream_fence() {
  _mm_sfence();
}

/* ---- f16 and bf16 memory (uint16_t storage, computed in f32) ---- */
AF_INLINE af_vf af_load_f16(const uint16_t* p) {
  return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
}
AF_INLINE __m128i af_f16_bits_(af_vf v) {
  return _mm256_cvtps_ph(v.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
AF_INLINE void af_store_f16(uint16_t* p, af_vf v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), af_f16_bits_(v));
}
AF_INLINE af_vf af_load_bf16(const uint16_t* p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return {_mm256_castsi256_ps(_mm256_slli_epi32(w, 16))};
}
/* bf16 bits of each lane in the low 16 bits of an int32: round to nearest even, NaN -> 0x7fc0
 * (what c10::BFloat16 does). */
AF_INLINE __m256i af_bf16_lanes_(af_vf v) {
  __m256i b = _mm256_castps_si256(v.v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
  __m256i r =
      _mm256_srli_epi32(_mm256_add_epi32(b, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v.v, v.v, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), nan);
}
AF_INLINE __m128i af_bf16_bits_(af_vf v) {
  __m256i r = af_bf16_lanes_(v);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08));
}
AF_INLINE void af_store_bf16(uint16_t* p, af_vf v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), af_bf16_bits_(v));
}
/* Non-temporal stores of a full vector to a 16-byte aligned address. */
AF_INLINE void af_stream_f16(uint16_t* p, af_vf v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), af_f16_bits_(v));
}
AF_INLINE void af_stream_bf16(uint16_t* p, af_vf v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), af_bf16_bits_(v));
}
/* The f32 value nearest each lane that f16 / bf16 can hold (a cast to f16/bf16 kept in f32). */
AF_INLINE af_vf af_round_f16(af_vf v) {
  return {_mm256_cvtph_ps(af_f16_bits_(v))};
}
AF_INLINE af_vf af_round_bf16(af_vf v) {
  return {_mm256_castsi256_ps(_mm256_slli_epi32(af_bf16_lanes_(v), 16))};
}

/* ---- bool memory (one byte per element, nonzero = true; stores write 0 or 1) ---- */
AF_INLINE af_vm af_load_bool(const uint8_t* p) {
  __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return {_mm256_castsi256_ps(_mm256_cmpgt_epi32(w, _mm256_setzero_si256()))};
}
AF_INLINE void af_store_bool(uint8_t* p, af_vm m) {
  __m256i w = _mm256_and_si256(_mm256_castps_si256(m.m), _mm256_set1_epi32(1));
  __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(w, w), _mm256_setzero_si256());
  uint32_t lo = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(b)));
  uint32_t hi = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(b, 1)));
  uint64_t bytes = static_cast<uint64_t>(lo) | (static_cast<uint64_t>(hi) << 32);
  memcpy(p, &bytes, 8);
}

/* ---- arithmetic (IEEE, one rounding each) ---- */
AF_INLINE af_vf af_add(af_vf a, af_vf b) {
  return {_mm256_add_ps(a.v, b.v)};
}
AF_INLINE af_vf af_sub(af_vf a, af_vf b) {
  return {_mm256_sub_ps(a.v, b.v)};
}
AF_INLINE af_vf af_mul(af_vf a, af_vf b) {
  return {_mm256_mul_ps(a.v, b.v)};
}
AF_INLINE af_vf af_div(af_vf a, af_vf b) {
  return {_mm256_div_ps(a.v, b.v)};
}
AF_INLINE af_vf af_sqrt(af_vf a) {
  return {_mm256_sqrt_ps(a.v)};
}
/* x86 max/min: the second operand when either is NaN or both are zero. */
AF_INLINE af_vf af_max_x86_(af_vf a, af_vf b) {
  return {_mm256_max_ps(a.v, b.v)};
}
AF_INLINE af_vf af_min_x86_(af_vf a, af_vf b) {
  return {_mm256_min_ps(a.v, b.v)};
}
AF_INLINE af_vf af_floor(af_vf a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)};
}
AF_INLINE af_vf af_ceil(af_vf a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)};
}
AF_INLINE af_vf af_trunc(af_vf a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
}
/* Half to even, like torch.round. */
AF_INLINE af_vf af_round(af_vf a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
/* Bitwise operations on the float bits (sign tricks). */
AF_INLINE af_vf af_bits_and_(af_vf a, af_vf b) {
  return {_mm256_and_ps(a.v, b.v)};
}
AF_INLINE af_vf af_bits_or_(af_vf a, af_vf b) {
  return {_mm256_or_ps(a.v, b.v)};
}
AF_INLINE af_vf af_bits_xor_(af_vf a, af_vf b) {
  return {_mm256_xor_ps(a.v, b.v)};
}
/* ~a & b */
AF_INLINE af_vf af_bits_andnot_(af_vf a, af_vf b) {
  return {_mm256_andnot_ps(a.v, b.v)};
}

/* ---- comparisons (ordered, except ne: true when either is NaN, like torch) ---- */
AF_INLINE af_vm af_eq(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)};
}
AF_INLINE af_vm af_ne(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_NEQ_UQ)};
}
AF_INLINE af_vm af_lt(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)};
}
AF_INLINE af_vm af_le(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_LE_OQ)};
}
AF_INLINE af_vm af_gt(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)};
}
AF_INLINE af_vm af_ge(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_GE_OQ)};
}
/* True where a or b is NaN. */
AF_INLINE af_vm af_unordered_(af_vf a, af_vf b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_UNORD_Q)};
}

/* ---- masks ---- */
AF_INLINE af_vm af_mask_and_(af_vm a, af_vm b) {
  return {_mm256_and_ps(a.m, b.m)};
}
AF_INLINE af_vm af_mask_or_(af_vm a, af_vm b) {
  return {_mm256_or_ps(a.m, b.m)};
}
AF_INLINE af_vm af_mask_xor_(af_vm a, af_vm b) {
  return {_mm256_xor_ps(a.m, b.m)};
}
AF_INLINE af_vm af_mask_not_(af_vm a) {
  return {_mm256_xor_ps(a.m, _mm256_castsi256_ps(_mm256_set1_epi32(-1)))};
}
/* m ? a : b per lane. */
AF_INLINE af_vf af_select_(af_vm m, af_vf a, af_vf b) {
  return {_mm256_blendv_ps(b.v, a.v, m.m)};
}
AF_INLINE af_vm af_mask_select_(af_vm m, af_vm a, af_vm b) {
  return {_mm256_blendv_ps(b.m, a.m, m.m)};
}
/* Lanes as 32-bit 0/1 flags and back (for loading/storing masks through a byte buffer). */
AF_INLINE af_vf af_mask_to_f32_(af_vm m) {
  return {_mm256_and_ps(m.m, _mm256_set1_ps(1.0f))};
}

/* ---- transcendentals: SLEEF, 1.0-ULP variants ---- */
/* exp: SLEEF's expf u10 kernel (sleefsimdsp.c xexpf, FMA build) transcribed inline, so the
 * sigmoid/silu/exp chains need no call; bit-identical to Sleef_expf8_u10avx2 (a unit test
 * compares it with SLEEF). Cody-Waite reduction by ln 2, degree-6 polynomial, 2^q in two steps
 * so that results down to the subnormals are exact. */
AF_INLINE af_vf af_exp(af_vf a) {
  const __m256 d = a.v;
  const __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(d, _mm256_set1_ps(1.442695040888963407f)));
  const __m256 qf = _mm256_cvtepi32_ps(q);
  __m256 s = _mm256_fmadd_ps(qf, _mm256_set1_ps(-0.693145751953125f), d);
  s = _mm256_fmadd_ps(qf, _mm256_set1_ps(-1.428606765330187045e-06f), s);
  __m256 u = _mm256_set1_ps(0.000198527617612853646278381f);
  u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.00139304355252534151077271f));
  u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.00833336077630519866943359f));
  u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.0416664853692054748535156f));
  u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.166666671633720397949219f));
  u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.5f));
  u = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(s, s), u, s));
  const __m256i bias = _mm256_set1_epi32(0x7f);
  const __m256i h = _mm256_srai_epi32(q, 1);
  const __m256 p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  const __m256 p2 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(q, h), bias), 23));
  u = _mm256_mul_ps(_mm256_mul_ps(u, p1), p2);
  u = _mm256_andnot_ps(_mm256_cmp_ps(d, _mm256_set1_ps(-104.0f), _CMP_LT_OQ), u);
  return {_mm256_blendv_ps(u, _mm256_set1_ps(__builtin_inff()),
                           _mm256_cmp_ps(_mm256_set1_ps(100.0f), d, _CMP_LT_OQ))};
}
/* exp(a) for a <= 0 or NaN (erf's exp(-x^2)): af_exp here (AVX-512 has a shorter one). */
AF_INLINE af_vf af_exp_nonpos_(af_vf a) {
  return af_exp(a);
}
AF_INLINE af_vf af_exp2(af_vf a) {
  return {Sleef_exp2f8_u10avx2(a.v)};
}
AF_INLINE af_vf af_expm1(af_vf a) {
  return {Sleef_expm1f8_u10avx2(a.v)};
}
AF_INLINE af_vf af_log(af_vf a) {
  return {Sleef_logf8_u10avx2(a.v)};
}
/* SLEEF's log1p; autofuse_cpu_math.h's af_log1p mends its range cut. */
AF_INLINE af_vf af_log1p_sleef_(af_vf a) {
  return {Sleef_log1pf8_u10avx2(a.v)};
}
/* a * b + c with one rounding. */
AF_INLINE af_vf af_fma_(af_vf a, af_vf b, af_vf c) {
  return {_mm256_fmadd_ps(a.v, b.v, c.v)};
}
AF_INLINE af_vf af_sin(af_vf a) {
  return {Sleef_sinf8_u10avx2(a.v)};
}
AF_INLINE af_vf af_cos(af_vf a) {
  return {Sleef_cosf8_u10avx2(a.v)};
}
AF_INLINE af_vf af_pow(af_vf a, af_vf b) {
  return {Sleef_powf8_u10avx2(a.v, b.v)};
}
/* C fmod (exact). */
AF_INLINE af_vf af_fmod_(af_vf a, af_vf b) {
  return {Sleef_fmodf8_avx2(a.v, b.v)};
}

#endif /* AUTOFUSE_CPU_AVX2_H */
