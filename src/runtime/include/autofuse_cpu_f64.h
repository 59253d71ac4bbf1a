/* f64 values in autofuse CPU kernels: `af_vd`, AF_LANES doubles (one per f32 lane of af_vf, so
 * f64 and f32 values of a kernel share its vector steps). ISA-independent: the lanes are a plain
 * array the compiler vectorizes where it can; the transcendentals are the C library's double
 * functions lane by lane (f64 kernels are for correctness: a model's f64 math, not its hot path).
 *   - memory: af_load_f64 / _n, af_store_f64 / _n, af_stream_f64, af_gather_f64 / _n,
 *     af_scatter_f64 / _n, af_load1_f64; af_splat_f64;
 *   - one af_<kind> overload per float kind of the op registry, with PyTorch's double semantics
 *     (c10's div_floor_floating, NaN-propagating maximum / minimum, sign(NaN) = 0, round half to
 *     even), comparisons to af_vm, af_where;
 *   - casts af_to_f64 from f32 (and the f16 / bf16 values f32 lanes hold), int64 and bool values,
 *     and af_to_{f32,f16,bf16,i64,i32,i16,i8,u8,bool} from f64 (to f16 / bf16 through f32, as
 *     c10);
 *   - the reductions' horizontal combines and af_fill_tail.
 * Included by autofuse_cpu.h only, after autofuse_cpu_i64.h (its lanewise helpers). */
#ifndef AUTOFUSE_CPU_F64_H
#define AUTOFUSE_CPU_F64_H

#include <math.h>

/* AF_LANES doubles. */
struct af_vd {
  double v[AF_LANES];
};

#define AF_LANEWISE_D(expr) AF_LANEWISE_AS(af_vd, expr)

AF_INLINE af_vd af_splat_f64(double x) {
  AF_LANEWISE_D(x);
}

/* ---- memory ---- */
AF_INLINE af_vd af_load_f64_n(const double* p, int64_t n) {
  AF_LANEWISE_D(i < n ? p[i] : 0.0);
}
AF_INLINE af_vd af_load_f64(const double* p) {
  AF_LANEWISE_D(p[i]);
}
AF_INLINE void af_store_f64_n(double* p, af_vd v, int64_t n) {
  for (int64_t i = 0; i < n && i < AF_LANES; ++i) p[i] = v.v[i];
}
AF_INLINE void af_store_f64(double* p, af_vd v) {
  for (int i = 0; i < AF_LANES; ++i) p[i] = v.v[i];
}
AF_INLINE void af_stream_f64(double* p, af_vd v) {
  af_store_f64(p, v);
}
AF_INLINE af_vd af_gather_f64_n(const double* p, int64_t s, int64_t n) {
  AF_LANEWISE_D(i < n ? p[i * s] : 0.0);
}
AF_INLINE af_vd af_gather_f64(const double* p, int64_t s) {
  return af_gather_f64_n(p, s, AF_LANES);
}
AF_INLINE void af_scatter_f64_n(double* p, int64_t s, af_vd v, int64_t n) {
  for (int64_t i = 0; i < n && i < AF_LANES; ++i) p[i * s] = v.v[i];
}
AF_INLINE void af_scatter_f64(double* p, int64_t s, af_vd v) {
  af_scatter_f64_n(p, s, v, AF_LANES);
}
AF_INLINE af_vd af_load1_f64(const double* p) {
  return af_splat_f64(p[0]);
}

/* ---- lanewise scalar semantics ---- */
AF_INLINE double af_dmax_x86_(double a, double b) { /* b unless a > b: x86 maxpd */
  return a > b ? a : b;
}
AF_INLINE double af_dmin_x86_(double a, double b) {
  return a < b ? a : b;
}
AF_INLINE double af_dmaximum_(double a, double b) {
  return (isnan(a) || isnan(b)) ? a + b : af_dmax_x86_(a, b);
}
AF_INLINE double af_dminimum_(double a, double b) {
  return (isnan(a) || isnan(b)) ? a + b : af_dmin_x86_(a, b);
}
/* c10's div_floor_floating: the quotient of a - fmod(a, b), corrected to the floor. */
AF_INLINE double af_ddiv_floor_(double a, double b) {
  if (b == 0) return a / b;
  double mod = fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return copysign(0.0, a / b);
  double fl = floor(div);
  if (div - fl > 0.5) fl += 1.0;
  return fl;
}
/* c10's remainder: fmod, plus b where its sign differs from b's. */
AF_INLINE double af_dremainder_(double a, double b) {
  double mod = fmod(a, b);
  return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod;
}
AF_INLINE double af_dsign_(double x) {
  return (double)(0 < x) - (double)(x < 0);
}

#define AF_F64_UNARY(name, expr)         \
  AF_INLINE af_vd name(af_vd a) {        \
    af_vd r;                             \
    for (int i = 0; i < AF_LANES; ++i) { \
      const double x = a.v[i];           \
      r.v[i] = (expr);                   \
    }                                    \
    return r;                            \
  }
#define AF_F64_BINARY(name, expr)          \
  AF_INLINE af_vd name(af_vd a, af_vd b) { \
    af_vd r;                               \
    for (int i = 0; i < AF_LANES; ++i) {   \
      const double x = a.v[i], y = b.v[i]; \
      r.v[i] = (expr);                     \
    }                                      \
    return r;                              \
  }

AF_F64_BINARY(af_add, x + y)
AF_F64_BINARY(af_sub, x - y)
AF_F64_BINARY(af_mul, x* y)
AF_F64_BINARY(af_div, x / y)
AF_F64_BINARY(af_div_floor, af_ddiv_floor_(x, y))
AF_F64_BINARY(af_div_trunc, trunc(x / y))
AF_F64_BINARY(af_fmod, fmod(x, y))
AF_F64_BINARY(af_remainder, af_dremainder_(x, y))
AF_F64_BINARY(af_pow, pow(x, y))
AF_F64_BINARY(af_maximum, af_dmaximum_(x, y))
AF_F64_BINARY(af_minimum, af_dminimum_(x, y))
AF_F64_BINARY(af_clamp_min, af_dmaximum_(x, y))
AF_F64_BINARY(af_clamp_max, af_dminimum_(x, y))
AF_F64_UNARY(af_neg, -x)
AF_F64_UNARY(af_abs, fabs(x))
AF_F64_UNARY(af_reciprocal, 1.0 / x)
AF_F64_UNARY(af_cube, (x * x) * x)
AF_F64_UNARY(af_pow4, (x * x) * (x * x))
AF_F64_UNARY(af_rsquare, 1.0 / (x * x))
AF_F64_UNARY(af_exp, exp(x))
AF_F64_UNARY(af_exp2, exp2(x))
AF_F64_UNARY(af_log, log(x))
AF_F64_UNARY(af_log1p, log1p(x))
AF_F64_UNARY(af_expm1, expm1(x))
AF_F64_UNARY(af_sqrt, sqrt(x))
AF_F64_UNARY(af_rsqrt, 1.0 / sqrt(x))
AF_F64_UNARY(af_sigmoid, 1.0 / (1.0 + exp(-x)))
AF_F64_UNARY(af_tanh, tanh(x))
AF_F64_UNARY(af_erf, erf(x))
AF_F64_UNARY(af_sin, sin(x))
AF_F64_UNARY(af_cos, cos(x))
AF_F64_UNARY(af_relu, af_dmax_x86_(0.0, x))
AF_F64_UNARY(af_gelu, x * 0.5 * (1.0 + erf(x * 0.70710678118654752440)))
AF_F64_UNARY(af_gelu_tanh,
             0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * ((x * x) * x)))))
AF_F64_UNARY(af_silu, x / (1.0 + exp(-x)))
AF_F64_UNARY(af_sign, af_dsign_(x))
AF_F64_UNARY(af_floor, floor(x))
AF_F64_UNARY(af_ceil, ceil(x))
AF_F64_UNARY(af_round, nearbyint(x))
AF_F64_UNARY(af_trunc, trunc(x))
#undef AF_F64_UNARY
#undef AF_F64_BINARY

AF_INLINE af_vd af_clamp(af_vd x, af_vd lo, af_vd hi) {
  return af_minimum(af_maximum(x, lo), hi);
}

/* ---- comparisons and selection (masks through bytes, as the integer values) ---- */
#define AF_F64_TEST(name, expr)            \
  AF_INLINE af_vm name(af_vd a, af_vd b) { \
    af_mask_bytes_ m;                      \
    for (int i = 0; i < AF_LANES; ++i) {   \
      const double x = a.v[i], y = b.v[i]; \
      m.b[i] = (expr) ? 1 : 0;             \
    }                                      \
    return af_load_bool(m.b);              \
  }
AF_F64_TEST(af_eq, x == y)
AF_F64_TEST(af_ne, x != y)
AF_F64_TEST(af_lt, x < y)
AF_F64_TEST(af_le, x <= y)
AF_F64_TEST(af_gt, x > y)
AF_F64_TEST(af_ge, x >= y)
#undef AF_F64_TEST
AF_INLINE af_vm af_isnan(af_vd a) {
  return af_ne(a, a);
}
AF_INLINE af_vm af_isinf(af_vd a) {
  return af_eq(af_abs(a), af_splat_f64(__builtin_inf()));
}
AF_INLINE af_vd af_where(af_vm c, af_vd a, af_vd b) {
  af_mask_bytes_ m = af_mask_bytes_of_(c);
  AF_LANEWISE_D(m.b[i] ? a.v[i] : b.v[i]);
}

/* ---- casts ---- */
AF_INLINE af_vd af_to_f64(af_vd v) {
  return v;
}
AF_INLINE af_vd af_to_f64(af_vf v) {
  float f[AF_LANES];
  af_store_f32(f, v);
  AF_LANEWISE_D((double)f[i]);
}
AF_INLINE af_vd af_to_f64(af_vl v) {
  AF_LANEWISE_D((double)v.v[i]);
}
AF_INLINE af_vd af_to_f64(af_vm v) {
  af_mask_bytes_ m = af_mask_bytes_of_(v);
  AF_LANEWISE_D(m.b[i] ? 1.0 : 0.0);
}
AF_LANES_TO_FLOATS(af_vd)
AF_INLINE af_vl af_to_i64(af_vd v) {
  AF_LANEWISE_AS(af_vl, (int64_t)v.v[i]);
}
AF_INLINE af_vl af_to_i32(af_vd v) {
  AF_LANEWISE_AS(af_vl, (int64_t)(int32_t)v.v[i]);
}
AF_INLINE af_vl af_to_i16(af_vd v) {
  AF_LANEWISE_AS(af_vl, (int64_t)(int16_t)(int32_t)v.v[i]);
}
AF_INLINE af_vl af_to_i8(af_vd v) {
  AF_LANEWISE_AS(af_vl, (int64_t)(int8_t)(int32_t)v.v[i]);
}
AF_INLINE af_vl af_to_u8(af_vd v) { /* through int64, as c10 */
  AF_LANEWISE_AS(af_vl, (int64_t)(uint8_t)(int64_t)v.v[i]);
}
AF_INLINE af_vm af_to_bool(af_vd v) {
  return af_ne(v, af_splat_f64(0.0));
}

/* ---- reductions ---- */
/* Pairwise across the lanes, as the f32 horizontal combines. */
#define AF_F64_HORIZONTAL(name, op)                                \
  AF_INLINE double name(af_vd a) {                                 \
    for (int w = AF_LANES / 2; w >= 1; w /= 2)                     \
      for (int i = 0; i < w; ++i) a.v[i] = op(a.v[i], a.v[i + w]); \
    return a.v[0];                                                 \
  }
AF_INLINE double af_dadd_(double x, double y) {
  return x + y;
}
AF_INLINE double af_dmul_(double x, double y) {
  return x * y;
}
AF_F64_HORIZONTAL(af_hsum, af_dadd_)
AF_F64_HORIZONTAL(af_hprod, af_dmul_)
AF_F64_HORIZONTAL(af_hmax, af_dmaximum_)
AF_F64_HORIZONTAL(af_hmin, af_dminimum_)
#undef AF_F64_HORIZONTAL
/* Lanes rem.. of v replaced by the reduction's identity (a row's tail). */
AF_INLINE af_vd af_fill_tail(af_vd v, int64_t rem, af_vd identity) {
  AF_LANEWISE_D(i < rem ? v.v[i] : identity.v[i]);
}

#undef AF_LANEWISE_D
#undef AF_LANEWISE_AS
#undef AF_LANES_TO_FLOATS
#endif /* AUTOFUSE_CPU_F64_H */
