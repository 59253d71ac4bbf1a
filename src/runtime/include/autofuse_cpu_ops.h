/* ISA-independent part of autofuse_cpu.h, written over the ISA layer's af_vf / af_vm:
 *   - memory access by dtype suffix T in {f32, f16, bf16, bool} (element types float, uint16_t,
 *     uint16_t, uint8_t), all of the same shape so the emitter only chooses a name:
 *       af_load_T(p)            af_load_T_n(p, n)             full vector / first n lanes
 *       af_store_T(p, v)        af_store_T_n(p, v, n)
 *       af_gather_T(p, s)       af_gather_T_n(p, s, n)        lane i from p[i * s]
 *       af_scatter_T(p, s, v)   af_scatter_T_n(p, s, v, n)
 *       af_load1_T(p)                                         p[0] in every lane
 *       af_stream_T(p, v)       (T != bool)                    non-temporal, p aligned to a vector
 *     Partial and strided accesses go through a small stack buffer, so no access ever touches
 *     an element outside [0, n).
 *   - casts af_to_f32 / af_to_f16 / af_to_bf16 / af_to_bool (f16/bf16 values live in f32 lanes,
 *     rounded to the narrow type's precision);
 *   - af_<kind> for every elementwise kind of the Graph IR op registry, with PyTorch semantics.
 * Included by autofuse_cpu.h only. */
#ifndef AUTOFUSE_CPU_OPS_H
#define AUTOFUSE_CPU_OPS_H

/* ---- memory access through a stack buffer ---- */
#define AF_BUFFERED_ACCESS(T, E, V)                                    \
  AF_INLINE V af_gather_##T##_n(const E* p, int64_t s, int64_t n) {    \
    E buf[AF_LANES];                                                   \
    memset(buf, 0, sizeof buf);                                        \
    for (int64_t i = 0; i < n && i < AF_LANES; ++i) buf[i] = p[i * s]; \
    return af_load_##T(buf);                                           \
  }                                                                    \
  AF_INLINE V af_gather_##T(const E* p, int64_t s) {                   \
    return af_gather_##T##_n(p, s, AF_LANES);                          \
  }                                                                    \
  AF_INLINE void af_scatter_##T##_n(E* p, int64_t s, V v, int64_t n) { \
    E buf[AF_LANES];                                                   \
    af_store_##T(buf, v);                                              \
    for (int64_t i = 0; i < n && i < AF_LANES; ++i) p[i * s] = buf[i]; \
  }                                                                    \
  AF_INLINE void af_scatter_##T(E* p, int64_t s, V v) {                \
    af_scatter_##T##_n(p, s, v, AF_LANES);                             \
  }                                                                    \
  AF_INLINE V af_load1_##T(const E* p) {                               \
    E buf[AF_LANES];                                                   \
    for (int i = 0; i < AF_LANES; ++i) buf[i] = p[0];                  \
    return af_load_##T(buf);                                           \
  }

AF_BUFFERED_ACCESS(f32, float, af_vf)
AF_BUFFERED_ACCESS(f16, uint16_t, af_vf)
AF_BUFFERED_ACCESS(bf16, uint16_t, af_vf)
AF_BUFFERED_ACCESS(bool, uint8_t, af_vm)
#undef AF_BUFFERED_ACCESS

/* Partial contiguous access for the narrow types (f32 has masked forms in the ISA layer). */
#define AF_PARTIAL_ACCESS(T, E, V)                                                \
  AF_INLINE V af_load_##T##_n(const E* p, int64_t n) {                            \
    E buf[AF_LANES];                                                              \
    memset(buf, 0, sizeof buf);                                                   \
    memcpy(buf, p, static_cast<size_t>(n < AF_LANES ? n : AF_LANES) * sizeof(E)); \
    return af_load_##T(buf);                                                      \
  }                                                                               \
  AF_INLINE void af_store_##T##_n(E* p, V v, int64_t n) {                         \
    E buf[AF_LANES];                                                              \
    af_store_##T(buf, v);                                                         \
    memcpy(p, buf, static_cast<size_t>(n < AF_LANES ? n : AF_LANES) * sizeof(E)); \
  }

AF_PARTIAL_ACCESS(f16, uint16_t, af_vf)
AF_PARTIAL_ACCESS(bf16, uint16_t, af_vf)
AF_PARTIAL_ACCESS(bool, uint8_t, af_vm)
#undef AF_PARTIAL_ACCESS

/* Asks for the cache line holding p (read, keep in all levels); never faults. */
AF_INLINE void af_prefetch(const void* p) {
  __builtin_prefetch(p, 0, 3);
}

/* Whether p is a multiple of `bytes` (a power of two): the condition for af_stream_T. */
AF_INLINE bool af_is_aligned(const void* p, int64_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & static_cast<uintptr_t>(bytes - 1)) == 0;
}

/* ---- casts (the value a PyTorch .to(dtype) would give, held in f32 lanes or a mask) ---- */
AF_INLINE af_vf af_to_f32(af_vf v) {
  return v;
}
AF_INLINE af_vf af_to_f32(af_vm m) {
  return af_mask_to_f32_(m);
}
AF_INLINE af_vf af_to_f16(af_vf v) {
  return af_round_f16(v);
}
AF_INLINE af_vf af_to_f16(af_vm m) {
  return af_mask_to_f32_(m);
}
AF_INLINE af_vf af_to_bf16(af_vf v) {
  return af_round_bf16(v);
}
AF_INLINE af_vf af_to_bf16(af_vm m) {
  return af_mask_to_f32_(m);
}
/* Nonzero (NaN included) is true, as in torch. */
AF_INLINE af_vm af_to_bool(af_vf v) {
  return af_ne(v, af_splat(0.0f));
}
AF_INLINE af_vm af_to_bool(af_vm m) {
  return m;
}

/* ---- arithmetic ---- */
AF_INLINE af_vf af_neg(af_vf a) {
  return af_bits_xor_(a, af_splat(-0.0f));
}
AF_INLINE af_vf af_abs(af_vf a) {
  return af_bits_andnot_(af_splat(-0.0f), a);
}
AF_INLINE af_vf af_reciprocal(af_vf a) {
  return af_div(af_splat(1.0f), a);
}
/* pow(x, 3), pow(x, 4), pow(x, -2) as eager's pow_tensor_scalar computes them (x*x*x, 1/(x*x);
 * for 4, (x*x)*(x*x), within 1.5 ulp of powf). */
AF_INLINE af_vf af_cube(af_vf a) {
  return af_mul(af_mul(a, a), a);
}
AF_INLINE af_vf af_pow4(af_vf a) {
  const af_vf s = af_mul(a, a);
  return af_mul(s, s);
}
AF_INLINE af_vf af_rsquare(af_vf a) {
  return af_div(af_splat(1.0f), af_mul(a, a));
}
/* cube / rsquare of bf16 values as eager computes them: x*x rounded to bf16 first. */
AF_INLINE af_vf af_cube_bf16(af_vf a) {
  return af_mul(af_round_bf16(af_mul(a, a)), a);
}
AF_INLINE af_vf af_rsquare_bf16(af_vf a) {
  return af_div(af_splat(1.0f), af_round_bf16(af_mul(a, a)));
}
AF_INLINE af_vf af_rsqrt(af_vf a) {
  return af_div(af_splat(1.0f), af_sqrt(a));
}
/* trunc(a / b): torch's rounding_mode="trunc". */
AF_INLINE af_vf af_div_trunc(af_vf a, af_vf b) {
  return af_trunc(af_div(a, b));
}
/* torch's rounding_mode="floor" for floats (div_floor_floating_vec): the quotient of a - fmod(a,
 * b), corrected to the floor, with torch's zero-sign and b == 0 rules. */
AF_INLINE af_vf af_div_floor(af_vf a, af_vf b) {
  const af_vf zero = af_splat(0.0f), one = af_splat(1.0f), inf = af_splat(__builtin_inff());
  const af_vf basic = af_div(a, b);
  const af_vf mod = af_fmod_(a, b);
  const af_vm fix = af_mask_and_(af_eq(af_abs(basic), inf), af_ne(af_abs(a), inf));
  af_vf div = af_div(af_select_(fix, a, af_sub(a, mod)), b);
  const af_vm adjust =
      af_mask_and_(af_ne(mod, zero), af_mask_xor_(af_lt(b, zero), af_lt(mod, zero)));
  div = af_select_(adjust, af_sub(div, one), div);
  af_vf fl = af_floor(div);
  fl = af_select_(af_gt(af_sub(div, fl), af_splat(0.5f)), af_add(fl, one), fl);
  fl = af_select_(af_eq(div, zero), af_bits_and_(basic, af_splat(-0.0f)), fl);
  return af_select_(af_eq(b, zero), basic, fl);
}

/* torch.fmod: a - b * trunc(a / b), exact. */
AF_INLINE af_vf af_fmod(af_vf a, af_vf b) {
  return af_fmod_(a, b);
}
/* torch.remainder (c10's): fmod, plus b where its sign differs from b's. For f16 / bf16 the
 * fmod is exact in the narrow type and mod + b rounds once at the store, as eager's. */
AF_INLINE af_vf af_remainder(af_vf a, af_vf b) {
  const af_vf mod = af_fmod_(a, b), zero = af_splat(0.0f);
  const af_vm fix = af_mask_and_(af_ne(mod, zero), af_mask_xor_(af_lt(b, zero), af_lt(mod, zero)));
  return af_select_(fix, af_add(mod, b), mod);
}

/* div_floor / div_trunc of f16 or bf16 operands (the kernel attribute round = "f16"/"bf16"):
 * eager computes these in the narrow type, rounding every intermediate step (c10::Half
 * arithmetic in div_floor_floating; trunc of the rounded quotient), so the result can differ
 * from the f32 algorithm rounded once. R rounds an f32 value to the narrow type. */
#define AF_DIV_ROUNDED(T)                                                                          \
  AF_INLINE af_vf af_div_trunc_##T(af_vf a, af_vf b) {                                             \
    return af_trunc(af_round_##T(af_div(a, b)));                                                   \
  }                                                                                                \
  AF_INLINE af_vf af_div_floor_##T(af_vf a, af_vf b) {                                             \
    const af_vf zero = af_splat(0.0f), one = af_splat(1.0f), half = af_splat(0.5f);                \
    const af_vf basic = af_round_##T(af_div(a, b));                                                \
    const af_vf mod = af_fmod_(a, b); /* exact: representable in T */                              \
    af_vf div = af_round_##T(af_div(af_round_##T(af_sub(a, mod)), b));                             \
    const af_vm adjust =                                                                           \
        af_mask_and_(af_ne(mod, zero), af_mask_xor_(af_lt(b, zero), af_lt(mod, zero)));            \
    div = af_select_(adjust, af_round_##T(af_sub(div, one)), div);                                 \
    af_vf fl = af_floor(div);                                                                      \
    fl =                                                                                           \
        af_select_(af_gt(af_round_##T(af_sub(div, fl)), half), af_round_##T(af_add(fl, one)), fl); \
    fl = af_select_(af_eq(div, zero), af_bits_and_(basic, af_splat(-0.0f)), fl);                   \
    return af_select_(af_eq(b, zero), basic, fl);                                                  \
  }
AF_DIV_ROUNDED(f16)
AF_DIV_ROUNDED(bf16)
#undef AF_DIV_ROUNDED

/* ---- min / max / clamp: NaN in any operand gives NaN (torch.maximum, torch.clamp) ---- */
AF_INLINE af_vf af_maximum(af_vf a, af_vf b) {
  return af_select_(af_unordered_(a, b), af_add(a, b), af_max_x86_(a, b));
}
AF_INLINE af_vf af_minimum(af_vf a, af_vf b) {
  return af_select_(af_unordered_(a, b), af_add(a, b), af_min_x86_(a, b));
}
AF_INLINE af_vf af_clamp_min(af_vf x, af_vf lo) {
  return af_maximum(x, lo);
}
AF_INLINE af_vf af_clamp_max(af_vf x, af_vf hi) {
  return af_minimum(x, hi);
}
AF_INLINE af_vf af_clamp(af_vf x, af_vf lo, af_vf hi) {
  return af_minimum(af_maximum(x, lo), hi);
}

/* ---- activations (the operation order of ATen's vectorized CPU kernels) ---- */
/* max(x, 0); relu(NaN) = NaN (x86 max returns its second operand on NaN). */
AF_INLINE af_vf af_relu(af_vf x) {
  return af_max_x86_(af_splat(0.0f), x);
}
/* 1 / (1 + exp(-x)): exp(-x) overflows to inf for x < -88, giving exactly 0. */
AF_INLINE af_vf af_sigmoid(af_vf x) {
  const af_vf one = af_splat(1.0f);
  return af_div(one, af_add(one, af_exp(af_neg(x))));
}
/* x / (1 + exp(-x)), as ATen's silu. */
AF_INLINE af_vf af_silu(af_vf x) {
  return af_div(x, af_add(af_splat(1.0f), af_exp(af_neg(x))));
}
/* erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): sign(x) (1 - t (p1 + t (p2 + t (p3 +
 * t (p4 + t p5)))) exp(-x^2)), t = 1 / (1 + p|x|), in the evaluation order of ATen's
 * Vectorized<float>::erf, which eager's GELU uses (torch.erf itself uses SLEEF: af_erf).
 * About 4x cheaper than SLEEF's 1-ULP erff. */
AF_INLINE af_vf af_erf_as_(af_vf x) {
  const af_vf neg_zero = af_splat(-0.0f), one = af_splat(1.0f);
  af_vf sign = af_bits_and_(neg_zero, x);
  af_vf ax = af_bits_xor_(sign, x);
  af_vf t = af_div(one, af_fma_(af_splat(0.3275911f), ax, one));
  af_vf r = af_fma_(af_splat(1.061405429f), t, af_splat(-1.453152027f));
  r = af_fma_(r, t, af_splat(1.421413741f));
  r = af_fma_(r, t, af_splat(-0.284496736f));
  r = af_fma_(r, t, af_splat(0.254829592f));
  af_vf e = af_bits_xor_(neg_zero, af_exp_nonpos_(af_bits_xor_(neg_zero, af_mul(x, x))));
  return af_bits_xor_(sign, af_fma_(af_mul(e, t), r, one));
}
/* Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))), erf as ATen's Vectorized<float>::erf computes
 * it; on AVX-512 a piecewise polynomial of x * Phi(x) instead (af_gelu_piecewise_). */
AF_INLINE af_vf af_gelu(af_vf x) {
#ifdef AF_GELU_PIECEWISE_
  return af_gelu_piecewise_(x);
#else
  const af_vf y = af_erf_as_(af_mul(x, af_splat(0.707106781186547524f)));
  return af_mul(af_mul(x, af_splat(0.5f)), af_add(af_splat(1.0f), y));
#endif
}
/* GELU with approximate="tanh": 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))). */
AF_INLINE af_vf af_gelu_tanh(af_vf x) {
  const af_vf cube = af_mul(af_mul(x, x), x);
  const af_vf inner =
      af_mul(af_splat(0.797884560802865355f), af_add(x, af_mul(af_splat(0.044715f), cube)));
  return af_mul(af_mul(af_splat(0.5f), x), af_add(af_splat(1.0f), af_tanh(inner)));
}

/* ---- sign and classification ---- */
/* -1, 0 or 1; 0 for +-0 and NaN, as torch.sign. */
AF_INLINE af_vf af_sign(af_vf x) {
  const af_vf zero = af_splat(0.0f), one = af_splat(1.0f);
  return af_sub(af_select_(af_lt(zero, x), one, zero), af_select_(af_lt(x, zero), one, zero));
}
AF_INLINE af_vm af_isnan(af_vf x) {
  return af_unordered_(x, x);
}
AF_INLINE af_vm af_isinf(af_vf x) {
  return af_eq(af_abs(x), af_splat(__builtin_inff()));
}

/* ---- selection ---- */
AF_INLINE af_vf af_where(af_vm c, af_vf a, af_vf b) {
  return af_select_(c, a, b);
}
AF_INLINE af_vm af_where(af_vm c, af_vm a, af_vm b) {
  return af_mask_select_(c, a, b);
}
AF_INLINE af_vf af_where(af_vf c, af_vf a, af_vf b) {
  return af_select_(af_to_bool(c), a, b);
}

/* ---- boolean logic (bitwise_* on bool is the same as logical_*) ---- */
AF_INLINE af_vm af_logical_and(af_vm a, af_vm b) {
  return af_mask_and_(a, b);
}
AF_INLINE af_vm af_logical_or(af_vm a, af_vm b) {
  return af_mask_or_(a, b);
}
AF_INLINE af_vm af_logical_xor(af_vm a, af_vm b) {
  return af_mask_xor_(a, b);
}
AF_INLINE af_vm af_logical_not(af_vm a) {
  return af_mask_not_(a);
}
AF_INLINE af_vm af_logical_and(af_vf a, af_vf b) {
  return af_mask_and_(af_to_bool(a), af_to_bool(b));
}
AF_INLINE af_vm af_logical_or(af_vf a, af_vf b) {
  return af_mask_or_(af_to_bool(a), af_to_bool(b));
}
AF_INLINE af_vm af_logical_xor(af_vf a, af_vf b) {
  return af_mask_xor_(af_to_bool(a), af_to_bool(b));
}
AF_INLINE af_vm af_logical_not(af_vf a) {
  return af_mask_not_(af_to_bool(a));
}
AF_INLINE af_vm af_bitwise_and(af_vm a, af_vm b) {
  return af_mask_and_(a, b);
}
AF_INLINE af_vm af_bitwise_or(af_vm a, af_vm b) {
  return af_mask_or_(a, b);
}
AF_INLINE af_vm af_bitwise_xor(af_vm a, af_vm b) {
  return af_mask_xor_(a, b);
}
AF_INLINE af_vm af_bitwise_not(af_vm a) {
  return af_mask_not_(a);
}
/* Comparisons of bools. */
AF_INLINE af_vm af_eq(af_vm a, af_vm b) {
  return af_mask_not_(af_mask_xor_(a, b));
}
AF_INLINE af_vm af_ne(af_vm a, af_vm b) {
  return af_mask_xor_(a, b);
}

/* ---- reductions (the reduce_* kinds of generated reduction kernels) ----
 * A reduction keeps vector accumulators; the tail of a row fills its missing lanes with the
 * reduction's identity (af_fill_tail) and a row's accumulator is reduced across lanes at the
 * end (af_h*: pairwise, so a sum's rounding error grows with log2(AF_LANES) only). */
AF_INLINE af_vm af_lanes_below_(int64_t n) {
  static const float iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return af_lt(af_load_f32(iota), af_splat(static_cast<float>(n)));
}
/* Lanes [n, AF_LANES) of v replaced by `fill`. */
AF_INLINE af_vf af_fill_tail(af_vf v, int64_t n, af_vf fill) {
  return af_select_(af_lanes_below_(n), v, fill);
}
AF_INLINE af_vm af_fill_tail(af_vm v, int64_t n, af_vm fill) {
  return af_mask_select_(af_lanes_below_(n), v, fill);
}
#define AF_HORIZONTAL(NAME, OP)                              \
  AF_INLINE float NAME(af_vf v) {                            \
    float t[AF_LANES];                                       \
    af_store_f32(t, v);                                      \
    for (int w = AF_LANES / 2; w >= 1; w /= 2)               \
      for (int i = 0; i < w; ++i) t[i] = OP(t[i], t[i + w]); \
    return t[0];                                             \
  }
AF_INLINE float af_sadd_(float a, float b) {
  return a + b;
}
AF_INLINE float af_smul_(float a, float b) {
  return a * b;
}
/* max/min propagating NaN, like torch.amax / torch.amin. */
AF_INLINE float af_smax_(float a, float b) {
  return (a != a || b != b) ? a + b : (a > b ? a : b);
}
AF_INLINE float af_smin_(float a, float b) {
  return (a != a || b != b) ? a + b : (a < b ? a : b);
}
AF_HORIZONTAL(af_hsum, af_sadd_)
AF_HORIZONTAL(af_hprod, af_smul_)
AF_HORIZONTAL(af_hmax, af_smax_)
AF_HORIZONTAL(af_hmin, af_smin_)
#undef AF_HORIZONTAL
AF_INLINE bool af_hany(af_vm m) {
  uint8_t t[AF_LANES];
  af_store_bool(t, m);
  for (int i = 0; i < AF_LANES; ++i)
    if (t[i]) return true;
  return false;
}
AF_INLINE bool af_hall(af_vm m) {
  uint8_t t[AF_LANES];
  af_store_bool(t, m);
  for (int i = 0; i < AF_LANES; ++i)
    if (!t[i]) return false;
  return true;
}

#endif /* AUTOFUSE_CPU_OPS_H */
