// Lowering: Graph IR -> a FusedGraph of one-op kernels (each a Data -> Load -> op -> Store ->
// Output AscGraph) and Opaque steps, before any fusion.
#pragma once
#include <optional>
#include <string>

#include "fusion/fused_graph.h"
#include "graph/graph.h"

namespace af::fusion {

/// Lowers a verified graph. `input` and `const` nodes are no steps (the frontend supplies
/// inputs; a kernel inlines a const as a `scalar` node). Every fusible op (Elementwise,
/// Broadcast, Cast whose dtypes kernels support) becomes a kernel with one original axis per
/// result dim (z0, z1, ...); everything else (opaque ATen ops, views, unsupported dtypes) an
/// Opaque step with its reason. Kernels are named k0, k1, ... in execution order; a kernel's data
/// indices follow Graph IR node order. f16/bf16 values are loaded then cast to f32, computed in f32
/// and cast back before their store. Throws CompileError naming the node on an unknown op kind or a
/// malformed operand.
FusedGraph lower(const graph::Graph& g);

/// Why node `node` of `g` cannot run in a generated kernel, or nullopt when it can.
std::optional<std::string> not_fusible_reason(const graph::Graph& g, int node);

}  // namespace af::fusion
