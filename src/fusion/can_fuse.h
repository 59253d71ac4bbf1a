// Fusion policy: may two steps of a FusedGraph become one kernel? Every "no" carries its reason
// (for the greedy driver's rejected list and the explain report). The mechanics are in merge.h.
#pragma once
#include <optional>
#include <string>

#include "fusion/fused_graph.h"

namespace af::fusion {

struct StepIndex;

/// Knobs of the fusion pass (AutoFuse's defaults: 64 nodes, 8 inputs). Set from AUTOFUSE_FLAGS
/// (pipeline/flags.h) or CompilerConfig.
struct FusionOptions {
  bool enabled = true;  // false: every fusible op stays its own kernel
  int max_nodes = 64;   // most compute nodes (all but data/load/store/output/scalar) per kernel
  int max_inputs = 8;   // most distinct inputs per kernel
  /// Passes that may run (CANN's --autofuse_enable_pass / --autofuse_disable_pass): with
  /// `reduce` off, reduce ops run as ATen (Opaque steps); with `concat` off, concats do.
  bool reduce = true;
  bool concat = true;
  /// Most compute nodes of a kernel that depend on a reduce result (its epilogue).
  int max_reduce_epilogue = 32;
  /// A producer that would be computed again per element of a bigger loop nest (a broadcast
  /// producer embedded into its consumer) is fused only with at most this many compute nodes.
  int recomputation_threshold = 1;
  /// false (the default, as CANN AutoFuse's precision pass and Inductor): an f16/bf16 value
  /// computed inside a kernel stays f32 until it is stored. true: it is rounded to its dtype
  /// after every op, as eager rounds it (Inductor's emulate_precision_casts).
  bool emulate_precision_casts = false;
};

/// A policy answer: `ok`, or not with the reason why. A yes the policy judged by building the
/// merged kernel carries it, so the driver places it instead of merging again.
struct FusionDecision {
  bool ok = false;
  std::string reason;
  std::optional<FusedNode> merged;  // ok only: the merged step, when the policy built it
  static FusionDecision yes() { return {true, {}, std::nullopt}; }
  static FusionDecision no(std::string why) { return {false, std::move(why), std::nullopt}; }
};

/// Whether steps a and b (a before b in execution order) may merge into one kernel. Says no,
/// with the reason, when fusion is disabled, either step is not a kernel, their loop axes
/// differ and neither has a reduce, another step lies on a path from a to b (merging would
/// create a cycle), or the merged kernel would have more than max_inputs distinct inputs or
/// max_nodes compute nodes. When either has a reduce or the axes differ, the merged kernel is
/// built (axis embedding, fusion/embed.h) and checked: the axes must embed, the guest may be
/// smaller only on reduced axes (or be recomputed there, at most recomputation_threshold
/// compute nodes), and reduction_check (fusion/reduce_check.h) must pass. With a concat kernel
/// (fusion/concat_merge.h) the kernel must be able to join it and every segment's merge must
/// pass this policy. Throws CompileError when a, b are not two steps with a < b.
FusionDecision can_fuse(const FusedGraph& fg, int a, int b, const FusionOptions& opts);
/// The same, reusing a StepIndex of `fg` (the greedy driver asks many times per round).
FusionDecision can_fuse(const FusedGraph& fg, const StepIndex& index, int a, int b,
                        const FusionOptions& opts);
/// The checks every merge of steps a < b passes first, with their reasons: no other step lies
/// on a path from a to b (merging would create a cycle), and the merged kernel reads at most
/// max_inputs distinct inputs.
FusionDecision cycle_and_input_check(const FusedGraph& fg, const StepIndex& index, int a, int b,
                                     const FusionOptions& opts);

}  // namespace af::fusion
