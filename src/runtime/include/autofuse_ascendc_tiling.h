/* The tiling arithmetic of Ascend C kernels (codegen/ascendc/emitter.h), shared by the generated
 * host tiling functions and by the compiler, which evaluates it off line (tests, autofuse-opt).
 * Plain C, no dependencies. */
#ifndef AUTOFUSE_ASCENDC_TILING_H
#define AUTOFUSE_ASCENDC_TILING_H
#include <stdint.h>

/* Elements of one 256-byte vector repeat of f32: every tile is a multiple of it, so each UB
 * buffer of any element size is 32-byte aligned and vector ops run whole repeats. */
#define AF_ASCENDC_REPEAT 64

/* An elementwise or reduce_outer kernel over b rows of a elements (reduce_outer: a columns, each
 * tile of columns accumulated over the reduced rows), each UB tile element costing
 * bytes_per_element of UB (queue slots of every input and output, double-buffered, plus the
 * f32 scratch): tile = the largest multiple of AF_ASCENDC_REPEAT whose bytes fit ub_bytes, no
 * larger than a rounded up, and, while the rows are fewer than the cores, no larger than cuts
 * each row into enough tiles for every core (when 64-element tiles give that many); the b * ceil(a
 * / tile) tiles are split into block_dim <= cores blocks of `block` tiles. No work (a or b 0):
 * block_dim 0. */
static inline void af_ascendc_tiling_elementwise(int64_t a, int64_t b, int64_t bytes_per_element,
                                                 int64_t ub_bytes, int64_t cores, int64_t* tile,
                                                 int64_t* block, int64_t* block_dim) {
  int64_t t = ub_bytes / (bytes_per_element > 0 ? bytes_per_element : 1) / AF_ASCENDC_REPEAT *
              AF_ASCENDC_REPEAT;
  int64_t whole = (a + AF_ASCENDC_REPEAT - 1) / AF_ASCENDC_REPEAT * AF_ASCENDC_REPEAT;
  int64_t c = cores > 0 ? cores : 1;
  if (t > whole) t = whole;
  if (b > 0 && b < c) { /* cut each row into ceil(c / b) tiles: no core idles */
    int64_t per_row = (c + b - 1) / b;
    int64_t spread = a / per_row / AF_ASCENDC_REPEAT * AF_ASCENDC_REPEAT;
    if (t > spread) t = spread;
  }
  if (t < AF_ASCENDC_REPEAT) t = AF_ASCENDC_REPEAT;
  *tile = t;
  if (a <= 0 || b <= 0) {
    *block = 1;
    *block_dim = 0;
    return;
  }
  int64_t tiles = b * ((a + t - 1) / t);
  *block = (tiles + c - 1) / c;
  *block_dim = (tiles + *block - 1) / *block;
}

/* A reduce_inner kernel over b rows of a elements. Key 0 (whole rows in UB) when the row rounded
 * up to AF_ASCENDC_REPEAT fits ub_bytes at bytes_per_element: tile = that row; else key 1 (the
 * row streamed through UB in tiles, a pass per stage): tile = the largest multiple of
 * AF_ASCENDC_REPEAT that fits. The rows are split into block_dim <= cores blocks of `block` rows
 * (no work: block_dim 0). */
static inline void af_ascendc_tiling_rows(int64_t a, int64_t b, int64_t bytes_per_element,
                                          int64_t ub_bytes, int64_t cores, int64_t* tile,
                                          int64_t* block, int64_t* block_dim, int64_t* key) {
  int64_t t = (a + AF_ASCENDC_REPEAT - 1) / AF_ASCENDC_REPEAT * AF_ASCENDC_REPEAT;
  if (t < AF_ASCENDC_REPEAT) t = AF_ASCENDC_REPEAT;
  int64_t c = cores > 0 ? cores : 1;
  int64_t bpe = bytes_per_element > 0 ? bytes_per_element : 1;
  *key = t * bpe <= ub_bytes ? 0 : 1;
  if (*key == 1) t = ub_bytes / bpe / AF_ASCENDC_REPEAT * AF_ASCENDC_REPEAT;
  *tile = t;
  if (a <= 0 || b <= 0) {
    *block = 1;
    *block_dim = 0;
    return;
  }
  *block = (b + c - 1) / c;
  *block_dim = (b + *block - 1) / *block;
}

#endif
