// Graph IR printer (docs/ir.md, "Graph IR").
#include "graph/printer.h"

namespace af::graph {

std::string print_type(const TensorType& t) {
  std::string out = std::string(dtype_name(t.dtype)) + sym::str(t.shape);
  if (t.strides != contiguous_strides(t.shape)) out += " strides " + sym::str(t.strides);
  if (t.offset != 0) out += " offset " + t.offset.str();
  return out;
}

std::string print_node(const Graph& g, int node) {
  const Node& n = g.nodes.at(node);
  std::string out = "%" + n.name + " = " + n.kind + "(";
  for (size_t i = 0; i < n.operands.size(); ++i) {
    int op = n.operands[i];
    out += i ? ", %" : "%";
    out += op >= 0 && op < static_cast<int>(g.nodes.size()) ? g.nodes[op].name
                                                            : "<bad:" + std::to_string(op) + ">";
  }
  out += ")";
  if (!n.attrs.empty()) {
    out += " {";
    bool first = true;
    for (const auto& [key, value] : n.attrs) {
      out += (first ? "" : ", ") + key + " = " + attr_str(value);
      first = false;
    }
    out += "}";
  }
  return out + " : " + print_type(n.type);
}

std::string print(const Graph& g) {
  std::string out = "graph @" + g.name + "(";
  for (size_t i = 0; i < g.symbols.size(); ++i)
    out += (i ? ", " : "") + g.symbols[i].name + " = " + std::to_string(g.symbols[i].hint);
  out += ") {\n";
  for (size_t i = 0; i < g.nodes.size(); ++i)
    out += "  " + print_node(g, static_cast<int>(i)) + "\n";
  out += "  return";
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    int o = g.outputs[i];
    out += i ? ", %" : " %";
    out += o >= 0 && o < static_cast<int>(g.nodes.size()) ? g.nodes[o].name
                                                          : "<bad:" + std::to_string(o) + ">";
  }
  return out + "\n}\n";
}

std::string print(const std::vector<Graph>& graphs) {
  std::string out;
  for (size_t i = 0; i < graphs.size(); ++i) out += (i ? "\n" : "") + print(graphs[i]);
  return out;
}

}  // namespace af::graph
