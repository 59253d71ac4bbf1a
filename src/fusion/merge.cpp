// Fusion mechanics: merge two kernels into one AscGraph over the host's axes (see merge.h).
#include "fusion/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "fusion/concat_merge.h"
#include "fusion/embed.h"
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

/// Builds the merged kernel over the host's axes: a's nodes, then b's appended with their uses
/// rewired; the guest's nodes are rewritten onto the host axes. b's load of a value a computes
/// becomes the node a's store reads (merge.h says which).
class Merger {
 public:
  Merger(const FusedGraph& fg, const StepIndex& idx, int a, int b, const AxisEmbedding& e)
      : fg_(fg), idx_(idx), a_(a), b_(b), A_(fg.nodes[a]), B_(fg.nodes[b]), e_(e) {}

  FusedNode run() {
    const FusedNode& host = e_.a_is_host ? A_ : B_;
    k_.name = A_.kernel.name;
    k_.axes = host.kernel.axes;
    for (const ascir::Axis& x : k_.axes) host_ids_.push_back(x.id);
    for (const AscNode& n : A_.kernel.nodes) k_.add_node(onto_host(n, A_, e_.a_to_host, true));
    inputs_ = A_.inputs;
    for (size_t i = 0; i < A_.inputs.size(); ++i)
      input_axes_.push_back(map_ids(input_value_axes(A_, i, fg_.source), e_.a_to_host));
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
  static std::vector<int> map_ids(const std::vector<int>& ids, const std::map<int, int>& to) {
    std::vector<int> out;
    for (int id : ids) out.push_back(to.at(id));
    return out;
  }

  /// Node `n` of kernel `from` rewritten onto the host axes through `to_host`. A host node is
  /// unchanged. A guest node runs over every host axis; its tensor lists every host axis
  /// (repeat 1 / stride 0 where the guest has none), except a store/output's, which lists the
  /// host axes of its value's dims. A size-1 guest axis on a bigger host axis gets stride 0.
  AscNode onto_host(const AscNode& n, const FusedNode& from, const std::map<int, int>& to_host,
                    bool is_a) const {
    if (is_a == e_.a_is_host) return n;
    AscNode c = n;
    c.sched_axes = host_ids_;
    if (n.op == "scalar") return c;
    auto squeezed = [&](int guest_axis) {
      return from.kernel.axis(guest_axis).size == sym::Expr(1) &&
             k_.axis(to_host.at(guest_axis)).size != sym::Expr(1);
    };
    if (n.op == "store" || n.op == "output") {
      for (size_t d = 0; d < n.out.axes.size(); ++d) {
        c.out.axes[d] = to_host.at(n.out.axes[d]);
        if (squeezed(n.out.axes[d])) c.out.strides[d] = 0;
      }
      return c;
    }
    c.out.axes = host_ids_;
    c.out.repeats.assign(host_ids_.size(), sym::Expr(1));
    c.out.strides.assign(host_ids_.size(), sym::Expr(0));
    for (size_t d = 0; d < n.out.axes.size(); ++d) {
      int h = to_host.at(n.out.axes[d]);
      size_t at =
          static_cast<size_t>(std::find(host_ids_.begin(), host_ids_.end(), h) - host_ids_.begin());
      c.out.repeats[at] = n.out.repeats[d];
      if (!squeezed(n.out.axes[d])) c.out.strides[at] = n.out.strides[d];
    }
    return c;
  }

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

  void append_b() {
    const AscGraph& kb = B_.kernel;
    map_.assign(kb.nodes.size(), -1);
    std::map<int, int> produced;  // b node (data or load) -> the a value it reads
    const int base_outputs = static_cast<int>(outputs_.size());
    for (size_t j = 0; j < kb.nodes.size(); ++j) {
      const AscNode& n = kb.nodes[j];
      if (n.op == "data") {
        size_t i = static_cast<size_t>(index_attr(n));
        int v = B_.inputs.at(i);
        if (made_by_a_.count(v)) {
          if (!store_src_.count(v))
            throw CompileError("merging " + A_.name + " into " + B_.name + ": %" +
                               fg_.source.nodes[v].name + " is read by " + B_.name +
                               " but not stored by " + A_.name);
          produced[j] = v;
          continue;
        }
        map_[j] = data_for(v, onto_host(n, B_, e_.b_to_host, false),
                           map_ids(input_value_axes(B_, i, fg_.source), e_.b_to_host));
        continue;
      }
      if (n.op == "load" && produced.count(n.inputs[0])) {
        int v = produced[n.inputs[0]];
        produced[j] = v;
        map_[j] = store_src_[v];
        const AscTensor& want = onto_host(n, B_, e_.b_to_host, false).out;
        const AscTensor& have = k_.nodes[map_[j]].out;
        if (want.axes != have.axes || want.repeats != have.repeats)
          throw CompileError("merging " + A_.name + " into " + B_.name + ": %" +
                             fg_.source.nodes[v].name + " has repeats " + sym::str(have.repeats) +
                             " in " + A_.name + " but " + B_.name + " loads " +
                             sym::str(want.repeats));
        continue;
      }
      AscNode c = onto_host(n, B_, e_.b_to_host, false);
      for (int& in : c.inputs) {
        in = map_.at(in);
        if (in < 0)
          throw CompileError("merging " + B_.name + ": node %" + n.name + " lost an input");
      }
      // b's cast to f32 of a value a stored from f32 (the store rounded it): the f32 value.
      if (c.op == "cast" && k_.nodes[c.inputs[0]].out.dtype == c.out.dtype) {
        map_[j] = c.inputs[0];
        continue;
      }
      if (c.op == "output") c.attrs["index"] = static_cast<int64_t>(base_outputs + index_attr(n));
      map_[j] = add(std::move(c));
    }
    for (int v : B_.outputs) outputs_.push_back(v);
  }

  /// The data node already reading value v with the same tensor, else a new data node.
  int data_for(int v, AscNode c, std::vector<int> value_axes) {
    for (int d : k_.data_nodes())
      if (inputs_.at(index_attr(k_.nodes[d])) == v && same_tensor(k_.nodes[d].out, c.out)) return d;
    c.attrs["index"] = static_cast<int64_t>(inputs_.size());
    inputs_.push_back(v);
    input_axes_.push_back(std::move(value_axes));
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
    for (size_t old : renumber(out, "data")) {
      step.inputs.push_back(inputs_.at(old));
      step.input_axes.push_back(input_axes_.at(old));
    }
    for (size_t old : renumber(out, "output")) step.outputs.push_back(outputs_.at(old));
    std::set<int> ops(A_.ops.begin(), A_.ops.end());
    ops.insert(B_.ops.begin(), B_.ops.end());
    step.ops.assign(ops.begin(), ops.end());
    step.kernel = std::move(out);
    sort_kernel_io(step);
    return step;
  }

  /// Gives the live `op` nodes (data or output) indices 0.. in their old index order and
  /// returns the old index per new index.
  static std::vector<size_t> renumber(AscGraph& g, const char* op) {
    std::vector<int> nodes = op == std::string("data") ? g.data_nodes() : g.output_nodes();
    std::vector<size_t> old;
    for (size_t i = 0; i < nodes.size(); ++i) {
      AscNode& n = g.nodes[nodes[i]];
      old.push_back(static_cast<size_t>(index_attr(n)));
      n.attrs["index"] = static_cast<int64_t>(i);
    }
    return old;
  }

  const FusedGraph& fg_;
  const StepIndex& idx_;
  int a_, b_;
  const FusedNode& A_;
  const FusedNode& B_;
  const AxisEmbedding& e_;
  AscGraph k_;
  std::vector<int> host_ids_;  // the merged kernel's axes, in order
  std::vector<int> inputs_, outputs_;
  std::vector<std::vector<int>> input_axes_;
  std::map<int, int> store_src_;
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
  if (fg.nodes[a].is_concat() || fg.nodes[b].is_concat()) return merge_concat(fg, a, b);
  return merge_kernels(fg, index, a, b, embed_axes(fg, a, b));
}

FusedNode merge_kernels(const FusedGraph& fg, const StepIndex& index, int a, int b,
                        const AxisEmbedding& embedding) {
  if (!embedding.ok)
    throw CompileError("merge_kernels: " + fg.nodes[a].name + " and " + fg.nodes[b].name +
                       " do not embed: " + embedding.reason);
  return Merger(fg, index, a, b, embedding).run();
}

}  // namespace af::fusion
