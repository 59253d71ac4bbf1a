// Lowering: Graph IR -> a FusedGraph of one-op kernels (each a Data -> Load -> op -> Store ->
// Output AscGraph) and Opaque steps, before any fusion.
#pragma once
#include <optional>
#include <string>

#include "fusion/can_fuse.h"
#include "fusion/fused_graph.h"
#include "graph/graph.h"

namespace af::fusion {

/// Lowers a verified graph. `input` and `const` nodes are no steps (the frontend supplies
/// inputs; a kernel inlines a const as a `scalar` node). Every fusible op (Elementwise,
/// Broadcast, Cast, Reduce whose dtypes kernels support) becomes a kernel with one original axis
/// per dim (z0, z1, ...) of its iteration space: the result's shape, or for a reduce its
/// operand's shape. Everything else (opaque ATen ops, views, unsupported dtypes, reduces when
/// `opts.reduce` is off) becomes an Opaque step with its reason. Kernels are named k0, k1, ... in
/// execution order; a kernel's data indices follow Graph IR node order. f16/bf16 values are
/// loaded then cast to f32, computed (and reduced) in f32 and cast back before their store. A
/// reduce node lists every axis with repeat 1 on the reduced ones; its store lists the axes of
/// the result's dims (all of them for keepdim = 1, stride 0 on the reduced ones; the kept ones
/// for keepdim = 0). Throws CompileError naming the node on an unknown op kind or a malformed
/// operand.
FusedGraph lower(const graph::Graph& g, const FusionOptions& opts = {});

/// The step leaving node `node` of `g` to ATen (the frontend runs it), with `reason`.
FusedNode opaque_step(const graph::Graph& g, int node, std::string reason);

/// Why node `node` of `g` cannot run in a generated kernel under `opts` (a disabled pass, a
/// concat of more operands than max_inputs or 16 segments), else its kernel_reason.
std::optional<std::string> not_fusible_reason(const graph::Graph& g, int node,
                                              const FusionOptions& opts = {});

/// Why no generated kernel can compute node `node` of `g` whatever the options (its op class,
/// an empty reduction, a dtype kernels lack), or nullopt when one can.
std::optional<std::string> kernel_reason(const graph::Graph& g, int node);

/// The frontend's question before it emits an op as its Graph IR kind: `g` holds the op last,
/// after the values it reads (inputs of their types, consts, and the casts and broadcasts it
/// would insert). Why it cannot: a value it reads breaks a Graph IR rule ("node %x: " and
/// graph::node_error), the op breaks one (its dtypes are the registry's; said as the dtype
/// kernels lack where that is why), an elementwise op's dtypes are not this frontend's kernel
/// dtypes (integer math, which the registry allows: "dtype i64 is not supported by generated
/// kernels"), an elementwise op or cast of one element to or from f64 (scalar math around a
/// Python float that dynamic shapes made a graph input: a kernel launch costs more than ATen's),
/// or a reduction over an empty dim; nullopt when it can. A valid cast whose dtype kernels
/// lack (a cast to i64) is emitted: lowering leaves it to ATen.
std::optional<std::string> candidate_reason(const graph::Graph& g);

}  // namespace af::fusion
