// The pass structure of a scheduled reduction kernel, shared by the Schedule pass (which picks
// the row buffer) and the CPU emitter (which prints the passes).
#pragma once
#include <vector>

#include "ascir/asc_graph.h"

namespace af::schedule {

/// How a scheduled reduction kernel runs per row. A value's stage is the number of reductions
/// it depends on in sequence (LayerNorm: x 0, mean 1, x - mean 1, var 2, y 2). Pass p runs
/// over the row and accumulates the reductions whose input has stage p and writes the full
/// stores of stage p; the row values of stage p + 1 are computed after it.
struct ReducePlan {
  std::vector<bool> full;  // per node: computed per element of the row (on the longest nest)
  std::vector<int> stage;  // per node
  int passes = 1;
};

/// The plan of scheduled kernel `g` (a reduce node's own value is a row value).
ReducePlan plan_reduce(const ascir::AscGraph& g);

}  // namespace af::schedule
