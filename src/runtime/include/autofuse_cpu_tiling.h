/* Tiling arithmetic shared by generated CPU tiling functions (the run-time half of the Schedule
 * pass; docs/schedule.md). Cheap integer arithmetic only: no allocation, no system calls.
 * ISA-independent (the vector width comes in as `lanes`): generated kernels include it through
 * autofuse_cpu.h, the compiler includes it to evaluate a tiling off line (autofuse-opt
 * --tiling, schedule/tiling.h). */
#ifndef AUTOFUSE_CPU_TILING_H
#define AUTOFUSE_CPU_TILING_H

#include "autofuse_cpu_int.h"

/* The cost model of the "elementwise" TilingCase, in units of `work` = the time one element of
 * a plain f32 copy takes (load + store of 4 bytes each), scaled by 1000 so it stays integer:
 *   per element   `work_milli` / 1000 (compile time: max(memory bytes / 8, compute cost /
 *                 lanes) over the kernel's nodes, codegen/cpu/tiling.cpp), padded to whole vectors;
 *   per tile      AF_TILE_OVERHEAD (index arithmetic, pointer setup, the masked tail);
 *   per launch    AF_BLOCK_OVERHEAD once more than one block runs (waking the thread pool and
 *                 joining it), calibrated so a plain copy goes parallel from ~32K elements. */
#define AF_TILE_OVERHEAD 40
#define AF_BLOCK_OVERHEAD 16384

/* The time (model units x 1000) of `blocks` blocks over `outer` rows of `nt` tiles of `t`
 * elements each, on `cores` cores: the slowest core's tiles plus the launch cost. */
AF_INLINE int64_t af_tiling_time(int64_t outer, int64_t nt, int64_t t, int64_t blocks,
                                 int64_t cores, int64_t work_milli) {
  int64_t tiles = outer * nt;
  int64_t per_block = af_ceildiv(tiles, blocks);
  int64_t waves = af_ceildiv(blocks, cores);
  int64_t per_core = per_block * waves;
  int64_t time = per_core * (AF_TILE_OVERHEAD * 1000 + t * work_milli);
  return time + (blocks > 1 ? AF_BLOCK_OVERHEAD * 1000 : 0);
}

/* The "elementwise" TilingCase. The kernel's loop nest is
 *     block_outer (the launch block index) x block_inner x tile_inner (SIMD lanes)
 * where block_outer x block_inner splits `outer` x ceil(inner / tile) tiles. A small solver
 * over the cost model above chooses:
 *   tile       elements of the innermost axis per tile: a multiple of `lanes` (alignment), at
 *              most ub_bytes / bytes_per_element (every live buffer of a tile fits the per-core
 *              budget), the tiles of a row equal in size (tails spread, not one short tile);
 *   block      tiles per block, block_dim blocks (at most `cores`: one wave);
 * minimising the model time: for each block count 1..cores, the fewest tiles per row that feed
 * every block (preferring a tile count the blocks divide evenly), then the cheapest count; ties
 * go to fewer blocks. No allocation; O(cores) steps. `default_ub` is the compile-time budget,
 * used when the target gives none. */
AF_INLINE void af_tiling_elementwise(int64_t lanes, int64_t inner, int64_t outer,
                                     int64_t bytes_per_element, int64_t default_ub,
                                     int64_t work_milli, const af_target* target, int64_t* tile,
                                     int64_t* block, int64_t* block_dim) {
  int64_t ub = (target && target->ub_bytes > 0) ? target->ub_bytes : default_ub;
  int64_t cores = (target && target->cores > 0) ? target->cores : 1;
  int64_t bpe = bytes_per_element > 0 ? bytes_per_element : 1;
  int64_t work = work_milli > 0 ? work_milli : 1000;
  if (inner < 0) inner = 0;
  if (outer < 0) outer = 0;
  *tile = lanes;
  *block = 1;
  *block_dim = 1;
  if (inner == 0 || outer == 0) return;
  int64_t max_tile = af_max(lanes, (ub / bpe) / lanes * lanes);
  int64_t min_nt = af_ceildiv(inner, max_tile);         /* the buffer budget */
  int64_t max_nt = af_max(1, af_ceildiv(inner, lanes)); /* tiles hold >= lanes elements */
  int64_t best = -1;
  for (int64_t b = 1; b <= cores; ++b) {
    /* Enough tiles for b blocks; among the next few counts, one the blocks divide evenly. */
    int64_t n = af_max(min_nt, af_min(max_nt, af_ceildiv(b, outer)));
    for (int64_t m = n; m < af_min(max_nt, n + 8); ++m)
      if ((outer * m) % b == 0) {
        n = m;
        break;
      }
    int64_t t = af_ceildiv(af_ceildiv(inner, n), lanes) * lanes;
    int64_t nt = af_ceildiv(inner, t);
    int64_t tiles = outer * nt;
    if (tiles < b) break; /* more blocks than tiles: no better with more */
    int64_t blocks_used = af_ceildiv(tiles, af_ceildiv(tiles, b));
    int64_t time = af_tiling_time(outer, nt, t, blocks_used, cores, work);
    if (best < 0 || time < best) {
      best = time;
      *tile = t;
      *block = af_ceildiv(tiles, b);
      *block_dim = blocks_used;
    }
  }
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
 *   key        0 "all_load" when the row's cached values (buffer_bytes_per_element per element)
 *              fit the row buffer of buffer_bytes, else 1 "split" (every pass re-reads its
 *              inputs); with `two_cases` 0 only one case exists and the key stays 0;
 *   tile       elements of a row per tile (a multiple of `lanes`, at most AF_REDUCE_TILE_VECTORS
 *              vectors): a tile's steps of 8 vectors join pairwise into its accumulator (a
 *              lane adds 8 values in sequence), and the tiles' partials are summed pairwise
 *              (autofuse_cpu_cascade.h): the rounding error grows like log n, as eager's;
 *   block      rows per block, block_dim blocks, from the cost model below.
 * "reduce_outer" (a kept dim is innermost): tile = AF_OUTER_VECTORS x lanes columns per
 * chunk, rows = chunks, row_len = the reduced extent x the chunk.
 *
 * The cost model, in the units of af_tiling_time: a row costs
 *     passes x tiles per row x AF_TILE_OVERHEAD  +  row_len x work_milli / 1000
 * where work_milli is the per-element work of the chosen case over all its passes (compile
 * time, codegen/cpu/tiling.cpp: max(memory traffic / 8 bytes, compute cost / lanes); the split case
 * reads its inputs once per pass). Blocks take whole rows; b blocks cost the rows of the
 * fullest block plus AF_BLOCK_OVERHEAD when more than one runs. The solver tries every block
 * count up to the cores (O(cores), no allocation) and keeps the cheapest; ties go to fewer
 * blocks. */
#define AF_REDUCE_TILE_VECTORS 64
/* Vectors per column chunk of "reduce_outer": 4 x 32 bytes = two cache lines of each row. */
#define AF_OUTER_VECTORS 4
/* Rows of a "reduce_outer" chunk summed into one partial before it joins the pairwise cascade
 * (autofuse_cpu_cascade.h): each column's chain is at most 8 additions. */
#define AF_OUTER_CHAIN 8

/* The model time (units x 1000) of `rows` rows of cost `row_cost` (x1000) in blocks of
 * `per_block` rows on `cores` cores. */
AF_INLINE int64_t af_reduce_time(int64_t rows, int64_t per_block, int64_t row_cost, int64_t cores) {
  int64_t blocks = af_ceildiv(rows, per_block);
  int64_t waves = af_ceildiv(blocks, cores);
  return waves * per_block * row_cost + (blocks > 1 ? AF_BLOCK_OVERHEAD * 1000 : 0);
}

AF_INLINE void af_tiling_reduce(int64_t lanes, int64_t rows, int64_t row_len,
                                int64_t buffer_bytes_per_element, int64_t buffer_bytes,
                                int64_t two_cases, int64_t passes, int64_t all_load_work_milli,
                                int64_t split_work_milli, const af_target* target, int64_t* tile,
                                int64_t* block, int64_t* block_dim, int64_t* key) {
  int64_t cores = (target && target->cores > 0) ? target->cores : 1;
  if (rows < 0) rows = 0;
  if (row_len < 0) row_len = 0;
  *key = (two_cases && row_len * buffer_bytes_per_element > buffer_bytes) ? 1 : 0;
  int64_t t = af_ceildiv(af_max(row_len, 1), lanes) * lanes;
  *tile = af_min(t, AF_REDUCE_TILE_VECTORS * lanes);
  *block = af_max(rows, 1);
  *block_dim = 1;
  if (rows <= 1) return;
  int64_t work = af_max(1, *key ? split_work_milli : all_load_work_milli);
  int64_t row_cost =
      af_max(1, passes) * af_ceildiv(af_max(row_len, 1), *tile) * AF_TILE_OVERHEAD * 1000 +
      af_max(row_len, 1) * work;
  int64_t best = af_reduce_time(rows, rows, row_cost, cores);
  for (int64_t b = 2; b <= af_min(cores, rows); ++b) {
    int64_t per_block = af_ceildiv(rows, b);
    int64_t time = af_reduce_time(rows, per_block, row_cost, cores);
    if (time < best) {
      best = time;
      *block = per_block;
      *block_dim = af_ceildiv(rows, per_block);
    }
  }
}

#endif /* AUTOFUSE_CPU_TILING_H */
