// Attr: the value of a named op attribute in either IR (int, float, string, list of sizes).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "sym/expr.h"

namespace af {

/// An attribute value. Floats print with round-trip precision ("inf", "-inf", "nan" included).
using Attr = std::variant<int64_t, double, std::string, std::vector<sym::Expr>>;
/// Attributes by name; ordered so printing is deterministic.
using AttrMap = std::map<std::string, Attr, std::less<>>;

/// Text of one attribute value as the IR printers write it: 3, 2.5, "floor", [s0, 4].
std::string attr_str(const Attr& a);

}  // namespace af
