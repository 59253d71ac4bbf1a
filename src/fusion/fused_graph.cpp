// FusedGraph queries.
#include "fusion/fused_graph.h"

namespace af::fusion {

int FusedGraph::num_kernels() const {
  int count = 0;
  for (const FusedNode& n : nodes) count += n.kind == FusedNode::Kind::Kernel ? 1 : 0;
  return count;
}

}  // namespace af::fusion
