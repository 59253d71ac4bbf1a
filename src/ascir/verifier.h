// AscIR verifier: the structural invariants every pass may assume of an AscGraph.
#pragma once
#include "ascir/asc_graph.h"

namespace af::ascir {

/// Checks `g` and throws CompileError naming the graph and the offending node/axis when:
/// names are missing, malformed ([A-Za-z0-9_.]+) or repeated; a derived axis's sources are
/// missing; an input does not precede its user; a sched or tensor axis does not exist;
/// out.axes/repeats/strides differ in length; data/output indices are not unique and dense
/// 0..n-1; load does not read a data node, a store feeds a non-output, an output does not read a
/// store; an op is unknown or has the wrong number of inputs (compute ops: the Graph IR registry
/// arity; elementwise and reduce kinds); a broadcast's input has a repeat other than 1 on a dim
/// it expands; a reduce changes its input's dtype or (unscheduled) lists other axes than its
/// input or a repeat that is neither the input's nor 1; a store/output lists an axis twice (it
/// lists the axes of the stored value's dims, a subset of the kernel axes); the schedule names
/// a missing axis or has a malformed param.
void verify(const AscGraph& g);

}  // namespace af::ascir
