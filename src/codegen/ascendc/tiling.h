// Internal to the Ascend C emitter: a kernel's host side, the TilingData struct and the tiling
// function that fills it per call (runtime/include/autofuse_ascendc_tiling.h does the arithmetic).
#pragma once
#include <cstdint>
#include <string>

#include "codegen/loop_nest.h"
#include "target/target.h"

namespace af::codegen {

/// `struct K_TilingData`: the header, the size symbols, the tile and the tiles per block.
std::string ascendc_tiling_data(const KernelContext& k);

/// `K_tiling` (host): tile, tiles per block, block_dim and (reduce_inner) the tiling key from the
/// sizes, for a kernel whose tile element costs `bytes_per_element` (an expression of the sizes:
/// a column sum's cascade grows with the rows) of the `ub_for_tiles` bytes.
std::string tiling_function(const KernelContext& k, const target::Target& t,
                            const std::string& bytes_per_element, int64_t ub_for_tiles);

}  // namespace af::codegen
