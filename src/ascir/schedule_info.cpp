// The schedule family, TilingCase and parameter-role tables (see schedule_info.h).
#include "ascir/schedule_info.h"

#include <array>
#include <utility>

namespace af::ascir {
namespace {

constexpr std::array<std::pair<ScheduleFamily, std::string_view>, 3> kFamilies = {{
    {ScheduleFamily::Elementwise, "elementwise"},
    {ScheduleFamily::ReduceInner, "reduce_inner"},
    {ScheduleFamily::ReduceOuter, "reduce_outer"},
}};

constexpr std::array<std::pair<TilingCase, std::string_view>, 5> kCases = {{
    {TilingCase::Elementwise, "elementwise"},
    {TilingCase::ReduceInner, "reduce_inner"},
    {TilingCase::ReduceInnerAllLoad, "reduce_inner_all_load"},
    {TilingCase::ReduceInnerSplit, "reduce_inner_split"},
    {TilingCase::ReduceOuter, "reduce_outer"},
}};

constexpr std::array<std::pair<ParamRole, std::string_view>, 2> kRoles = {{
    {ParamRole::Tile, "tile"},
    {ParamRole::Block, "block"},
}};

template <class E, size_t N>
std::string_view name_in(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, n] : table)
    if (v == e) return n;
  return "?";
}

template <class E, size_t N>
std::optional<E> named_in(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view s) {
  for (const auto& [v, n] : table)
    if (n == s) return v;
  return std::nullopt;
}

}  // namespace

std::string_view name(ScheduleFamily f) {
  return name_in(kFamilies, f);
}
std::string_view name(TilingCase c) {
  return name_in(kCases, c);
}
std::string_view name(ParamRole r) {
  return name_in(kRoles, r);
}
std::optional<ScheduleFamily> schedule_family_named(std::string_view s) {
  return named_in(kFamilies, s);
}
std::optional<TilingCase> tiling_case_named(std::string_view s) {
  return named_in(kCases, s);
}
std::optional<ParamRole> param_role_named(std::string_view s) {
  return named_in(kRoles, s);
}

bool is_reduce(ScheduleFamily f) {
  return f != ScheduleFamily::Elementwise;
}

TilingCase single_case(ScheduleFamily f) {
  switch (f) {
    case ScheduleFamily::Elementwise: return TilingCase::Elementwise;
    case ScheduleFamily::ReduceInner: return TilingCase::ReduceInner;
    case ScheduleFamily::ReduceOuter: return TilingCase::ReduceOuter;
  }
  return TilingCase::Elementwise;
}

std::vector<TilingCase> ScheduleInfo::cases() const {
  return tiling_cases.empty() ? std::vector<TilingCase>{single_case(family)} : tiling_cases;
}

}  // namespace af::ascir
