// The ATen op table: which ATen overloads a Graph IR node computes, and how (the frontend asks
// it for every FX call and applies the plan; FX rewrites ask it whether a kernel computes an op).
#pragma once
#include <string_view>

#include "aten/call.h"

namespace af::aten {

/// How the table maps an overload.
enum class Family {
  None,         // not at all: the op runs as ATen (opaque)
  Elementwise,  // one elementwise, cast or const node over operands broadcast to the result
  Reduce,       // one reduce_* node
  ValuesOnly,   // (values, indices) reductions: a reduce_* node where nobody reads the indices
  Concat,       // one concat node
  View,         // one view node (reshape, permute, unsqueeze, squeeze, slice, expand)
};

/// The family of overload `op` ("aten.add.Tensor", "prims.convert_element_type.default").
Family family_of(std::string_view op);

/// The plan of a call of `op` (a family other than None). Views: `dims` (permute), `dim`
/// (unsqueeze, squeeze), `dim`/`start`/`end`/`step` (slice) or the result's shape; ValuesOnly:
/// `call.out` is the values' type.
PlanOrReason plan_call(std::string_view op, const Call& call);

}  // namespace af::aten
