// FusedGraph text parser: reads what fusion/printer.h writes (docs/ir.md "FusedGraph"), so a
// lowered or fused dump, or a hand-written one, can enter the pipeline at fuse or schedule.
#pragma once
#include <string_view>
#include <vector>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// Every FusedGraph of `text`, in order: each its source Graph IR block, then its `fusedgraph`
/// block of kernel steps (their AscGraphs, concat segments, input axes), opaque steps (one per
/// line, with the reason) and rejected fusions. Throws ParseError "line L: ..." on malformed
/// text or a value the source does not define. Not verified: graph::verify each source and
/// ascir::verify its kernels before use.
std::vector<FusedGraph> parse_fused_graphs(std::string_view text);

}  // namespace af::fusion
