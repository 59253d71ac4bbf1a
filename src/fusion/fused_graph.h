// FusedGraph: the graph after fusion — kernels (AscBackend nodes, each one AscGraph) and the ops
// left to ATen, in execution order.
#pragma once
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "graph/graph.h"

namespace af::fusion {

/// One step of the fused program.
struct FusedNode {
  enum class Kind {
    Kernel,  // a generated kernel: `kernel` holds its AscGraph
    Opaque,  // a Graph IR node run by the frontend (ATen), or a view/input/const it evaluates
  };
  Kind kind = Kind::Kernel;
  std::string name;          // "k0", "k1", ... for kernels; the node name for others
  std::vector<int> ops;      // Graph IR node indices this step computes
  std::vector<int> inputs;   // Graph IR node indices read (kernel: data index i -> inputs[i])
  std::vector<int> outputs;  // Graph IR node indices written (kernel: output index i -> outputs[i])
  /// Kind::Kernel: per data index i, the kernel axis id holding each dim of value inputs[i]
  /// (data tensors list every kernel axis, so which ones carry the value's dims is kept here;
  /// an output's are its store's axes). Empty when unknown: then the dims align right.
  std::vector<std::vector<int>> input_axes;
  ascir::AscGraph kernel;  // Kind::Kernel only (empty for a concat kernel: see `segments`)
  std::string reason;      // Kind::Opaque: why this op is not in a kernel
  /// A concat kernel (fusion/concat_merge.h): one loop nest per concat operand, launched as one
  /// kernel. Segment i is a kernel step of its own (kernel, inputs, outputs, input_axes) that
  /// computes the slice [segment_starts[i], segment_starts[i] + its size) along dim
  /// `concat_dim` of a `concat_shape` space: operand i's producers and that slice of every
  /// consumer. This step's inputs, outputs and ops are the union over the segments, in Graph IR
  /// order. Empty for an ordinary kernel.
  std::vector<FusedNode> segments;
  int concat_dim = -1;
  std::vector<sym::Expr> concat_shape;
  std::vector<sym::Expr> segment_starts;

  bool is_concat() const { return !segments.empty(); }
  /// The loop nests of a kernel step: its segments' kernels, else its own kernel.
  std::vector<const ascir::AscGraph*> kernel_graphs() const;
  std::vector<ascir::AscGraph*> kernel_graphs();
};

/// A fusion the policy declined, with the reason (for explain and the lit tests).
struct RejectedFusion {
  std::string producer;  // step labels: Graph IR value names, e.g. "%3" (see fusion/fuse.h)
  std::string consumer;
  std::string reason;
  bool sibling = false;  // a horizontal pair that shares an input, not producer -> consumer
};

/// The graph after fusion. `source` is the Graph IR it was built from (kept by value).
struct FusedGraph {
  graph::Graph source;
  std::vector<FusedNode> nodes;  // execution order
  std::vector<RejectedFusion> rejected;

  int num_kernels() const;
};

}  // namespace af::fusion
