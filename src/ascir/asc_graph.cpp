// AscGraph accessors: axis lookup and creation, node creation, kernel inputs/outputs, symbols.
#include "ascir/asc_graph.h"

#include <algorithm>
#include <limits>
#include <set>

#include "support/error.h"

namespace af::ascir {
namespace {

// The `index` attribute of a data/output node, or INT64_MAX when absent or not an integer.
int64_t index_of(const AscNode& n) {
  auto it = n.attrs.find("index");
  if (it == n.attrs.end() || !std::holds_alternative<int64_t>(it->second))
    return std::numeric_limits<int64_t>::max();
  return std::get<int64_t>(it->second);
}

std::vector<int> nodes_by_index(const AscGraph& g, std::string_view op) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].op == op) out.push_back(i);
  std::stable_sort(out.begin(), out.end(),
                   [&](int a, int b) { return index_of(g.nodes[a]) < index_of(g.nodes[b]); });
  return out;
}

}  // namespace

bool is_compute(const std::string& op) {
  return op != "data" && op != "load" && op != "store" && op != "output" && op != "scalar";
}

std::string_view axis_kind_name(AxisKind k) {
  switch (k) {
    case AxisKind::Original: return "original";
    case AxisKind::Merged: return "merged";
    case AxisKind::TileOuter: return "tile_outer";
    case AxisKind::TileInner: return "tile_inner";
    case AxisKind::BlockOuter: return "block_outer";
    case AxisKind::BlockInner: return "block_inner";
  }
  return "?";
}

const Axis& AscGraph::axis(int id) const {
  for (const Axis& a : axes)
    if (a.id == id) return a;
  throw CompileError("ascgraph @" + name + ": unknown axis id " + std::to_string(id));
}

Axis& AscGraph::axis(int id) {
  return const_cast<Axis&>(static_cast<const AscGraph&>(*this).axis(id));
}

int AscGraph::add_axis(std::string axis_name, sym::Expr size, AxisKind kind,
                       std::vector<int> from) {
  int id = 0;
  for (const Axis& a : axes) id = std::max(id, a.id + 1);
  axes.push_back(Axis{id, std::move(axis_name), std::move(size), kind, std::move(from)});
  return id;
}

int AscGraph::add_node(AscNode n) {
  nodes.push_back(std::move(n));
  return static_cast<int>(nodes.size()) - 1;
}

std::vector<int> AscGraph::data_nodes() const {
  return nodes_by_index(*this, "data");
}

int64_t AscGraph::bytes_moved(const sym::Bindings& hints) const {
  int64_t total = 0;
  for (const AscNode& n : nodes)
    if (n.op == "data" || n.op == "store")
      total +=
          sym::addressed_elements(n.out.repeats, n.out.strides, hints) * dtype_size(n.out.dtype);
  return total;
}

std::vector<int> AscGraph::output_nodes() const {
  return nodes_by_index(*this, "output");
}

std::vector<std::string> AscGraph::size_symbols() const {
  std::set<std::string> syms;
  auto add = [&](const sym::Expr& e) {
    for (auto& s : e.symbols()) syms.insert(s);
  };
  for (const Axis& a : axes) add(a.size);
  for (const AscNode& n : nodes) {
    for (auto& e : n.out.repeats) add(e);
    for (auto& e : n.out.strides) add(e);
    add(n.out.offset);
  }
  return {syms.begin(), syms.end()};
}

}  // namespace af::ascir
