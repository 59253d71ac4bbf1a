// Stages and passes of a scheduled reduction kernel (see reduce_plan.h).
#include "schedule/reduce_plan.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "schedule/reduce_schedule.h"

namespace af::schedule {

ReducePlan plan_reduce(const ascir::AscGraph& g) {
  const size_t n = g.nodes.size();
  size_t longest = 0;
  for (const auto& node : g.nodes) longest = std::max(longest, node.sched_axes.size());
  ReducePlan p;
  p.full.assign(n, false);
  p.stage.assign(n, 0);
  int last = 0;
  for (size_t i = 0; i < n; ++i) {
    const ascir::AscNode& node = g.nodes[i];
    bool reduce = graph::is_reduce_op(node.op);
    p.full[i] = !reduce && node.sched_axes.size() == longest;
    int st = 0;
    for (int in : node.inputs) st = std::max(st, p.stage[in]);
    if (reduce) {
      last = std::max(last, st);
      ++st;
    }
    if (node.op == "store" && p.full[i]) last = std::max(last, st);
    p.stage[i] = st;
  }
  p.passes = last + 1;
  return p;
}

}  // namespace af::schedule
