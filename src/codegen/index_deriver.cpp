// Axis index derivation every emitter shares (IndexDeriver in loop_nest.h).
#include <algorithm>

#include "codegen/loop_nest.h"

namespace af::codegen {
namespace {

using ascir::AxisKind;

bool is_split_outer(AxisKind k) {
  return k == AxisKind::TileOuter || k == AxisKind::BlockOuter;
}
bool same_split(AxisKind outer, AxisKind inner) {
  return (outer == AxisKind::TileOuter && inner == AxisKind::TileInner) ||
         (outer == AxisKind::BlockOuter && inner == AxisKind::BlockInner);
}

/// The outer and inner axes `a` is split into, or {-1, -1}.
std::pair<int, int> split_children(const ascir::AscGraph& g, int a) {
  for (const auto& o : g.axes) {
    if (!is_split_outer(o.kind) || o.from.size() != 1 || o.from[0] != a) continue;
    for (const auto& i : g.axes)
      if (same_split(o.kind, i.kind) && i.from.size() == 1 && i.from[0] == a) return {o.id, i.id};
  }
  return {-1, -1};
}

}  // namespace

std::string size_var(int axis_id) {
  return "A" + std::to_string(axis_id);
}

void IndexDeriver::set(int axis, std::string expr, bool uses_vec) {
  known_[axis] = std::move(expr);
  uses_vec_[axis] = uses_vec;
}

bool IndexDeriver::split_with_inner(int a, int inner) const {
  return split_children(g_, a).second == inner;
}

std::optional<std::string> IndexDeriver::get(int a) {
  if (auto it = known_.find(a); it != known_.end()) return it->second;
  if (visiting_.count(a)) return std::nullopt;
  visiting_.insert(a);
  std::optional<std::string> expr;
  bool vec = false;
  // An axis split into outer x inner.
  auto [outer, inner] = split_children(g_, a);
  if (outer >= 0) {
    auto o = get(outer), i = get(inner);
    if (o && i) {
      std::string scaled = *o + " * " + size_var(inner);
      expr = *i == "0" ? scaled : scaled + " + " + *i;
      vec = uses_vec(outer) || uses_vec(inner);
    }
  }
  // A part of a merged axis.
  for (size_t m = 0; !expr && m < g_.axes.size(); ++m) {
    const auto& merged = g_.axes[m];
    if (merged.kind != AxisKind::Merged) continue;
    auto pos = std::find(merged.from.begin(), merged.from.end(), a);
    if (pos == merged.from.end()) continue;
    auto whole = get(merged.id);
    if (!whole) continue;
    std::string e = *whole;
    std::string later;
    for (auto it = pos + 1; it != merged.from.end(); ++it)
      later += (later.empty() ? "" : " * ") + size_var(*it);
    if (!later.empty()) e = "af_index_div(" + e + ", " + later + ")";
    if (pos != merged.from.begin()) e = "af_index_mod(" + e + ", " + size_var(a) + ")";
    expr = e;
    vec = uses_vec(merged.id);
  }
  visiting_.erase(a);
  if (!expr) return std::nullopt;
  std::string var = "i" + std::to_string(a);
  lines_->push_back(indent_ + "const int64_t " + var + " = " + *expr + ";  // " + g_.axis(a).name);
  set(a, var, vec);
  return var;
}

}  // namespace af::codegen
