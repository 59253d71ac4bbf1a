/* Integer values in autofuse CPU kernels: `af_vl`, AF_LANES int64 lanes (one per f32 lane of
 * af_vf, so integer and float values of a kernel share its vector steps), and the gather of
 * a table row by such a value. ISA-independent: the lanes are a plain array the compiler
 * vectorizes (the values are indices and positions, a few ops per row, rarely the hot path).
 *   - memory by suffix T in {i64, i32} (int64_t, int32_t; an i32 store keeps the low 32 bits,
 *     PyTorch's wrap): the af_load_T / _n, af_store_T / _n, af_gather_T / _n, af_scatter_T / _n,
 *     af_load1_T of autofuse_cpu_ops.h;
 *   - af_splat_i64, the arithmetic and comparisons of the op registry's integer rows, af_where,
 *     and the casts af_to_{i64,i32,f32,f16,bf16,bool} between integer, float and bool values;
 *   - af_take_T / _n: lane i from p[i * s + idx[i] * stride] with every index checked against
 *     [0, bound): an index outside is recorded in *fault (af_note_fault) and lane i reads
 *     p[i * s] instead, so a bad index never reads outside the table; the launcher raises.
 * Included by autofuse_cpu.h only, after autofuse_cpu_ops.h. */
#ifndef AUTOFUSE_CPU_I64_H
#define AUTOFUSE_CPU_I64_H

/* AF_LANES 64-bit integers. */
struct af_vl {
  int64_t v[AF_LANES];
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
    AF_LANEWISE(static_cast<int64_t>(p[i]));                                           \
  }                                                                                    \
  AF_INLINE void af_store_##T##_n(E* p, af_vl v, int64_t n) {                          \
    for (int64_t i = 0; i < n && i < AF_LANES; ++i) p[i] = static_cast<E>(v.v[i]);     \
  }                                                                                    \
  AF_INLINE void af_store_##T(E* p, af_vl v) {                                         \
    for (int i = 0; i < AF_LANES; ++i) p[i] = static_cast<E>(v.v[i]);                  \
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
  AF_LANEWISE(static_cast<int64_t>(static_cast<uint64_t>(a.v[i]) + static_cast<uint64_t>(b.v[i])));
}
AF_INLINE af_vl af_sub(af_vl a, af_vl b) {
  AF_LANEWISE(static_cast<int64_t>(static_cast<uint64_t>(a.v[i]) - static_cast<uint64_t>(b.v[i])));
}
AF_INLINE af_vl af_mul(af_vl a, af_vl b) {
  AF_LANEWISE(static_cast<int64_t>(static_cast<uint64_t>(a.v[i]) * static_cast<uint64_t>(b.v[i])));
}
AF_INLINE af_vl af_neg(af_vl a) {
  AF_LANEWISE(static_cast<int64_t>(0 - static_cast<uint64_t>(a.v[i])));
}
AF_INLINE af_vl af_abs(af_vl a) {
  AF_LANEWISE(a.v[i] < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a.v[i])) : a.v[i]);
}
AF_INLINE af_vl af_minimum(af_vl a, af_vl b) {
  AF_LANEWISE(a.v[i] < b.v[i] ? a.v[i] : b.v[i]);
}
AF_INLINE af_vl af_maximum(af_vl a, af_vl b) {
  AF_LANEWISE(a.v[i] > b.v[i] ? a.v[i] : b.v[i]);
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
AF_INLINE af_vl af_to_i64(af_vl v) {
  return v;
}
/* The low 32 bits, sign-extended: int64 -> int32 wraps. */
AF_INLINE af_vl af_to_i32(af_vl v) {
  AF_LANEWISE(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v.v[i]))));
}
AF_INLINE af_vl af_to_i64(af_vm m) {
  af_mask_bytes_ b = af_mask_bytes_of_(m);
  AF_LANEWISE(b.b[i] ? 1 : 0);
}
AF_INLINE af_vl af_to_i32(af_vm m) {
  return af_to_i64(m);
}
/* Truncation toward zero, as a C++ cast (what eager's kernels do; NaN and out-of-range values
 * give the target's "integer indefinite", as theirs). */
AF_INLINE af_vl af_to_i64(af_vf f) {
  float x[AF_LANES];
  af_store_f32(x, f);
  AF_LANEWISE(static_cast<int64_t>(x[i]));
}
AF_INLINE af_vl af_to_i32(af_vf f) {
  float x[AF_LANES];
  af_store_f32(x, f);
  AF_LANEWISE(static_cast<int64_t>(static_cast<int32_t>(x[i])));
}
/* Casts of the lane vector V to f32, and to f16 / bf16 through f32 (as c10 converts); also
 * used by autofuse_cpu_f64.h, which undefines it. */
#define AF_LANES_TO_FLOATS(V)                                                  \
  AF_INLINE af_vf af_to_f32(V v) {                                             \
    float x[AF_LANES];                                                         \
    for (int i = 0; i < AF_LANES; ++i) x[i] = static_cast<float>(v.v[i]);     \
    return af_load_f32(x);                                                     \
  }                                                                            \
  AF_INLINE af_vf af_to_f16(V v) {                                             \
    return af_to_f16(af_to_f32(v));                                            \
  }                                                                            \
  AF_INLINE af_vf af_to_bf16(V v) {                                            \
    return af_to_bf16(af_to_f32(v));                                           \
  }
AF_LANES_TO_FLOATS(af_vl)
AF_INLINE af_vm af_to_bool(af_vl v) {
  return af_ne(v, af_splat_i64(0));
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
#undef AF_TAKE

#endif /* AUTOFUSE_CPU_I64_H */
