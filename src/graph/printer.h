// Graph IR printer: the text format of docs/ir.md, which graph/parser.h reads back.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"

namespace af::graph {

/// One graph: "graph @NAME(SYMS) {", one indented line per node, "  return ...", "}\n".
std::string print(const Graph& g);
/// Several graphs, separated by a blank line (parse_graphs reads them back in order).
std::string print(const std::vector<Graph>& graphs);
/// One node line without indent or newline: "%3 = mul(%2, %c) : f32[s0, 1000]".
/// An operand index out of range prints as "%<bad:N>" (the verifier rejects such graphs).
std::string print_node(const Graph& g, int node);
/// A type: "f32[s0, 1000]", then " strides [..]" when not contiguous and " offset E" when
/// the offset is non-zero.
std::string print_type(const TensorType& t);

}  // namespace af::graph
