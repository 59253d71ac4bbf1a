// AscIR text printer (format: docs/ir.md "AscIR"); parser.h reads the text back.
#pragma once
#include <string>

#include "ascir/asc_graph.h"

namespace af::ascir {

/// The text of `g`: `ascgraph @NAME { axis ... ; %node ... ; [schedule ...] }`, ending in a
/// newline. Axes print in id order, names as given. Throws CompileError when a node refers to a
/// missing axis or node.
std::string print(const AscGraph& g);

}  // namespace af::ascir
