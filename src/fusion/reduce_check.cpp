// Reductions inside a kernel and their policy checks (see reduce_check.h).
#include "fusion/reduce_check.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "support/error.h"

namespace af::fusion {
namespace {

/// Position of axis `id` in the kernel's axis list.
size_t axis_pos(const ascir::AscGraph& k, int id) {
  for (size_t i = 0; i < k.axes.size(); ++i)
    if (k.axes[i].id == id) return i;
  throw CompileError("ascgraph @" + k.name + ": unknown axis id " + std::to_string(id));
}

void sort_by_kernel_order(const ascir::AscGraph& k, std::vector<int>& axes) {
  std::sort(axes.begin(), axes.end(),
            [&](int x, int y) { return axis_pos(k, x) < axis_pos(k, y); });
}

/// The repeat of tensor `t` on axis `id` (1 when the tensor does not list it).
sym::Expr repeat_on(const ascir::AscTensor& t, int id) {
  for (size_t d = 0; d < t.axes.size(); ++d)
    if (t.axes[d] == id) return t.repeats[d];
  return 1;
}

}  // namespace

bool has_reduce(const ascir::AscGraph& k) {
  for (const ascir::AscNode& n : k.nodes)
    if (graph::is_reduce_op(n.op)) return true;
  return false;
}

std::vector<int> reduced_axes_of(const ascir::AscGraph& k, int node) {
  const ascir::AscNode& n = k.nodes.at(node);
  if (n.inputs.size() != 1)
    throw CompileError("ascgraph @" + k.name + ": reduce %" + n.name + " needs one input");
  const ascir::AscTensor& in = k.nodes.at(n.inputs[0]).out;
  std::vector<int> out;
  for (size_t d = 0; d < n.out.axes.size(); ++d)
    if (n.out.repeats[d] == sym::Expr(1) && repeat_on(in, n.out.axes[d]) != sym::Expr(1))
      out.push_back(n.out.axes[d]);
  sort_by_kernel_order(k, out);
  return out;
}

std::vector<int> kernel_reduced_axes(const ascir::AscGraph& k) {
  std::vector<int> all;
  for (int i = 0; i < static_cast<int>(k.nodes.size()); ++i)
    if (graph::is_reduce_op(k.nodes[i].op))
      for (int ax : reduced_axes_of(k, i))
        if (std::find(all.begin(), all.end(), ax) == all.end()) all.push_back(ax);
  sort_by_kernel_order(k, all);
  return all;
}

std::string axis_set_str(const ascir::AscGraph& k, const std::vector<int>& axes) {
  std::string s = "{";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + k.axis(axes[i]).name;
  return s + "}";
}

std::optional<std::string> reduction_check(const FusedNode& kernel, const graph::Graph& g,
                                           const FusionOptions& opts) {
  const ascir::AscGraph& k = kernel.kernel;
  // One reduced axis set for every reduce node that reduces something.
  std::vector<int> reduced;
  bool first = true;
  for (int i = 0; i < static_cast<int>(k.nodes.size()); ++i) {
    if (!graph::is_reduce_op(k.nodes[i].op)) continue;
    std::vector<int> mine = reduced_axes_of(k, i);
    if (mine.empty()) continue;
    if (first) {
      reduced = mine;
      first = false;
    } else if (mine != reduced) {
      return "reductions over different axes " + axis_set_str(k, reduced) + " vs " +
             axis_set_str(k, mine);
    }
  }
  // A store writes each element once: its value varies along every non-reduced axis > 1.
  for (int o : k.output_nodes()) {
    const ascir::AscNode& out = k.nodes[o];
    const ascir::AscNode& store = k.nodes.at(out.inputs.at(0));
    auto index = std::get<int64_t>(out.attrs.at("index"));
    int value = kernel.outputs.at(static_cast<size_t>(index));
    for (const ascir::Axis& ax : k.axes) {
      if (ax.size == sym::Expr(1)) continue;
      if (std::find(reduced.begin(), reduced.end(), ax.id) != reduced.end()) continue;
      if (repeat_on(store.out, ax.id) == sym::Expr(1))
        return "would store %" + g.nodes.at(value).name + " repeatedly along axis " + ax.name;
    }
  }
  // The epilogue: compute nodes after (depending on) a reduce.
  std::vector<char> after(k.nodes.size(), 0);
  int epilogue = 0;
  for (size_t i = 0; i < k.nodes.size(); ++i) {
    for (int in : k.nodes[i].inputs)
      if (after[in] || graph::is_reduce_op(k.nodes[in].op)) after[i] = 1;
    if (after[i] && ascir::is_compute(k.nodes[i].op)) ++epilogue;
  }
  if (epilogue > opts.max_reduce_epilogue)
    return "the merged kernel would have " + std::to_string(epilogue) +
           " compute nodes after a reduce, more than max_reduce_epilogue " +
           std::to_string(opts.max_reduce_epilogue);
  return std::nullopt;
}

}  // namespace af::fusion
