/* autofuse CPU kernels: the int64 helpers generated index and tiling code uses (sym::Expr::cpp
 * prints af_floordiv, af_mod, af_min, af_max), and the AF_INLINE / AF_EXPORT macros. Plain C++
 * with no ISA dependence: the compiler's host code includes it too (autofuse_cpu_tiling.h). */
#ifndef AUTOFUSE_CPU_INT_H
#define AUTOFUSE_CPU_INT_H

#include "autofuse_abi.h" /* and the fixed-width integer types */

/* AF_DEVICE qualifies the helpers for a device compiler: Ascend C sources define it as
 * __aicore__ before including this header, CUDA sources (NVRTC) as __device__. */
#ifndef AF_DEVICE
#define AF_DEVICE
#endif
#define AF_INLINE static inline __attribute__((always_inline)) AF_DEVICE
/* How generated sources export K_tiling and K_kernel. */
#define AF_EXPORT extern "C" __attribute__((visibility("default")))

/* floor(a / b) on integers (Python semantics; b != 0). */
AF_INLINE int64_t af_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
/* a - b * floor(a / b): the result has the sign of b (Python semantics; b != 0). */
AF_INLINE int64_t af_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
/* Integer minimum and maximum. */
AF_INLINE int64_t af_min(int64_t a, int64_t b) {
  return a < b ? a : b;
}
AF_INLINE int64_t af_max(int64_t a, int64_t b) {
  return a > b ? a : b;
}
/* The f32 with IEEE bits `bits`: how sources without <cmath> write inf and NaN constants. */
AF_INLINE float af_f32_bits(uint32_t bits) {
  union {
    uint32_t u;
    float f;
  } v;
  v.u = bits;
  return v.f;
}
/* A reduction's partial results joined (the Ascend C kernels' streamed rows); a NaN wins. */
AF_INLINE float af_fold_add(float a, float b) {
  return a + b;
}
AF_INLINE float af_fold_max(float a, float b) {
  return (a != a || a >= b) ? a : b;
}
AF_INLINE float af_fold_min(float a, float b) {
  return (a != a || a <= b) ? a : b;
}
/* The bits of n >= 0 (0 for 0): the levels a pairwise cascade of n partials fills
 * (autofuse_cpu_cascade.h; the Ascend C column sums' level tiles). */
AF_INLINE int64_t af_bit_length(int64_t n) {
  int64_t bits = 0;
  for (; n > 0; n >>= 1) ++bits;
  return bits;
}
/* a / b and a % b for loop indices (a >= 0, b >= 1) without the division when b == 1: the
 * common case of a merged axis whose tile covers its whole dim (short rows). */
AF_INLINE int64_t af_index_div(int64_t a, int64_t b) {
  return b == 1 ? a : a / b;
}
AF_INLINE int64_t af_index_mod(int64_t a, int64_t b) {
  return b == 1 ? 0 : a % b;
}
/* ceil(a / b) for a >= 0, b > 0. */
AF_INLINE int64_t af_ceildiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

#endif /* AUTOFUSE_CPU_INT_H */
