// FusedGraph text printer (format: docs/ir.md "FusedGraph"; fusion/parser.h reads it back).
#pragma once
#include <string>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// The text of `fg`: its source Graph IR (graph::print), then "fusedgraph @NAME {", one `kernel`
/// block per kernel (its AscGraph printed by ascir::print, indented; ` axes [..]` where an
/// input's dims are not the last original axes), one `opaque` line per ATen step with its
/// reason as a comment, the `return` line, one `rejected` line per declined fusion, "}\n".
std::string print(const FusedGraph& fg);

}  // namespace af::fusion
