// Fusion mechanics: merge two same-axes kernels into one AscGraph (see merge.h).
#include "fusion/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "fusion/steps.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using ascir::AscTensor;

int64_t index_attr(const AscNode& n) {
  auto it = n.attrs.find("index");
  if (it == n.attrs.end() || !std::holds_alternative<int64_t>(it->second))
    throw CompileError("ascir node %" + n.name + " (" + n.op + ") has no integer index");
  return std::get<int64_t>(it->second);
}

bool same_tensor(const AscTensor& x, const AscTensor& y) {
  return x.dtype == y.dtype && x.axes == y.axes && x.repeats == y.repeats &&
         x.strides == y.strides && x.offset == y.offset;
}

/// Text identifying a node up to its name: equal keys compute the same value.
std::string node_key(const AscNode& n) {
  std::string k = n.op + "(";
  for (int i : n.inputs) k += std::to_string(i) + ",";
  k += "){";
  for (const auto& [key, value] : n.attrs) k += key + "=" + attr_str(value) + ",";
  k += "}[";
  for (int a : n.sched_axes) k += std::to_string(a) + ",";
  k += "]";
  k += dtype_name(n.out.dtype);
  k += "[";
  for (int a : n.out.axes) k += std::to_string(a) + ",";
  k += "]" + sym::str(n.out.repeats) + sym::str(n.out.strides) + n.out.offset.str();
  return k;
}

bool shareable(const AscNode& n) {
  return n.op != "data" && n.op != "store" && n.op != "output";
}

/// Builds the merged kernel: a's graph, then b's nodes appended with their uses rewired. b's
/// load of a value a computes becomes the node a's store reads: the value in its storage
/// dtype, so an f16/bf16 intermediate is rounded exactly as eager rounds it when stored, and
/// b's cast to f32 after the load stays.
class Merger {
 public:
  Merger(const FusedGraph& fg, const StepIndex& idx, int a, int b)
      : fg_(fg), idx_(idx), a_(a), b_(b), A_(fg.nodes[a]), B_(fg.nodes[b]) {}

  FusedNode run() {
    k_ = A_.kernel;
    inputs_ = A_.inputs;
    outputs_ = A_.outputs;
    for (size_t i = 0; i < k_.nodes.size(); ++i) {
      names_.insert(k_.nodes[i].name);
      if (shareable(k_.nodes[i])) shared_.emplace(node_key(k_.nodes[i]), static_cast<int>(i));
    }
    index_producer();
    append_b();
    drop_internal_stores();
    return finish();
  }

 private:
  /// For each value a stores: the node its store reads (the value in its storage dtype).
  void index_producer() {
    for (int op : A_.ops) made_by_a_.insert(op);
    for (int o : k_.output_nodes()) {
      int v = A_.outputs.at(index_attr(k_.nodes[o]));
      store_src_[v] = k_.nodes[k_.nodes[o].inputs[0]].inputs[0];
    }
  }

  int add(AscNode n) {
    if (shareable(n)) {
      std::string key = node_key(n);
      auto it = shared_.find(key);
      if (it != shared_.end()) return it->second;
      n.name = fresh(n.name);
      int i = k_.add_node(std::move(n));
      shared_.emplace(std::move(key), i);
      return i;
    }
    n.name = fresh(n.name);
    return k_.add_node(std::move(n));
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 2; names_.count(name); ++i) name = base + "." + std::to_string(i);
    names_.insert(name);
    return name;
  }

  /// b's axis ids -> a's, matching original axes by position (the loop axes are equal).
  void map_axes() {
    std::vector<int> ia, ib;
    for (const ascir::Axis& x : A_.kernel.axes) ia.push_back(x.id);
    for (const ascir::Axis& x : B_.kernel.axes) {
      if (x.kind != ascir::AxisKind::Original)
        throw CompileError("merging " + B_.name + ": axis " + x.name +
                           " is not original (fusion runs before scheduling)");
      ib.push_back(x.id);
    }
    for (size_t i = 0; i < ib.size(); ++i) axis_map_[ib[i]] = ia.at(i);
  }

  void rename_axes(AscNode& n) {
    for (int& x : n.sched_axes) x = axis_map_.at(x);
    for (int& x : n.out.axes) x = axis_map_.at(x);
  }

  void append_b() {
    const AscGraph& kb = B_.kernel;
    map_.assign(kb.nodes.size(), -1);
    map_axes();
    std::map<int, int> produced;  // b node (data or load) -> the a value it reads
    const int base_outputs = static_cast<int>(outputs_.size());
    for (size_t j = 0; j < kb.nodes.size(); ++j) {
      const AscNode& n = kb.nodes[j];
      if (n.op == "data") {
        int v = B_.inputs.at(index_attr(n));
        if (made_by_a_.count(v)) {
          if (!store_src_.count(v))
            throw CompileError("merging " + A_.name + " into " + B_.name + ": %" +
                               fg_.source.nodes[v].name + " is read by " + B_.name +
                               " but not stored by " + A_.name);
          produced[j] = v;
          continue;
        }
        map_[j] = data_for(v, n);
        continue;
      }
      if (n.op == "load" && produced.count(n.inputs[0])) {
        int v = produced[n.inputs[0]];
        produced[j] = v;
        map_[j] = store_src_[v];
        continue;
      }
      AscNode c = n;
      rename_axes(c);
      for (int& in : c.inputs) {
        in = map_.at(in);
        if (in < 0)
          throw CompileError("merging " + B_.name + ": node %" + n.name + " lost an input");
      }
      if (c.op == "output") c.attrs["index"] = static_cast<int64_t>(base_outputs + index_attr(n));
      map_[j] = add(std::move(c));
    }
    for (int v : B_.outputs) outputs_.push_back(v);
  }

  /// a's data node for value v when it has one with the same tensor, else a new data node.
  int data_for(int v, AscNode c) {
    rename_axes(c);
    for (int d : k_.data_nodes())
      if (inputs_.at(index_attr(k_.nodes[d])) == v && same_tensor(k_.nodes[d].out, c.out)) return d;
    c.attrs["index"] = static_cast<int64_t>(inputs_.size());
    inputs_.push_back(v);
    c.name = fresh(c.name);
    return k_.add_node(std::move(c));
  }

  void drop_internal_stores() {
    for (int o : k_.output_nodes()) {
      int v = outputs_.at(index_attr(k_.nodes[o]));
      if (!idx_.needed_outside(v, a_, b_)) dropped_.insert(o);
    }
  }

  /// Removes dropped outputs and dead nodes, renumbers data/output indices densely, and builds
  /// the step.
  FusedNode finish() {
    const int n = static_cast<int>(k_.nodes.size());
    std::vector<char> live(n, 0);
    for (int i = n - 1; i >= 0; --i) {
      if (k_.nodes[i].op == "output" && !dropped_.count(i)) live[i] = 1;
      if (live[i])
        for (int in : k_.nodes[i].inputs) live[in] = 1;
    }
    std::vector<int> remap(n, -1);
    AscGraph out;
    out.name = k_.name;
    out.axes = k_.axes;
    for (int i = 0; i < n; ++i) {
      if (!live[i]) continue;
      AscNode c = k_.nodes[i];
      for (int& in : c.inputs) in = remap[in];
      remap[i] = out.add_node(std::move(c));
    }
    FusedNode step;
    step.kind = FusedNode::Kind::Kernel;
    step.name = A_.name;
    step.inputs = renumber(out, "data", inputs_);
    step.outputs = renumber(out, "output", outputs_);
    std::set<int> ops(A_.ops.begin(), A_.ops.end());
    ops.insert(B_.ops.begin(), B_.ops.end());
    step.ops.assign(ops.begin(), ops.end());
    step.kernel = std::move(out);
    sort_kernel_io(step);
    return step;
  }

  /// Gives the live `op` nodes (data or output) indices 0.. in their old index order and
  /// returns the Graph IR node per new index.
  static std::vector<int> renumber(AscGraph& g, const char* op, const std::vector<int>& old) {
    std::vector<int> nodes = op == std::string("data") ? g.data_nodes() : g.output_nodes();
    std::vector<int> values;
    for (size_t i = 0; i < nodes.size(); ++i) {
      AscNode& n = g.nodes[nodes[i]];
      values.push_back(old.at(index_attr(n)));
      n.attrs["index"] = static_cast<int64_t>(i);
    }
    return values;
  }

  const FusedGraph& fg_;
  const StepIndex& idx_;
  int a_, b_;
  const FusedNode& A_;
  const FusedNode& B_;
  AscGraph k_;
  std::vector<int> inputs_, outputs_;
  std::map<int, int> store_src_, axis_map_;
  std::set<int> made_by_a_;
  std::map<std::string, int> shared_;
  std::set<std::string> names_;
  std::vector<int> map_;
  std::set<int> dropped_;
};

}  // namespace

FusedNode merge_kernels(const FusedGraph& fg, int a, int b) {
  return merge_kernels(fg, StepIndex(fg), a, b);
}

FusedNode merge_kernels(const FusedGraph& fg, const StepIndex& index, int a, int b) {
  const int n = static_cast<int>(fg.nodes.size());
  if (a < 0 || b < 0 || a >= n || b >= n || a == b)
    throw CompileError("merge_kernels: steps " + std::to_string(a) + " and " + std::to_string(b) +
                       " are not two steps of a " + std::to_string(n) + "-step graph");
  for (int s : {a, b})
    if (fg.nodes[s].kind != FusedNode::Kind::Kernel)
      throw CompileError("merge_kernels: step " + step_label(fg, s) + " is not a kernel");
  if (!same_loop_axes(fg.nodes[a].kernel, fg.nodes[b].kernel))
    throw CompileError("merge_kernels: " + fg.nodes[a].name + " and " + fg.nodes[b].name +
                       " have different loop axes " + loop_axes_str(fg.nodes[a].kernel) + " vs " +
                       loop_axes_str(fg.nodes[b].kernel));
  return Merger(fg, index, a, b).run();
}

}  // namespace af::fusion
