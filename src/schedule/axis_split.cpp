// Axis construction helpers of the Schedule pass (see axis_split.h).
#include "schedule/axis_split.h"

#include <algorithm>

namespace af::schedule {

using ascir::AscGraph;
using ascir::AxisKind;

std::string unique_axis_name(const AscGraph& g, const std::string& base) {
  auto taken = [&](const std::string& n) {
    return std::any_of(g.axes.begin(), g.axes.end(), [&](const auto& a) { return a.name == n; });
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i)
    if (!taken(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

std::string unique_symbol(std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

int dim_axis(AscGraph& g, const std::vector<int>& members) {
  if (members.size() == 1) return members[0];
  sym::Expr size = 1;
  std::string name;
  for (int id : members) {
    size = size * g.axis(id).size;
    name += g.axis(id).name;
  }
  return g.add_axis(unique_axis_name(g, name), size, AxisKind::Merged, members);
}

std::pair<int, int> split_axis(AscGraph& g, int axis, const std::string& param, bool tile) {
  const std::string name = g.axis(axis).name;
  const sym::Expr size = g.axis(axis).size;
  sym::Expr inner_size = sym::Expr::symbol(param);
  int outer = g.add_axis(unique_axis_name(g, name + (tile ? "T" : "B")),
                         sym::Expr::ceildiv(size, inner_size),
                         tile ? AxisKind::TileOuter : AxisKind::BlockOuter, {axis});
  int inner = g.add_axis(unique_axis_name(g, name + (tile ? "t" : "b")), inner_size,
                         tile ? AxisKind::TileInner : AxisKind::BlockInner, {axis});
  return {outer, inner};
}

}  // namespace af::schedule
