// The loops of linear_rows (linear_rows.h), generic over the element type's traits: included by
// one translation unit per type, each compiled for the instructions that type needs
// (linear_rows_f32.cpp, linear_rows_bf16.cpp). Internal to those files.
//
// A tile is 16 dot products in 16 registers: Mt rows of x against R = 16 / Mt rows of W. At its
// end one transposing reduction turns the 16 accumulators into one vector of 16 sums (45
// shuffles and adds, against 16 horizontal reductions of 8 each): with K of a few hundred the
// reductions were a third of a tile's instructions, and they are what made 4 and 8 rows slower
// than a packed library.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

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
  int64_t ahead;  // rows of W ahead of the ones read that a step prefetches (kAheadBytes)
};

/// Accumulators of a tile: Mt x R with Mt * R = kTile.
constexpr int kTile = 16;

/// Rows of W a group holds (every tile's R divides it): read from memory for the first rows of
/// x, from cache for its later ones.
constexpr int64_t kGroupRows = 16;

/// Most rows of x one tile takes.
constexpr int kChunkRows = 8;

/// How far ahead of the rows it reads a step prefetches W, into L2: a decode step streams its
/// weights from memory and short rows (a few KiB) end before the hardware's stream prefetcher
/// ramps up. Streaming bf16 weights of 2048x768 and 32000x768 at 1 and 4 rows (2 threads, AMD Zen
/// 4), the next group into L1 read 17-31 GB/s, 96 KiB ahead into L2 33-48 GB/s (64 and 192 KiB
/// measured between them); fp32 moved less (25-28 to 24-33 GB/s).
constexpr int64_t kAheadBytes = int64_t{96} << 10;

namespace {

/// One vector whose lane L is the sum of the lanes of v[order(L)], order(4k + m) = 4m + k:
/// halves, then quarters of pairs, then pairs of lanes within each 128-bit quarter.
inline __m512 transpose_sums(const __m512 (&v)[kTile]) {
  __m512 a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i)  // [v2i.q0+q2, v2i.q1+q3, v2i+1.q0+q2, v2i+1.q1+q3]
    a[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                         _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
  for (int i = 0; i < 4; ++i)  // quarter j: the 4 partial sums of v[4i + j]
    b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xDD));
  for (int i = 0; i < 2; ++i)  // quarter j: two partial sums each of v[8i + j], v[8i + 4 + j]
    c[i] = _mm512_add_ps(_mm512_shuffle_ps(b[2 * i], b[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(b[2 * i], b[2 * i + 1], 0xEE));
  // quarter j: the sums of v[j], v[4 + j], v[8 + j], v[12 + j]
  return _mm512_add_ps(_mm512_shuffle_ps(c[0], c[1], 0x88), _mm512_shuffle_ps(c[0], c[1], 0xDD));
}

/// y[i0 .. i0+Mt) x [r .. r+rr) for x rows [i0, i0+Mt) and W rows [r, r+rr), rr <= R.
template <class Tr, int Mt>
inline void tile(const Problem& p, int64_t i0, int64_t r, int rr, bool prefetch) {
  using T = typename Tr::T;
  using V = typename Tr::V;
  constexpr int R = kTile / Mt;
  const T* x = static_cast<const T*>(p.x) + i0 * p.ldx;
  const T* w = static_cast<const T*>(p.w);
  const int64_t kv = p.k / Tr::kStep * Tr::kStep;
  const T* wr[R];
  for (int j = 0; j < R; ++j) wr[j] = w + (r + std::min(j, rr - 1)) * p.ldw;
  __m512 acc[kTile];
  for (int t = 0; t < kTile; ++t) acc[t] = _mm512_setzero_ps();
  // acc[i * R + j] += x row i . W row j
  const auto step = [&](auto load, int64_t c) {
    V wv[R];
    for (int j = 0; j < R; ++j) wv[j] = load(wr[j] + c);
    for (int i = 0; i < Mt; ++i) {
      const V xv = load(x + i * p.ldx + c);
      for (int j = 0; j < R; ++j) acc[i * R + j] = Tr::dot(acc[i * R + j], xv, wv[j]);
    }
  };
  const auto full = [](const T* q) { return Tr::load(q); };
  if (prefetch) {
    for (int64_t c = 0; c < kv; c += Tr::kStep) {
      for (int j = 0; j < R; ++j)
        _mm_prefetch(reinterpret_cast<const char*>(wr[j] + p.ahead * p.ldw + c), _MM_HINT_T1);
      step(full, c);
    }
  } else {
    for (int64_t c = 0; c < kv; c += Tr::kStep) step(full, c);
  }
  if (kv < p.k) {
    const auto tail = Tr::mask(p.k - kv);
    step([tail](const T* q) { return Tr::load(tail, q); }, kv);
  }
  // Slot s of the reduction's input lands in lane 4 (s % 4) + s / 4: put acc[L] in slot
  // 4 (L % 4) + L / 4 so that lane L holds acc[L]'s sum, i.e. y[i0 + L / R][r + L % R].
  __m512 ordered[kTile];
  for (int l = 0; l < kTile; ++l) ordered[4 * (l % 4) + l / 4] = acc[l];
  alignas(64) float sums[kTile];
  _mm512_store_ps(sums, transpose_sums(ordered));
  const T* b = static_cast<const T*>(p.b);
  float bias[R];
  for (int j = 0; j < R; ++j) bias[j] = b && j < rr ? Tr::to_f32(b[r + j]) : 0.0f;
  T out[kTile];
  for (int l = 0; l < kTile; ++l) out[l] = Tr::from_f32(sums[l] + bias[l % R]);
  T* y = static_cast<T*>(p.y) + i0 * p.n + r;
  for (int i = 0; i < Mt; ++i) std::memcpy(y + i * p.n, out + i * R, sizeof(T) * rr);
}

/// x rows [i0, i0+Mt) against W rows [g0, g1) (a group), R = kTile / Mt at a time.
template <class Tr, int Mt>
void chunk(const Problem& p, int64_t i0, int64_t g0, int64_t g1, bool prefetch) {
  constexpr int R = kTile / Mt;
  for (int64_t r = g0; r < g1; r += R)
    tile<Tr, Mt>(p, i0, r, static_cast<int>(std::min<int64_t>(R, g1 - r)), prefetch);
}

}  // namespace

/// Rows [n0, n1) of y: W's rows in groups of kGroupRows, each group against all of x's rows in
/// tiles of 8, 4, 2 and 1 rows (the first tile streams the group from memory, prefetching
/// ahead; the others read it from cache).
template <class Tr>
void rows_block(const Problem& p, int64_t n0, int64_t n1) {
  for (int64_t g = n0; g < n1; g += kGroupRows) {
    const int64_t g1 = std::min(n1, g + kGroupRows);
    int64_t i0 = 0;
    for (; i0 + 8 <= p.m; i0 += 8) chunk<Tr, 8>(p, i0, g, g1, i0 == 0);
    if (i0 + 4 <= p.m) chunk<Tr, 4>(p, i0, g, g1, i0 == 0), i0 += 4;
    if (i0 + 2 <= p.m) chunk<Tr, 2>(p, i0, g, g1, i0 == 0), i0 += 2;
    if (i0 < p.m) chunk<Tr, 1>(p, i0, g, g1, i0 == 0);
  }
}

}  // namespace af::runtime::linear_rows_detail
