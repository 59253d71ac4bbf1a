// AscIR: the loop-level IR of one fused kernel (design.md §3), modelled on CANN AutoFuse's
// AscGraph: axes with symbolic sizes, and nodes that each carry their loop nest (sched axes)
// and one output tensor {dtype, axis ids, repeats, strides}.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ascir/schedule_info.h"
#include "graph/attr.h"
#include "support/dtype.h"
#include "sym/expr.h"

namespace af::ascir {

/// How an axis came to be.
enum class AxisKind { Original, Merged, TileOuter, TileInner, BlockOuter, BlockInner };
std::string_view axis_kind_name(AxisKind k);

/// A loop axis. `from` lists the axes it was derived from (merged parts, or the split parent).
struct Axis {
  int id = 0;
  std::string name;
  sym::Expr size;
  AxisKind kind = AxisKind::Original;
  std::vector<int> from;
};

/// A node's output: dtype and, per axis of `axes`, the repeat (extent; 1 for a broadcast or
/// reduced dim) and the stride in elements (0 for such a dim). For `data` and `store` nodes the
/// strides and `offset` describe the tensor in global memory; for the others the local tile.
struct AscTensor {
  DType dtype = DType::F32;
  std::vector<int> axes;
  std::vector<sym::Expr> repeats;
  std::vector<sym::Expr> strides;
  sym::Expr offset = 0;
};

/// One node. `op` is "data" (kernel input, attr index), "load", "store", "output" (kernel
/// output, attr index), "scalar" (attr value), "broadcast", "cast", or a compute op kind of the
/// Graph IR registry ("add", "sigmoid", ...).
struct AscNode {
  std::string name;
  std::string op;
  std::vector<int> inputs;  // indices into AscGraph::nodes
  AttrMap attrs;
  std::vector<int> sched_axes;  // loop nest, outer -> inner (axis ids)
  AscTensor out;
};

/// Whether an AscNode op computes a value (a Graph IR kind, broadcast, cast), rather than move
/// one in or out (data, load, store, output) or name a constant (scalar).
bool is_compute(const std::string& op);

/// One kernel's loop-level graph. Nodes are in topological order.
struct AscGraph {
  std::string name;
  std::vector<Axis> axes;
  std::vector<AscNode> nodes;
  std::optional<ScheduleInfo> schedule;  // set by the Schedule pass

  const Axis& axis(int id) const;
  Axis& axis(int id);
  /// Adds an axis with the next free id and returns that id.
  int add_axis(std::string name, sym::Expr size, AxisKind kind = AxisKind::Original,
               std::vector<int> from = {});
  int add_node(AscNode n);
  /// The `data` nodes by attr index, and the `output` nodes by attr index.
  std::vector<int> data_nodes() const;
  std::vector<int> output_nodes() const;
  /// All size symbols used by axes and tensors, sorted.
  std::vector<std::string> size_symbols() const;
  /// Bytes the kernel moves under `hints`: what its data nodes read and its stores write
  /// (sym::addressed_elements of each, times its dtype's size).
  int64_t bytes_moved(const sym::Bindings& hints) const;
};

}  // namespace af::ascir
