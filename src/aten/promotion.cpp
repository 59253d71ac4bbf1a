#include "aten/promotion.h"

#include <algorithm>
#include <array>
#include <optional>

namespace af::aten {
namespace {

struct DTypeRow {
  std::string_view name;
  DTypeCategory category;
  int rank;  // order within the category where promotion takes the higher; -1: never mixed
};

// torch's dtypes. Within a category promotion takes the higher rank, except the pairs
// promote_pair handles (f16 with bf16, u8 with a signed integer); a rank of -1 promotes only
// with itself (float8s, the wide unsigned integers).
constexpr std::array<DTypeRow, 21> kDTypes{{
    {"bool", DTypeCategory::Bool, 0},
    {"uint8", DTypeCategory::Integer, 0},
    {"int8", DTypeCategory::Integer, 1},
    {"int16", DTypeCategory::Integer, 2},
    {"int32", DTypeCategory::Integer, 3},
    {"int64", DTypeCategory::Integer, 4},
    {"uint16", DTypeCategory::Integer, -1},
    {"uint32", DTypeCategory::Integer, -1},
    {"uint64", DTypeCategory::Integer, -1},
    {"float16", DTypeCategory::Floating, 0},
    {"bfloat16", DTypeCategory::Floating, 0},
    {"float32", DTypeCategory::Floating, 1},
    {"float64", DTypeCategory::Floating, 2},
    {"float8_e4m3fn", DTypeCategory::Floating, -1},
    {"float8_e5m2", DTypeCategory::Floating, -1},
    {"float8_e4m3fnuz", DTypeCategory::Floating, -1},
    {"float8_e5m2fnuz", DTypeCategory::Floating, -1},
    {"float8_e8m0fnu", DTypeCategory::Floating, -1},
    {"complex32", DTypeCategory::Complex, 0},
    {"complex64", DTypeCategory::Complex, 1},
    {"complex128", DTypeCategory::Complex, 2},
}};

const DTypeRow* row_of(std::string_view name) {
  for (const auto& r : kDTypes)
    if (r.name == name) return &r;
  return nullptr;
}

/// promote_types(a, b) for two dtypes of one category; empty where torch raises.
std::string promote_pair(const std::string& a, const std::string& b) {
  if (a.empty() || a == b) return b;
  if (b.empty()) return a;
  const DTypeRow* ra = row_of(a);
  const DTypeRow* rb = row_of(b);
  if (ra == nullptr || rb == nullptr || ra->rank < 0 || rb->rank < 0) return "";
  if (ra->rank == rb->rank) {  // f16 with bf16: f32; u8 never ties with another rank-0 dtype
    return ra->category == DTypeCategory::Floating ? "float32" : "";
  }
  const DTypeRow* hi = ra->rank > rb->rank ? ra : rb;
  const DTypeRow* lo = ra->rank > rb->rank ? rb : ra;
  if (lo->name == "uint8" && hi->name == "int8") return "int16";  // the signed type holding both
  return std::string(hi->name);
}

/// The complex dtype holding a float dtype's values (float_as_complex); empty for none.
std::string complex_of(const std::string& name) {
  if (name == "float16") return "complex32";
  if (name == "float32") return "complex64";
  if (name == "float64") return "complex128";
  return category_of(name) == DTypeCategory::Complex ? name : "";
}

/// The category of a number-valued argument; nullopt for a value promotion skips.
std::optional<DTypeCategory> value_category(const Arg& a) {
  switch (a.kind) {
    case ArgKind::Bool: return DTypeCategory::Bool;
    case ArgKind::Int: return DTypeCategory::Integer;
    case ArgKind::Float: return DTypeCategory::Floating;
    case ArgKind::Tensor: return category_of(a.dtype);
    case ArgKind::Node:
      if (a.dtype == "bool") return DTypeCategory::Bool;
      if (a.dtype == "int") return DTypeCategory::Integer;
      if (a.dtype == "float") return DTypeCategory::Floating;
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

DTypeCategory category_of(std::string_view name) {
  const DTypeRow* r = row_of(name);
  return r == nullptr ? DTypeCategory::Other : r->category;
}

std::string promoted_dtype(const std::vector<const Arg*>& values, std::string_view default_float) {
  DTypeCategory highest = DTypeCategory::Bool;
  for (const Arg* v : values) {
    const std::optional<DTypeCategory> c = value_category(*v);
    if (!c) continue;
    if (*c == DTypeCategory::Other) return "";
    highest = std::max(highest, *c);
  }
  std::string ranked, zero_dim;  // the highest dtype among tensors of rank >= 1, of rank 0
  for (const Arg* v : values) {
    if (v->kind != ArgKind::Tensor) continue;
    const DTypeCategory c = category_of(v->dtype);
    std::string dtype = v->dtype;
    if (highest == DTypeCategory::Complex && c == DTypeCategory::Floating) {
      dtype = complex_of(dtype);
      if (dtype.empty()) return "";
    } else if (c != highest || highest == DTypeCategory::Bool) {
      continue;
    }
    std::string& acc = v->sizes.empty() ? zero_dim : ranked;
    acc = promote_pair(acc, dtype);
    if (acc.empty()) return "";
  }
  if (!ranked.empty()) return ranked;
  if (!zero_dim.empty()) return zero_dim;
  switch (highest) {
    case DTypeCategory::Bool: return "bool";
    case DTypeCategory::Integer: return "int64";
    case DTypeCategory::Floating: return std::string(default_float);
    default: return complex_of(std::string(default_float));
  }
}

}  // namespace af::aten
