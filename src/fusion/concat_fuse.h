// Concat fusion (CANN AutoFuse's Concat pass): a concat kernel has one loop nest (segment) per
// concat operand. Kernels join it in two ways:
//   - a producer of operand i (its values read by segment i only) merges into segment i as into
//     any kernel: it then writes its result straight into its slice of the concat output;
//   - a kernel over the concat's whole iteration space (a consumer of the concat, or a producer
//     of values every segment reads at its own positions) is sliced along the concat dim: slice
//     i (every load and store offset by segment i's start) merges into segment i.
// The per-segment merges reuse the ordinary policy (can_fuse) and mechanics (merge_kernels).
#pragma once
#include "fusion/can_fuse.h"
#include "fusion/fused_graph.h"

namespace af::fusion {

struct StepIndex;

/// Sets a concat kernel's inputs, outputs (each sorted in Graph IR order) and ops to the union
/// of its segments'.
void set_concat_io(FusedNode& step);

/// Whether steps a < b of `fg`, one of them a concat kernel and both kernels, may merge; every
/// "no" carries its reason (another concat kernel, a cycle, the input/node limits, a kernel
/// that is neither operand i's producer nor over the concat's whole space, or the reason a
/// segment's merge is declined by can_fuse).
FusionDecision can_fuse_concat(const FusedGraph& fg, const StepIndex& index, int a, int b,
                               const FusionOptions& opts);

/// The concat kernel computing what steps a and b compute (can_fuse_concat said yes; each
/// segment's merge builds its own StepIndex). Throws CompileError otherwise.
FusedNode merge_concat(const FusedGraph& fg, int a, int b);

}  // namespace af::fusion
