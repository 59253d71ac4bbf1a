// The ATen view ops a Graph IR view node computes (part of the ATen op table, op_table.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aten/call.h"

namespace af::aten {

/// Dim `d` of a rank-`rank` tensor counted from 0 (a negative `d` counts from the end).
inline int64_t norm_dim(int64_t d, int64_t rank) {
  return d < 0 ? d + rank : d;
}

/// (overload, Graph IR view kind) of every view row.
const std::vector<std::pair<std::string, std::string>>& view_rows();

/// The view node of a call of view overload `op` whose `self` is a tensor: its attributes from
/// the arguments, the operand's sizes and the result's; a reason where none expresses it (a
/// squeeze of a dim that is not 1, a slice over a symbolic size or by symbolic bounds).
PlanOrReason plan_view(std::string_view op, const Call& call);

}  // namespace af::aten
