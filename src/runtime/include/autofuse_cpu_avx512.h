/* AVX-512 (F, BW, VL, DQ) + FMA + F16C layer of autofuse_cpu.h: 16 float lanes in a __m512;
 * a mask is a __mmask16. Included by autofuse_cpu.h only. */
#ifndef AUTOFUSE_CPU_AVX512_H
#define AUTOFUSE_CPU_AVX512_H

#include <immintrin.h>
#include <sleef.h>

#define AF_LANES 16
#define AF_ISA "avx512"

/* Sixteen f32 values. */
struct af_vf {
  __m512 v;
};
/* Sixteen booleans (comparison results, bool tensors). */
struct af_vm {
  __mmask16 m;
};

/* ---- constants ---- */
AF_INLINE af_vf af_splat(float x) {
  return {_mm512_set1_ps(x)};
}
AF_INLINE af_vm af_mask_splat(bool b) {
  return {static_cast<__mmask16>(b ? 0xffff : 0)};
}
/* Lanes [0, n) set, for 0 <= n <= 16. */
AF_INLINE __mmask16 af_first_lanes_(int64_t n) {
  return static_cast<__mmask16>((1u << static_cast<unsigned>(n)) - 1u);
}

/* ---- f32 memory ---- */
AF_INLINE af_vf af_load_f32(const float* p) {
  return {_mm512_loadu_ps(p)};
}
/* Lanes [0, n) from p, the rest 0; never touches p[n..15]. */
AF_INLINE af_vf af_load_f32_n(const float* p, int64_t n) {
  return {_mm512_maskz_loadu_ps(af_first_lanes_(n), p)};
}
AF_INLINE void af_store_f32(float* p, af_vf v) {
  _mm512_storeu_ps(p, v.v);
}
/* Writes lanes [0, n) only. */
AF_INLINE void af_store_f32_n(float* p, af_vf v, int64_t n) {
  _mm512_mask_storeu_ps(p, af_first_lanes_(n), v.v);
}
/* Non-temporal store of a full vector to a 64-byte aligned address. */
AF_INLINE void af_stream_f32(float* p, af_vf v) {
  _mm512_stream_ps(p, v.v);
}
/* Orders earlier non-temporal stores before later stores. */
AF_INLINE void af_stream_fence() {
  _mm_sfence();
}

/* ---- f16 and bf16 memory (uint16_t storage, computed in f32) ---- */
AF_INLINE af_vf af_load_f16(const uint16_t* p) {
  return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
}
AF_INLINE __m256i af_f16_bits_(af_vf v) {
  return _mm512_cvtps_ph(v.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
AF_INLINE void af_store_f16(uint16_t* p, af_vf v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), af_f16_bits_(v));
}
AF_INLINE af_vf af_load_bf16(const uint16_t* p) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return {_mm512_castsi512_ps(_mm512_slli_epi32(w, 16))};
}
/* bf16 bits of each lane in the low 16 bits of an int32: round to nearest even, NaN -> 0x7fc0
 * (what c10::BFloat16 does). */
AF_INLINE __m512i af_bf16_lanes_(af_vf v) {
  __m512i b = _mm512_castps_si512(v.v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  __m512i r =
      _mm512_srli_epi32(_mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  __mmask16 nan = _mm512_cmp_ps_mask(v.v, v.v, _CMP_UNORD_Q);
  return _mm512_mask_blend_epi32(nan, r, _mm512_set1_epi32(0x7fc0));
}
/* The bf16 bits of each lane. With AVX512_BF16 one instruction rounds to nearest even and keeps
 * a NaN's sign and payload (quieted; c10::BFloat16 gives 0x7fc0, the same NaN to every test), but
 * it flushes f32 denormals (0 < |v| < 2^-126) to zero: those lanes, rare, take the integer
 * rounding, which keeps them as c10::BFloat16 does (x / (x + x) is 0.5, not NaN, for a tiny x). */
AF_INLINE __m256i af_bf16_bits_(af_vf v) {
#if defined(__AVX512BF16__)
  __m256i bits = (__m256i)_mm512_cvtneps_pbh(v.v);
  const __m512 a = _mm512_abs_ps(v.v);
  const __mmask16 tiny =
      _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1p-126f), _CMP_LT_OQ), a,
                              _mm512_setzero_ps(), _CMP_NEQ_OQ);
  if (tiny) bits = _mm256_mask_blend_epi16(tiny, bits, _mm512_cvtepi32_epi16(af_bf16_lanes_(v)));
  return bits;
#else
  return _mm512_cvtepi32_epi16(af_bf16_lanes_(v));
#endif
}
AF_INLINE void af_store_bf16(uint16_t* p, af_vf v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), af_bf16_bits_(v));
}
/* Non-temporal stores of a full vector to a 32-byte aligned address. */
AF_INLINE void af_stream_f16(uint16_t* p, af_vf v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), af_f16_bits_(v));
}
AF_INLINE void af_stream_bf16(uint16_t* p, af_vf v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), af_bf16_bits_(v));
}
/* The f32 value nearest each lane that f16 / bf16 can hold (a cast to f16/bf16 kept in f32). */
AF_INLINE af_vf af_round_f16(af_vf v) {
  return {_mm512_cvtph_ps(af_f16_bits_(v))};
}
AF_INLINE af_vf af_round_bf16(af_vf v) {
#if defined(__AVX512BF16__)
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(af_bf16_bits_(v)), 16))};
#else
  return {_mm512_castsi512_ps(_mm512_slli_epi32(af_bf16_lanes_(v), 16))};
#endif
}

/* ---- bool memory (one byte per element, nonzero = true; stores write 0 or 1) ---- */
AF_INLINE af_vm af_load_bool(const uint8_t* p) {
  __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return {_mm_test_epi8_mask(b, b)};
}
AF_INLINE void af_store_bool(uint8_t* p, af_vm m) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_maskz_set1_epi8(m.m, 1));
}

/* ---- arithmetic (IEEE, one rounding each) ---- */
AF_INLINE af_vf af_add(af_vf a, af_vf b) {
  return {_mm512_add_ps(a.v, b.v)};
}
AF_INLINE af_vf af_sub(af_vf a, af_vf b) {
  return {_mm512_sub_ps(a.v, b.v)};
}
AF_INLINE af_vf af_mul(af_vf a, af_vf b) {
  return {_mm512_mul_ps(a.v, b.v)};
}
AF_INLINE af_vf af_div(af_vf a, af_vf b) {
  return {_mm512_div_ps(a.v, b.v)};
}
AF_INLINE af_vf af_sqrt(af_vf a) {
  return {_mm512_sqrt_ps(a.v)};
}
/* x86 max/min: the second operand when either is NaN or both are zero. */
AF_INLINE af_vf af_max_x86_(af_vf a, af_vf b) {
  return {_mm512_max_ps(a.v, b.v)};
}
AF_INLINE af_vf af_min_x86_(af_vf a, af_vf b) {
  return {_mm512_min_ps(a.v, b.v)};
}
AF_INLINE af_vf af_floor(af_vf a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)};
}
AF_INLINE af_vf af_ceil(af_vf a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)};
}
AF_INLINE af_vf af_trunc(af_vf a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
}
/* Half to even, like torch.round. */
AF_INLINE af_vf af_round(af_vf a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
/* Bitwise operations on the float bits (sign tricks; AVX512DQ). */
AF_INLINE af_vf af_bits_and_(af_vf a, af_vf b) {
  return {_mm512_and_ps(a.v, b.v)};
}
AF_INLINE af_vf af_bits_or_(af_vf a, af_vf b) {
  return {_mm512_or_ps(a.v, b.v)};
}
AF_INLINE af_vf af_bits_xor_(af_vf a, af_vf b) {
  return {_mm512_xor_ps(a.v, b.v)};
}
/* ~a & b */
AF_INLINE af_vf af_bits_andnot_(af_vf a, af_vf b) {
  return {_mm512_andnot_ps(a.v, b.v)};
}

/* ---- comparisons (ordered, except ne: true when either is NaN, like torch) ---- */
AF_INLINE af_vm af_eq(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)};
}
AF_INLINE af_vm af_ne(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_NEQ_UQ)};
}
AF_INLINE af_vm af_lt(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)};
}
AF_INLINE af_vm af_le(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ)};
}
AF_INLINE af_vm af_gt(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)};
}
AF_INLINE af_vm af_ge(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GE_OQ)};
}
/* True where a or b is NaN. */
AF_INLINE af_vm af_unordered_(af_vf a, af_vf b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_UNORD_Q)};
}

/* ---- masks ---- */
AF_INLINE af_vm af_mask_and_(af_vm a, af_vm b) {
  return {static_cast<__mmask16>(a.m & b.m)};
}
AF_INLINE af_vm af_mask_or_(af_vm a, af_vm b) {
  return {static_cast<__mmask16>(a.m | b.m)};
}
AF_INLINE af_vm af_mask_xor_(af_vm a, af_vm b) {
  return {static_cast<__mmask16>(a.m ^ b.m)};
}
AF_INLINE af_vm af_mask_not_(af_vm a) {
  return {static_cast<__mmask16>(~a.m)};
}
/* m ? a : b per lane. */
AF_INLINE af_vf af_select_(af_vm m, af_vf a, af_vf b) {
  return {_mm512_mask_blend_ps(m.m, b.v, a.v)};
}
AF_INLINE af_vm af_mask_select_(af_vm m, af_vm a, af_vm b) {
  return {static_cast<__mmask16>((m.m & a.m) | (~m.m & b.m))};
}
/* 1.0 where m, else 0.0. */
AF_INLINE af_vf af_mask_to_f32_(af_vm m) {
  return {_mm512_maskz_mov_ps(m.m, _mm512_set1_ps(1.0f))};
}

/* ---- transcendentals: SLEEF, 1.0-ULP variants ---- */
/* exp(d) / 2^qf for qf = round(d / ln 2): SLEEF's Cody-Waite reduction by ln 2 and degree-6
 * polynomial (sleefsimdsp.c xexpf, FMA build), shared by af_exp and af_exp_nonpos_. */
AF_INLINE __m512 af_exp_reduced_(__m512 d, __m512 qf) {
  __m512 s = _mm512_fmadd_ps(qf, _mm512_set1_ps(-0.693145751953125f), d);
  s = _mm512_fmadd_ps(qf, _mm512_set1_ps(-1.428606765330187045e-06f), s);
  __m512 u = _mm512_set1_ps(0.000198527617612853646278381f);
  u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0.00139304355252534151077271f));
  u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0.00833336077630519866943359f));
  u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0.0416664853692054748535156f));
  u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0.166666671633720397949219f));
  u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0.5f));
  u = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(_mm512_mul_ps(s, s), u, s));
  return u;
}
/* exp: SLEEF's expf u10 kernel (sleefsimdsp.c xexpf, FMA build) transcribed inline, as in the
 * AVX2 layer (where a unit test checks it bit for bit against SLEEF). */
AF_INLINE af_vf af_exp(af_vf a) {
  const __m512 d = a.v;
  const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(d, _mm512_set1_ps(1.442695040888963407f)));
  const __m512 qf = _mm512_cvtepi32_ps(q);
  __m512 u = af_exp_reduced_(d, qf);
  const __m512i bias = _mm512_set1_epi32(0x7f);
  const __m512i h = _mm512_srai_epi32(q, 1);
  const __m512 p1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(h, bias), 23));
  const __m512 p2 =
      _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(q, h), bias), 23));
  u = _mm512_mul_ps(_mm512_mul_ps(u, p1), p2);
  u = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(-104.0f), _CMP_NLT_UQ), u);
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(_mm512_set1_ps(100.0f), d, _CMP_LT_OQ), u,
                               _mm512_set1_ps(__builtin_inff()))};
}
/* exp(a) for a <= 0 or NaN (erf's exp(-x^2)): af_exp's reduction and polynomial, with 2^q
 * applied by vscalefps, exact down to the subnormals like af_exp's two steps, and no overflow
 * to handle: about half af_exp's instructions. a is clamped at -104 first (exp(-104) rounds to
 * 0), so -inf gives 0, not NaN; max returns its second operand on NaN, so NaN stays NaN. */
AF_INLINE af_vf af_exp_nonpos_(af_vf a) {
  const __m512 d = _mm512_max_ps(_mm512_set1_ps(-104.0f), a.v);
  const __m512 qf = _mm512_roundscale_ps(_mm512_mul_ps(d, _mm512_set1_ps(1.442695040888963407f)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return {_mm512_scalef_ps(af_exp_reduced_(d, qf), qf)};
}
/* Exact GELU, x * Phi(x), as a piecewise polynomial: Phi on 32 intervals of width 0.375 over
 * [-6, 6), a degree-5 polynomial each (tools/fit_gelu.py fits and prints the table: minimax
 * relative error of Phi), picked by vpermt2ps from two registers per coefficient; x above the
 * intervals gives x, below them x * 0 (-0 as eager, |GELU| < 6e-9 there; NaN for -inf as the
 * formula). About 20 instructions against the erf formula's 35, the way oneDNN's gelu_erf
 * (eager's GELU) is fast. Error against float64:
 * [-6, -4): max abs error 5.7e-10, max relative 5.3e-05
 * [-4, -1): max abs error 7.4e-08, max relative 4.1e-06
 * [-1, 1): max abs error 1.6e-07, max relative 4.5e-07
 * [1, 4): max abs error 3.3e-07, max relative 1.9e-07
 * [4, 8): max abs error 4.5e-07, max relative 1.1e-07
 * (eager's: 1.1e-06 absolute, 7e-03 relative on [-4, -1)). NaN gives NaN (x * p). */
#define AF_GELU_PIECEWISE_ 1
static const float af_gelu_phi_[6][32] __attribute__((aligned(64))) = {
    {9.865364081e-10f, 9.275090918e-09f, 7.604806029e-08f, 5.440358564e-07f, 3.397651653e-06f, 1.853668073e-05f, 8.841717499e-05f, 3.690783342e-04f, 1.349898055e-03f, 4.332448822e-03f, 1.222447399e-02f, 3.039636277e-02f, 6.680720299e-02f, 1.302945167e-01f, 2.266273499e-01f, 3.538302183e-01f, 5.000000000e-01f, 6.461697817e-01f, 7.733726501e-01f, 8.697054982e-01f, 9.331927896e-01f, 9.696036577e-01f, 9.877755046e-01f, 9.956675768e-01f, 9.986500740e-01f, 9.996309280e-01f, 9.999116063e-01f, 9.999814630e-01f, 9.999966025e-01f, 9.999994636e-01f, 9.999999404e-01f, 1.000000000e+00f},
    {2.283375711e-09f, 2.017877243e-08f, 1.549618389e-07f, 1.034067282e-06f, 5.995853826e-06f, 3.020775694e-05f, 1.322331664e-04f, 5.029308959e-04f, 1.661940943e-03f, 4.771527369e-03f, 1.190228015e-02f, 2.579476312e-02f, 4.856911302e-02f, 7.945392281e-02f, 1.129268035e-01f, 1.394457966e-01f, 1.496032327e-01f, 1.394453794e-01f, 1.129263118e-01f, 7.945371419e-02f, 4.856920987e-02f, 2.579497918e-02f, 1.190243289e-02f, 4.771573935e-03f, 1.661925693e-03f, 5.029028398e-04f, 1.322139869e-04f, 3.019880205e-05f, 5.992653314e-06f, 1.033150852e-06f, 1.547467434e-07f, 2.013679357e-08f},
    {2.492810847e-09f, 2.083875472e-08f, 1.503789804e-07f, 9.365020333e-07f, 5.030573448e-06f, 2.329063864e-05f, 9.283728286e-05f, 3.181005013e-04f, 9.348632884e-04f, 2.349025104e-03f, 5.022453144e-03f, 9.069665335e-03f, 1.365994383e-02f, 1.675756462e-02f, 1.587705500e-02f, 9.803066030e-03f, 1.428785936e-06f, -9.801365435e-03f, -1.587761752e-02f, -1.675938629e-02f, -1.366136223e-02f, -9.069978260e-03f, -5.022072699e-03f, -2.348588081e-03f, -9.346424486e-04f, -3.180566709e-04f, -9.285778651e-05f, -2.331355790e-05f, -5.042295015e-06f, -9.406945196e-07f, -1.515349197e-07f, -2.109460517e-08f},
    {2.213832229e-09f, 1.647596903e-08f, 1.061299386e-07f, 5.905772582e-07f, 2.832036898e-06f, 1.166602851e-05f, 4.110848386e-05f, 1.232118811e-04f, 3.115673899e-04f, 6.564461510e-04f, 1.128096366e-03f, 1.515484997e-03f, 1.423164038e-03f, 5.042443518e-04f, -1.143576112e-03f, -2.800779417e-03f, -3.512119409e-03f, -2.823316725e-03f, -1.169730327e-03f, 4.926676629e-04f, 1.428362797e-03f, 1.527224551e-03f, 1.136644627e-03f, 6.591886631e-04f, 3.107748635e-04f, 1.216255405e-04f, 3.999180990e-05f, 1.113266444e-05f, 2.637297939e-06f, 5.336530080e-07f, 9.248890365e-08f, 1.375824255e-08f},
    {2.781400110e-10f, 2.994990478e-09f, 2.379955610e-08f, 1.493856701e-07f, 7.596272553e-07f, 3.158909067e-06f, 1.074994270e-05f, 2.973156734e-05f, 6.568765821e-05f, 1.115913474e-04f, 1.317567803e-04f, 6.593375292e-05f, -1.197363454e-04f, -3.589685948e-04f, -4.821252951e-04f, -3.451871744e-04f, 1.004610840e-05f, 3.567823151e-04f, 4.772588145e-04f, 3.454299585e-04f, 1.099787478e-04f, -6.722789840e-05f, -1.281883888e-04f, -1.080968650e-04f, -6.416470569e-05f, -2.962640974e-05f, -1.107518983e-05f, -3.422123427e-06f, -8.848263064e-07f, -1.929863487e-07f, -3.570426799e-08f, -5.626012545e-09f},
    {1.020220242e-09f, 6.283492837e-09f, 3.271280136e-08f, 1.430648666e-07f, 5.208764833e-07f, 1.556998427e-06f, 3.731942343e-06f, 6.844416930e-06f, 8.491133485e-06f, 3.435380222e-06f, -1.269562108e-05f, -3.500700041e-05f, -4.516746776e-05f, -2.393017166e-05f, 2.472408232e-05f, 6.687156565e-05f, 6.718220538e-05f, 2.540872447e-05f, -2.338973172e-05f, -4.510915096e-05f, -3.535129872e-05f, -1.310786320e-05f, 3.208019507e-06f, 8.472530681e-06f, 6.926169590e-06f, 3.815865057e-06f, 1.607730610e-06f, 5.432801800e-07f, 1.508008722e-07f, 3.486962896e-08f, 6.777744588e-09f, 1.114392134e-09f},
};
AF_INLINE af_vf af_gelu_piecewise_(af_vf a) {
  const __m512 x = a.v;
  const __m512 u = _mm512_fmadd_ps(x, _mm512_set1_ps(1.0f / 0.375f), _mm512_set1_ps(6.0f / 0.375f));
  const __m512i k = _mm512_cvttps_epi32(u);  // the interval (low 5 bits; outside: blended away)
  const __m512 t = _mm512_sub_ps(u, _mm512_cvtepi32_ps(k));
#define AF_GELU_COEF_(j) \
  _mm512_permutex2var_ps(_mm512_load_ps(af_gelu_phi_[j]), k, _mm512_load_ps(af_gelu_phi_[j] + 16))
  __m512 p = AF_GELU_COEF_(5);
  p = _mm512_fmadd_ps(p, t, AF_GELU_COEF_(4));
  p = _mm512_fmadd_ps(p, t, AF_GELU_COEF_(3));
  p = _mm512_fmadd_ps(p, t, AF_GELU_COEF_(2));
  p = _mm512_fmadd_ps(p, t, AF_GELU_COEF_(1));
  p = _mm512_fmadd_ps(p, t, AF_GELU_COEF_(0));
#undef AF_GELU_COEF_
  __m512 g = _mm512_mul_ps(x, p);
  g = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(6.0f), _CMP_GE_OQ), g, x);
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-6.0f), _CMP_LT_OQ), g,
                               _mm512_mul_ps(x, _mm512_setzero_ps()))};
}
AF_INLINE af_vf af_exp2(af_vf a) {
  return {Sleef_exp2f16_u10avx512f(a.v)};
}
AF_INLINE af_vf af_expm1(af_vf a) {
  return {Sleef_expm1f16_u10avx512f(a.v)};
}
AF_INLINE af_vf af_log(af_vf a) {
  return {Sleef_logf16_u10avx512f(a.v)};
}
/* SLEEF's log1p; autofuse_cpu_math.h's af_log1p mends its range cut. */
AF_INLINE af_vf af_log1p_sleef_(af_vf a) {
  return {Sleef_log1pf16_u10avx512f(a.v)};
}
/* a * b + c with one rounding. */
AF_INLINE af_vf af_fma_(af_vf a, af_vf b, af_vf c) {
  return {_mm512_fmadd_ps(a.v, b.v, c.v)};
}
AF_INLINE af_vf af_sin(af_vf a) {
  return {Sleef_sinf16_u10avx512f(a.v)};
}
AF_INLINE af_vf af_cos(af_vf a) {
  return {Sleef_cosf16_u10avx512f(a.v)};
}
AF_INLINE af_vf af_pow(af_vf a, af_vf b) {
  return {Sleef_powf16_u10avx512f(a.v, b.v)};
}
/* C fmod (exact). */
AF_INLINE af_vf af_fmod_(af_vf a, af_vf b) {
  return {Sleef_fmodf16_avx512f(a.v, b.v)};
}

#endif /* AUTOFUSE_CPU_AVX512_H */
