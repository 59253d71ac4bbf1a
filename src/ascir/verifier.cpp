// Structural checks of an AscGraph (see verifier.h for the list).
#include "ascir/verifier.h"

#include <cctype>
#include <map>
#include <set>

#include "graph/op_registry.h"
#include "support/error.h"
#include "support/names.h"

namespace af::ascir {
namespace {

class Verifier {
 public:
  explicit Verifier(const AscGraph& g) : g_(g) {}

  void run() {
    if (!is_ir_name(g_.name)) fail("graph name '" + g_.name + "' is not [A-Za-z0-9_.]+");
    check_axes();
    std::set<std::string> names;
    for (int i = 0; i < static_cast<int>(g_.nodes.size()); ++i) {
      const AscNode& n = g_.nodes[i];
      if (!is_ir_name(n.name))
        fail("node #" + std::to_string(i) + " (" + n.op + ") has invalid name '" + n.name + "'");
      if (!names.insert(n.name).second) fail_node(n, "name is used by an earlier node");
      check_node(i);
    }
    check_users();
    check_indices("data");
    check_indices("output");
    if (g_.schedule) check_schedule(*g_.schedule);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw CompileError("ascgraph @" + g_.name + ": " + what);
  }
  [[noreturn]] void fail_node(const AscNode& n, const std::string& what) const {
    fail("node %" + n.name + " (" + n.op + "): " + what);
  }
  bool has_axis(int id) const { return axis_ids_.count(id) != 0; }

  void check_axes() {
    std::set<std::string> names;
    for (const Axis& a : g_.axes) {
      std::string label = "axis " + a.name + " (id " + std::to_string(a.id) + ")";
      if (!is_ir_name(a.name)) fail(label + ": name is not [A-Za-z0-9_.]+");
      if (!names.insert(a.name).second) fail(label + ": name is used by another axis");
      if (!axis_ids_.insert(a.id).second) fail(label + ": id is used by another axis");
    }
    for (const Axis& a : g_.axes) {
      std::string label = "axis " + a.name + " (" + std::string(axis_kind_name(a.kind)) + ")";
      for (int f : a.from) {
        if (!has_axis(f)) fail(label + ": derived from unknown axis id " + std::to_string(f));
        if (f == a.id) fail(label + ": derived from itself");
      }
      switch (a.kind) {
        case AxisKind::Original:
          if (!a.from.empty()) fail(label + ": an original axis has no source axes");
          break;
        case AxisKind::Merged:
          if (a.from.empty()) fail(label + ": a merged axis needs its source axes");
          break;
        default:
          if (a.from.size() != 1) fail(label + ": a split axis needs exactly one parent axis");
      }
    }
  }

  void check_arity(const AscNode& n, size_t want) const {
    if (n.inputs.size() != want)
      fail_node(n, "expects " + std::to_string(want) + " input(s), has " +
                       std::to_string(n.inputs.size()));
  }

  void check_node(int i) {
    const AscNode& n = g_.nodes[i];
    for (int in : n.inputs)
      if (in < 0 || in >= i)
        fail_node(n, in >= 0 && in < static_cast<int>(g_.nodes.size())
                         ? "input %" + g_.nodes[in].name + " does not precede its user"
                         : "input index " + std::to_string(in) + " out of range");
    std::set<int> seen;
    for (int ax : n.sched_axes) {
      if (!has_axis(ax)) fail_node(n, "sched axis id " + std::to_string(ax) + " does not exist");
      if (!seen.insert(ax).second)
        fail_node(n, "sched axis " + g_.axis(ax).name + " appears twice");
    }
    for (int ax : n.out.axes)
      if (!has_axis(ax)) fail_node(n, "tensor axis id " + std::to_string(ax) + " does not exist");
    if (n.out.repeats.size() != n.out.axes.size() || n.out.strides.size() != n.out.axes.size())
      fail_node(n, "tensor has " + std::to_string(n.out.axes.size()) + " axes, " +
                       std::to_string(n.out.repeats.size()) + " repeats and " +
                       std::to_string(n.out.strides.size()) + " strides");
    const std::string& op = n.op;
    if (op == "data" || op == "output") {
      auto it = n.attrs.find("index");
      if (it == n.attrs.end() || !std::holds_alternative<int64_t>(it->second))
        fail_node(n, "needs an integer attribute 'index'");
      check_arity(n, op == "data" ? 0 : 1);
      if (op == "output" && g_.nodes[n.inputs[0]].op != "store")
        fail_node(n, "input %" + g_.nodes[n.inputs[0]].name + " is not a store");
      if (op == "output") check_distinct_axes(n);
    } else if (op == "load") {
      if (n.inputs.size() != 2) check_arity(n, 1);
      if (g_.nodes[n.inputs[0]].op != "data")
        fail_node(n, "input %" + g_.nodes[n.inputs[0]].name + " is not a data node");
      if (n.inputs.size() == 2) check_gather(n, g_.nodes[n.inputs[1]]);
    } else if (op == "store" || op == "cast") {
      check_arity(n, 1);
      if (op == "store") check_distinct_axes(n);
    } else if (op == "scalar") {
      check_arity(n, 0);
      auto it = n.attrs.find("value");
      if (it == n.attrs.end() || !(std::holds_alternative<int64_t>(it->second) ||
                                   std::holds_alternative<double>(it->second)))
        fail_node(n, "needs a numeric attribute 'value'");
    } else if (op == "broadcast") {
      check_arity(n, 1);
      check_broadcast(n, g_.nodes[n.inputs[0]]);
    } else {
      const graph::OpDef* def = graph::find_op(op);
      bool reduce = def && def->cls == graph::OpClass::Reduce;
      if (!def || (def->cls != graph::OpClass::Elementwise && !reduce))
        fail_node(n,
                  "unknown op (expected data, load, store, output, scalar, broadcast, cast or "
                  "an elementwise or reduce op of the registry)");
      if (def->arity >= 0) check_arity(n, static_cast<size_t>(def->arity));
      if (reduce) check_reduce(n, g_.nodes[n.inputs[0]]);
    }
  }

  /// A gather, load(%data, %index): the index is an integer value (not a data node), and the
  /// attributes index_stride (elements per index step, >= 1) and index_bound (the indexed dim's
  /// size, >= 1) say where index k reads: data + k * index_stride, for 0 <= k < index_bound.
  void check_gather(const AscNode& n, const AscNode& index) const {
    if (index.op == "data" || index.op == "store" || index.op == "output")
      fail_node(n, "index %" + index.name + " is a " + index.op + " node, not a value");
    if (index.out.dtype != DType::I64 && index.out.dtype != DType::I32)
      fail_node(n, "index %" + index.name + " has dtype " +
                       std::string(dtype_name(index.out.dtype)) + " (expected i64 or i32)");
    for (const char* attr : {"index_stride", "index_bound"}) {
      auto it = n.attrs.find(attr);
      if (it == n.attrs.end() || !std::holds_alternative<int64_t>(it->second) ||
          std::get<int64_t>(it->second) < 1)
        fail_node(n, std::string("a gather needs an integer attribute '") + attr + "' >= 1");
    }
  }

  /// A store/output lists the axes of the stored value's dims: a subset of the kernel axes
  /// (the missing ones are repeat 1 / stride 0), each once.
  void check_distinct_axes(const AscNode& n) const {
    std::set<int> seen;
    for (int ax : n.out.axes)
      if (!seen.insert(ax).second)
        fail_node(n, "tensor axis " + g_.axis(ax).name + " appears twice");
  }

  // A reduce keeps its input's dtype. Unscheduled, it lists its input's axes and on each has
  // the input's repeat (kept) or 1 (reduced, or a size-1 axis).
  void check_reduce(const AscNode& n, const AscNode& in) const {
    if (n.out.dtype != in.out.dtype)
      fail_node(n, "has dtype " + std::string(dtype_name(n.out.dtype)) + ", its input %" + in.name +
                       " " + std::string(dtype_name(in.out.dtype)) +
                       " (reduce in the input dtype)");
    if (g_.schedule) return;
    if (n.out.axes != in.out.axes)
      fail_node(n, "tensor axes differ from its input %" + in.name +
                       "'s (a reduce lists every axis, repeat 1 on the reduced ones)");
    for (size_t k = 0; k < n.out.axes.size(); ++k)
      if (n.out.repeats[k] != in.out.repeats[k] && n.out.repeats[k] != sym::Expr(1))
        fail_node(n, "has repeat " + n.out.repeats[k].str() + " on axis " +
                         g_.axis(n.out.axes[k]).name + " where its input %" + in.name + " has " +
                         in.out.repeats[k].str() + " (must be equal, or 1 when reduced)");
  }

  // Aligned right, every dim where the result's repeat differs from the input's must have
  // input repeat 1, and aligned dims must be the same axis.
  void check_broadcast(const AscNode& n, const AscNode& in) const {
    const AscTensor& o = n.out;
    const AscTensor& x = in.out;
    if (x.axes.size() > o.axes.size())
      fail_node(n, "input %" + in.name + " has rank " + std::to_string(x.axes.size()) +
                       " above the result rank " + std::to_string(o.axes.size()));
    size_t lead = o.axes.size() - x.axes.size();
    for (size_t j = 0; j < x.axes.size(); ++j) {
      size_t i = j + lead;
      if (x.axes[j] != o.axes[i])
        fail_node(n, "input %" + in.name + " dim " + std::to_string(j) + " is axis " +
                         g_.axis(x.axes[j]).name + ", result dim is " + g_.axis(o.axes[i]).name);
      if (x.repeats[j] != o.repeats[i] && x.repeats[j] != sym::Expr(1))
        fail_node(n, "input %" + in.name + " has repeat " + x.repeats[j].str() + " on axis " +
                         g_.axis(x.axes[j]).name + " it expands to " + o.repeats[i].str() +
                         " (must be 1)");
    }
  }

  void check_users() const {
    for (const AscNode& n : g_.nodes)
      for (int in : n.inputs) {
        const AscNode& p = g_.nodes[in];
        if (p.op == "store" && n.op != "output")
          fail_node(p, "feeds %" + n.name + " (" + n.op + "); a store may feed only outputs");
      }
  }

  void check_indices(const std::string& op) const {
    std::map<int64_t, const AscNode*> by_index;
    for (const AscNode& n : g_.nodes) {
      if (n.op != op) continue;
      int64_t idx = std::get<int64_t>(n.attrs.find("index")->second);
      auto [it, fresh] = by_index.emplace(idx, &n);
      if (!fresh)
        fail_node(n, "index " + std::to_string(idx) + " is also used by %" + it->second->name);
    }
    int64_t expect = 0;
    for (const auto& [idx, n] : by_index) {
      if (idx != expect)
        fail_node(*n, "index " + std::to_string(idx) + " leaves a gap: " + op +
                          " indices must be 0.." + std::to_string(by_index.size() - 1));
      ++expect;
    }
  }

  void check_schedule(const ScheduleInfo& s) const {
    std::string label = "schedule \"" + std::string(name(s.family)) + "\"";
    if (s.block_axis != -1 && !has_axis(s.block_axis))
      fail(label + ": block axis id " + std::to_string(s.block_axis) + " does not exist");
    if (s.vectorized_axis != -1 && !has_axis(s.vectorized_axis))
      fail(label + ": vectorized axis id " + std::to_string(s.vectorized_axis) + " does not exist");
    if (s.ub_bytes < 0 || s.bytes_per_element < 0)
      fail(label + ": ub_bytes and bytes_per_element must be non-negative");
    std::set<std::string> names;
    for (const TilingParam& p : s.params) {
      std::string pl = label + ": param " + p.name;
      if (!is_ir_name(p.name)) fail(pl + ": name is not [A-Za-z0-9_.]+");
      if (!names.insert(p.name).second) fail(pl + ": declared twice");
      if (!has_axis(p.axis)) fail(pl + ": axis id " + std::to_string(p.axis) + " does not exist");
      if (p.align < 1) fail(pl + ": align " + std::to_string(p.align) + " must be >= 1");
    }
  }

  const AscGraph& g_;
  std::set<int> axis_ids_;
};

}  // namespace

void verify(const AscGraph& g) {
  Verifier(g).run();
}

}  // namespace af::ascir
