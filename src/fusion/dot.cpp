// FusedGraph -> Graphviz DOT: kernels as clusters of their Graph IR ops, ATen steps apart.
#include "fusion/dot.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "graph/op_registry.h"
#include "graph/printer.h"
#include "support/error.h"

namespace af::fusion {

std::string human_bytes(int64_t b) {
  if (b < 1024) return std::to_string(b) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = -1;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

namespace {

constexpr size_t kMaxLine = 30;       // longest label line before it is clipped
constexpr size_t kMaxEdgeLabel = 22;  // longest dtype[shape] written on an edge

using graph::OpClass;

/// The class of node `v`'s kind; Opaque for a kind the registry lacks (the verifier rejects it).
OpClass class_of(const graph::Graph& g, int v) {
  const graph::OpDef* def = graph::find_op(g.nodes[v].kind);
  return def ? def->cls : OpClass::Opaque;
}

/// Node `v`, checked against the graph (steps come from passes that may be wrong).
const graph::Node& node_at(const graph::Graph& g, int v, const std::string& step) {
  if (v < 0 || v >= static_cast<int>(g.nodes.size()))
    throw CompileError("fusedgraph @" + g.name + ": step " + step + " refers to node #" +
                       std::to_string(v) + " outside the graph");
  return g.nodes[v];
}

/// The value eager reads for operand `v`: a broadcast's source (eager expands as a view).
int eager_source(const graph::Graph& g, int v) {
  while (class_of(g, v) == OpClass::Broadcast && !g.nodes[v].operands.empty())
    v = g.nodes[v].operands[0];
  return v;
}

/// `s` with '\\' and '"' escaped and line breaks flattened, for a DOT quoted string.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

/// `s` cut to `n` characters, ending in "..." when cut.
std::string clip(const std::string& s, size_t n = kMaxLine) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

/// `text` broken at spaces into lines of at most `width` characters; at most `max_lines`, the
/// last one clipped.
std::vector<std::string> wrap(const std::string& text, size_t width, size_t max_lines) {
  std::vector<std::string> lines;
  std::string line;
  for (size_t i = 0; i <= text.size();) {
    size_t end = std::min(text.find(' ', i), text.size());
    std::string word = text.substr(i, end - i);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(clip(line, width));
      line = word;
    } else {
      line += (line.empty() ? "" : " ") + word;
    }
    i = end + 1;
  }
  if (!line.empty()) lines.push_back(clip(line, width));
  if (lines.size() > max_lines) {
    lines.resize(max_lines);
    lines.back() = clip(lines.back() + " ...", width);
  }
  return lines;
}

/// The label of a kernel op: "%mul_1" when the name starts with the kind, else "mul %3".
std::string op_label(const graph::Node& n) {
  bool named_after_kind = n.name.rfind(n.kind, 0) == 0;
  return clip(named_after_kind ? "%" + n.name : n.kind + " %" + n.name);
}

/// A quoted DOT string of `lines`, one per label line (each escaped).
std::string quoted(const std::vector<std::string>& lines) {
  std::string out = "\"";
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\\n" : "") + escape(lines[i]);
  return out + "\"";
}

/// A quoted DOT string of `lines`, each left-justified ("\l" ends every line).
std::string quoted_left(const std::vector<std::string>& lines) {
  std::string out = "\"";
  for (const std::string& line : lines) out += escape(line) + "\\l";
  return out + "\"";
}

std::string quoted(const std::string& s) {
  return quoted(std::vector<std::string>{s});
}

/// "f32[s0, 1000]": dtype and shape, no layout.
std::string type_text(const graph::TensorType& t) {
  std::string s = std::string(dtype_name(t.dtype)) + "[";
  for (size_t d = 0; d < t.shape.size(); ++d) s += (d ? ", " : "") + t.shape[d].str();
  return s + "]";
}

std::string node_id(int v) {
  return "\"n" + std::to_string(v) + "\"";
}

/// What an ATen step runs: its ATen target without ".default", or its kind.
std::string aten_title(const graph::Node& n) {
  auto it = n.attrs.find("target");
  const std::string* target = it == n.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (!target) return n.kind;
  std::string t = *target;
  const std::string suffix = ".default";
  if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0)
    t.resize(t.size() - suffix.size());
  return t;
}

/// Writes the DOT text of one FusedGraph.
class DotWriter {
 public:
  /// `focus` >= 0: draw only that step (a kernel), its inputs and its outputs.
  DotWriter(const FusedGraph& fg, DotDetail detail, const DotFacts& facts, int focus = -1)
      : fg_(fg),
        g_(fg.source),
        facts_(facts),
        collapsed_(detail == DotDetail::Overview),
        focus_(focus) {}

  std::string write() {
    index_steps();
    if (focus_ >= 0) {
      focus_header();
      focus_values();
      kernel(fg_.nodes[focus_]);
    } else {
      header();
      inputs();
      for (size_t s = 0; s < fg_.nodes.size(); ++s) step(static_cast<int>(s));
      outputs();
    }
    edges();
    extra_rejections();
    out_ += "}\n";
    return out_;
  }

 private:
  void index_steps() {
    step_of_.assign(g_.nodes.size(), -1);
    for (size_t s = 0; s < fg_.nodes.size(); ++s) {
      const FusedNode& st = fg_.nodes[s];
      for (int op : st.ops) {
        node_at(g_, op, st.name);
        step_of_[op] = static_cast<int>(s);
      }
      for (int v : st.inputs) node_at(g_, v, st.name);
      for (int v : st.outputs) node_at(g_, v, st.name);
      if (st.kind == FusedNode::Kind::Opaque)
        for (int v : st.inputs)
          if (class_of(g_, v) == OpClass::Const) consts_.insert(v);
    }
    for (const RejectedFusion& r : fg_.rejected) {
      int p = g_.find(r.producer.substr(r.producer.rfind('%') + 1));
      int c = g_.find(r.consumer.substr(r.consumer.rfind('%') + 1));
      if (!r.sibling && p >= 0 && c >= 0 &&
          std::count(g_.nodes[c].operands.begin(), g_.nodes[c].operands.end(), p) > 0)
        rejected_edge_[{p, c}] = r.reason;
      else if (p >= 0 && c >= 0)
        extra_.push_back({p, c, &r});
    }
  }

  void header() {
    int kernels = fg_.num_kernels();
    int aten = static_cast<int>(fg_.nodes.size()) - kernels;
    StepBytes total;
    for (const FusedNode& st : fg_.nodes) {
      if (st.kind != FusedNode::Kind::Kernel) continue;
      StepBytes b = step_bytes(fg_, st);
      total.read += b.read;
      total.written += b.written;
      total.unfused += b.unfused;
    }
    std::string counts =
        facts_.aten_ops < 0
            ? std::to_string(kernels) + " kernel(s), " + std::to_string(aten) + " ATen step(s)"
            : std::to_string(kernels) + " kernel(s) compute " +
                  std::to_string(facts_.aten_ops_in_kernels) + " of " +
                  std::to_string(facts_.aten_ops) + " ATen ops, " +
                  std::to_string(facts_.aten_ops - facts_.aten_ops_in_kernels) + " left to ATen";
    out_ += "digraph " + quoted(g_.name) + " {\n";
    out_ +=
        "  graph [rankdir=TB, newrank=true, compound=true, fontname=\"Helvetica\", "
        "fontsize=12, labelloc=t, nodesep=0.25, ranksep=0.3, label=" +
        quoted({"@" + g_.name + ": " + counts + ", " + std::to_string(fg_.rejected.size()) +
                    " rejected fusion(s)",
                "kernels move " + human_bytes(total.read + total.written) + " (unfused " +
                    human_bytes(total.unfused) + ")"}) +
        "];\n";
    style_defaults();
  }

  /// The default node and edge attributes of every picture.
  void style_defaults() {
    out_ +=
        "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
        "fillcolor=\"white\", color=\"#4a78b5\", height=0.3, margin=\"0.08,0.03\"];\n";
    out_ +=
        "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#707070\", "
        "fontcolor=\"#505050\", arrowsize=0.6];\n";
  }

  /// The type of value `v` as the pictures print it: the frontend's (DotFacts::value_types)
  /// where it gives one, else the Graph IR's.
  std::string value_type(int v) const {
    auto it = facts_.value_types.find(g_.nodes[v].name);
    return it != facts_.value_types.end() ? it->second : type_text(g_.nodes[v].type);
  }

  /// "14 ATen op(s), 20 IR op(s)" for a kernel explain counted (DotFacts), else "20 op(s)".
  std::string op_count(const FusedNode& st) const {
    std::string ir = std::to_string(st.ops.size());
    auto it = facts_.kernel_aten_ops.find(st.name);
    if (facts_.aten_ops < 0 || it == facts_.kernel_aten_ops.end()) return ir + " op(s)";
    return std::to_string(it->second) + " ATen op(s), " + ir + " IR op(s)";
  }

  /// A value drawn as a plain node: its name and type, its Graph IR line as tooltip.
  void value_node(int v) {
    const graph::Node& n = g_.nodes[v];
    out_ += "  " + node_id(v) + " [label=" + quoted({clip("%" + n.name), clip(value_type(v))}) +
            ", shape=ellipse, style=filled, fillcolor=\"#e6e6e6\", color=\"#9a9a9a\", tooltip=" +
            quoted(graph::print_node(g_, v)) + "];\n";
  }

  /// One kernel's picture: the graph, the kernel and its op count as the title (the cluster's
  /// label gives its bytes and TilingCases).
  void focus_header() {
    const FusedNode& st = fg_.nodes[focus_];
    out_ += "digraph " + quoted(g_.name + "." + st.name) + " {\n";
    out_ +=
        "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, nodesep=0.25, "
        "ranksep=0.3, label=" +
        quoted("@" + g_.name + " kernel " + st.name + ": " + op_count(st)) + "];\n";
    style_defaults();
  }

  /// One kernel's inputs (whoever computes them) and outputs, as plain nodes.
  void focus_values() {
    const FusedNode& st = fg_.nodes[focus_];
    for (int v : st.inputs)
      if (focus_inputs_.insert(v).second) value_node(v);
    for (size_t i = 0; i < st.outputs.size(); ++i)
      out_ += "  \"out" + std::to_string(i) +
              "\" [label=" + quoted("%" + g_.nodes[st.outputs[i]].name) +
              ", shape=ellipse, style=filled, fillcolor=\"#e6e6e6\", color=\"#9a9a9a\"];\n";
  }

  void inputs() {
    for (size_t v = 0; v < g_.nodes.size(); ++v) {
      OpClass cls = class_of(g_, static_cast<int>(v));
      if (cls == OpClass::Input) {
        value_node(static_cast<int>(v));
      } else if (cls == OpClass::Const && consts_.count(static_cast<int>(v))) {
        out_ += "  " + node_id(static_cast<int>(v)) +
                " [label=" + quoted(clip(graph::print_node(g_, static_cast<int>(v)))) +
                ", shape=plaintext, style=\"\", fontsize=8];\n";
      }
    }
  }

  void step(int s) {
    const FusedNode& st = fg_.nodes[s];
    if (st.kind == FusedNode::Kind::Kernel) {
      kernel(st);
      return;
    }
    for (int op : st.ops) {
      const graph::Node& n = g_.nodes[op];
      std::vector<std::string> label = {clip(aten_title(n)), clip("%" + n.name)};
      std::vector<std::string> tip = {graph::print_node(g_, op), st.reason};
      if (auto it = facts_.value_types.find(n.name); it != facts_.value_types.end())
        tip.insert(tip.begin() + 1, "returns " + it->second);  // the IR's type is a placeholder
      std::string tooltip = quoted(tip);
      if (class_of(g_, op) == OpClass::View) {
        out_ += "  " + node_id(op) + " [label=" + quoted(label) +
                ", style=\"rounded,dashed\", color=\"#8c8c8c\", fontcolor=\"#505050\", "
                "tooltip=" +
                tooltip + "];\n";
        continue;
      }
      if (st.reason.rfind("opaque ATen op ", 0) != 0) label.push_back(clip(st.reason));
      out_ += "  " + node_id(op) + " [label=" + quoted(label) +
              ", shape=box, style=\"filled,bold\", fillcolor=\"#fbd3ad\", color=\"#c8620f\", "
              "tooltip=" +
              tooltip + "];\n";
    }
  }

  void kernel(const FusedNode& st) {
    StepBytes b = step_bytes(fg_, st);
    std::vector<std::string> cases = tiling_cases(st);
    std::string case_list;
    for (size_t i = 0; i < cases.size(); ++i) case_list += (i ? ", " : "") + cases[i];
    std::vector<std::string> label = {
        st.name + ": " + op_count(st),
        "read " + human_bytes(b.read) + ", write " + human_bytes(b.written),
        "unfused " + human_bytes(b.unfused)};
    if (!cases.empty()) label.push_back(clip("tiling: " + case_list, 2 * kMaxLine));
    if (collapsed_) {  // one node; its ops in the tooltip
      std::vector<std::string> tip = {
          st.name + " (TilingCases: " + (case_list.empty() ? "not scheduled" : case_list) + ")"};
      for (int op : st.ops) tip.push_back(graph::print_node(g_, op));
      out_ += "  " + kernel_id(st) + " [label=" + quoted_left(label) +
              ", style=\"rounded,filled\", fillcolor=\"#edf3fb\", color=\"#4a78b5\", "
              "fontcolor=\"#1f3f6e\", tooltip=" +
              quoted_left(tip) + "];\n";
      return;
    }
    out_ += "  subgraph " + quoted("cluster_" + st.name) + " {\n";
    out_ += "    label=" + quoted_left(label) +
            "; style=\"rounded,filled\"; fillcolor=\"#edf3fb\"; color=\"#4a78b5\"; "
            "fontsize=10; fontcolor=\"#1f3f6e\"; labeljust=l; margin=10;\n";
    out_ += "    tooltip=" +
            quoted(st.name + ": read " + std::to_string(b.read) + " B, write " +
                   std::to_string(b.written) + " B, unfused " + std::to_string(b.unfused) +
                   " B; TilingCases: " + (case_list.empty() ? "(not scheduled)" : case_list)) +
            ";\n";
    for (int op : st.ops) {
      const graph::Node& n = g_.nodes[op];
      out_ += "    " + node_id(op) + " [label=" + quoted(op_label(n)) +
              ", tooltip=" + quoted(graph::print_node(g_, op)) + "];\n";
    }
    out_ += "  }\n";
  }

  void outputs() {
    for (size_t i = 0; i < g_.outputs.size(); ++i)
      out_ += "  \"out" + std::to_string(i) + "\" [label=" + quoted("output " + std::to_string(i)) +
              ", shape=ellipse, style=filled, fillcolor=\"#e6e6e6\", color=\"#9a9a9a\"];\n";
  }

  /// The rejection drawn on the edge carrying value `v` into op `op`: its own, or (collapsed,
  /// where one edge stands for all between two kernels) one between the same two kernels.
  std::map<std::pair<int, int>, std::string>::const_iterator rejection(int v, int op) const {
    auto it = rejected_edge_.find({v, op});
    if (it != rejected_edge_.end() || !collapsed_) return it;
    for (it = rejected_edge_.begin(); it != rejected_edge_.end(); ++it)
      if (shown(it->first.first) == shown(v) && shown(it->first.second) == shown(op)) break;
    return it;
  }

  /// The attributes of the edge carrying value `v` into op `op` of step `s`.
  std::string edge_attrs(int v, int op, int s) {
    const graph::Node& n = g_.nodes[v];
    std::string type = value_type(v);
    std::vector<std::string> attrs = {"tooltip=" + quoted("%" + n.name + " : " + type)};
    bool crossing = step_of_[v] != s;
    auto it = rejection(v, op);
    bool rejected = it != rejected_edge_.end();  // its reason is the label
    if (crossing && !rejected && type.size() <= kMaxEdgeLabel && labelled_.insert({v, s}).second)
      attrs.push_back("label=" + quoted(type));
    if (rejected) {
      attrs.push_back("color=\"#d62728\", fontcolor=\"#d62728\", style=dashed, penwidth=1.4");
      attrs.push_back("xlabel=" + quoted(wrap("rejected: " + it->second, kMaxLine, 3)));
      attrs.back() += ", labeltooltip=" + quoted(it->second);
    }
    std::string s_attrs;
    for (size_t i = 0; i < attrs.size(); ++i) s_attrs += (i ? ", " : "") + attrs[i];
    return "[" + s_attrs + "]";
  }

  bool drawn(int v) const {
    if (focus_ >= 0) return step_of_[v] == focus_ || focus_inputs_.count(v) > 0;
    OpClass cls = class_of(g_, v);
    return step_of_[v] >= 0 || cls == OpClass::Input || consts_.count(v) > 0;
  }

  /// The DOT node drawing value `v`: its own, or (collapsed) its kernel's.
  std::string shown(int v) const {
    int s = step_of_[v];
    if (collapsed_ && s >= 0 && fg_.nodes[s].kind == FusedNode::Kind::Kernel)
      return kernel_id(fg_.nodes[s]);
    return node_id(v);
  }

  static std::string kernel_id(const FusedNode& st) { return "\"" + st.name + "\""; }

  void edges() {
    std::set<std::pair<std::string, std::string>> done;  // collapsed: one edge per pair
    for (size_t s = 0; s < fg_.nodes.size(); ++s) {
      if (focus_ >= 0 && static_cast<int>(s) != focus_) continue;
      for (int op : fg_.nodes[s].ops) {
        std::set<int> seen;
        for (int v : g_.nodes[op].operands) {
          if (!drawn(v) || !seen.insert(v).second) continue;
          std::string from = shown(v), to = shown(op);
          if (collapsed_ && (from == to || !done.insert({from, to}).second)) continue;
          out_ += "  " + from + " -> " + to + " " + edge_attrs(v, op, static_cast<int>(s)) + ";\n";
        }
      }
    }
    const std::vector<int>& outs = focus_ >= 0 ? fg_.nodes[focus_].outputs : g_.outputs;
    for (size_t i = 0; i < outs.size(); ++i) {
      int v = outs[i];
      if (!drawn(v)) continue;
      std::string type = value_type(v);
      out_ += "  " + shown(v) + " -> \"out" + std::to_string(i) +
              "\" [tooltip=" + quoted("%" + g_.nodes[v].name + " : " + type) +
              (type.size() <= kMaxEdgeLabel ? ", label=" + quoted(type) : "") + "];\n";
    }
  }

  /// Sibling rejections (and any pair without a value edge): red dashed lines, no arrow.
  void extra_rejections() {
    for (const auto& [p, c, r] : extra_) {
      if (!drawn(p) || !drawn(c) || shown(p) == shown(c)) continue;
      out_ += "  " + shown(p) + " -> " + shown(c) +
              " [dir=none, constraint=false, style=dashed, color=\"#d62728\", "
              "fontcolor=\"#d62728\", xlabel=" +
              quoted(wrap((r->sibling ? "siblings rejected: " : "rejected: ") + r->reason, kMaxLine,
                          3)) +
              ", tooltip=" + quoted(r->reason) + "];\n";
    }
  }

  struct Extra {
    int producer;
    int consumer;
    const RejectedFusion* rejection;
  };

  const FusedGraph& fg_;
  const graph::Graph& g_;
  const DotFacts& facts_;
  bool collapsed_;              // DotDetail::Overview
  int focus_;                   // the one step drawn, or -1: all
  std::set<int> focus_inputs_;  // focus: the values the step reads
  std::string out_;
  std::vector<int> step_of_;  // node -> the step computing it, or -1
  std::set<int> consts_;      // consts an ATen step reads (drawn)
  std::map<std::pair<int, int>, std::string> rejected_edge_;  // (value, op) -> reason
  std::vector<Extra> extra_;
  std::set<std::pair<int, int>> labelled_;  // (value, step) edges already labelled
};

}  // namespace

StepBytes step_bytes(const FusedGraph& fg, const FusedNode& step) {
  const graph::Graph& g = fg.source;
  sym::Bindings hints = g.hints();
  StepBytes b;
  for (const std::vector<int>* list : {&step.ops, &step.inputs, &step.outputs})
    for (int v : *list)
      for (int o : node_at(g, v, step.name).operands) node_at(g, o, step.name);
  try {
    for (int v : std::set<int>(step.inputs.begin(), step.inputs.end()))
      b.read += graph::value_bytes(g, v, hints);
    for (int v : std::set<int>(step.outputs.begin(), step.outputs.end()))
      b.written += graph::value_bytes(g, v, hints);
    for (int op : step.ops) {
      OpClass cls = class_of(g, op);
      if (cls == OpClass::Broadcast || cls == OpClass::View) continue;
      std::set<int> sources;
      for (int v : g.nodes[op].operands) sources.insert(eager_source(g, v));
      for (int v : sources) b.unfused += graph::value_bytes(g, v, hints);
      b.unfused += graph::value_bytes(g, op, hints);
    }
  } catch (const CompileError& e) {
    throw CompileError("bytes of step " + step.name + ": " + e.what());
  }
  return b;
}

std::vector<std::string> tiling_cases(const ascir::AscGraph& kernel) {
  if (!kernel.schedule) return {};
  std::vector<std::string> out;
  for (ascir::TilingCase c : kernel.schedule->cases()) out.emplace_back(ascir::name(c));
  return out;
}

std::vector<std::string> tiling_cases(const FusedNode& step) {
  if (!step.is_concat()) return tiling_cases(step.kernel);
  std::vector<std::string> out;
  for (size_t i = 0; i < step.segments.size(); ++i)
    for (const std::string& c : tiling_cases(step.segments[i].kernel))
      out.push_back("s" + std::to_string(i) + ": " + c);
  return out;
}

std::string print_dot(const FusedGraph& fg, DotDetail detail, const DotFacts& facts) {
  return DotWriter(fg, detail, facts).write();
}

std::string print_kernel_dot(const FusedGraph& fg, const std::string& kernel,
                             const DotFacts& facts) {
  for (size_t s = 0; s < fg.nodes.size(); ++s)
    if (fg.nodes[s].kind == FusedNode::Kind::Kernel && fg.nodes[s].name == kernel)
      return DotWriter(fg, DotDetail::Full, facts, static_cast<int>(s)).write();
  throw CompileError("fusedgraph @" + fg.source.name + " has no kernel @" + kernel);
}

}  // namespace af::fusion
