// The reduction TilingCases "reduce_inner" and "reduce_outer" (see reduce_schedule.h).
#include "schedule/reduce_schedule.h"

#include <algorithm>
#include <map>
#include <set>

#include "graph/op_registry.h"
#include "schedule/axis_merge.h"
#include "schedule/axis_split.h"
#include "schedule/reduce_plan.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace af::schedule {
namespace {

using ascir::AscGraph;
using ascir::AscNode;

[[noreturn]] void fail(const AscGraph& g, const std::string& what) {
  throw CompileError("schedule @" + g.name + ": " + what);
}

/// Values whose recomputation costs at most this (registry cost units, 1 = an add) are
/// recomputed in later passes rather than kept in the row buffer.
constexpr double kRecomputeCost = 3;

bool is_one(const sym::Expr& e) {
  return e == sym::Expr(1);
}

/// Whether node `n`'s value varies along any of `axes` (a repeat other than 1 there).
bool varies_along(const AscNode& n, const std::vector<int>& axes) {
  for (size_t k = 0; k < n.out.axes.size() && k < n.out.repeats.size(); ++k)
    if (std::count(axes.begin(), axes.end(), n.out.axes[k]) && !is_one(n.out.repeats[k]))
      return true;
  return false;
}

/// The axes reduce node `i` reduces: its input varies there, it does not.
std::vector<int> axes_reduced_by(const AscGraph& g, int i) {
  const AscNode& n = g.nodes[i];
  std::vector<int> out;
  if (n.inputs.size() != 1) fail(g, "reduce %" + n.name + " needs one input");
  const AscNode& in = g.nodes[n.inputs[0]];
  for (size_t k = 0; k < n.out.axes.size(); ++k) {
    if (!is_one(n.out.repeats.at(k))) continue;
    int ax = n.out.axes[k];
    if (varies_along(in, {ax})) out.push_back(ax);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string axis_set(const AscGraph& g, const std::vector<int>& axes) {
  std::string s = "{";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + g.axis(axes[i]).name;
  return s + "}";
}

/// The loop dims of a reduction kernel, ordered and merged, with their class (1 = reduced).
struct ReduceLayout {
  LoopLayout l;
  std::vector<int> cls;
  bool inner = false;
};

ReduceLayout analyze(const AscGraph& g, const std::vector<int>& reduced) {
  std::vector<int> loop;
  for (const auto& a : g.axes)
    if (a.kind == ascir::AxisKind::Original) loop.push_back(a.id);
  ReduceLayout r;
  r.l = collect_layout_over(g, loop, reduced);
  drop_unit_dims(r.l);
  for (const auto& members : r.l.dims)
    r.cls.push_back(std::count(reduced.begin(), reduced.end(), members[0]) ? 1 : 0);
  // The main input: the data tensor that varies along the most dims (the first of those).
  int ref = r.l.first_store, best = -1;
  for (int t = 0; t < r.l.first_store; ++t) {
    int varying = 0;
    for (const DimLayout& d : r.l.tensors[t].dims) varying += d.stride != sym::Expr(0);
    if (varying > best) best = varying, ref = t;
  }
  reorder_by_tensor(r.l, ref, &r.cls);
  merge_dims(r.l, &r.cls);
  r.inner = r.cls.back() == 1;
  return r;
}

/// Marks the full values that later passes read (the "all_load" row buffer) with attribute
/// row_buffer = slot: a value of stage s read by a full value of a later stage is written to the
/// buffer in pass s and read back afterwards instead of recomputed (x for x - mean, exp(x - max)
/// for softmax's division). Loads of tensors that are the same for every row (weights) are
/// re-read instead (a gather's rows differ: it is buffered like any load). Integer, bool and
/// f64 values are recomputed (the buffer holds f32). Returns the number of slots.
int64_t assign_row_buffer(AscGraph& g, const LoopLayout& l) {
  ReducePlan p = plan_reduce(g);
  if (p.passes < 2) return 0;
  std::vector<bool> per_row_input(g.nodes.size(), false);
  for (const TensorLayout& t : l.tensors) {
    bool varies = false;
    for (size_t d = 0; d + 1 < t.dims.size(); ++d)
      varies = varies || t.dims[d].stride != sym::Expr(0);
    per_row_input[t.node] = varies;
  }
  std::vector<bool> wanted(g.nodes.size(), false);
  for (size_t u = 0; u < g.nodes.size(); ++u) {
    const AscNode& n = g.nodes[u];
    if (!p.full[u] || graph::is_reduce_op(n.op) || n.op == "store") continue;
    for (int in : n.inputs) {
      while (g.nodes[in].op == "broadcast") in = g.nodes[in].inputs.at(0);  // an alias
      if (p.full[in] && p.stage[in] < p.stage[u] && g.nodes[in].op != "data") wanted[in] = true;
    }
  }
  // Recomputing a value from what a later pass has anyway (loads, row values, buffered values)
  // costs its ops (registry cost); a buffer slot costs a store and a load. Cheap values (x -
  // mean from a buffered x) are recomputed, expensive ones (exp(x - max)) buffered.
  std::vector<double> cost(g.nodes.size(), 0);
  std::vector<bool> slotted(g.nodes.size(), false);
  int64_t slots = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    const graph::OpDef* def = graph::find_op(n.op);
    bool available = n.op == "load" || n.op == "data" || !p.full[i] || graph::is_reduce_op(n.op);
    if (!available) {
      cost[i] = def ? def->cost : 1;
      for (int in : n.inputs)
        if (!slotted[in]) cost[i] += cost[in];
    }
    if (!wanted[i]) continue;
    bool is_input = n.op == "load" || (n.op == "cast" && g.nodes[n.inputs[0]].op == "load");
    if (!is_input && cost[i] <= kRecomputeCost) continue;
    // A weight (a load, through casts and broadcasts, of a tensor without per-row data) is
    // cheaper to re-read.
    int src = static_cast<int>(i);
    while (g.nodes[src].op == "cast" || g.nodes[src].op == "broadcast")
      src = g.nodes[src].inputs[0];
    if (g.nodes[src].op == "load" && g.nodes[src].inputs.size() == 1 &&
        !per_row_input[g.nodes[src].inputs[0]])
      continue;
    if (!(graph::mask_of(n.out.dtype) & graph::kF32LaneTypes)) continue;  // the buffer holds f32
    g.nodes[i].attrs["row_buffer"] = slots++;
    slotted[i] = true;
  }
  return slots;
}

/// Strength reduction of the row division (softmax's exp / sum, x / norm): div(a, broadcast(r))
/// with r a row value becomes mul(a, broadcast(reciprocal(r))), one division per row instead
/// of one per element (at most 1 ulp apart; eager's own softmax multiplies by the reciprocal).
void reciprocal_row_divisors(AscGraph& g, const std::vector<int>& reduced) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<AscNode> out;
  std::vector<int> index(n, -1);
  std::map<int, int> recip_of;  // row value (new index) -> broadcast of its reciprocal
  for (int i = 0; i < n; ++i) {
    AscNode node = std::move(g.nodes[i]);
    for (int& in : node.inputs) in = index[in];
    if (node.op == "div" && node.out.dtype == DType::F32 && varies_along(node, reduced)) {
      const AscNode b = out[node.inputs[1]];  // copies: `out` grows below
      int r = b.op == "broadcast" ? b.inputs[0] : -1;
      if (r >= 0 && !varies_along(out[r], reduced) && out[r].out.dtype == DType::F32) {
        auto it = recip_of.find(r);
        if (it == recip_of.end()) {
          AscNode rc = out[r];
          rc.name += ".recip";
          rc.op = "reciprocal";
          rc.inputs = {r};
          rc.attrs.clear();
          out.push_back(std::move(rc));
          AscNode bc = b;
          bc.name = b.name + ".recip";
          bc.inputs = {static_cast<int>(out.size()) - 1};
          out.push_back(std::move(bc));
          it = recip_of.emplace(r, static_cast<int>(out.size()) - 1).first;
        }
        node.op = "mul";
        node.inputs[1] = it->second;
      }
    }
    index[i] = static_cast<int>(out.size());
    out.push_back(std::move(node));
  }
  g.nodes = std::move(out);
}

}  // namespace

std::vector<int> reduced_axes(const AscGraph& g) {
  std::vector<int> axes;
  int first = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!graph::is_reduce_op(g.nodes[i].op)) continue;
    std::vector<int> mine = axes_reduced_by(g, static_cast<int>(i));
    if (mine.empty()) continue;  // a reduction over size-1 axes is the identity
    if (first < 0) {
      axes = mine;
      first = static_cast<int>(i);
    } else if (mine != axes) {
      fail(g, "reductions over different axes: %" + g.nodes[first].name + " reduces " +
                  axis_set(g, axes) + ", %" + g.nodes[i].name + " reduces " + axis_set(g, mine));
    }
  }
  return axes;
}

int remove_identity_reduces(AscGraph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> replace(n);
  int removed = 0;
  for (int i = 0; i < n; ++i) {
    replace[i] = i;
    if (graph::is_reduce_op(g.nodes[i].op) && axes_reduced_by(g, i).empty()) {
      replace[i] = replace[g.nodes[i].inputs.at(0)];
      ++removed;
    }
  }
  if (removed == 0) return 0;
  std::vector<int> index(n, -1);
  std::vector<AscNode> kept;
  for (int i = 0; i < n; ++i) {
    if (replace[i] != i) continue;
    AscNode node = std::move(g.nodes[i]);
    for (int& in : node.inputs) in = index[replace[in]];
    index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(node));
  }
  g.nodes = std::move(kept);
  return removed;
}

bool has_reduction(const AscGraph& g) {
  return !reduced_axes(g).empty();
}

std::optional<std::string> reduce_unsupported_reason(const AscGraph& g) {
  try {
    std::vector<int> reduced = reduced_axes(g);  // throws: reductions over different axes
    if (!reduced.empty()) analyze(g, reduced);   // throws: no loop layout
  } catch (const CompileError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

void schedule_reduce(AscGraph& g, const target::Target& t) {
  if (g.schedule) fail(g, "the graph is already scheduled");
  const std::vector<int> reduced = reduced_axes(g);
  if (reduced.empty()) fail(g, "the kernel has no reduction");
  reciprocal_row_divisors(g, reduced);  // renumbers nodes: before any node index is taken
  ReduceLayout rl = analyze(g, reduced);
  std::set<std::string> symbols;
  for (const auto& s : g.size_symbols()) symbols.insert(s);

  // Classify on the unscheduled tensors: full values vary along a reduced axis.
  const size_t n = g.nodes.size();
  std::vector<bool> full(n, false);
  for (size_t i = 0; i < n; ++i) {
    const AscNode& node = g.nodes[i];
    if (node.op == "data")
      full[i] = true;
    else if (graph::is_reduce_op(node.op))
      full[i] = true;  // consumes the row inside the passes
    else if (node.op == "store")
      full[i] = varies_along(g.nodes[node.inputs.at(0)], reduced);
    else if (node.op == "output")
      full[i] = full[node.inputs.at(0)];
    else
      full[i] = varies_along(node, reduced);
  }
  std::vector<int> dim_axes;
  for (const auto& members : rl.l.dims) dim_axes.push_back(dim_axis(g, members));
  const int64_t lanes = vector_lanes(t);
  const std::vector<int> vec_members = rl.l.dims.back();
  std::vector<bool> lane_var(n, false);
  for (size_t i = 0; i < n; ++i) lane_var[i] = varies_along(g.nodes[i], vec_members);

  ascir::ScheduleInfo s;
  std::vector<int> full_nest, row_nest;
  std::vector<int> kept, outer_reduced;  // the dims before the innermost, by class
  for (size_t d = 0; d + 1 < dim_axes.size(); ++d)
    (rl.cls[d] == 0 ? kept : outer_reduced).push_back(dim_axes[d]);
  const int v = dim_axes.back();
  std::string tile_param = unique_symbol(symbols, g.axis(v).name + "t_size");
  auto [v_outer, v_inner] = split_axis(g, v, tile_param, true);
  if (rl.inner) {
    int x = kept.empty() ? g.add_axis(unique_axis_name(g, "row"), 1)
                         : (kept.size() == 1 ? kept[0] : dim_axis(g, kept));
    std::string block_param = unique_symbol(symbols, g.axis(x).name + "b_size");
    auto [xb_outer, xb_inner] = split_axis(g, x, block_param, false);
    full_nest = {xb_outer, xb_inner};
    full_nest.insert(full_nest.end(), outer_reduced.begin(), outer_reduced.end());
    full_nest.insert(full_nest.end(), {v_outer, v_inner});
    row_nest = {xb_outer, xb_inner};
    s.family = ascir::ScheduleFamily::ReduceInner;
    s.block_axis = xb_outer;
    s.params.push_back({tile_param, ascir::ParamRole::Tile, v, lanes});
    s.params.push_back({block_param, ascir::ParamRole::Block, x, 1});
  } else {
    kept.push_back(v_outer);
    int x = kept.size() == 1 ? kept[0] : dim_axis(g, kept);
    std::string block_param = unique_symbol(symbols, g.axis(x).name + "b_size");
    auto [xb_outer, xb_inner] = split_axis(g, x, block_param, false);
    full_nest = {xb_outer, xb_inner};
    full_nest.insert(full_nest.end(), outer_reduced.begin(), outer_reduced.end());
    full_nest.push_back(v_inner);
    row_nest = {xb_outer, xb_inner, v_inner};
    s.family = ascir::ScheduleFamily::ReduceOuter;
    s.tiling_cases = {ascir::TilingCase::ReduceOuter};
    s.block_axis = xb_outer;
    s.params.push_back({tile_param, ascir::ParamRole::Tile, v, lanes});
    s.params.push_back({block_param, ascir::ParamRole::Block, x, 1});
  }
  s.vectorized_axis = v_inner;
  const sym::Expr tile = sym::Expr::symbol(tile_param);

  // Rewrite every node onto its nest: global tensors over the dim axes, the others one tile.
  for (const TensorLayout& tl : rl.l.tensors) {
    AscNode& node = g.nodes[tl.node];
    node.out.axes = dim_axes;
    node.out.repeats.clear();
    node.out.strides.clear();
    for (const DimLayout& d : tl.dims) {
      node.out.repeats.push_back(d.repeat);
      node.out.strides.push_back(d.stride);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    AscNode& node = g.nodes[i];
    node.sched_axes = full[i] ? full_nest : row_nest;
    if (node.op == "data" || node.op == "store") continue;
    if (node.op == "output") {
      const AscNode& st = g.nodes[node.inputs.at(0)];
      node.sched_axes = st.sched_axes;
      node.out.axes = st.out.axes;
      node.out.repeats = st.out.repeats;
      node.out.strides = st.out.strides;
      node.out.offset = st.out.offset;
    } else if (node.op == "scalar") {
      node.sched_axes = row_nest;
      node.out.axes.clear();
      node.out.repeats.clear();
      node.out.strides.clear();
    } else {
      node.out.axes = {v_inner};
      node.out.repeats = {lane_var[i] ? tile : sym::Expr(1)};
      node.out.strides = {lane_var[i] ? 1 : 0};
      node.out.offset = 0;
    }
  }
  s.ub_bytes = t.reduce_buffer_bytes;
  if (rl.inner) {
    // A row over several dims (reduced dims around a kept one) re-reads its inputs each pass.
    int64_t slots = outer_reduced.empty() ? assign_row_buffer(g, rl.l) : 0;
    s.bytes_per_element = 4 * slots;
    if (slots > 0) {
      s.tiling_cases = {ascir::TilingCase::ReduceInnerAllLoad, ascir::TilingCase::ReduceInnerSplit};
      // A static row length decides the case now (the tiling function decides the same way).
      auto len = g.axis(g.axis(s.vectorized_axis).from.at(0)).size.as_const();
      if (len && *len * s.bytes_per_element > s.ub_bytes) s.tiling_key = 1;
    } else {
      s.tiling_cases = {ascir::TilingCase::ReduceInner};
    }
  }
  g.schedule = std::move(s);
}

}  // namespace af::schedule
