/* Tiling arithmetic shared by generated CPU tiling functions (the run-time half of the Schedule
 * pass; docs/schedule.md). Cheap integer arithmetic only: no allocation, no system calls.
 * ISA-independent (the vector width comes in as `lanes`): generated kernels include it through
 * autofuse_cpu.h, the compiler includes it to evaluate a tiling off line (autofuse-opt
 * --tiling, schedule/tiling.h). */
#ifndef AUTOFUSE_CPU_TILING_H
#define AUTOFUSE_CPU_TILING_H

#include "autofuse_cpu_int.h"

/* A block gets at least this many elements, so small tensors run as one block on the calling
 * thread instead of paying for a thread-pool round trip. */
#define AF_MIN_BLOCK_ELEMENTS 16384

/* The "elementwise" TilingCase. The kernel's loop nest is
 *     block_outer (the launch block index) x block_inner x tile_inner (SIMD lanes)
 * where block_outer x block_inner splits `outer` x ceil(inner / tile) tiles. Chooses:
 *   tile       elements of the innermost axis per tile: a multiple of `lanes`, at most
 *              ub_bytes / bytes_per_element (the per-core buffer budget), tiles balanced;
 *   block      tiles per block;
 *   block_dim  blocks to launch: min(cores, tiles, elements / AF_MIN_BLOCK_ELEMENTS), >= 1.
 * `default_ub` is the compile-time budget, used when the target gives none. */
AF_INLINE void af_tiling_elementwise(int64_t lanes, int64_t inner, int64_t outer, int64_t bytes_per_element,
                                     int64_t default_ub, const af_target* target, int64_t* tile,
                                     int64_t* block, int64_t* block_dim) {
  int64_t ub = (target && target->ub_bytes > 0) ? target->ub_bytes : default_ub;
  int64_t cores = (target && target->cores > 0) ? target->cores : 1;
  int64_t bpe = bytes_per_element > 0 ? bytes_per_element : 1;
  if (inner < 0) inner = 0;
  if (outer < 0) outer = 0;
  int64_t max_tile = af_max(lanes, (ub / bpe) / lanes * lanes);
  int64_t total = inner * outer;
  int64_t want = af_min(cores, af_max(1, total / AF_MIN_BLOCK_ELEMENTS));
  int64_t max_nt = af_max(1, af_ceildiv(inner, lanes)); /* tiles hold >= lanes elements */
  int64_t nt = inner > 0 ? af_ceildiv(inner, max_tile) : 1;
  /* Few tiles: use more, smaller ones so that the blocks get equal shares. */
  if (want > 1 && outer * nt < 8 * want) {
    int64_t n = af_max(nt, af_ceildiv(want, af_max(outer, 1)));
    while (n < max_nt && (outer * n) % want != 0) ++n;
    nt = af_min(n, max_nt);
  }
  int64_t t = inner > 0 ? af_ceildiv(af_ceildiv(inner, nt), lanes) * lanes : lanes;
  nt = inner > 0 ? af_ceildiv(inner, t) : 0;
  int64_t tiles = outer * nt;
  int64_t blocks = af_max(1, af_min(want, tiles));
  int64_t b = af_max(1, af_ceildiv(tiles, blocks));
  *tile = t;
  *block = b;
  *block_dim = tiles > 0 ? af_ceildiv(tiles, b) : 1;
}

/* Outputs at least this large are written with non-temporal stores: they cannot stay in the
 * caches for the next kernel anyway, and streaming saves the read-for-ownership of every line
 * (a third of the traffic of a one-input kernel). */
#define AF_STREAM_MIN_BYTES (16 << 20)

/* 1 when a kernel writing `output_bytes` in total should stream its stores, else 0. */
AF_INLINE int64_t af_tiling_stream_stores(int64_t output_bytes) {
  return output_bytes >= AF_STREAM_MIN_BYTES ? 1 : 0;
}

/* The reduction TilingCases (docs/schedule.md). The kernel's loop nest is
 *     block_outer x block_inner over `rows` (kept index) x the passes over the reduced extent.
 * "reduce_inner" (the reduced dim is innermost in memory) chooses:
 *   tile       elements of a row per tile (a multiple of `lanes`, at most AF_REDUCE_TILE): sums
 *              are accumulated per tile and then across tiles (cascade: small rounding error);
 *   block      rows per block, block_dim blocks: min(cores, rows, elements /
 * AF_MIN_BLOCK_ELEMENTS); key        0 "all_load" when the row's cached values
 * (buffer_bytes_per_element per element) fit the row buffer of buffer_bytes, else 1 "split" (every
 * pass re-reads its inputs); with `two_cases` 0 only one case exists and the key stays 0.
 * "reduce_outer" (a kept dim is innermost): tile = AF_OUTER_VECTORS x lanes columns per
 * chunk, rows = chunks. */
#define AF_REDUCE_TILE 2048
/* Vectors per column chunk of "reduce_outer": 4 x 32 bytes = two cache lines of each row. */
#define AF_OUTER_VECTORS 4

AF_INLINE void af_tiling_reduce(int64_t lanes, int64_t rows, int64_t row_len, int64_t buffer_bytes_per_element,
                                int64_t buffer_bytes, int64_t two_cases, const af_target* target,
                                int64_t* tile, int64_t* block, int64_t* block_dim, int64_t* key) {
  int64_t cores = (target && target->cores > 0) ? target->cores : 1;
  if (rows < 0) rows = 0;
  if (row_len < 0) row_len = 0;
  int64_t t = af_ceildiv(af_max(row_len, 1), lanes) * lanes;
  *tile = af_min(t, AF_REDUCE_TILE);
  int64_t want = af_min(cores, af_max(1, rows * af_max(row_len, 1) / AF_MIN_BLOCK_ELEMENTS));
  int64_t blocks = af_max(1, af_min(want, rows));
  int64_t b = af_max(1, af_ceildiv(rows, blocks));
  *block = b;
  *block_dim = rows > 0 ? af_ceildiv(rows, b) : 1;
  *key = (two_cases && row_len * buffer_bytes_per_element > buffer_bytes) ? 1 : 0;
}

#endif /* AUTOFUSE_CPU_TILING_H */
