// Step-level queries over a FusedGraph shared by the fusion policy, the merge mechanics and the
// greedy driver: which step computes each Graph IR value, which steps read it, the dependency
// edges between steps, reachability, step labels.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// The dependency structure of a FusedGraph's steps, computed once and read many times.
/// Assumes `fg.nodes` is in a valid execution (topological) order.
struct StepIndex {
  std::vector<int> step_of;               // per Graph IR node: its step, -1 for inputs/consts
  std::vector<std::vector<int>> readers;  // per Graph IR node: steps reading it (sorted, unique)
  std::vector<std::vector<int>> succ;     // per step: steps that read one of its values
  std::vector<bool> graph_output;         // per Graph IR node: returned by the graph

  explicit StepIndex(const FusedGraph& fg);

  /// Whether `value` (computed by step a or b) must stay in memory after a and b are merged:
  /// it is a graph output, a step other than a and b reads it, or nothing reads it at all (a
  /// dead value keeps its store so the kernel still computes what it lists).
  bool needed_outside(int value, int a, int b) const;
  /// A step strictly between a and b on a dependency path a -> ... -> b (the first such step
  /// after a), or -1 when b is not reachable from a except directly. Requires a < b.
  int path_through(int a, int b) const;
};

/// The name a report uses for a step: "%NAME" of its last Graph IR op.
std::string step_label(const FusedGraph& fg, int step);
/// The lowest Graph IR value step b reads that step a computes (a producer -> consumer edge),
/// or -1 when b reads nothing of a's (siblings, or steps with no edge between them).
int first_edge(const FusedGraph& fg, int a, int b);
/// The names a report gives steps a < b as a pair, one rule for the rejected list, the pictures'
/// red edges and the policy's reasons: with an edge (first_edge), "%v" (the value flowing) and
/// the first op of b reading it; without one, both steps' labels (step_label).
std::pair<std::string, std::string> pair_labels(const FusedGraph& fg, int a, int b);
/// The loop axes of a kernel as "[s0, 1000]" (the sizes of its original axes, in order).
std::string loop_axes_str(const ascir::AscGraph& k);
/// Whether two kernels have the same loop axes (the same original axis sizes, in order).
bool same_loop_axes(const ascir::AscGraph& a, const ascir::AscGraph& b);
/// Names the kernels k0, k1, ... in execution order (FusedNode::name and the AscGraph's name;
/// the segments of a concat kernel k3 are k3.s0, k3.s1, ...).
void renumber_kernels(FusedGraph& fg);
/// Renumbers a kernel's data and output indices in Graph IR node order (ties keep their order)
/// and reorders `inputs`/`input_axes`/`outputs` to match, so kernel signatures do not depend on
/// merge order.
void sort_kernel_io(FusedNode& kernel);
/// Distinct Graph IR values kernels a and b (a first) read together: both kernels' inputs, less
/// the values a computes.
int merged_input_count(const FusedNode& a, const FusedNode& b);
/// Number of compute nodes of a kernel: every node except data, load, store, output, scalar.
int compute_node_count(const ascir::AscGraph& k);

}  // namespace af::fusion
