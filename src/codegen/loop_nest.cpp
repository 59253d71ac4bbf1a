// The loop-nest analysis every emitter shares (loop_nest.h).
#include "codegen/loop_nest.h"

#include <cctype>

#include "ascir/printer.h"
#include "graph/attr.h"
#include "support/error.h"

namespace af::codegen {
using ascir::AscGraph;
using ascir::AscNode;
using ascir::AxisKind;

[[noreturn]] void codegen_fail(const AscGraph& g, const std::string& what) {
  throw CompileError("codegen @" + g.name + ": " + what);
}

std::string c_ident(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return out;
}

std::string kernel_c_name(const std::string& name) {
  std::string out = c_ident(name);
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

std::string ir_comment(const AscGraph& g) {
  std::string text = ascir::print(g), out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "// " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string index_attr(const AscNode& n) {
  auto it = n.attrs.find("index");
  return it == n.attrs.end() ? "?" : attr_str(it->second);
}

std::vector<int> reduced_loops(const KernelContext& k) {
  if (!ascir::is_reduce(k.g->schedule->family)) return {};
  // After [XB, Xb]; before [rT, rt] (reduce_inner) or [vt] (reduce_outer).
  size_t tail = k.g->schedule->family == ascir::ScheduleFamily::ReduceInner ? 2 : 1;
  if (k.nest.size() < 2 + tail) return {};
  return std::vector<int>(k.nest.begin() + 2, k.nest.end() - static_cast<std::ptrdiff_t>(tail));
}

std::string cpp_expr(const KernelContext& k, const sym::Expr& e) {
  return e.cpp([&](const std::string& name) -> std::string {
    auto it = k.sym_var.find(name);
    if (it == k.sym_var.end())
      throw CompileError("codegen @" + k.g->name + ": unknown size symbol '" + name + "'");
    return it->second;
  });
}

KernelContext analyze_kernel(const AscGraph& g, const std::string& c_name) {
  KernelContext k;
  k.g = &g;
  k.name = c_name;
  if (!g.schedule)
    codegen_fail(g, "the graph is not scheduled (run schedule::schedule_kernel first)");
  const ascir::ScheduleInfo& s = *g.schedule;
  const bool reduce = ascir::is_reduce(s.family);
  const ascir::TilingParam* tile = nullptr;
  const ascir::TilingParam* block = nullptr;
  for (const auto& p : s.params) {
    if (p.role == ascir::ParamRole::Tile) tile = &p;
    if (p.role == ascir::ParamRole::Block) block = &p;
  }
  if (!tile || !block) codegen_fail(g, "the schedule needs one tile and one block parameter");
  k.tile_param = tile->name;
  k.block_param = block->name;
  k.vec = s.vectorized_axis;
  k.block_outer = s.block_axis;
  if (k.vec < 0 || g.axis(k.vec).kind != AxisKind::TileInner || g.axis(k.vec).from.size() != 1)
    codegen_fail(g, "the vectorized axis must be a tile_inner axis");
  k.vec_parent = g.axis(k.vec).from[0];
  if (tile->axis != k.vec_parent || g.axis(k.vec).size != sym::Expr::symbol(tile->name))
    codegen_fail(g, "tile parameter " + tile->name + " does not size the vectorized axis");
  for (const auto& a : g.axes)
    if (a.kind == AxisKind::TileOuter && a.from.size() == 1 && a.from[0] == k.vec_parent)
      k.tile_outer = a.id;
  if (k.tile_outer < 0) codegen_fail(g, "the vectorized axis has no tile_outer sibling");
  if (k.block_outer < 0 || g.axis(k.block_outer).kind != AxisKind::BlockOuter)
    codegen_fail(g, "the block axis must be a block_outer axis");
  k.block_parent = g.axis(k.block_outer).from.at(0);
  if (block->axis != k.block_parent)
    codegen_fail(g, "block parameter " + block->name + " splits another axis");

  if (g.nodes.empty()) codegen_fail(g, "the kernel has no nodes");
  k.nest = g.nodes[0].sched_axes;
  for (const auto& n : g.nodes) {
    if (reduce && n.sched_axes.size() > k.nest.size()) k.nest = n.sched_axes;
    if (!reduce && n.sched_axes != k.nest)
      codegen_fail(g, "%" + n.name + " is not on the kernel's loop nest");
  }
  if (reduce && k.nest.size() >= 3) {
    // Row values run on [block_outer, block_inner] (+ the vectorized axis for reduce_outer).
    std::vector<int> row = {k.nest[0], k.nest[1]};
    if (s.family == ascir::ScheduleFamily::ReduceOuter) row.push_back(k.nest.back());
    for (const auto& n : g.nodes)
      if (n.sched_axes != k.nest && n.sched_axes != row)
        codegen_fail(g, "%" + n.name + " is neither on the row nest nor on the full loop nest");
  }
  if (k.nest.size() < 2 || k.nest.front() != k.block_outer || k.nest.back() != k.vec)
    codegen_fail(g, "the loop nest must start at the block axis and end at the vectorized axis");

  std::set<std::string> all;
  for (const auto& sname : g.size_symbols()) all.insert(sname);
  all.insert(k.tile_param);
  all.insert(k.block_param);
  std::set<std::string> vars;
  for (const auto& sname : all) {
    std::string var = "sym_" + c_ident(sname);
    if (!vars.insert(var).second) codegen_fail(g, "size symbols collide as C name " + var);
    k.sym_var[sname] = var;
    if (sname != k.tile_param && sname != k.block_param) k.size_symbols.push_back(sname);
  }
  for (const auto& n : g.nodes) {
    if (n.op == "data") ++k.num_inputs;
    if (n.op == "output") ++k.num_outputs;
  }
  if (reduce) k.plan = schedule::plan_reduce(g);
  return k;
}

std::string loop_extent(const KernelContext& k, IndexDeriver& idx, int a) {
  const AscGraph& g = *k.g;
  const auto& ax = g.axis(a);
  if ((ax.kind != AxisKind::TileInner && ax.kind != AxisKind::BlockInner) || ax.from.size() != 1)
    return size_var(a);
  int parent = ax.from[0];
  AxisKind outer_kind = ax.kind == AxisKind::TileInner ? AxisKind::TileOuter : AxisKind::BlockOuter;
  for (const auto& o : g.axes)
    if (o.kind == outer_kind && o.from.size() == 1 && o.from[0] == parent) {
      auto oi = idx.get(o.id);
      if (!oi)
        codegen_fail(g, "cannot derive the index of axis " + o.name + " at the loop of " + ax.name);
      return "af_min(" + size_var(a) + ", " + size_var(parent) + " - " + *oi + " * " + size_var(a) +
             ")";
    }
  return size_var(a);
}

sym::Expr lane_stride(const KernelContext& k, const AscNode& n) {
  sym::Expr s = 0;
  for (size_t d = 0; d < n.out.axes.size(); ++d)
    if (n.out.axes[d] == k.vec || n.out.axes[d] == k.vec_parent) s = s + n.out.strides[d];
  return s;
}

std::string tile_base_offset(const KernelContext& k, IndexDeriver& idx, const AscNode& n) {
  const AscGraph& g = *k.g;
  std::string e = cpp_expr(k, n.out.offset);
  for (size_t d = 0; d < n.out.axes.size(); ++d) {
    int a = n.out.axes[d];
    if (n.out.strides[d] == sym::Expr(0)) continue;
    auto i = idx.get(a);
    if (!i)
      codegen_fail(g, "%" + n.name + ": cannot derive the index of axis " + g.axis(a).name +
                          " from the loop nest");
    bool linear = a == k.vec || idx.split_with_inner(a, k.vec);
    if (idx.uses_vec(a) && !linear)
      codegen_fail(
          g, "%" + n.name + ": axis " + g.axis(a).name + " is not linear in the vectorized axis");
    if (*i == "0") continue;
    e += " + " + *i + " * " + cpp_expr(k, n.out.strides[d]);
  }
  return e;
}

}  // namespace af::codegen
