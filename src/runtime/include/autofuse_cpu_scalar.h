/* Scalar (1-lane) layer of autofuse_cpu.h, for hosts without AVX2/FMA/F16C: the same interface
 * as the SIMD layers over a single float, so generated kernels are unchanged. Transcendentals
 * use SLEEF's scalar 1.0-ULP functions. Included by autofuse_cpu.h only. */
#ifndef AUTOFUSE_CPU_SCALAR_H
#define AUTOFUSE_CPU_SCALAR_H

#include <sleef.h>

#define AF_LANES 1
#define AF_ISA "scalar"

/* One f32 value. */
struct af_vf {
  float v;
};
/* One boolean. */
struct af_vm {
  bool m;
};

AF_INLINE uint32_t af_bits_of_(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
AF_INLINE float af_float_of_(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ---- constants ---- */
AF_INLINE af_vf af_splat(float x) {
  return {x};
}
AF_INLINE af_vm af_mask_splat(bool b) {
  return {b};
}

/* ---- f32 memory ---- */
AF_INLINE af_vf af_load_f32(const float* p) {
  return {*p};
}
AF_INLINE af_vf af_load_f32_n(const float* p, int64_t n) {
  return {n > 0 ? *p : 0.0f};
}
AF_INLINE void af_store_f32(float* p, af_vf v) {
  *p = v.v;
}
AF_INLINE void af_store_f32_n(float* p, af_vf v, int64_t n) {
  if (n > 0) *p = v.v;
}
/* No non-temporal stores in the scalar layer. */
AF_INLINE void af_stream_f32(float* p, af_vf v) {
  *p = v.v;
}
AF_INLINE void af_stream_fence() {}

/* ---- f16 and bf16 conversions (round to nearest even; NaN stays NaN) ---- */
AF_INLINE float af_f16_to_f32_(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float f = static_cast<float>(mant) * 5.9604644775390625e-08f; /* 2^-24 */
    return af_float_of_(af_bits_of_(f) | sign);
  }
  if (exp == 31) return af_float_of_(sign | 0x7f800000u | (mant << 13));
  return af_float_of_(sign | ((exp + 112u) << 23) | (mant << 13));
}
AF_INLINE uint16_t af_f32_to_f16_(float f) {
  uint32_t x = af_bits_of_(f);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u); /* rounds to inf */
  if (ax < 0x38800000u) {                                              /* f16 subnormal or 0 */
    float t = af_float_of_(ax) + 0.5f; /* the add rounds to a multiple of 2^-24, to even */
    return static_cast<uint16_t>(sign | (af_bits_of_(t) - 0x3f000000u));
  }
  uint32_t odd = (ax >> 13) & 1u;
  return static_cast<uint16_t>(sign | ((ax + 0xc8000fffu + odd) >> 13));
}
AF_INLINE uint16_t af_f32_to_bf16_(float f) {
  uint32_t x = af_bits_of_(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
AF_INLINE af_vf af_load_f16(const uint16_t* p) {
  return {af_f16_to_f32_(*p)};
}
AF_INLINE void af_store_f16(uint16_t* p, af_vf v) {
  *p = af_f32_to_f16_(v.v);
}
AF_INLINE af_vf af_load_bf16(const uint16_t* p) {
  return {af_float_of_(static_cast<uint32_t>(*p) << 16)};
}
AF_INLINE void af_store_bf16(uint16_t* p, af_vf v) {
  *p = af_f32_to_bf16_(v.v);
}
AF_INLINE void af_stream_f16(uint16_t* p, af_vf v) {
  af_store_f16(p, v);
}
AF_INLINE void af_stream_bf16(uint16_t* p, af_vf v) {
  af_store_bf16(p, v);
}
AF_INLINE af_vf af_round_f16(af_vf v) {
  return {af_f16_to_f32_(af_f32_to_f16_(v.v))};
}
AF_INLINE af_vf af_round_bf16(af_vf v) {
  return {af_float_of_(static_cast<uint32_t>(af_f32_to_bf16_(v.v)) << 16)};
}

/* ---- bool memory ---- */
AF_INLINE af_vm af_load_bool(const uint8_t* p) {
  return {*p != 0};
}
AF_INLINE void af_store_bool(uint8_t* p, af_vm m) {
  *p = m.m ? 1 : 0;
}

/* ---- arithmetic ---- */
AF_INLINE af_vf af_add(af_vf a, af_vf b) {
  return {a.v + b.v};
}
AF_INLINE af_vf af_sub(af_vf a, af_vf b) {
  return {a.v - b.v};
}
AF_INLINE af_vf af_mul(af_vf a, af_vf b) {
  return {a.v * b.v};
}
AF_INLINE af_vf af_div(af_vf a, af_vf b) {
  return {a.v / b.v};
}
AF_INLINE af_vf af_sqrt(af_vf a) {
  return {__builtin_sqrtf(a.v)};
}
/* x86 max/min semantics: the second operand when either is NaN or both are zero. */
AF_INLINE af_vf af_max_x86_(af_vf a, af_vf b) {
  return {a.v > b.v ? a.v : b.v};
}
AF_INLINE af_vf af_min_x86_(af_vf a, af_vf b) {
  return {a.v < b.v ? a.v : b.v};
}
/* Integral values pass through (|x| >= 2^23, inf, NaN); others truncate through int32. */
AF_INLINE af_vf af_trunc(af_vf a) {
  if (!(a.v > -8388608.0f && a.v < 8388608.0f)) return a;
  float t = static_cast<float>(static_cast<int32_t>(a.v));
  return {af_float_of_(af_bits_of_(t) | (af_bits_of_(a.v) & 0x80000000u))};
}
AF_INLINE af_vf af_floor(af_vf a) {
  af_vf t = af_trunc(a);
  return {t.v > a.v ? t.v - 1.0f : t.v};
}
AF_INLINE af_vf af_ceil(af_vf a) {
  af_vf t = af_trunc(a);
  if (t.v < a.v) t.v = af_float_of_(af_bits_of_(t.v + 1.0f) | (af_bits_of_(a.v) & 0x80000000u));
  return t;
}
/* Half to even: adding and subtracting 2^23 rounds in the default (nearest-even) mode. */
AF_INLINE af_vf af_round(af_vf a) {
  if (!(a.v > -8388608.0f && a.v < 8388608.0f)) return a;
  volatile float big = 8388608.0f;
  float m = a.v < 0 ? -a.v : a.v;
  float r = (m + big) - big;
  return {af_float_of_(af_bits_of_(r) | (af_bits_of_(a.v) & 0x80000000u))};
}
AF_INLINE af_vf af_bits_and_(af_vf a, af_vf b) {
  return {af_float_of_(af_bits_of_(a.v) & af_bits_of_(b.v))};
}
AF_INLINE af_vf af_bits_or_(af_vf a, af_vf b) {
  return {af_float_of_(af_bits_of_(a.v) | af_bits_of_(b.v))};
}
AF_INLINE af_vf af_bits_xor_(af_vf a, af_vf b) {
  return {af_float_of_(af_bits_of_(a.v) ^ af_bits_of_(b.v))};
}
AF_INLINE af_vf af_bits_andnot_(af_vf a, af_vf b) {
  return {af_float_of_(~af_bits_of_(a.v) & af_bits_of_(b.v))};
}

/* ---- comparisons ---- */
AF_INLINE af_vm af_eq(af_vf a, af_vf b) {
  return {a.v == b.v};
}
AF_INLINE af_vm af_ne(af_vf a, af_vf b) {
  return {!(a.v == b.v)};
}
AF_INLINE af_vm af_lt(af_vf a, af_vf b) {
  return {a.v < b.v};
}
AF_INLINE af_vm af_le(af_vf a, af_vf b) {
  return {a.v <= b.v};
}
AF_INLINE af_vm af_gt(af_vf a, af_vf b) {
  return {a.v > b.v};
}
AF_INLINE af_vm af_ge(af_vf a, af_vf b) {
  return {a.v >= b.v};
}
AF_INLINE af_vm af_unordered_(af_vf a, af_vf b) {
  return {a.v != a.v || b.v != b.v};
}

/* ---- masks ---- */
AF_INLINE af_vm af_mask_and_(af_vm a, af_vm b) {
  return {a.m && b.m};
}
AF_INLINE af_vm af_mask_or_(af_vm a, af_vm b) {
  return {a.m || b.m};
}
AF_INLINE af_vm af_mask_xor_(af_vm a, af_vm b) {
  return {a.m != b.m};
}
AF_INLINE af_vm af_mask_not_(af_vm a) {
  return {!a.m};
}
AF_INLINE af_vf af_select_(af_vm m, af_vf a, af_vf b) {
  return m.m ? a : b;
}
AF_INLINE af_vm af_mask_select_(af_vm m, af_vm a, af_vm b) {
  return m.m ? a : b;
}
AF_INLINE af_vf af_mask_to_f32_(af_vm m) {
  return {m.m ? 1.0f : 0.0f};
}

/* ---- transcendentals: SLEEF scalar, 1.0-ULP variants ---- */
AF_INLINE af_vf af_exp(af_vf a) {
  return {Sleef_expf_u10(a.v)};
}
/* exp(a) for a <= 0 or NaN (erf's exp(-x^2)): af_exp here (AVX-512 has a shorter one). */
AF_INLINE af_vf af_exp_nonpos_(af_vf a) {
  return af_exp(a);
}
AF_INLINE af_vf af_exp2(af_vf a) {
  return {Sleef_exp2f_u10(a.v)};
}
AF_INLINE af_vf af_expm1(af_vf a) {
  return {Sleef_expm1f_u10(a.v)};
}
AF_INLINE af_vf af_log(af_vf a) {
  return {Sleef_logf_u10(a.v)};
}
/* SLEEF's log1p; autofuse_cpu_math.h's af_log1p mends its range cut. */
AF_INLINE af_vf af_log1p_sleef_(af_vf a) {
  return {Sleef_log1pf_u10(a.v)};
}
/* a * b + c with one rounding. */
AF_INLINE af_vf af_fma_(af_vf a, af_vf b, af_vf c) {
  return {__builtin_fmaf(a.v, b.v, c.v)};
}
AF_INLINE af_vf af_sin(af_vf a) {
  return {Sleef_sinf_u10(a.v)};
}
AF_INLINE af_vf af_cos(af_vf a) {
  return {Sleef_cosf_u10(a.v)};
}
AF_INLINE af_vf af_pow(af_vf a, af_vf b) {
  return {Sleef_powf_u10(a.v, b.v)};
}
AF_INLINE af_vf af_fmod_(af_vf a, af_vf b) {
  return {Sleef_fmodf(a.v, b.v)};
}

#endif /* AUTOFUSE_CPU_SCALAR_H */
