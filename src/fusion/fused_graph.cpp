// FusedGraph queries.
#include "fusion/fused_graph.h"

#include <utility>

namespace af::fusion {

int FusedGraph::num_kernels() const {
  int count = 0;
  for (const FusedNode& n : nodes) count += n.kind == FusedNode::Kind::Kernel ? 1 : 0;
  return count;
}

std::vector<const ascir::AscGraph*> FusedNode::kernel_graphs() const {
  std::vector<const ascir::AscGraph*> out;
  if (kind != Kind::Kernel) return out;
  if (segments.empty()) return {&kernel};
  for (const FusedNode& s : segments) out.push_back(&s.kernel);
  return out;
}

std::vector<ascir::AscGraph*> FusedNode::kernel_graphs() {
  std::vector<ascir::AscGraph*> out;
  for (const ascir::AscGraph* g : std::as_const(*this).kernel_graphs())
    out.push_back(const_cast<ascir::AscGraph*>(g));
  return out;
}

}  // namespace af::fusion
