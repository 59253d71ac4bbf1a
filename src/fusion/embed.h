// Axis embedding: how the loop axes of two kernels line up when they merge (the guest's axes
// onto the host's). Used by the merge mechanics (merge.h) and the policy (can_fuse.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// How the loop axes of kernels a and b (a before b) line up in their merged kernel. When b
/// reads values a computes, axes pair through each such value v: the axis of a's store(v) for
/// dim d pairs with the axis of b's data(v) for dim d. Unpaired axes then pair in order where
/// the sizes are equal, then where one side has size 1 (keeping the order of the pairs). The
/// HOST is the kernel every axis of the other (the GUEST) pairs with, with equal size or guest
/// size 1; the merged kernel iterates over the host's axes. Kernels with no value between them
/// (siblings) pair by position and need equal loop axes.
struct AxisEmbedding {
  bool ok = false;
  std::string reason;      // when !ok: why the axes do not line up
  bool a_is_host = true;   // else b is the host
  bool same_nest = false;  // a bijection with equal sizes: nothing is embedded
  /// Axis id of a (b) -> the host axis id it runs on. The host's own map is the identity.
  std::map<int, int> a_to_host, b_to_host;
  /// Host axis ids of size other than 1 where the guest is smaller (size 1 or no axis): the
  /// guest's values do not vary along them.
  std::vector<int> smaller;
};

/// The kernel axis ids holding the dims of value `kernel.inputs[i]` (its `input_axes`, or the
/// last original axes when those are not recorded).
std::vector<int> input_value_axes(const FusedNode& kernel, size_t i, const graph::Graph& g);
/// The axis ids of a kernel's store of Graph IR value `value` (the axes of its dims); throws
/// CompileError when the kernel does not output it.
std::vector<int> output_value_axes(const FusedNode& kernel, int value, const graph::Graph& g);

/// The axis embedding of steps a < b of `fg` (both kernels over original axes).
AxisEmbedding embed_axes(const FusedGraph& fg, int a, int b);

}  // namespace af::fusion
