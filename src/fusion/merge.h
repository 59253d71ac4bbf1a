// Fusion mechanics: merging two kernels with the same loop axes into one loop nest. The policy
// that decides whether to merge lives in can_fuse.h.
#pragma once
#include "fusion/fused_graph.h"

namespace af::fusion {

struct StepIndex;

/// The kernel that computes everything steps a and b of `fg` compute (a before b in execution
/// order; both kernels with equal loop axes). A producer -> consumer edge disappears: b's
/// data + load of a value a computes become uses of the node a's store reads (the value in its
/// storage dtype: an f16/bf16 intermediate is rounded as eager rounds it, then b's cast to f32
/// follows). Inputs both read share one data + load. A value still needed outside the merged kernel
/// (another step reads it, it is a graph output, or nothing reads it) keeps its store + output;
/// other stores are dropped along with the nodes only they used. Data and output indices are dense,
/// in Graph IR node order; `inputs`/`outputs` map them to Graph IR nodes. Identical nodes (same op,
/// inputs, attributes and tensor) are shared. The result is named after a (renumber afterwards).
/// Throws CompileError when a or b is not a kernel or their loop axes differ.
FusedNode merge_kernels(const FusedGraph& fg, int a, int b);
/// The same, reusing a StepIndex of `fg`.
FusedNode merge_kernels(const FusedGraph& fg, const StepIndex& index, int a, int b);

}  // namespace af::fusion
