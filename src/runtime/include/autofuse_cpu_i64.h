/* Integer values in autofuse CPU kernels: `af_vl`, AF_LANES int64 lanes (one per f32 lane of
 * af_vf, so integer and float values of a kernel share its vector steps), and the gather of
 * a table row by such a value. ISA-independent: the lanes are a GCC vector (its operators
 * compile to the ISA's vector instructions without the loop vectorizer, which took seconds
 * per kernel on lane-by-lane loops); divisions, gathers and tails go lane by lane.
 *   - memory by suffix T in {i64, i32, i16, i8, u8} (a narrow store keeps the low bits,
 *     PyTorch's wrap): the af_load_T / _n, af_store_T / _n, af_gather_T / _n, af_scatter_T / _n,
 *     af_load1_T of autofuse_cpu_ops.h;
 *   - af_splat_i64, the arithmetic, bit logic, shifts and comparisons of the op registry's
 *     integer rows with PyTorch's integer semantics, af_where, and the casts
 *     af_to_{i64,i32,i16,i8,u8,f32,f16,bf16,bool} between integer, float and bool values. A
 *     narrow dtype's value is kept sign- (u8: zero-) extended: the emitter wraps every narrow
 *     result with af_to_<T>, so each op rounds as eager's narrow math;
 *   - integer division and remainder (af_div_floor, af_div_trunc, af_remainder, af_fmod): a zero
 *     divisor sets af_zero_division_ (that lane gives 0); the module's af_take_zero_division
 *     takes it and the launcher raises, as eager's "ZeroDivisionError";
 *   - the reductions' horizontal combines and af_fill_tail;
 *   - af_take_T / _n: lane i from p[i * s + idx[i] * stride] with every index checked against
 *     [0, bound): an index outside is recorded in *fault (af_note_fault) and lane i reads
 *     p[i * s] instead, so a bad index never reads outside the table; the launcher raises.
 * Included by autofuse_cpu.h only, after autofuse_cpu_ops.h. */
#ifndef AUTOFUSE_CPU_I64_H
#define AUTOFUSE_CPU_I64_H

/* AF_LANES 64-bit integers (v[i] reads and writes lane i). */
typedef int64_t af_i64v_ __attribute__((vector_size(AF_LANES * 8)));
typedef uint64_t af_u64v_ __attribute__((vector_size(AF_LANES * 8)));
struct af_vl {
  af_i64v_ v;
};

/* The body of a function returning the lane vector T whose lane i is `expr` (also used by
 * autofuse_cpu_f64.h, which undefines it). */
#define AF_LANEWISE_AS(T, expr)                       \
  T r;                                                \
  for (int i = 0; i < AF_LANES; ++i) r.v[i] = (expr); \
  return r
#define AF_LANEWISE(expr) AF_LANEWISE_AS(af_vl, expr)

AF_INLINE af_vl af_splat_i64(int64_t x) {
  AF_LANEWISE(x);
}

/* ---- memory: i64 and i32 tensors, held in int64 lanes ---- */
#define AF_INT_ACCESS(T, E)                                                            \
  AF_INLINE af_vl af_load_##T##_n(const E* p, int64_t n) {                             \
    AF_LANEWISE(i < n ? static_cast<int64_t>(p[i]) : 0);                               \
  }                                                                                    \
  AF_INLINE af_vl af_load_##T(const E* p) {                                            \
    typedef E narrow_ __attribute__((vector_size(AF_LANES * sizeof(E))));              \
    narrow_ x;                                                                         \
    memcpy(&x, p, sizeof x);                                                           \
    return af_vl{__builtin_convertvector(x, af_i64v_)};                                \
  }                                                                                    \
  AF_INLINE void af_store_##T##_n(E* p, af_vl v, int64_t n) {                          \
    for (int64_t i = 0; i < n && i < AF_LANES; ++i) p[i] = static_cast<E>(v.v[i]);     \
  }                                                                                    \
  AF_INLINE void af_store_##T(E* p, af_vl v) {                                         \
    typedef E narrow_ __attribute__((vector_size(AF_LANES * sizeof(E))));              \
    narrow_ x = __builtin_convertvector(v.v, narrow_);                                 \
    memcpy(p, &x, sizeof x);                                                           \
  }                                                                                    \
  AF_INLINE af_vl af_gather_##T##_n(const E* p, int64_t s, int64_t n) {                \
    AF_LANEWISE(i < n ? static_cast<int64_t>(p[i * s]) : 0);                           \
  }                                                                                    \
  AF_INLINE af_vl af_gather_##T(const E* p, int64_t s) {                               \
    return af_gather_##T##_n(p, s, AF_LANES);                                          \
  }                                                                                    \
  AF_INLINE void af_scatter_##T##_n(E* p, int64_t s, af_vl v, int64_t n) {             \
    for (int64_t i = 0; i < n && i < AF_LANES; ++i) p[i * s] = static_cast<E>(v.v[i]); \
  }                                                                                    \
  AF_INLINE void af_scatter_##T(E* p, int64_t s, af_vl v) {                            \
    af_scatter_##T##_n(p, s, v, AF_LANES);                                             \
  }                                                                                    \
  AF_INLINE af_vl af_load1_##T(const E* p) {                                           \
    return af_splat_i64(static_cast<int64_t>(p[0]));                                   \
  }

AF_INT_ACCESS(i64, int64_t)
AF_INT_ACCESS(i32, int32_t)
AF_INT_ACCESS(i16, int16_t)
AF_INT_ACCESS(i8, int8_t)
AF_INT_ACCESS(u8, uint8_t)
#undef AF_INT_ACCESS

/* ---- masks as bytes (comparisons and selects go through them) ---- */
struct af_mask_bytes_ {
  uint8_t b[AF_LANES < 16 ? 16 : AF_LANES];
};
AF_INLINE af_mask_bytes_ af_mask_bytes_of_(af_vm m) {
  af_mask_bytes_ r;
  af_store_bool(r.b, m);
  return r;
}

/* ---- arithmetic (two's complement wrap, as PyTorch's int64) ---- */
AF_INLINE af_vl af_add(af_vl a, af_vl b) {
  return af_vl{(af_i64v_)((af_u64v_)a.v + (af_u64v_)b.v)};
}
AF_INLINE af_vl af_sub(af_vl a, af_vl b) {
  return af_vl{(af_i64v_)((af_u64v_)a.v - (af_u64v_)b.v)};
}
AF_INLINE af_vl af_mul(af_vl a, af_vl b) {
  return af_vl{(af_i64v_)((af_u64v_)a.v * (af_u64v_)b.v)};
}
AF_INLINE af_vl af_neg(af_vl a) {
  return af_vl{(af_i64v_)(0 - (af_u64v_)a.v)};
}
AF_INLINE af_vl af_abs(af_vl a) {
  return af_vl{a.v < 0 ? (af_i64v_)(0 - (af_u64v_)a.v) : a.v};
}
AF_INLINE af_vl af_minimum(af_vl a, af_vl b) {
  return af_vl{a.v < b.v ? a.v : b.v};
}
AF_INLINE af_vl af_maximum(af_vl a, af_vl b) {
  return af_vl{a.v > b.v ? a.v : b.v};
}
AF_INLINE af_vl af_clamp_min(af_vl x, af_vl lo) {
  return af_maximum(x, lo);
}
AF_INLINE af_vl af_clamp_max(af_vl x, af_vl hi) {
  return af_minimum(x, hi);
}
AF_INLINE af_vl af_clamp(af_vl x, af_vl lo, af_vl hi) {
  return af_minimum(af_maximum(x, lo), hi);
}
AF_INLINE af_vl af_relu(af_vl a) {
  return af_vl{a.v > 0 ? a.v : (af_i64v_){}};
}
AF_INLINE af_vl af_sign(af_vl a) {
  return af_vl{(a.v < 0) - (a.v > 0)};  // a vector comparison is -1 where true
}

/* ---- division and remainder (c10's integer semantics; b == -1 wraps instead of trapping) ---- */
/* Set by a lane whose divisor is 0 (it gives 0 instead); the module's af_take_zero_division
 * takes it. */
static int af_zero_division_ __attribute__((unused)) = 0;
AF_INLINE bool af_zero_divisor_(int64_t b) {
  if (b != 0) return false;
  __atomic_store_n(&af_zero_division_, 1, __ATOMIC_RELAXED);
  return true;
}
/* b with its lanes rem.. set to 1: a tail step's divisor, whose dead lanes must not report. */
AF_INLINE af_vl af_live_divisor(af_vl b, int64_t rem) {
  AF_LANEWISE(i < rem ? b.v[i] : 1);
}
/* trunc(a / b). */
AF_INLINE int64_t af_ldiv_trunc_(int64_t a, int64_t b) {
  if (af_zero_divisor_(b)) return 0;
  return b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
}
/* a - b * trunc(a / b): the sign of a (torch.fmod). */
AF_INLINE int64_t af_lfmod_(int64_t a, int64_t b) {
  if (af_zero_divisor_(b)) return 0;
  return b == -1 ? 0 : a % b;
}
/* a - b * floor(a / b): the sign of b (torch.remainder). */
AF_INLINE int64_t af_lremainder_(int64_t a, int64_t b) {
  const int64_t r = af_lfmod_(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
AF_INLINE af_vl af_div_trunc(af_vl a, af_vl b) {
  AF_LANEWISE(af_ldiv_trunc_(a.v[i], b.v[i]));
}
AF_INLINE af_vl af_fmod(af_vl a, af_vl b) {
  AF_LANEWISE(af_lfmod_(a.v[i], b.v[i]));
}
/* floor(a / b) (c10's div_floor_integer). */
AF_INLINE af_vl af_div_floor(af_vl a, af_vl b) {
  AF_LANEWISE(
      af_ldiv_trunc_(a.v[i], b.v[i]) -
      (b.v[i] != 0 && b.v[i] != -1 && a.v[i] % b.v[i] != 0 && ((a.v[i] < 0) != (b.v[i] < 0))));
}
AF_INLINE af_vl af_remainder(af_vl a, af_vl b) {
  AF_LANEWISE(af_lremainder_(a.v[i], b.v[i]));
}

/* ---- bit logic and shifts (torch's out-of-range shift rules; in int64 lanes they hold for
 * every narrower dtype once the result wraps) ---- */
AF_INLINE af_vl af_bitwise_and(af_vl a, af_vl b) {
  return af_vl{a.v & b.v};
}
AF_INLINE af_vl af_bitwise_or(af_vl a, af_vl b) {
  return af_vl{a.v | b.v};
}
AF_INLINE af_vl af_bitwise_xor(af_vl a, af_vl b) {
  return af_vl{a.v ^ b.v};
}
AF_INLINE af_vl af_bitwise_not(af_vl a) {
  return af_vl{~a.v};
}
/* a << b; 0 for b < 0 or b >= the width. */
AF_INLINE af_vl af_bitwise_left_shift(af_vl a, af_vl b) {
  return af_vl{(b.v<0 | b.v> 63) ? (af_i64v_){}
                                 : (af_i64v_)((af_u64v_)a.v << (af_u64v_)(b.v & 63))};
}
/* a >> b (arithmetic); the sign fill for b < 0 or b >= the width - 1. */
AF_INLINE af_vl af_bitwise_right_shift(af_vl a, af_vl b) {
  return af_vl{a.v >> ((b.v<0 | b.v> 63) ? 63 : b.v)};
}

AF_INLINE af_vl af_where(af_vm c, af_vl a, af_vl b) {
  af_mask_bytes_ m = af_mask_bytes_of_(c);
  AF_LANEWISE(m.b[i] ? a.v[i] : b.v[i]);
}

#define AF_INT_COMPARE(name, op)                                          \
  AF_INLINE af_vm name(af_vl a, af_vl b) {                                \
    af_mask_bytes_ m;                                                     \
    for (int i = 0; i < AF_LANES; ++i) m.b[i] = a.v[i] op b.v[i] ? 1 : 0; \
    return af_load_bool(m.b);                                             \
  }
AF_INT_COMPARE(af_eq, ==)
AF_INT_COMPARE(af_ne, !=)
AF_INT_COMPARE(af_lt, <)
AF_INT_COMPARE(af_le, <=)
AF_INT_COMPARE(af_gt, >)
AF_INT_COMPARE(af_ge, >=)
#undef AF_INT_COMPARE

/* ---- casts (PyTorch's .to(dtype)) ---- */
AF_INLINE af_vl af_to_i64(af_vm m) {
  af_mask_bytes_ b = af_mask_bytes_of_(m);
  AF_LANEWISE(b.b[i] ? 1 : 0);
}
/* To integer dtype T (C type E): from integers the low bits (int64 -> int32 wraps); from bool 0
 * or 1; from floats truncation toward zero through the C type VIA, as eager's static_cast
 * (NaN and out-of-range values give the target's "integer indefinite", as theirs). */
#define AF_TO_INT(T, E, VIA)                                                                \
  AF_INLINE af_vl af_to_##T(af_vl v) {                                                      \
    typedef E narrow_ __attribute__((vector_size(AF_LANES * sizeof(E))));                   \
    return af_vl{__builtin_convertvector(__builtin_convertvector(v.v, narrow_), af_i64v_)}; \
  }                                                                                         \
  AF_INLINE af_vl af_to_##T##_from_f32_(const float* x) {                                   \
    AF_LANEWISE(static_cast<int64_t>(static_cast<E>(static_cast<VIA>(x[i]))));              \
  }                                                                                         \
  AF_INLINE af_vl af_to_##T(af_vf f) {                                                      \
    float x[AF_LANES];                                                                      \
    af_store_f32(x, f);                                                                     \
    return af_to_##T##_from_f32_(x);                                                        \
  }
AF_TO_INT(i64, int64_t, int64_t)
AF_TO_INT(i32, int32_t, int32_t)
AF_TO_INT(i16, int16_t, int32_t)
AF_TO_INT(i8, int8_t, int32_t)
AF_TO_INT(u8, uint8_t, int64_t) /* c10 casts floats to uint8 through int64 */
#undef AF_TO_INT
AF_INLINE af_vl af_to_i32(af_vm m) {
  return af_to_i64(m);
}
AF_INLINE af_vl af_to_i16(af_vm m) {
  return af_to_i64(m);
}
AF_INLINE af_vl af_to_i8(af_vm m) {
  return af_to_i64(m);
}
AF_INLINE af_vl af_to_u8(af_vm m) {
  return af_to_i64(m);
}
/* Casts of the lane vector V to f32, and to f16 / bf16 through f32 (as c10 converts); also
 * used by autofuse_cpu_f64.h, which undefines it. */
#define AF_LANES_TO_FLOATS(V)                                             \
  AF_INLINE af_vf af_to_f32(V v) {                                        \
    float x[AF_LANES];                                                    \
    for (int i = 0; i < AF_LANES; ++i) x[i] = static_cast<float>(v.v[i]); \
    return af_load_f32(x);                                                \
  }                                                                       \
  AF_INLINE af_vf af_to_f16(V v) {                                        \
    return af_to_f16(af_to_f32(v));                                       \
  }                                                                       \
  AF_INLINE af_vf af_to_bf16(V v) {                                       \
    return af_to_bf16(af_to_f32(v));                                      \
  }
AF_LANES_TO_FLOATS(af_vl)
AF_INLINE af_vm af_to_bool(af_vl v) {
  return af_ne(v, af_splat_i64(0));
}

/* ---- reductions: exact in any order (two's complement wrap) ---- */
#define AF_INT_HORIZONTAL(name, expr)    \
  AF_INLINE int64_t name(af_vl a) {      \
    int64_t r = a.v[0];                  \
    for (int i = 1; i < AF_LANES; ++i) { \
      const int64_t x = r, y = a.v[i];   \
      r = (expr);                        \
    }                                    \
    return r;                            \
  }
AF_INT_HORIZONTAL(af_hsum,
                  static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)))
AF_INT_HORIZONTAL(af_hprod,
                  static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)))
AF_INT_HORIZONTAL(af_hmax, x > y ? x : y)
AF_INT_HORIZONTAL(af_hmin, x < y ? x : y)
#undef AF_INT_HORIZONTAL
/* Lanes rem.. of v replaced by the reduction's identity (a row's tail). */
AF_INLINE af_vl af_fill_tail(af_vl v, int64_t rem, af_vl identity) {
  AF_LANEWISE(i < rem ? v.v[i] : identity.v[i]);
}
#undef AF_LANEWISE

/* ---- gathers of a table row by an index value ---- */
/* Records the first out-of-range index a kernel meets (INT64_MIN: none yet). */
AF_INLINE void af_note_fault(int64_t* fault, int64_t index) {
  int64_t none = INT64_MIN;
  __atomic_compare_exchange_n(fault, &none, index, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
/* `index` when it is in [0, bound); else records it and gives 0. */
AF_INLINE int64_t af_checked_index(int64_t index, int64_t bound, int64_t* fault) {
  if (static_cast<uint64_t>(index) < static_cast<uint64_t>(bound)) return index;
  af_note_fault(fault, index);
  return 0;
}

#define AF_TAKE(T, E, V)                                                                       \
  AF_INLINE V af_take_##T##_n(const E* p, int64_t s, af_vl idx, int64_t stride, int64_t bound, \
                              int64_t* fault, int64_t n) {                                     \
    E buf[AF_LANES];                                                                           \
    memset(buf, 0, sizeof buf);                                                                \
    for (int64_t i = 0; i < n && i < AF_LANES; ++i)                                            \
      buf[i] = p[i * s + af_checked_index(idx.v[i], bound, fault) * stride];                   \
    return af_load_##T(buf);                                                                   \
  }                                                                                            \
  AF_INLINE V af_take_##T(const E* p, int64_t s, af_vl idx, int64_t stride, int64_t bound,     \
                          int64_t* fault) {                                                    \
    return af_take_##T##_n(p, s, idx, stride, bound, fault, AF_LANES);                         \
  }

AF_TAKE(f32, float, af_vf)
AF_TAKE(f16, uint16_t, af_vf)
AF_TAKE(bf16, uint16_t, af_vf)
AF_TAKE(bool, uint8_t, af_vm)
AF_TAKE(i64, int64_t, af_vl)
AF_TAKE(i32, int32_t, af_vl)
AF_TAKE(i16, int16_t, af_vl)
AF_TAKE(i8, int8_t, af_vl)
AF_TAKE(u8, uint8_t, af_vl)
#undef AF_TAKE

#endif /* AUTOFUSE_CPU_I64_H */
