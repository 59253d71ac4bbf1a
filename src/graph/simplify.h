// Algebraic simplification of the Graph IR before lowering: strength reduction of ops whose
// constant operand makes a cheaper op exact (ATen's own fast paths, so results stay equal).
#pragma once
#include "graph/graph.h"

namespace af::graph {

/// Rewrites, in place and keeping node names and indices: pow(x, c) for a constant exponent c in
/// {2, 3, 4, -2, 0.5, -0.5, -1} into mul(x, x), cube(x), pow4(x), rsquare(x), sqrt(x), rsqrt(x),
/// reciprocal(x) — the forms eager's pow_tensor_scalar kernel computes for those exponents.
/// Returns the number of rewrites.
int simplify(Graph& g);

}  // namespace af::graph
