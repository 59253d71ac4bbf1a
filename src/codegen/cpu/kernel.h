// Internal to the CPU emitter: the printers of a kernel function (its prologue, the elementwise
// and the reduction loop nests) over the shared loop-nest analysis (codegen/loop_nest.h).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "codegen/loop_nest.h"

namespace af::codegen {

/// The first lines of a kernel function, shared by every TilingCase's printer: the signature,
/// the tiling data's symbols, every axis size, stream_stores, and the input/output pointers.
std::vector<std::string> kernel_prologue(const KernelContext& k);

/// The kernel function of a reduction TilingCase (reduce_inner / reduce_outer).
std::string emit_reduce_kernel_function(const KernelContext& k);

/// Whether the kernel's schedule is a reduction family.
bool is_reduce_case(const KernelContext& k);

/// The text of `extern "C" void <name>_kernel(void* const* args, const void* tiling_data,
/// int64_t block_idx)`: one block of the loop nest, the op chain in registers.
std::string emit_kernel_function(const KernelContext& k);

}  // namespace af::codegen
