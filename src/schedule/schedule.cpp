// The Schedule pass, TilingCase "elementwise": layout analysis (axis_merge.h), then the tile and
// block splits and the rewrite of every node onto the scheduled loop nest.
#include "schedule/schedule.h"

#include <algorithm>
#include <set>

#include "schedule/axis_merge.h"
#include "schedule/axis_split.h"
#include "schedule/reduce_schedule.h"
#include "support/error.h"

namespace af::schedule {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using ascir::AxisKind;

[[noreturn]] void fail(const AscGraph& g, const std::string& what) {
  throw CompileError("schedule @" + g.name + ": " + what);
}

/// For each node: does its tile vary along the vectorized dim (whose original axes are
/// `vec_members`)? Loads follow their data's stride there (gathers also their index), broadcasts
/// also vary when they expand along it, scalars never do, everything else varies when an input
/// does.
std::vector<bool> tile_variance(const AscGraph& g, const LoopLayout& l,
                                const std::vector<int>& vec_members) {
  std::vector<bool> lane_stride_nonzero(g.nodes.size(), false);
  for (const TensorLayout& t : l.tensors)
    lane_stride_nonzero[t.node] = t.dims.back().stride != sym::Expr(0);
  std::vector<bool> var(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    if (n.op == "data" || n.op == "scalar") continue;
    if (n.op == "load") {  // a gather also varies where its index does
      var[i] = lane_stride_nonzero[n.inputs[0]] || (n.inputs.size() == 2 && var[n.inputs[1]]);
      continue;
    }
    for (int in : n.inputs) var[i] = var[i] || var[in];
    if (n.op == "broadcast")
      for (size_t k = 0; k < n.out.axes.size(); ++k)
        if (std::count(vec_members.begin(), vec_members.end(), n.out.axes[k]) &&
            n.out.repeats[k] != sym::Expr(1))
          var[i] = true;
  }
  return var;
}

}  // namespace

int64_t vector_lanes(const target::Target& t) {
  return std::max<int64_t>(1, t.vector_bytes / 4);
}

void schedule_kernel(AscGraph& g, const target::Target& t) {
  if (g.schedule) fail(g, "the graph is already scheduled");
  std::set<std::string> symbols;
  for (const auto& s : g.size_symbols()) symbols.insert(s);
  remove_identity_reduces(g);  // a reduction over nothing is its input
  if (has_reduction(g)) return schedule_reduce(g, t);

  // (a), (b): layout over the loop axes, size-1 dims dropped, output order, contiguous merge.
  LoopLayout l = collect_layout(g);
  if (l.dims.empty()) {  // a rank-0 kernel: loop once over a size-1 axis
    int id = g.add_axis(unique_axis_name(g, "z0"), 1);
    l.dims.push_back({id});
    l.sizes.push_back(1);
    for (size_t k = 0; k < l.tensors.size(); ++k) {
      bool is_store = static_cast<int>(k) >= l.first_store;
      l.tensors[k].dims.push_back({1, is_store ? 1 : 0});
    }
  }
  drop_unit_dims(l);
  reorder_by_store(l);
  prefer_contiguous_load_inner(l, vector_lanes(t));
  merge_dims(l);
  std::vector<int> dim_axes;
  for (const auto& members : l.dims) dim_axes.push_back(dim_axis(g, members));

  // (c) tile split of the innermost dim.
  const int64_t lanes = vector_lanes(t);
  const int m = dim_axes.back();
  std::string tile_param = unique_symbol(symbols, g.axis(m).name + "t_size");
  auto [tile_outer, tile_inner] = split_axis(g, m, tile_param, true);
  sym::Expr tile = sym::Expr::symbol(tile_param);

  // (d) block split of (outer dims x tile_outer).
  std::vector<int> outer(dim_axes.begin(), dim_axes.end() - 1);
  outer.push_back(tile_outer);
  int x = outer.size() == 1 ? tile_outer : dim_axis(g, outer);
  std::string block_param = unique_symbol(symbols, g.axis(x).name + "b_size");
  auto [block_outer, block_inner] = split_axis(g, x, block_param, false);

  // (e), (f): every node on [block_outer, block_inner, tile_inner]; tensors rewritten.
  std::vector<bool> var = tile_variance(g, l, l.dims.back());
  std::vector<int> nest = {block_outer, block_inner, tile_inner};
  int64_t bytes_per_element = 0;
  for (const TensorLayout& tl : l.tensors) {
    AscNode& n = g.nodes[tl.node];
    n.out.axes = dim_axes;
    n.out.repeats.clear();
    n.out.strides.clear();
    for (const DimLayout& d : tl.dims) {
      n.out.repeats.push_back(d.repeat);
      n.out.strides.push_back(d.stride);
    }
    if (n.op == "store" || tl.dims.back().stride != sym::Expr(0))
      bytes_per_element += dtype_size(n.out.dtype);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    AscNode& n = g.nodes[i];
    n.sched_axes = nest;
    if (n.op == "data" || n.op == "store") continue;
    if (n.op == "output") {
      if (n.inputs.size() != 1) fail(g, "output %" + n.name + " needs one input");
      n.out.axes = g.nodes[n.inputs[0]].out.axes;
      n.out.repeats = g.nodes[n.inputs[0]].out.repeats;
      n.out.strides = g.nodes[n.inputs[0]].out.strides;
      n.out.offset = g.nodes[n.inputs[0]].out.offset;
    } else if (n.op == "scalar") {
      n.out.axes.clear();
      n.out.repeats.clear();
      n.out.strides.clear();
    } else {
      n.out.axes = {tile_inner};
      n.out.repeats = {var[i] ? tile : sym::Expr(1)};
      n.out.strides = {var[i] ? 1 : 0};
      n.out.offset = 0;
    }
  }

  ascir::ScheduleInfo s;
  s.tiling_key = 0;
  s.family = ascir::ScheduleFamily::Elementwise;
  s.tiling_cases = {ascir::TilingCase::Elementwise};
  s.block_axis = block_outer;
  s.vectorized_axis = tile_inner;
  s.ub_bytes = t.ub_bytes;
  s.bytes_per_element = std::max<int64_t>(1, bytes_per_element);
  s.params.push_back({tile_param, ascir::ParamRole::Tile, m, lanes});
  s.params.push_back({block_param, ascir::ParamRole::Block, x, 1});
  g.schedule = std::move(s);
}

}  // namespace af::schedule
