// AscIR text parser: reads what printer.h prints (format: docs/ir.md "AscIR").
#pragma once
#include <string_view>
#include <vector>

#include "ascir/asc_graph.h"

namespace af::ascir {

/// All `ascgraph` blocks of `text`, in order. `//` starts a comment to the end of the line.
/// Axes get ids 0, 1, ... in declaration order; an axis must be declared before it is used,
/// while node operands may name any node of the graph (the verifier checks the order).
/// Throws ParseError "line L:C: ..." on malformed text.
std::vector<AscGraph> parse_asc_graphs(std::string_view text);

/// The single `ascgraph` of `text`; throws ParseError when there are none or several.
AscGraph parse_asc_graph(std::string_view text);

}  // namespace af::ascir
