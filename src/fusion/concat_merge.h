// Concat fusion mechanics (CANN AutoFuse's Concat pass): a concat kernel has one loop nest
// (segment) per concat operand. Kernels join it in two ways:
//   - a producer of operand i (its values read by segment i only) merges into segment i as into
//     any kernel: it then writes its result straight into its slice of the concat output;
//   - a kernel over the concat's whole iteration space (a consumer of the concat, or a producer
//     of values every segment reads at its own positions) is sliced along the concat dim: slice
//     i (every load and store offset by segment i's start) merges into segment i.
// The per-segment merges are ordinary merges (merge_kernels). Whether a join may happen is policy
// (can_fuse.h); here is only how, and why the structure rules one out.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// How the plain kernel among two steps joins the concat kernel among them: into one segment as
/// it is, or sliced into every segment; or not, with the structural reason.
struct ConcatJoin {
  int concat = -1;      // the concat kernel's step
  int kernel = -1;      // the joining kernel's step
  std::string reason;   // non-empty: it cannot join
  int segment = -1;     // >= 0: merges into this segment unchanged
  bool sliced = false;  // true: slice i merges into segment i
  bool ok() const { return reason.empty(); }
};

/// Sets a concat kernel's inputs, outputs (each sorted in Graph IR order) and ops to the union
/// of its segments'.
void set_concat_io(FusedNode& step);

/// How the plain kernel among steps a and b of `fg` joins the concat kernel among them (exactly
/// one of the two is a concat kernel).
ConcatJoin plan_concat_join(const FusedGraph& fg, int a, int b);

/// Per segment s of the join's concat kernel: `fg` with the concat step replaced by segment s
/// and the joining step by what joins it there (itself, or its slice s); nullopt for segments
/// the kernel does not join. Each is an ordinary pair of kernels for can_fuse / merge_kernels.
std::vector<std::optional<FusedGraph>> segment_graphs(const FusedGraph& fg, const ConcatJoin& j);

/// The concat kernel after join `j` (ok), named after step `a`: segment s replaced by merged[s]
/// where the join has one (merge_kernels of segment_graphs(fg, j)[s]).
FusedNode assemble_concat(const FusedGraph& fg, const ConcatJoin& j, int a,
                          std::vector<std::optional<FusedNode>> merged);

/// The concat kernel computing what steps a and b compute: plan, merge every joined segment,
/// assemble. Throws CompileError when the kernel cannot join.
FusedNode merge_concat(const FusedGraph& fg, int a, int b);

}  // namespace af::fusion
