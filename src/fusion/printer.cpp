// Prints a FusedGraph in the text format of docs/ir.md.
#include "fusion/printer.h"

#include <algorithm>

#include "ascir/printer.h"
#include "graph/printer.h"
#include "support/error.h"

namespace af::fusion {
namespace {

std::string value_list(const graph::Graph& g, const std::vector<int>& nodes) {
  std::string s;
  for (size_t i = 0; i < nodes.size(); ++i) {
    int n = nodes[i];
    if (n < 0 || n >= static_cast<int>(g.nodes.size()))
      throw CompileError("fusedgraph @" + g.name + ": step refers to node #" + std::to_string(n) +
                         " outside the graph");
    s += (i ? ", %" : "%") + g.nodes[n].name;
  }
  return s;
}

/// `text` with every line indented by `pad`.
std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out += pad;
    out += text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

/// " axes [[z0, z1], [z1]]": the kernel axes of each input's dims, where some input's are not
/// the last original axes of its rank (what the parser assumes without the list); "" otherwise.
std::string input_axes(const graph::Graph& g, const FusedNode& n) {
  std::vector<int> original;
  for (const ascir::Axis& x : n.kernel.axes)
    if (x.kind == ascir::AxisKind::Original) original.push_back(x.id);
  std::string list;
  bool aligned = true;
  for (size_t i = 0; i < n.input_axes.size(); ++i) {
    const std::vector<int>& axes = n.input_axes[i];
    const size_t rank = i < n.inputs.size() ? g.nodes.at(n.inputs[i]).type.rank() : 0;
    aligned = aligned && rank <= original.size() &&
              std::equal(axes.begin(), axes.end(),
                         original.end() - static_cast<std::ptrdiff_t>(rank), original.end());
    list += i ? ", [" : "[";
    for (size_t d = 0; d < axes.size(); ++d) list += (d ? ", " : "") + n.kernel.axis(axes[d]).name;
    list += "]";
  }
  return aligned ? "" : " axes [" + list + "]";
}

}  // namespace

std::string print(const FusedGraph& fg) {
  const graph::Graph& g = fg.source;
  std::string out = graph::print(g) + "fusedgraph @" + g.name + " {\n";
  for (const FusedNode& n : fg.nodes) {
    if (n.kind == FusedNode::Kind::Kernel) {
      out += "  kernel @" + n.name + "(" + value_list(g, n.inputs) + ") -> (" +
             value_list(g, n.outputs) + ") ops [" + value_list(g, n.ops) + "]";
      if (!n.is_concat()) {
        out += input_axes(g, n);
        out += " {\n" + indent(ascir::print(n.kernel), "    ") + "  }\n";
        continue;
      }
      out += " concat dim " + std::to_string(n.concat_dim) + " of " + sym::str(n.concat_shape) +
             " {\n";
      for (size_t i = 0; i < n.segments.size(); ++i) {
        const FusedNode& seg = n.segments[i];
        out += "    segment @" + seg.name + "(" + value_list(g, seg.inputs) + ") -> (" +
               value_list(g, seg.outputs) + ")" + input_axes(g, seg) + " at " +
               n.segment_starts[i].str() + " {\n";
        out += indent(ascir::print(seg.kernel), "      ") + "    }\n";
      }
      out += "  }\n";
      continue;
    }
    for (int op : n.ops) {
      out += "  opaque " + graph::print_node(g, op);
      if (!n.reason.empty()) out += "  // " + n.reason;
      out += "\n";
    }
  }
  out += "  return " + value_list(g, g.outputs) + "\n";
  for (const RejectedFusion& r : fg.rejected)
    out += "  rejected " +
           std::string(r.sibling ? "siblings " + r.producer + ", " + r.consumer
                                 : r.producer + " -> " + r.consumer) +
           ": " + r.reason + "\n";
  out += "}\n";
  return out;
}

}  // namespace af::fusion
