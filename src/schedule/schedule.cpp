// The Schedule pass, TilingCase "elementwise": layout analysis (axis_merge.h), then the tile and
// block splits and the rewrite of every node onto the scheduled loop nest.
#include "schedule/schedule.h"

#include <algorithm>
#include <set>

#include "schedule/axis_merge.h"
#include "support/error.h"

namespace af::schedule {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using ascir::AxisKind;

[[noreturn]] void fail(const AscGraph& g, const std::string& what) {
  throw CompileError("schedule @" + g.name + ": " + what);
}

/// `base`, or `base_1`, `base_2`, ... if an axis already has that name.
std::string unique_axis_name(const AscGraph& g, const std::string& base) {
  auto taken = [&](const std::string& n) {
    return std::any_of(g.axes.begin(), g.axes.end(), [&](const auto& a) { return a.name == n; });
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i)
    if (!taken(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

/// `base`, or `base_1`, ... if a size symbol of the graph already has that name.
std::string unique_symbol(const std::set<std::string>& taken, const std::string& base) {
  if (!taken.count(base)) return base;
  for (int i = 1;; ++i)
    if (!taken.count(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

std::string joined_names(const AscGraph& g, const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) s += g.axis(id).name;
  return s;
}

sym::Expr size_product(const AscGraph& g, const std::vector<int>& ids) {
  sym::Expr p = 1;
  for (int id : ids) p = p * g.axis(id).size;
  return p;
}

/// The axis standing for loop dim `members`: the axis itself, or a new merged axis.
int dim_axis(AscGraph& g, const std::vector<int>& members) {
  if (members.size() == 1) return members[0];
  sym::Expr size = size_product(g, members);
  return g.add_axis(unique_axis_name(g, joined_names(g, members)), size, AxisKind::Merged, members);
}

/// For each node: does its tile vary along the vectorized dim (whose original axes are
/// `vec_members`)? Loads follow their data's stride there, broadcasts also vary when they
/// expand along it, scalars never do, everything else varies when an input does.
std::vector<bool> tile_variance(const AscGraph& g, const LoopLayout& l,
                                const std::vector<int>& vec_members) {
  std::vector<bool> lane_stride_nonzero(g.nodes.size(), false);
  for (const TensorLayout& t : l.tensors)
    lane_stride_nonzero[t.node] = t.dims.back().stride != sym::Expr(0);
  std::vector<bool> var(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    if (n.op == "data" || n.op == "scalar") continue;
    if (n.op == "load") {
      var[i] = lane_stride_nonzero[n.inputs[0]];
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

int64_t vector_lanes(const Target& t) {
  return std::max<int64_t>(1, t.vector_bytes / 4);
}

void schedule_kernel(AscGraph& g, const Target& t) {
  if (g.schedule) fail(g, "the graph is already scheduled");
  std::set<std::string> symbols;
  for (const auto& s : g.size_symbols()) symbols.insert(s);

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
  merge_dims(l);
  std::vector<int> dim_axes;
  for (const auto& members : l.dims) dim_axes.push_back(dim_axis(g, members));

  // (c) tile split of the innermost dim.
  const int64_t lanes = vector_lanes(t);
  const int m = dim_axes.back();
  const std::string m_name = g.axis(m).name;
  const sym::Expr m_size = g.axis(m).size;
  std::string tile_param = unique_symbol(symbols, m_name + "t_size");
  symbols.insert(tile_param);
  sym::Expr tile = sym::Expr::symbol(tile_param);
  int tile_outer = g.add_axis(unique_axis_name(g, m_name + "T"), sym::Expr::ceildiv(m_size, tile),
                              AxisKind::TileOuter, {m});
  int tile_inner = g.add_axis(unique_axis_name(g, m_name + "t"), tile, AxisKind::TileInner, {m});

  // (d) block split of (outer dims x tile_outer).
  std::vector<int> outer(dim_axes.begin(), dim_axes.end() - 1);
  outer.push_back(tile_outer);
  int x = outer.size() == 1 ? tile_outer : dim_axis(g, outer);
  const std::string x_name = g.axis(x).name;
  const sym::Expr x_size = g.axis(x).size;
  std::string block_param = unique_symbol(symbols, x_name + "b_size");
  sym::Expr block = sym::Expr::symbol(block_param);
  int block_outer = g.add_axis(unique_axis_name(g, x_name + "B"), sym::Expr::ceildiv(x_size, block),
                               AxisKind::BlockOuter, {x});
  int block_inner = g.add_axis(unique_axis_name(g, x_name + "b"), block, AxisKind::BlockInner, {x});

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
  s.case_name = "elementwise";
  s.block_axis = block_outer;
  s.vectorized_axis = tile_inner;
  s.ub_bytes = t.ub_bytes;
  s.bytes_per_element = std::max<int64_t>(1, bytes_per_element);
  s.params.push_back({tile_param, "tile", m, lanes});
  s.params.push_back({block_param, "block", x, 1});
  g.schedule = std::move(s);
}

}  // namespace af::schedule
