// Loop layout analysis: collect, drop size-1 dims, reorder by the output, merge contiguous dims.
#include "schedule/axis_merge.h"

#include <algorithm>
#include <climits>
#include <numeric>

#include "support/error.h"

namespace af::schedule {
namespace {

[[noreturn]] void fail(const ascir::AscGraph& g, const std::string& what) {
  throw CompileError("schedule @" + g.name + ": " + what);
}

bool is_one(const sym::Expr& e) {
  return e == sym::Expr(1);
}

/// `l` restricted to the loop dims `dims`, in that order (every tensor follows).
LoopLayout select_dims(const LoopLayout& l, const std::vector<size_t>& dims) {
  LoopLayout out;
  out.first_store = l.first_store;
  for (size_t d : dims) {
    out.dims.push_back(l.dims[d]);
    out.sizes.push_back(l.sizes[d]);
  }
  for (const TensorLayout& t : l.tensors) {
    TensorLayout nt;
    nt.node = t.node;
    for (size_t d : dims) nt.dims.push_back(t.dims[d]);
    out.tensors.push_back(std::move(nt));
  }
  return out;
}

/// The layout of node `n` over `loop`; missing axes are broadcast (repeat 1, stride 0). A store
/// may skip (repeat 1, stride 0) the axes of `row_axes`.
TensorLayout layout_of(const ascir::AscGraph& g, int node, const std::vector<int>& loop,
                       const std::vector<int>& row_axes = {}) {
  const ascir::AscNode& n = g.nodes[node];
  const ascir::AscTensor& t = n.out;
  for (int ax : t.axes)
    if (std::find(loop.begin(), loop.end(), ax) == loop.end())
      fail(g, "%" + n.name + " (" + n.op + ") has axis " + g.axis(ax).name +
                  ", which is not a loop axis of the stores");
  bool is_store = n.op == "store";
  TensorLayout out;
  out.node = node;
  for (int ax : loop) {
    const sym::Expr& size = g.axis(ax).size;
    auto it = std::find(t.axes.begin(), t.axes.end(), ax);
    bool row_axis = std::count(row_axes.begin(), row_axes.end(), ax) > 0;
    if (it == t.axes.end()) {
      if (is_store && !is_one(size) && !row_axis)
        fail(g,
             "store %" + n.name + " lacks loop axis " + g.axis(ax).name + " of size " + size.str());
      out.dims.push_back({1, 0});
      continue;
    }
    size_t k = static_cast<size_t>(it - t.axes.begin());
    sym::Expr repeat = t.repeats[k], stride = t.strides[k];
    if (repeat != size && !is_one(repeat))
      fail(g, "%" + n.name + " (" + n.op + ") has repeat " + repeat.str() + " on axis " +
                  g.axis(ax).name + " of size " + size.str() + " (must be the size or 1)");
    if (is_store && row_axis && is_one(repeat)) stride = 0;  // written once per row
    if (is_store && repeat != size && !(row_axis && is_one(repeat)))
      fail(g, "store %" + n.name + " has repeat " + repeat.str() + " on axis " + g.axis(ax).name +
                  " of size " + size.str() + "; a store covers its loop axes");
    if (!is_store && is_one(repeat)) stride = 0;  // a broadcast dim reads one element
    out.dims.push_back({repeat, stride});
  }
  return out;
}

/// The stride at a large value of every symbol (256: products of up to 7 symbols fit in int64):
/// orders dense layouts the way any real sizes would.
int64_t order_key(const sym::Expr& e) {
  sym::Bindings b;
  for (const auto& s : e.symbols()) b[s] = 256;
  return e.eval(b);
}

}  // namespace

LoopLayout collect_layout(const ascir::AscGraph& g) {
  int first = -1;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].op == "store") {
      first = i;
      break;
    }
  if (first < 0) fail(g, "the kernel has no store");
  const ascir::AscNode& store = g.nodes[first];
  std::vector<int> loop = store.sched_axes.empty() ? store.out.axes : store.sched_axes;
  for (size_t i = 0; i < loop.size(); ++i) {
    g.axis(loop[i]);  // throws for a missing axis
    if (std::count(loop.begin(), loop.end(), loop[i]) != 1)
      fail(g, "store %" + store.name + " repeats loop axis " + g.axis(loop[i]).name);
  }
  for (const ascir::AscNode& n : g.nodes)
    if (n.op == "store" && !n.sched_axes.empty() && n.sched_axes != loop)
      fail(g, "stores %" + store.name + " and %" + n.name + " have different loop axes");

  LoopLayout l;
  for (int ax : loop) {
    l.dims.push_back({ax});
    l.sizes.push_back(g.axis(ax).size);
  }
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].op == "data") l.tensors.push_back(layout_of(g, i, loop));
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].op == "store") {
      if (i == first) l.first_store = static_cast<int>(l.tensors.size());
      l.tensors.push_back(layout_of(g, i, loop));
    }
  return l;
}

void drop_unit_dims(LoopLayout& l) {
  std::vector<size_t> keep;
  for (size_t d = 0; d < l.dims.size(); ++d)
    if (!is_one(l.sizes[d])) keep.push_back(d);
  if (keep.empty() && !l.dims.empty()) keep.push_back(l.dims.size() - 1);
  LoopLayout out = select_dims(l, keep);
  // A kept size-1 dim: data read element 0 (stride 0), stores write it (stride 1).
  for (size_t d = 0; d < out.dims.size(); ++d) {
    if (!is_one(out.sizes[d])) continue;
    for (size_t t = 0; t < out.tensors.size(); ++t) {
      bool is_store = l.first_store >= 0 && static_cast<int>(t) >= l.first_store;
      out.tensors[t].dims[d] = {1, is_store ? sym::Expr(1) : sym::Expr(0)};
    }
  }
  l = std::move(out);
}

void reorder_by_store(LoopLayout& l) {
  if (l.first_store < 0 || l.dims.size() < 2) return;
  const TensorLayout& store = l.tensors[l.first_store];
  std::vector<int64_t> key;
  for (const DimLayout& d : store.dims) key.push_back(order_key(d.stride));
  std::vector<size_t> order(l.dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
  l = select_dims(l, order);
}

void prefer_contiguous_load_inner(LoopLayout& l, int64_t lanes) {
  if (l.first_store < 0 || l.dims.size() < 2) return;
  const size_t inner = l.dims.size() - 1;
  const auto inner_size = l.sizes[inner].as_const();
  if (!inner_size || *inner_size * 2 >= lanes) return;
  for (size_t d = inner; d-- > 0;) {
    const auto size = l.sizes[d].as_const();
    if (size && *size < lanes) continue;
    for (int k = 0; k < l.first_store; ++k) {
      if (l.tensors[k].dims[d].stride != sym::Expr(1)) continue;
      std::vector<size_t> order;
      for (size_t i = 0; i < l.dims.size(); ++i)
        if (i != d) order.push_back(i);
      order.push_back(d);
      l = select_dims(l, order);
      return;
    }
  }
}

LoopLayout collect_layout_over(const ascir::AscGraph& g, const std::vector<int>& loop,
                               const std::vector<int>& row_axes) {
  LoopLayout l;
  for (int ax : loop) {
    l.dims.push_back({ax});
    l.sizes.push_back(g.axis(ax).size);
  }
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].op == "data") l.tensors.push_back(layout_of(g, i, loop, row_axes));
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].op == "store") {
      if (l.first_store < 0) l.first_store = static_cast<int>(l.tensors.size());
      l.tensors.push_back(layout_of(g, i, loop, row_axes));
    }
  if (l.first_store < 0) fail(g, "the kernel has no store");
  return l;
}

void reorder_by_tensor(LoopLayout& l, int ref, std::vector<int>* cls) {
  if (l.dims.size() < 2) return;
  std::vector<int64_t> key;
  for (const DimLayout& d : l.tensors.at(ref).dims)
    key.push_back(d.stride == sym::Expr(0) ? INT64_MAX : order_key(d.stride));
  std::vector<size_t> order(l.dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
  l = select_dims(l, order);
  if (cls) {
    std::vector<int> c;
    for (size_t d : order) c.push_back((*cls)[d]);
    *cls = std::move(c);
  }
}

void merge_dims(LoopLayout& l, std::vector<int>* cls) {
  if (l.dims.size() < 2) return;
  std::vector<int> out_cls;
  LoopLayout out;
  out.first_store = l.first_store;
  out.tensors.resize(l.tensors.size());
  for (size_t t = 0; t < l.tensors.size(); ++t) out.tensors[t].node = l.tensors[t].node;
  for (size_t d = 0; d < l.dims.size(); ++d) {
    bool mergeable = !out.dims.empty() && (!cls || out_cls.back() == (*cls)[d]);
    for (size_t t = 0; mergeable && t < l.tensors.size(); ++t)
      mergeable = out.tensors[t].dims.back().stride == l.tensors[t].dims[d].stride * l.sizes[d];
    if (!mergeable) {
      if (cls) out_cls.push_back((*cls)[d]);
      out.dims.push_back(l.dims[d]);
      out.sizes.push_back(l.sizes[d]);
      for (size_t t = 0; t < l.tensors.size(); ++t)
        out.tensors[t].dims.push_back(l.tensors[t].dims[d]);
      continue;
    }
    out.dims.back().insert(out.dims.back().end(), l.dims[d].begin(), l.dims[d].end());
    out.sizes.back() = out.sizes.back() * l.sizes[d];
    for (size_t t = 0; t < l.tensors.size(); ++t) {
      DimLayout& m = out.tensors[t].dims.back();
      m.repeat = m.repeat * l.tensors[t].dims[d].repeat;
      m.stride = l.tensors[t].dims[d].stride;
    }
  }
  l = std::move(out);
  if (cls) *cls = std::move(out_cls);
}

}  // namespace af::schedule
