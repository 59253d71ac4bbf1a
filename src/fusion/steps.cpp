// Step-level queries over a FusedGraph (see steps.h).
#include "fusion/steps.h"

#include <algorithm>
#include <set>

#include "support/error.h"

namespace af::fusion {
namespace {

void add_unique(std::vector<int>& v, int x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::vector<sym::Expr> original_sizes(const ascir::AscGraph& k) {
  std::vector<sym::Expr> sizes;
  for (const ascir::Axis& a : k.axes)
    if (a.kind == ascir::AxisKind::Original) sizes.push_back(a.size);
  return sizes;
}

}  // namespace

StepIndex::StepIndex(const FusedGraph& fg) {
  const size_t n = fg.source.nodes.size();
  step_of.assign(n, -1);
  readers.assign(n, {});
  graph_output.assign(n, false);
  succ.assign(fg.nodes.size(), {});
  for (int s = 0; s < static_cast<int>(fg.nodes.size()); ++s)
    for (int op : fg.nodes[s].ops) {
      if (op < 0 || op >= static_cast<int>(n))
        throw CompileError("fused step " + fg.nodes[s].name + " lists op #" + std::to_string(op) +
                           " outside graph @" + fg.source.name);
      step_of[op] = s;
    }
  for (int s = 0; s < static_cast<int>(fg.nodes.size()); ++s)
    for (int v : fg.nodes[s].inputs) {
      if (v < 0 || v >= static_cast<int>(n))
        throw CompileError("fused step " + fg.nodes[s].name + " reads node #" + std::to_string(v) +
                           " outside graph @" + fg.source.name);
      add_unique(readers[v], s);
      if (step_of[v] >= 0 && step_of[v] != s) add_unique(succ[step_of[v]], s);
    }
  for (auto& r : readers) std::sort(r.begin(), r.end());
  for (auto& r : succ) std::sort(r.begin(), r.end());
  for (int o : fg.source.outputs)
    if (o >= 0 && o < static_cast<int>(n)) graph_output[o] = true;
}

bool StepIndex::needed_outside(int value, int a, int b) const {
  if (graph_output[value] || readers[value].empty()) return true;
  for (int s : readers[value])
    if (s != a && s != b) return true;
  return false;
}

int StepIndex::path_through(int a, int b) const {
  // In a topological order every step on a path a -> b lies strictly between them.
  std::vector<char> seen(succ.size(), 0);
  for (int first : succ[a]) {
    if (first == b || first > b) continue;
    std::vector<int> stack = {first};
    while (!stack.empty()) {
      int s = stack.back();
      stack.pop_back();
      if (seen[s]) continue;
      seen[s] = 1;
      for (int t : succ[s]) {
        if (t == b) return first;
        if (t < b && !seen[t]) stack.push_back(t);
      }
    }
  }
  return -1;
}

std::string step_label(const FusedGraph& fg, int step) {
  const FusedNode& n = fg.nodes[step];
  if (n.ops.empty()) return n.name;
  int last = *std::max_element(n.ops.begin(), n.ops.end());
  return "%" + fg.source.nodes[last].name;
}

int first_edge(const FusedGraph& fg, int a, int b) {
  const std::vector<int>& ops = fg.nodes[a].ops;
  int edge = -1;
  for (int v : fg.nodes[b].inputs)
    if ((edge < 0 || v < edge) && std::find(ops.begin(), ops.end(), v) != ops.end()) edge = v;
  return edge;
}

std::pair<std::string, std::string> pair_labels(const FusedGraph& fg, int a, int b) {
  int edge = first_edge(fg, a, b);
  if (edge < 0) return {step_label(fg, a), step_label(fg, b)};
  int reader = fg.nodes[b].ops.front();  // the first op of b reading the edge
  for (int op : fg.nodes[b].ops) {
    const std::vector<int>& operands = fg.source.nodes[op].operands;
    if (std::find(operands.begin(), operands.end(), edge) != operands.end()) {
      reader = op;
      break;
    }
  }
  return {"%" + fg.source.nodes[edge].name, "%" + fg.source.nodes[reader].name};
}

std::string loop_axes_str(const ascir::AscGraph& k) {
  return sym::str(original_sizes(k));
}

bool same_loop_axes(const ascir::AscGraph& a, const ascir::AscGraph& b) {
  return original_sizes(a) == original_sizes(b);
}

void renumber_kernels(FusedGraph& fg) {
  int next = 0;
  for (FusedNode& n : fg.nodes) {
    if (n.kind != FusedNode::Kind::Kernel) continue;
    n.name = "k" + std::to_string(next++);
    n.kernel.name = n.name;
    for (size_t i = 0; i < n.segments.size(); ++i) {
      n.segments[i].name = n.name + ".s" + std::to_string(i);
      n.segments[i].kernel.name = n.segments[i].name;
    }
  }
}

namespace {
/// Gives the `op` nodes (data or output) of k indices in the order of the Graph IR node each
/// maps to through `values` (indexed by the old index attribute), and reorders `values`.
/// Returns the old index of each new index.
std::vector<size_t> sort_io(ascir::AscGraph& k, const std::string& op, std::vector<int>& values) {
  std::vector<int> nodes = op == "data" ? k.data_nodes() : k.output_nodes();
  auto old_index = [&](int node) {
    const Attr& a = k.nodes[node].attrs.at("index");
    return static_cast<size_t>(std::get<int64_t>(a));
  };
  if (nodes.size() != values.size())
    throw CompileError("kernel @" + k.name + " has " + std::to_string(nodes.size()) + " " + op +
                       " nodes but its step lists " + std::to_string(values.size()));
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](int x, int y) { return values.at(old_index(x)) < values.at(old_index(y)); });
  std::vector<int> sorted;
  std::vector<size_t> from;
  for (size_t i = 0; i < nodes.size(); ++i) {
    from.push_back(old_index(nodes[i]));
    sorted.push_back(values.at(from.back()));
    k.nodes[nodes[i]].attrs["index"] = static_cast<int64_t>(i);
  }
  values = std::move(sorted);
  return from;
}
}  // namespace

void sort_kernel_io(FusedNode& kernel) {
  std::vector<size_t> from = sort_io(kernel.kernel, "data", kernel.inputs);
  if (!kernel.input_axes.empty()) {
    if (kernel.input_axes.size() != from.size())
      throw CompileError("kernel @" + kernel.kernel.name + " lists the axes of " +
                         std::to_string(kernel.input_axes.size()) + " inputs but has " +
                         std::to_string(from.size()));
    std::vector<std::vector<int>> axes;
    for (size_t i : from) axes.push_back(kernel.input_axes.at(i));
    kernel.input_axes = std::move(axes);
  }
  sort_io(kernel.kernel, "output", kernel.outputs);
}

int merged_input_count(const FusedNode& a, const FusedNode& b) {
  std::set<int> in(a.inputs.begin(), a.inputs.end());
  std::set<int> made(a.ops.begin(), a.ops.end());
  for (int v : b.inputs)
    if (!made.count(v)) in.insert(v);
  return static_cast<int>(in.size());
}

int compute_node_count(const ascir::AscGraph& k) {
  int count = 0;
  for (const ascir::AscNode& n : k.nodes) count += ascir::is_compute(n.op) ? 1 : 0;
  return count;
}

}  // namespace af::fusion
