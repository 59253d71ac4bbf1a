// Axis embedding of two kernels (see embed.h).
#include "fusion/embed.h"

#include <algorithm>
#include <functional>
#include <set>

#include "fusion/steps.h"
#include "support/error.h"

namespace af::fusion {
namespace {

/// The kernel's original axis ids in order; throws when a derived axis exists (fusion runs
/// before scheduling).
std::vector<int> original_ids(const FusedNode& k) {
  std::vector<int> ids;
  for (const ascir::Axis& x : k.kernel.axes) {
    if (x.kind != ascir::AxisKind::Original)
      throw CompileError("kernel " + k.name + ": axis " + x.name +
                         " is not original (fusion runs before scheduling)");
    ids.push_back(x.id);
  }
  return ids;
}

int64_t index_attr(const ascir::AscNode& n) {
  auto it = n.attrs.find("index");
  if (it == n.attrs.end() || !std::holds_alternative<int64_t>(it->second))
    throw CompileError("ascir node %" + n.name + " (" + n.op + ") has no integer index");
  return std::get<int64_t>(it->second);
}

/// One side of the pairing: axis ids in order, their sizes, and the partner per position.
struct Side {
  std::vector<int> ids;
  std::vector<sym::Expr> sizes;
  std::vector<int> partner;  // position on the other side, -1 when unpaired

  explicit Side(const FusedNode& k) : ids(original_ids(k)), partner(ids.size(), -1) {
    for (int id : ids) sizes.push_back(k.kernel.axis(id).size);
  }
  int pos(int id) const {
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end()) throw CompileError("axis id " + std::to_string(id) + " not in kernel");
    return static_cast<int>(it - ids.begin());
  }
};

bool is_one(const sym::Expr& e) {
  return e == sym::Expr(1);
}

/// Pairs still-unpaired positions of a and b between consecutive pairs (so the pairs stay in
/// order), in order, where `fits(size_a, size_b)`.
void complete(Side& a, Side& b,
              const std::function<bool(const sym::Expr&, const sym::Expr&)>& fits) {
  int lo_a = 0, lo_b = 0;
  const int na = static_cast<int>(a.ids.size()), nb = static_cast<int>(b.ids.size());
  while (lo_a <= na && lo_b <= nb) {
    // The next existing pair (or the end) bounds this segment.
    int hi_a = lo_a;
    while (hi_a < na && a.partner[hi_a] < 0) ++hi_a;
    int hi_b = hi_a < na ? a.partner[hi_a] : nb;
    int j = lo_b;
    for (int i = lo_a; i < hi_a; ++i)
      for (int k = j; k < hi_b; ++k)
        if (b.partner[k] < 0 && fits(a.sizes[i], b.sizes[k])) {
          a.partner[i] = k;
          b.partner[k] = i;
          j = k + 1;
          break;
        }
    lo_a = hi_a + 1;
    lo_b = hi_b + 1;
  }
}

}  // namespace

std::vector<int> input_value_axes(const FusedNode& kernel, size_t i, const graph::Graph& g) {
  if (!kernel.input_axes.empty()) return kernel.input_axes.at(i);
  std::vector<int> ids = original_ids(kernel);
  size_t rank = g.nodes.at(kernel.inputs.at(i)).type.rank();
  if (rank > ids.size())
    throw CompileError("kernel " + kernel.name + " reads %" + g.nodes[kernel.inputs[i]].name +
                       " of rank " + std::to_string(rank) + " over " + std::to_string(ids.size()) +
                       " axes");
  return std::vector<int>(ids.end() - static_cast<std::ptrdiff_t>(rank), ids.end());
}

std::vector<int> output_value_axes(const FusedNode& kernel, int value, const graph::Graph& g) {
  for (int o : kernel.kernel.output_nodes()) {
    const ascir::AscNode& out = kernel.kernel.nodes[o];
    if (kernel.outputs.at(static_cast<size_t>(index_attr(out))) == value)
      return kernel.kernel.nodes.at(out.inputs.at(0)).out.axes;
  }
  throw CompileError("kernel " + kernel.name + " does not store %" + g.nodes.at(value).name);
}

AxisEmbedding embed_axes(const FusedGraph& fg, int a, int b) {
  const FusedNode& ka = fg.nodes.at(a);
  const FusedNode& kb = fg.nodes.at(b);
  Side sa(ka), sb(kb);
  AxisEmbedding e;
  const std::string differ =
      "different loop axes " + loop_axes_str(ka.kernel) + " vs " + loop_axes_str(kb.kernel);
  auto fail = [&]() {
    e.ok = false;
    e.reason = differ;
    return e;
  };
  // Pair through every value b reads from a.
  std::set<int> made(ka.ops.begin(), ka.ops.end());
  bool flows = false;
  for (size_t i = 0; i < kb.inputs.size(); ++i) {
    int v = kb.inputs[i];
    if (!made.count(v)) continue;
    flows = true;
    std::vector<int> xa = output_value_axes(ka, v, fg.source);
    std::vector<int> xb = input_value_axes(kb, i, fg.source);
    if (xa.size() != xb.size())
      throw CompileError("kernels " + ka.name + ", " + kb.name + " disagree on the rank of %" +
                         fg.source.nodes[v].name);
    for (size_t d = 0; d < xa.size(); ++d) {
      int pa = sa.pos(xa[d]), pb = sb.pos(xb[d]);
      if (sa.partner[pa] == pb) continue;
      if (sa.partner[pa] >= 0 || sb.partner[pb] >= 0) return fail();
      const sym::Expr &x = sa.sizes[pa], &y = sb.sizes[pb];
      if (x != y && !is_one(x) && !is_one(y)) return fail();
      sa.partner[pa] = pb;
      sb.partner[pb] = pa;
    }
  }
  if (!flows) {
    // Siblings: no value lines their axes up; they need the same loop axes.
    if (!same_loop_axes(ka.kernel, kb.kernel)) return fail();
    for (size_t i = 0; i < sa.ids.size(); ++i) sa.partner[i] = sb.partner[i] = static_cast<int>(i);
  }
  // The pairs must keep the axis order on both sides.
  int last = -1;
  for (int p : sa.partner) {
    if (p < 0) continue;
    if (p < last) return fail();
    last = p;
  }
  complete(sa, sb, [](const sym::Expr& x, const sym::Expr& y) { return x == y; });
  complete(sa, sb, [](const sym::Expr& x, const sym::Expr& y) { return is_one(x) || is_one(y); });
  // The host: every axis of the other side pairs with one of its axes, equal or of size 1.
  auto hosts = [](const Side& host, const Side& guest) {
    for (size_t g = 0; g < guest.ids.size(); ++g) {
      int h = guest.partner[g];
      if (h < 0) return false;
      if (guest.sizes[g] != host.sizes[h] && !is_one(guest.sizes[g])) return false;
    }
    return true;
  };
  bool a_hosts = hosts(sa, sb), b_hosts = hosts(sb, sa);
  if (!a_hosts && !b_hosts) return fail();
  e.ok = true;
  e.a_is_host = a_hosts;
  e.same_nest = a_hosts && b_hosts;
  const Side& host = a_hosts ? sa : sb;
  const Side& guest = a_hosts ? sb : sa;
  std::map<int, int>& host_map = a_hosts ? e.a_to_host : e.b_to_host;
  std::map<int, int>& guest_map = a_hosts ? e.b_to_host : e.a_to_host;
  for (int id : host.ids) host_map[id] = id;
  for (size_t g = 0; g < guest.ids.size(); ++g)
    guest_map[guest.ids[g]] = host.ids[guest.partner[g]];
  for (size_t h = 0; h < host.ids.size(); ++h) {
    if (is_one(host.sizes[h])) continue;
    int g = host.partner[h];
    if (g < 0 || is_one(guest.sizes[g])) e.smaller.push_back(host.ids[h]);
  }
  return e;
}

}  // namespace af::fusion
