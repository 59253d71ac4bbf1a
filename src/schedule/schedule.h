// The Schedule pass: turns an unscheduled AscGraph (original axes z0..zn, every node on the full
// loop nest) into one TilingCase the emitter prints as a loop nest (docs/schedule.md).
#pragma once
#include <cstdint>

#include "ascir/asc_graph.h"
#include "target/target.h"

namespace af::schedule {

/// The TilingCase "elementwise" (tiling key 0), for kernels of elementwise and broadcast ops
/// whose stores all share the loop axes:
///   (a) reorders the loop axes by the first store's strides (outermost = largest stride), so
///       a transposed output is written in memory order; size-1 axes are dropped;
///   (b) merges adjacent axes where every data and store tensor is contiguous across them
///       (stride_i == stride_{i+1} * size_{i+1}; broadcast dims with stride 0 on both merge too);
///   (c) splits the innermost axis into tile_outer x tile_inner with a run-time tile size
///       symbol `<tile_inner>_size` (a multiple of the vector lanes, at most ub_bytes /
///       bytes_per_element);
///   (d) merges the remaining outer axes with tile_outer into one axis (unless tile_outer is
///       alone) and splits it into block_outer x block_inner; block_outer is the launch block
///       index, `<block_inner>_size` the tiles per block;
///   (e) vectorizes tile_inner (an input strided on it is gathered by the emitter);
///   (f) sets g.schedule and every node's sched_axes to [block_outer, block_inner, tile_inner];
///       data/store tensors keep their global layout over the merged axes, all other nodes
///       describe one tile: axes [tile_inner], repeats [tile size] strides [1], or repeats [1]
///       strides [0] for a value that is the same across the tile (scalars stay rank 0).
/// Throws CompileError when the graph is already scheduled, has no store, or a tensor does not
/// fit the loop axes.
void schedule_kernel(ascir::AscGraph& g, const target::Target& t);

/// f32 lanes of one vector register of `t` (vector_bytes / 4, at least 1).
int64_t vector_lanes(const target::Target& t);

}  // namespace af::schedule
