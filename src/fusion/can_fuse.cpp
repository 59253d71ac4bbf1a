// Fusion policy (see can_fuse.h).
#include "fusion/can_fuse.h"

#include <algorithm>
#include <optional>
#include <set>

#include "fusion/concat_merge.h"
#include "fusion/embed.h"
#include "fusion/merge.h"
#include "fusion/reduce_check.h"
#include "fusion/steps.h"
#include "schedule/reduce_schedule.h"
#include "support/error.h"

namespace af::fusion {
namespace {

/// No when `nodes` compute nodes exceed max_nodes; else yes, carrying `merged` (the merged step
/// the policy built to count them, if it did).
FusionDecision node_limit(int nodes, const FusionOptions& opts,
                          std::optional<FusedNode> merged = std::nullopt) {
  if (nodes > opts.max_nodes)
    return FusionDecision::no("the merged kernel would have " + std::to_string(nodes) +
                              " compute nodes, more than max_nodes " +
                              std::to_string(opts.max_nodes));
  FusionDecision d = FusionDecision::yes();
  d.merged = std::move(merged);
  return d;
}

/// Most compute nodes of a guest a kernel without a reduce computes again once per row of its
/// innermost axis (row_invariant).
constexpr int kMaxRowRecompute = 16;

/// Whether the guest's values do not vary along the merged kernel's innermost axis, and every
/// store writes that axis contiguously (so the schedule vectorizes it): the guest is computed
/// once per row of it (a row value), not per element.
bool row_invariant(const AxisEmbedding& e, const ascir::AscGraph& merged) {
  if (merged.axes.empty()) return false;
  const int inner = merged.axes.back().id;
  if (std::find(e.smaller.begin(), e.smaller.end(), inner) == e.smaller.end()) return false;
  for (int o : merged.output_nodes()) {
    const ascir::AscTensor& t = merged.nodes.at(merged.nodes[o].inputs.at(0)).out;
    if (t.axes.empty() || t.axes.back() != inner || t.strides.back() != sym::Expr(1)) return false;
  }
  return true;
}

/// Why embedding the guest into the host is not allowed, or nullopt. The guest's values are
/// constant along the host axes where it is smaller: fine on reduced axes (they become row
/// values); on other axes the guest is computed again per index (broadcast recomputation),
/// allowed for at most `recomputation_threshold` compute nodes in a kernel with a reduce, and
/// for at most kMaxRowRecompute in one without where that is once per row (row_invariant:
/// BatchNorm's per-channel scale and shift into its normalize-add-ReLU kernel). A stored guest
/// value is caught by reduction_check as a repeated store.
std::optional<std::string> embedding_reason(const FusedGraph& fg, int a, int b,
                                            const AxisEmbedding& e, const ascir::AscGraph& merged,
                                            const FusionOptions& opts) {
  if (e.same_nest || e.smaller.empty()) return std::nullopt;
  const FusedNode& ka = fg.nodes[a];
  const FusedNode& kb = fg.nodes[b];
  const std::string differ =
      "different loop axes " + loop_axes_str(ka.kernel) + " vs " + loop_axes_str(kb.kernel);
  if (!has_reduce(merged)) {
    const FusedNode& guest = e.a_is_host ? kb : ka;
    if (compute_node_count(guest.kernel) <= kMaxRowRecompute && row_invariant(e, merged))
      return std::nullopt;
    return differ;
  }
  std::vector<int> reduced = kernel_reduced_axes(merged);
  bool recomputed = false;
  for (int ax : e.smaller)
    if (std::find(reduced.begin(), reduced.end(), ax) == reduced.end()) recomputed = true;
  if (!recomputed) return std::nullopt;
  const FusedNode& guest = e.a_is_host ? kb : ka;
  if (compute_node_count(guest.kernel) > opts.recomputation_threshold) return differ;
  return std::nullopt;
}

int total_compute_nodes(const FusedNode& step) {
  int n = 0;
  for (const ascir::AscGraph* g : step.kernel_graphs()) n += compute_node_count(*g);
  return n;
}

}  // namespace

FusionDecision cycle_and_input_check(const FusedGraph& fg, const StepIndex& index, int a, int b,
                                     const FusionOptions& opts) {
  if (int via = index.path_through(a, b); via >= 0) {
    auto [pa, pb] = pair_labels(fg, a, b);  // the names the rejected list gives the pair
    return FusionDecision::no("fusing " + pa + " into " + pb + " would create a cycle through " +
                              step_label(fg, via));
  }
  int inputs = merged_input_count(fg.nodes[a], fg.nodes[b]);
  if (inputs > opts.max_inputs)
    return FusionDecision::no("the merged kernel would read " + std::to_string(inputs) +
                              " inputs, more than max_inputs " + std::to_string(opts.max_inputs));
  return FusionDecision::yes();
}

namespace {

/// Whether steps a < b, one of them a concat kernel and both kernels, may merge; every "no"
/// carries its reason (another concat kernel, a cycle, the input/node limits, a kernel that
/// cannot join the concat (plan_concat_join), or the reason a segment's merge is declined by
/// can_fuse). A yes carries the merged concat kernel.
FusionDecision can_fuse_concat(const FusedGraph& fg, const StepIndex& index, int a, int b,
                               const FusionOptions& opts) {
  const FusedNode& ka = fg.nodes[a];
  const FusedNode& kb = fg.nodes[b];
  if (ka.is_concat() && kb.is_concat()) {
    auto [pa, pb] = pair_labels(fg, a, b);
    return FusionDecision::no("the kernels of " + pa + " and " + pb + " are both concat kernels");
  }
  if (!opts.concat) return FusionDecision::no("concat pass is disabled");
  if (FusionDecision d = cycle_and_input_check(fg, index, a, b, opts); !d.ok) return d;
  ConcatJoin j = plan_concat_join(fg, a, b);
  if (!j.ok()) return FusionDecision::no("concat: " + j.reason);
  int nodes = total_compute_nodes(fg.nodes[j.concat]);
  const auto graphs = segment_graphs(fg, j);
  std::vector<std::optional<FusedNode>> merged(graphs.size());
  for (size_t s = 0; s < graphs.size(); ++s) {
    if (!graphs[s]) continue;
    const FusedGraph& g = *graphs[s];
    FusionDecision d = can_fuse(g, a, b, opts);
    if (!d.ok) return FusionDecision::no("concat segment " + std::to_string(s) + ": " + d.reason);
    nodes += compute_node_count(g.nodes[j.kernel].kernel);
    merged[s] = std::move(d.merged);
  }
  if (FusionDecision d = node_limit(nodes, opts); !d.ok) return d;
  // Segments the policy judged without merging are merged now, once.
  for (size_t s = 0; s < graphs.size(); ++s)
    if (graphs[s] && !merged[s]) merged[s] = merge_kernels(*graphs[s], a, b);
  return node_limit(nodes, opts, assemble_concat(fg, j, a, std::move(merged)));
}

}  // namespace

FusionDecision can_fuse(const FusedGraph& fg, int a, int b, const FusionOptions& opts) {
  return can_fuse(fg, StepIndex(fg), a, b, opts);
}

FusionDecision can_fuse(const FusedGraph& fg, const StepIndex& index, int a, int b,
                        const FusionOptions& opts) {
  const int n = static_cast<int>(fg.nodes.size());
  if (a < 0 || b >= n || a >= b)
    throw CompileError("can_fuse: steps " + std::to_string(a) + ", " + std::to_string(b) +
                       " are not two steps in execution order of a " + std::to_string(n) +
                       "-step graph");
  if (!opts.enabled) return FusionDecision::no("fusion is disabled");
  for (int s : {a, b}) {
    const FusedNode& step = fg.nodes[s];
    if (step.kind != FusedNode::Kind::Kernel)
      return FusionDecision::no("step " + step_label(fg, s) + " is not a kernel (" + step.reason +
                                ")");
  }
  const FusedNode& ka = fg.nodes[a];
  const FusedNode& kb = fg.nodes[b];
  if (ka.is_concat() || kb.is_concat()) return can_fuse_concat(fg, index, a, b, opts);
  const bool same = same_loop_axes(ka.kernel, kb.kernel);
  const bool reduces = has_reduce(ka.kernel) || has_reduce(kb.kernel);
  if (FusionDecision d = cycle_and_input_check(fg, index, a, b, opts); !d.ok) return d;
  if (!same || reduces) {
    // Merge, then check the merged kernel.
    AxisEmbedding e = embed_axes(fg, a, b);
    if (!e.ok) return FusionDecision::no(e.reason);
    FusedNode merged = merge_kernels(fg, index, a, b, e);
    if (auto why = embedding_reason(fg, a, b, e, merged.kernel, opts))
      return FusionDecision::no(*why);
    if (auto why = reduction_check(merged, fg.source, opts)) return FusionDecision::no(*why);
    if (auto why = schedule::reduce_unsupported_reason(merged.kernel))
      return FusionDecision::no("no reduction schedule for the merged kernel: " + *why);
    int nodes = compute_node_count(merged.kernel);
    return node_limit(nodes, opts, std::move(merged));
  }
  // The sum bounds the merged count from above; merge only when it might be over the limit.
  int nodes = compute_node_count(ka.kernel) + compute_node_count(kb.kernel);
  if (nodes <= opts.max_nodes) return FusionDecision::yes();
  FusedNode merged = merge_kernels(fg, index, a, b);
  nodes = compute_node_count(merged.kernel);
  return node_limit(nodes, opts, std::move(merged));
}

}  // namespace af::fusion
