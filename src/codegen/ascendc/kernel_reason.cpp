// Why a scheduled kernel cannot be printed as Ascend C (kernel.h kernel_reason): the schedule
// families and node kinds the printer takes, the queue buffers a TPosition has, and a tile of
// one repeat fitting the UB.
#include <string>

#include "codegen/ascendc/kernel.h"
#include "codegen/ascendc/kernel_facts.h"
#include "support/error.h"

namespace af::codegen {

using ascir::AscGraph;
using ascir::AscNode;

std::string kernel_reason(const AscGraph& g, const target::Target& t) {
  if (!g.schedule) return "the graph is not scheduled";
  KernelContext k;
  try {
    k = analyze_kernel(g, kernel_c_name(g.name));
  } catch (const CompileError& e) {
    return e.what();
  }
  if (g.schedule->family == ascir::ScheduleFamily::ReduceInner && !reduced_loops(k).empty())
    return "a reduce_inner row over several dims (reduced dims around a kept one)";
  int stores = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    std::string r = node_reason(k, static_cast<int>(i));
    if (!r.empty()) return r;
    if (n.op != "store") continue;
    ++stores;
    int outputs = 0;
    for (const AscNode& u : g.nodes)
      outputs += u.op == "output" && u.inputs.at(0) == static_cast<int>(i);
    if (outputs != 1)
      return "%" + n.name + ": a store read by " + std::to_string(outputs) + " outputs";
  }
  // At most 8 queue buffers per TPosition: a VECIN queue per input, a VECOUT queue per store
  // (2 slots each, 1 past 4).
  if (queued_inputs(k) > 8)
    return std::to_string(queued_inputs(k)) + " inputs need more than the 8 VECIN buffers";
  if (stores > 8) return std::to_string(stores) + " outputs need more than the 8 VECOUT buffers";
  const KernelPlan plan = plan_kernel(k, t);
  if (!plan.reason.empty()) return plan.reason;
  const int64_t bytes = plan.bytes_per_element;
  if (bytes * kRepeat > t.device.onchip_bytes)
    return "a tile of " + std::to_string(kRepeat) + " elements needs " +
           std::to_string(bytes * kRepeat) + " B of UB, more than the target's " +
           std::to_string(t.device.onchip_bytes);
  return "";
}

}  // namespace af::codegen
