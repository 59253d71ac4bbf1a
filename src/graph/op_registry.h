// The op registry: one row per Graph IR op kind — its class, arity, the dtypes kernels support
// and its cost. Target-neutral: how a target computes an op is its emitter's (the cpu target's
// af_<kind> in runtime/include/autofuse_cpu.h, ascendc's op_rules.cpp). Adding an op touches
// this table, the ATen op table (aten/op_table.cpp) and each target's vector library.
#pragma once
#include <string_view>
#include <vector>

#include "support/dtype.h"

namespace af::graph {

/// What an op is to the fusion compiler.
enum class OpClass {
  Input,        // a graph input (attr index)
  Const,        // a scalar constant (attr value), rank-0 result
  Elementwise,  // pointwise math over operands of the result's shape
  Broadcast,    // expand to the result shape (attr none; shape in the result type)
  Cast,         // convert to the result dtype
  View,         // an alias of its operand with other shape/strides/offset (result type says how)
  Reduce,       // folds dims `dims` of its operand (attr keepdim 0|1); dtype of the operand
  Concat,       // joins its operands along dim `dim` (same dtype, equal other sizes)
  Opaque,       // runs as ATen in the frontend (attr target = "aten.mm.default" etc.)
};

/// Dtype sets as bit masks over DType.
using DTypeMask = uint32_t;
constexpr DTypeMask mask_of(DType t) {
  return 1u << static_cast<unsigned>(t);
}
/// f32 and the low-precision floats kernels compute in f32 lanes.
constexpr DTypeMask kF32LaneTypes =
    mask_of(DType::F32) | mask_of(DType::F16) | mask_of(DType::BF16);
/// The floats: those and f64 (computed in double lanes).
constexpr DTypeMask kFloatTypes = kF32LaneTypes | mask_of(DType::F64);
constexpr DTypeMask kBoolType = mask_of(DType::Bool);
/// The integers AscIR kernels compute (in int64 lanes: indices, positions, index arithmetic).
constexpr DTypeMask kIntTypes = mask_of(DType::U8) | mask_of(DType::I8) | mask_of(DType::I16) |
                                mask_of(DType::I32) | mask_of(DType::I64);

/// One registry row.
struct OpDef {
  std::string_view name;
  OpClass cls;
  int arity;  // number of tensor operands; -1 = any
  /// Dtypes of the operands a generated kernel accepts (checked on every operand).
  DTypeMask operand_dtypes;
  /// Relative arithmetic work per element (1 = an add), the same on every target: the
  /// schedule's recompute-or-buffer choice and the CPU tiling's cost model read it.
  double cost;
};

/// The row for `kind`, or nullptr when the kind is unknown.
const OpDef* find_op(std::string_view kind);
/// All rows, in table order.
const std::vector<OpDef>& all_ops();
/// Whether `kind` is a reduce kind of the registry (reduce_sum, reduce_mean, ...): the one
/// definition fusion, schedule and codegen ask.
bool is_reduce_op(std::string_view kind);
/// Whether elementwise kind `kind` with first operand of dtype `operand` gives bool:
/// comparisons and logic always, bitwise_* on bool operands (on integers the integer dtype).
bool gives_bool(std::string_view kind, DType operand);

}  // namespace af::graph
