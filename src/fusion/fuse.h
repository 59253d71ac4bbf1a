// The greedy fusion driver: repeatedly merges the most profitable legal pair of kernels.
#pragma once
#include "fusion/can_fuse.h"
#include "fusion/fused_graph.h"

namespace af::fusion {

/// Fuses the kernels of a lowered graph. Candidates are producer -> consumer pairs and sibling
/// pairs that read a common input, ranked by the bytes of memory traffic the merge saves (each
/// intermediate's store and load, or a shared input's second load, sized at the symbol hints),
/// then by proximity in execution order. The best pair can_fuse accepts is merged and the steps
/// re-sorted into a valid execution order; this repeats until no candidate is accepted. Every
/// distinct pair the policy declined (and which did not end up fused later) is recorded in
/// `rejected`, named by Graph IR values ("%3 -> %5"; siblings by their last ops). Kernels are
/// renamed k0, k1, ... in execution order.
FusedGraph fuse(FusedGraph fg, const FusionOptions& opts = {});

}  // namespace af::fusion
