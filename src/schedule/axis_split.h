// Axis construction shared by the TilingCases of the Schedule pass: fresh axis and symbol
// names, merged loop dims, and the split of an axis into outer x inner by a run-time size.
#pragma once
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ascir/asc_graph.h"

namespace af::schedule {

/// `base`, or `base_1`, `base_2`, ... if an axis of `g` already has that name.
std::string unique_axis_name(const ascir::AscGraph& g, const std::string& base);

/// `base`, or `base_1`, ... if `taken` holds it; the result is added to `taken`.
std::string unique_symbol(std::set<std::string>& taken, const std::string& base);

/// The axis standing for loop dim `members`: the axis itself, or a new merged axis.
int dim_axis(ascir::AscGraph& g, const std::vector<int>& members);

/// Splits `axis` into (outer, inner) of kinds TileOuter/TileInner (tile = true) or
/// BlockOuter/BlockInner by the run-time size symbol `param`: inner has size `param`, outer
/// ceildiv(size, param). Names: `<axis>T`/`<axis>t` or `<axis>B`/`<axis>b`.
std::pair<int, int> split_axis(ascir::AscGraph& g, int axis, const std::string& param, bool tile);

}  // namespace af::schedule
