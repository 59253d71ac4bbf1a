// Reductions inside a (merged) kernel: which axes its reduce nodes reduce, and the policy
// checks every kernel that holds a reduce must pass (docs/ir.md, "Reductions in kernels").
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "fusion/can_fuse.h"
#include "fusion/fused_graph.h"

namespace af::fusion {

/// Whether kernel `k` has a reduce node.
bool has_reduce(const ascir::AscGraph& k);
/// The axis ids reduce node `node` of `k` reduces: where its input's repeat is not 1 and its
/// own is 1 (reducing a size-1 axis is the identity), in kernel-axis order.
std::vector<int> reduced_axes_of(const ascir::AscGraph& k, int node);
/// The union of the axes the reduce nodes of `k` reduce, in kernel-axis order.
std::vector<int> kernel_reduced_axes(const ascir::AscGraph& k);
/// "{z0, z1}": axis names of `axes`.
std::string axis_set_str(const ascir::AscGraph& k, const std::vector<int>& axes);

/// Why kernel step `kernel` (of a FusedGraph over `g`) with reduce nodes cannot run as one
/// kernel, or nullopt when it can: its reduce nodes reduce different axis sets ("reductions over
/// different axes {z1} vs {z0}"; identity reductions are ignored); it stores a value that has
/// repeat 1 on an axis of size other than 1 that no reduce reduces (the store would write it
/// once per index of that axis: "would store %v repeatedly along axis z1"); or more than
/// `opts.max_reduce_epilogue` compute nodes depend on a reduce.
std::optional<std::string> reduction_check(const FusedNode& kernel, const graph::Graph& g,
                                           const FusionOptions& opts);

}  // namespace af::fusion
