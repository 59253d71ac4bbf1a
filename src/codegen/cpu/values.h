// Internal to the CPU emitter: the C++ text of one AscIR value (scalar, cast, elementwise op)
// over its operands' variables, and the naming helpers both kernel printers share.
#pragma once
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "codegen/loop_nest.h"

namespace af::codegen {

/// The vector library's name for dtype `t` in af_load_<T> and friends (f32, f16, bf16, bool);
/// throws naming node `n` for any other dtype.
std::string mem_suffix(const ascir::AscGraph& g, const ascir::AscNode& n, DType t);

/// The C++ storage element type of dtype `t` (float, uint16_t, uint8_t).
std::string storage_type(DType t);

/// The vector type holding a value of dtype `t` in registers: af_vm (bool), af_vl (i64, i32),
/// af_vf (the floats).
std::string vector_type(DType t);
/// The vector of dtype `t` with every lane `value` (a C++ expression): af_splat(value) for the
/// f32-lane floats, af_splat_f64 for f64, af_mask_splat for bool.
std::string splat_expr(DType t, const std::string& value);

/// Whether n is an integer div_floor / div_trunc / remainder / fmod (a zero divisor raises).
bool is_integer_division(const ascir::AscNode& n);

/// Whether load node `n` is a gather: load(%data, %index) (docs/ir.md).
bool is_gather(const ascir::AscNode& n);
/// The module's word recording the first out-of-range gather index (kTakeIndexFault reads it).
inline constexpr const char* kIndexFault = "af_index_fault";
/// The declaration of `g<i>`, the row gather node `i` reads when its index is the same in every
/// lane: "const T* g<i> = p<data> + af_checked_index(index, bound, &af_index_fault) * stride;".
std::string gather_row_pointer(const ascir::AscGraph& g, int i, const std::string& index);
/// Gather node `i` lane by lane: af_take_T[_n](at, lane stride, index vector, stride, bound,
/// &af_index_fault[, rem]), `at` the first lane's element of the data (lane stride `ls`).
std::string take_expr(const ascir::AscGraph& g, int i, const std::string& at, const sym::Expr& ls,
                      const std::string& index, bool tail);

/// The C++ expression of node `i` of `g` — a `scalar`, a `cast` or an elementwise op of the
/// registry — over its operands' expressions `args`. `users` are the nodes reading `i` (a cast
/// to f16/bf16 feeding only same-dtype stores is left to the store's rounding). In a `tail`
/// step (`rem` live lanes), an integer division's divisor is 1 in the dead lanes, so their
/// padding never reports a zero division.
std::string compute_expr(const ascir::AscGraph& g, int i, const std::vector<std::string>& args,
                         const std::vector<int>& users, bool tail = false);

}  // namespace af::codegen
