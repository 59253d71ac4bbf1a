// FusedGraph text printer (format: docs/ir.md "FusedGraph"; print only, no parser).
#pragma once
#include <string>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// The text of `fg`: "fusedgraph @NAME {", one `kernel` block per kernel (its AscGraph printed
/// by ascir::print, indented), one `opaque` line per ATen step with its reason as a comment,
/// the `return` line, one `rejected` line per declined fusion, "}\n".
std::string print(const FusedGraph& fg);

}  // namespace af::fusion
