// The CUDA printer of one scheduled AscGraph (elementwise, reduce_inner, reduce_outer): a
// __global__ kernel whose grid runs over the schedule's blocks (grid-stride), each thread block's
// threads over the elements of a tile (a row reduction: one pass over the row per stage, the
// threads' accumulators joined across the block; a column reduction: a thread per column, the
// reduced dims its own loops), every value a register of its lane type; and the host tiling
// function that fills its TilingData (passed to the kernel by value).
#pragma once
#include <string>

#include "codegen/loop_nest.h"

namespace af::codegen {

/// Why the CUDA printer cannot print scheduled kernel `g` ("" when it can): a row reduction over
/// several dims, a node (a gather, an integer division, an integer or bool reduction) or a dtype
/// without a CUDA form.
std::string cuda_kernel_reason(const ascir::AscGraph& g);

/// The device code of kernel `k`: `extern "C" __global__ void <name>_kernel(<name>_TilingData td,
/// inputs..., outputs...)` (NVRTC source; the TilingData struct printed before it).
std::string cuda_kernel_function(const KernelContext& k);

/// The TilingData struct of `k` (fields as int64_t, `int64_t` a typedef on the device) and its
/// host tiling function `<name>_tiling` (the ABI's): the tile is the vectorized dim up to 1024
/// elements, one tile a thread block, the threads the tile rounded up to a warp (at most 256).
std::string cuda_tiling_data(const KernelContext& k);
std::string cuda_tiling_function(const KernelContext& k);

}  // namespace af::codegen
