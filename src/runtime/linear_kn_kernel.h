// The loops of linear_rows on a weight stored [K, N] (linear_rows.h, WeightLayout::KN: GPT-2's
// Conv1D), generic over the element type's traits as linear_rows_kernel.h is. Each task owns a
// block of at most kKnColumns columns: W's rows are streamed 4 at a time over the block's columns
// (4 contiguous streams, the next rows prefetched into L2) and each adds its 4 products to the
// sums of x's rows, which live in L1 (a stack array of up to 4 x kKnColumns floats). A row of y
// is summed over K in order, as a dot product is.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/linear_rows_kernel.h"

namespace af::runtime::linear_rows_detail {

/// Most columns one task sums (a multiple of 16): 4 rows of f32 sums fill 16 KiB of L1.
constexpr int64_t kKnColumns = 1024;

/// Rows of x one pass over the weight takes: 4 x 4 broadcast values in registers.
constexpr int kKnRows = 4;

namespace {

/// acc[i][0 .. width) += sum over W rows [k, k + KQ) of x[i][k'] * W[k'][n0 ..], for Mt rows of x.
template <class Tr, int Mt, int KQ>
inline void kn_rows(const Problem& p, const typename Tr::T* x, int64_t k, int64_t n0,
                    int64_t width, float (*acc)[kKnColumns], bool prefetch) {
  using T = typename Tr::T;
  const T* w = static_cast<const T*>(p.w) + k * p.ldw + n0;
  __m512 xb[Mt][KQ];
  for (int i = 0; i < Mt; ++i)
    for (int q = 0; q < KQ; ++q) xb[i][q] = _mm512_set1_ps(Tr::to_f32(x[i * p.ldx + k + q]));
  for (int64_t c = 0; c < width; c += 16) {
    const __mmask16 m = width - c >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (width - c)) - 1u);
    __m512 wv[KQ];
    for (int q = 0; q < KQ; ++q) {
      wv[q] = Tr::load_f32(m, w + q * p.ldw + c);
      if (prefetch)
        _mm_prefetch(reinterpret_cast<const char*>(w + (q + p.ahead) * p.ldw + c), _MM_HINT_T1);
    }
    for (int i = 0; i < Mt; ++i) {
      __m512 a = _mm512_load_ps(acc[i] + c);
      for (int q = 0; q < KQ; ++q) a = _mm512_fmadd_ps(xb[i][q], wv[q], a);
      _mm512_store_ps(acc[i] + c, a);
    }
  }
}

/// y rows [i0, i0 + Mt) x columns [n0, n0 + width).
template <class Tr, int Mt>
void kn_chunk(const Problem& p, int64_t i0, int64_t n0, int64_t width) {
  using T = typename Tr::T;
  alignas(64) float acc[Mt][kKnColumns];
  for (int i = 0; i < Mt; ++i) std::fill(acc[i], acc[i] + width, 0.0f);
  const T* x = static_cast<const T*>(p.x) + i0 * p.ldx;
  const bool prefetch = i0 == 0;  // later chunks find the block in cache
  int64_t k = 0;
  for (; k + 4 <= p.k; k += 4) kn_rows<Tr, Mt, 4>(p, x, k, n0, width, acc, prefetch);
  for (; k < p.k; ++k) kn_rows<Tr, Mt, 1>(p, x, k, n0, width, acc, prefetch);
  const T* b = static_cast<const T*>(p.b);
  T* y = static_cast<T*>(p.y) + i0 * p.n + n0;
  for (int64_t c = 0; c < width; c += 16) {
    const __mmask16 m = width - c >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (width - c)) - 1u);
    const __m512 bias = b ? Tr::load_f32(m, b + n0 + c) : _mm512_setzero_ps();
    for (int i = 0; i < Mt; ++i)
      Tr::store_f32(m, y + i * p.n + c, _mm512_add_ps(_mm512_load_ps(acc[i] + c), bias));
  }
}

}  // namespace

/// Columns [n0, n1) of y (n1 - n0 <= kKnColumns), every row of x, kKnRows rows a pass.
template <class Tr>
void kn_block(const Problem& p, int64_t n0, int64_t n1) {
  int64_t i0 = 0;
  for (; i0 + 4 <= p.m; i0 += 4) kn_chunk<Tr, 4>(p, i0, n0, n1 - n0);
  switch (p.m - i0) {
    case 3: kn_chunk<Tr, 3>(p, i0, n0, n1 - n0); break;
    case 2: kn_chunk<Tr, 2>(p, i0, n0, n1 - n0); break;
    case 1: kn_chunk<Tr, 1>(p, i0, n0, n1 - n0); break;
    default: break;
  }
}

}  // namespace af::runtime::linear_rows_detail
