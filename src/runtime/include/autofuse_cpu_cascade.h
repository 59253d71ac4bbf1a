/* Pairwise (cascade) summation of a reduction's partial sums in autofuse kernels.
 *
 * A CPU sum kernel accumulates each tile of a row (reduce_inner) or each block of rows
 * (reduce_outer) into vector accumulators, a chain of at most 8 additions per lane (a tile's
 * steps of 8 vectors join pairwise first; AF_OUTER_CHAIN rows); the partials then join through
 * an af_cascade: a binary counter whose level k holds the sum of 2^k partials. Two partials of
 * equal weight always meet, so the rounding error of a sum over n elements grows like
 * 8 + log2(n) instead of n (a float32 sum of 10^8 elements: error about that of eager's
 * cascade_sum, not 600x it). Ascend C kernels join a streamed row's tile sums the same way, as
 * floats (af_cascade<float, 1, af_fold_sum>). The state is a few KiB of stack (160 bytes for a
 * float) and one add per partial; the order of additions is fixed by the row length and the
 * tile, never by the threads, so results are reproducible. */
#ifndef AUTOFUSE_CPU_CASCADE_H
#define AUTOFUSE_CPU_CASCADE_H

#include "autofuse_cpu_int.h"

/* Levels of a cascade: up to 2^40 partials (each of at least 8 elements: 2^43 and more). */
#define AF_CASCADE_LEVELS 40

/* How a CPU cascade adds: af_add of the kernel's vector type (af_vf, af_vd). */
struct af_vector_sum {
  template <class V>
  inline __attribute__((always_inline)) AF_DEVICE static V apply(V a, V b) {
    return af_add(a, b);
  }
};

/* How an Ascend C cascade adds: floats (a streamed row's tile sums). */
struct af_fold_sum {
  inline __attribute__((always_inline)) AF_DEVICE static float apply(float a, float b) {
    return af_fold_add(a, b);
  }
};

/* A pairwise sum of partials, each N values of type V, added by Sum::apply. */
template <class V, int N = 1, class Sum = af_vector_sum>
struct af_cascade {
  V level[AF_CASCADE_LEVELS][N];
  int64_t count = 0;

  /* Adds the next partial: it joins every completed level below the first empty one. */
  inline __attribute__((always_inline)) AF_DEVICE void add(const V* x) {
    V carry[N];
    for (int u = 0; u < N; ++u) carry[u] = x[u];
    int k = 0;
    for (int64_t c = count; c & 1; c >>= 1, ++k)
      for (int u = 0; u < N; ++u) carry[u] = Sum::apply(level[k][u], carry[u]);
    for (int u = 0; u < N; ++u) level[k][u] = carry[u];
    ++count;
  }

  /* acc[u] += the sum of every partial added, the smallest levels first. */
  inline __attribute__((always_inline)) AF_DEVICE void add_to(V* acc) const {
    int k = 0;
    for (int64_t c = count; c != 0; c >>= 1, ++k)
      if (c & 1)
        for (int u = 0; u < N; ++u) acc[u] = Sum::apply(level[k][u], acc[u]);
  }
};

#endif /* AUTOFUSE_CPU_CASCADE_H */
