// Internal to the Ascend C emitter: what its kernel printer and its reasons read off an analyzed
// kernel (codegen/loop_nest.h): element types, strides along the vectorized axis, the schedule
// family's shape, the reductions it prints, and why a node cannot be printed.
#pragma once
#include <string>
#include <string_view>

#include "codegen/loop_nest.h"

namespace af::codegen {

constexpr int64_t kRepeat = 64;  // f32 elements of one 256-byte vector repeat: the tile unit

/// Ascend C's element type of a dtype a kernel moves ("" for one it does not).
std::string_view device_type(DType t);

/// An f32 C expression for `v`, exact: a hexadecimal literal, inf and NaN by their bits.
std::string float_literal(double v);

/// The `value` attribute of a scalar node (NaN when absent).
double scalar_value(const ascir::AscNode& n);

/// Data nodes of k loaded along the vectorized axis: each takes a VECIN queue.
int queued_inputs(const KernelContext& k);

/// Store nodes of g: each takes a VECOUT queue.
int stored_outputs(const ascir::AscGraph& g);

/// Whether k's schedule is reduce_inner (whole rows in UB, or a row streamed in tiles).
bool rows_in_ub(const KernelContext& k);

/// Whether k's schedule is reduce_outer (a tile of columns accumulated over the reduced rows).
bool columns(const KernelContext& k);

/// Whether node i of k is computed per element (else once per row: a reduction's result and
/// what follows from it; for reduce_outer a tile of columns).
bool full(const KernelContext& k, int i);

/// A reduction the Ascend C emitter prints: the call reducing a row in UB (reduce_inner: the API's
/// ReduceMax / ReduceMin, or the prologue's af_sum_tile for sums), the call accumulating a row into
/// a tile of columns (reduce_outer), the scalar fold joining a streamed row's tiles
/// (autofuse_cpu_int.h), the accumulator's start, whether the result is divided by the row length,
/// and whether its partials join pairwise (sums: the rows of a tile of columns through a cascade
/// of UB tiles, the prologue's af_cascade_add_tile; a streamed row's tile sums through
/// af_cascade, autofuse_cpu_cascade.h), so that their rounding error grows like log n, not n.
struct ReduceCall {
  std::string_view op, call, accumulate, fold, init;
  bool mean;
  bool cascade;
};

/// The row of reduce op `op`, or nullptr.
const ReduceCall* find_reduce(const std::string& op);

/// Why node i of k cannot be printed as Ascend C ("" when it can): see ascendc_reason.
std::string node_reason(const KernelContext& k, int i);

}  // namespace af::codegen
