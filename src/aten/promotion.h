// torch's dtypes by name, and its elementwise type promotion (what `a == b` compares in).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "aten/call.h"

namespace af::aten {

/// torch's kinds of dtype, lowest first (the order of type promotion's categories).
enum class DTypeCategory { Bool, Integer, Floating, Complex, Other };

/// The category of torch dtype `name` ("float32": Floating; "qint8": Other).
DTypeCategory category_of(std::string_view name);

/// The dtype torch's default elementwise type promotion gives `values` (tensors, numbers and
/// number-valued graph values; others are skipped): the highest category among them all, then
/// the highest dtype of that category among tensors of rank >= 1, else among rank-0 tensors,
/// else the category's default. Empty where torch has no promotion of the dtypes met.
std::string promoted_dtype(const std::vector<const Arg*>& values, std::string_view default_float);

}  // namespace af::aten
