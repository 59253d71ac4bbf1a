// Graph IR verifier: the invariants every pass may assume of a Graph.
#pragma once
#include <optional>
#include <string>

#include "graph/graph.h"

namespace af::graph {

/// Throws CompileError naming the offending node (its printed line) when `g` breaks an
/// invariant: unique, well-formed value names; known op kinds; operands defined before use;
/// arity from the registry; input indices 0..n-1 unique; const results rank 0 with a numeric
/// value; strides rank == shape rank; results of elementwise/broadcast/cast ops contiguous with
/// offset 0; elementwise operands of the result's shape (exact symbolic equality), except
/// rank-0 `const` operands; operand dtypes allowed by the registry (where: operand 0 bool,
/// 1-2 float); dtype rules (comparisons, isnan/isinf and logical_*/bitwise_* give bool, other
/// elementwise ops give their operands' dtype); broadcast/expand sources compatible with the
/// result; view attributes consistent with the shapes; reduce ops: `dims` sorted, unique, in
/// range and non-empty, `keepdim` 0 or 1, the operand's dtype (float, or bool for reduce_any /
/// reduce_all), the operand's shape with each reduced dim 1 (keepdim) or dropped, a dense
/// result; opaque ops carry a string target;
/// outputs exist; every size symbol used is declared once in the header.
void verify(const Graph& g);

/// What is wrong with node `node` of `g` alone (its kind, operands, attributes and type against
/// the invariants above; the header's symbols), as the rule it breaks, or nullopt: what a
/// frontend asks before it emits a node.
std::optional<std::string> node_error(const Graph& g, int node);

}  // namespace af::graph
