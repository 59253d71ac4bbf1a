// The greedy fusion driver: repeatedly merges the most profitable legal pair of kernels.
#pragma once
#include "fusion/can_fuse.h"
#include "fusion/fused_graph.h"

namespace af::fusion {

/// Fuses the kernels of a lowered graph. Candidates are producer -> consumer pairs and sibling
/// pairs (kernels next to each other among the readers of a common input), ranked by the bytes
/// of memory traffic the merge saves (an intermediate's load, plus its store when nothing else
/// needs it; a shared input's second load; sizes at the symbol hints), then by proximity in
/// execution order. The best pair can_fuse accepts is merged (merge_kernels) and placed where
/// the execution order stays valid; this repeats until no candidate is accepted. A declined
/// pair is not asked again while both its steps are unchanged. Every pair the policy declined
/// that is still apart at the end is recorded in `rejected` (the latest reason per two steps),
/// named by Graph IR values: "%3 -> %5" (the value flowing and the op reading it), siblings by
/// their steps' last ops; siblings that depend on each other are not reported. Kernels are
/// renamed k0, k1, ... in execution order.
FusedGraph fuse(FusedGraph fg, const FusionOptions& opts = {});

}  // namespace af::fusion
