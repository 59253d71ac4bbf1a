// The loops of linear_rows (linear_rows.h), generic over the element type's traits: included by
// one translation unit per type, each compiled for the instructions that type needs
// (linear_rows_f32.cpp, linear_rows_bf16.cpp). Internal to those files.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace af::runtime::linear_rows_detail {

/// The sizes and data of one call.
struct Problem {
  const void* x;
  int64_t ldx;
  const void* w;
  int64_t ldw;
  const void* b;
  void* y;
  int64_t m, n, k;
};

/// Rows of W read and finished together for M rows of x: M x R accumulators in registers.
template <int M>
constexpr int kRowsAtOnce = M <= 2 ? 4 : (M <= 4 ? 3 : 2);

/// Rows of W a group holds (a multiple of every kRowsAtOnce): read from memory for x's first
/// rows, from cache for its later ones.
constexpr int64_t kGroupRows = 12;

/// Rows of x one pass over a group takes.
constexpr int kChunkRows = 8;

/// How many rows ahead of the ones it reads a step prefetches: short rows (a few KiB) end before
/// the hardware's stream prefetcher ramps up, and a decode step streams its weights from memory.
constexpr int64_t kAhead = 8;

namespace {

/// y[i0 .. i0+M) x [r .. r+rr) for x rows [i0, i0+M) and W rows [r, r+rr), rr <= R.
template <class Tr, int M>
inline void dot_rows(const Problem& p, int64_t i0, int64_t r, int rr, bool prefetch) {
  using T = typename Tr::T;
  using V = typename Tr::V;
  constexpr int R = kRowsAtOnce<M>;
  const T* x = static_cast<const T*>(p.x) + i0 * p.ldx;
  const T* w = static_cast<const T*>(p.w);
  const int64_t kv = p.k / Tr::kStep * Tr::kStep;
  const auto tail = Tr::mask(p.k - kv);
  const T* wr[R];
  for (int j = 0; j < R; ++j) wr[j] = w + (r + std::min(j, rr - 1)) * p.ldw;
  __m512 acc[M][R];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < R; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t c = 0; c < kv; c += Tr::kStep) {
    V wv[R];
    for (int j = 0; j < R; ++j) {
      wv[j] = Tr::load(wr[j] + c);
      if (prefetch)
        _mm_prefetch(reinterpret_cast<const char*>(wr[j] + kAhead * p.ldw + c), _MM_HINT_T0);
    }
    for (int i = 0; i < M; ++i) {
      const V xv = Tr::load(x + i * p.ldx + c);
      for (int j = 0; j < R; ++j) acc[i][j] = Tr::dot(acc[i][j], xv, wv[j]);
    }
  }
  if (kv < p.k) {
    V wv[R];
    for (int j = 0; j < R; ++j) wv[j] = Tr::load(tail, wr[j] + kv);
    for (int i = 0; i < M; ++i) {
      const V xv = Tr::load(tail, x + i * p.ldx + kv);
      for (int j = 0; j < R; ++j) acc[i][j] = Tr::dot(acc[i][j], xv, wv[j]);
    }
  }
  const T* b = static_cast<const T*>(p.b);
  T* y = static_cast<T*>(p.y) + i0 * p.n;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < rr; ++j)
      y[i * p.n + r + j] =
          Tr::from_f32(_mm512_reduce_add_ps(acc[i][j]) + (b ? Tr::to_f32(b[r + j]) : 0.0f));
}

/// x rows [i0, i0+M) against W rows [g0, g1) (a group), kRowsAtOnce<M> at a time.
template <class Tr, int M>
void chunk(const Problem& p, int64_t i0, int64_t g0, int64_t g1, bool prefetch) {
  constexpr int R = kRowsAtOnce<M>;
  for (int64_t r = g0; r < g1; r += R)
    dot_rows<Tr, M>(p, i0, r, static_cast<int>(std::min<int64_t>(R, g1 - r)), prefetch);
}

template <class Tr>
using ChunkFn = void (*)(const Problem&, int64_t, int64_t, int64_t, bool);

template <class Tr>
ChunkFn<Tr> chunk_for(int64_t rows) {
  switch (rows) {
    case 1: return &chunk<Tr, 1>;
    case 2: return &chunk<Tr, 2>;
    case 3: return &chunk<Tr, 3>;
    case 4: return &chunk<Tr, 4>;
    case 5: return &chunk<Tr, 5>;
    case 6: return &chunk<Tr, 6>;
    case 7: return &chunk<Tr, 7>;
    default: return &chunk<Tr, 8>;
  }
}

}  // namespace

/// Rows [n0, n1) of y: W's rows in groups of kGroupRows, each group against all of x's rows in
/// chunks of kChunkRows (the first chunk streams the group from memory, prefetching ahead).
template <class Tr>
void rows_block(const Problem& p, int64_t n0, int64_t n1) {
  for (int64_t g = n0; g < n1; g += kGroupRows) {
    const int64_t g1 = std::min(n1, g + kGroupRows);
    for (int64_t i0 = 0; i0 < p.m; i0 += kChunkRows)
      chunk_for<Tr>(std::min<int64_t>(kChunkRows, p.m - i0))(p, i0, g, g1, i0 == 0);
  }
}

}  // namespace af::runtime::linear_rows_detail
