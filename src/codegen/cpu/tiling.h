// The tiling half of the CPU emitter (CANN's "tiling function"): what a kernel's tiling function
// computes its TilingData from, printed as C++ for the kernel's source and evaluated off line
// with the same arithmetic (runtime/include/autofuse_cpu_tiling.h) for `autofuse-opt --tiling`.
#pragma once
#include <cstdint>
#include <string>

#include "ascir/asc_graph.h"
#include "codegen/cpu/kernel.h"
#include "sym/expr.h"

namespace af::codegen {

/// The arguments of a kernel's call into the tiling arithmetic, as expressions over its size
/// symbols. "elementwise": af_tiling_elementwise(a = size of the vectorized dim, b = product of
/// the dims outside it); "reduce_inner": af_tiling_reduce(a = rows, b = row length);
/// "reduce_outer": af_tiling_reduce(a = rows, b = reduced extent x chunk), tile = the chunk of
/// AF_OUTER_VECTORS vectors.
struct TilingCall {
  ascir::ScheduleFamily family = ascir::ScheduleFamily::Elementwise;
  sym::Expr a, b;  // see above
  int64_t bytes_per_element = 0;
  int64_t ub_bytes = 0;
  bool two_cases = false;  // reduce_inner with the all_load / split TilingCases
  sym::Expr output_bytes;  // what every store writes: decides streaming stores
  /// The cost model's work per element (x1000, see autofuse_cpu_tiling.h): memory traffic in
  /// units of a plain f32 copy (bytes_per_element / 8), and the summed registry cost of the
  /// compute nodes, which the tiling function divides by the lanes; the larger one counts.
  int64_t memory_milli = 0, compute_milli = 0;
  /// Reductions: the passes over a row, and the memory traffic of the split case, which reads
  /// its inputs once per pass (memory_milli is the all_load case's: each input read once).
  int64_t passes = 1, split_memory_milli = 0;
};

/// The TilingCall of analyzed kernel `k`. Throws CompileError naming the kernel when a size
/// depends on a tiling parameter or the block axis is not what the families expect.
TilingCall tiling_call(const KernelContext& k);

/// What a tiling function writes into its TilingData (besides the size symbols).
struct TilingChoice {
  int64_t tile = 0;       // elements per tile of the vectorized / reduced dim
  int64_t block = 0;      // tiles (rows) per block
  int64_t block_dim = 0;  // blocks launched
  int64_t tiling_key = 0;
  int64_t stream_stores = 0;
};

/// The TilingChoice the tiling function of scheduled kernel `g` makes for symbol values
/// `values` on `cores` threads with vectors of `lanes` f32 (evaluated here, not run). Throws
/// CompileError when a symbol has no value.
TilingChoice evaluate_tiling(const ascir::AscGraph& g, const sym::Bindings& values, int64_t cores,
                             int64_t lanes);

/// The text of a TilingChoice: "tiling_key 0 (elementwise) tile 64 block 3 block_dim 2
/// stream_stores 0".
std::string tiling_choice_str(const ascir::AscGraph& g, const TilingChoice& c);

/// `struct K_TilingData` and `K_tiling` of kernel `k` (C++ source).
std::string tiling_source(const KernelContext& k);

}  // namespace af::codegen
