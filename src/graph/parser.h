// Graph IR parser: reads the text format of docs/ir.md (what graph/printer.h writes).
#pragma once
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace af::graph {

/// All graphs of `text`, in order. Throws ParseError "line L:C: expected ..., found ..." on
/// malformed text, an unknown op kind, an undefined or redefined %value, an unknown dtype or a
/// bad size expression. A type without `strides` is contiguous; without `offset`, offset 0.
/// The result is not verified (see graph/verifier.h).
std::vector<Graph> parse_graphs(std::string_view text);
/// Exactly one graph; throws ParseError when `text` holds none or several.
Graph parse_graph(std::string_view text);

}  // namespace af::graph
