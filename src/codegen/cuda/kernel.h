// The CUDA printer of one scheduled AscGraph (elementwise, reduce_inner, reduce_outer): a
// __global__ kernel whose grid runs over the schedule's blocks (grid-stride), each thread block's
// threads over the elements of a tile (a row reduction: one pass over the row per stage, the
// threads' accumulators joined across the block; a column reduction: a thread per column, the
// reduced dims its own loops), every value a register of its lane type; and the host tiling
// function that fills its TilingData (passed to the kernel by value).
#pragma once
#include <string>
#include <vector>

#include "codegen/loop_nest.h"

namespace af::codegen {

/// Why no CUDA kernel can hold the nodes of kernel `g`, scheduled or not ("" when one can): a
/// node (a gather, an integer division, an integer or bool reduction) or a dtype without a CUDA
/// form.
std::string cuda_node_reason(const ascir::AscGraph& g);

/// Why the CUDA printer cannot print scheduled kernel `g` ("" when it can): a row reduction over
/// several dims, a node (a gather, an integer division, an integer or bool reduction) or a dtype
/// without a CUDA form.
std::string cuda_kernel_reason(const ascir::AscGraph& g);

/// The device function of one block of kernel `k`: `__device__ void <name>_block(td, block,
/// inputs..., outputs...)`, every thread of a thread block calling it with the same block (NVRTC
/// source; the TilingData struct printed before it).
std::string cuda_block_function(const KernelContext& k);

/// A tensor parameter of a kernel: element type, whether read, and its index among the inputs
/// (in<i>) or outputs (out<i>).
struct CudaPointer {
  std::string type;
  bool input = true;
  int index = 0;
  std::string name() const { return (input ? "in" : "out") + std::to_string(index); }
  std::string decl() const { return (input ? "const " : "") + type + "* __restrict__ " + name(); }
};

/// The pointer parameters of `k`'s block function: its inputs then its outputs, in index order.
std::vector<CudaPointer> cuda_pointer_params(const KernelContext& k);

/// `extern "C" __global__ void <name>_kernel(const <name>_TilingData td, params...)`: a
/// grid-stride loop over the TilingData's blocks (block `b`), `body` per block.
std::string cuda_global_function(const std::string& name, const std::vector<CudaPointer>& params,
                                 const std::string& body);

/// The TilingData struct of `k` (fields as int64_t, `int64_t` a typedef on the device) and its
/// host tiling function `<name>_tiling` (the ABI's): the tile is the vectorized dim up to 1024
/// elements, one tile a thread block, the threads the tile rounded up to a warp (at most 256).
std::string cuda_tiling_data(const KernelContext& k);
std::string cuda_tiling_function(const KernelContext& k);

}  // namespace af::codegen
