// The reduction TilingCases of the Schedule pass (docs/schedule.md, "Reductions"): kernels with
// reduce nodes. Every reduce of a kernel reduces the same axes R; nodes that vary along R are
// "full" values computed in passes over a row, the others "row" values computed once per kept
// index (row) between the passes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "target/target.h"

namespace af::schedule {

/// The original axes the reduce nodes of an unscheduled kernel reduce (where a reduce's input
/// has repeat != 1 and its own repeat is 1), sorted; empty when no reduce reduces anything.
/// Throws CompileError naming both nodes when two reduce nodes reduce different axes.
std::vector<int> reduced_axes(const ascir::AscGraph& g);

/// Replaces every reduce node of the unscheduled kernel `g` that reduces nothing (its input
/// does not vary along any axis it removes: a reduction over size-1 dims, or of a value that is
/// already reduced) by its input, and drops it. Returns how many were removed.
int remove_identity_reduces(ascir::AscGraph& g);

/// Whether the unscheduled kernel `g` has a reduction over at least one axis.
bool has_reduction(const ascir::AscGraph& g);

/// Why the reduction TilingCases cannot schedule the unscheduled kernel `g`, or nullopt when
/// they can (or `g` has no reduction). The fusion policy asks before a merge, lowering before
/// a reduce becomes a kernel.
std::optional<std::string> reduce_unsupported_reason(const ascir::AscGraph& g);

/// Schedules a kernel with a reduction. The loop dims (size-1 dims dropped) are ordered by the
/// strides of the main input (the data tensor varying along the most dims) and adjacent dims
/// of the same class (kept / reduced) merged where every tensor is contiguous across them.
///   "reduce_inner" (the innermost dim r is reduced): the kept dims merge into the row axis X,
///     split X = XB x Xb (block symbol: rows per block) and r = rT x rt (tile symbol; rt
///     vectorized); reduced dims outside a kept one (BatchNorm's N around C) are loops q...
///     of the row. Full nodes are scheduled on [XB, Xb, q..., rT, rt], row nodes on [XB, Xb].
///     TilingCases: "reduce_inner_all_load" (key 0: the full values later passes need are kept
///     in a row buffer of target.reduce_buffer_bytes) and "reduce_inner_split" (key 1: every
///     pass recomputes them from the inputs); a kernel with one pass, nothing worth buffering,
///     or a row over several dims has the single case "reduce_inner".
///   "reduce_outer" (the innermost dim v is kept): v = vT x vt (tile symbol = AF_LANES columns,
///     vt vectorized), the other kept dims and vT merge into X = XB x Xb; each reduced dim is a
///     loop. Full nodes on [XB, Xb, r..., vt], row nodes on [XB, Xb, vt].
/// Throws CompileError (with reduce_unsupported_reason's text) when the kernel has no layout.
void schedule_reduce(ascir::AscGraph& g, const target::Target& t);

}  // namespace af::schedule
