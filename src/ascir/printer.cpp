// Prints an AscGraph in the text format of docs/ir.md.
#include "ascir/printer.h"

#include <algorithm>

#include "support/error.h"

namespace af::ascir {
namespace {

std::string axis_list(const AscGraph& g, const std::vector<int>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ", ";
    s += g.axis(ids[i]).name;
  }
  return s + "]";
}

void print_axis(const AscGraph& g, const Axis& a, std::string& out) {
  out += "  axis " + a.name + " : " + a.size.str();
  if (a.kind != AxisKind::Original) {
    out += " ";
    out += axis_kind_name(a.kind);
    out += "(";
    for (size_t i = 0; i < a.from.size(); ++i) {
      if (i) out += ", ";
      out += g.axis(a.from[i]).name;
    }
    out += ")";
  }
  out += "\n";
}

void print_node(const AscGraph& g, const AscNode& n, std::string& out) {
  out += "  %" + n.name + " = " + n.op + "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    int in = n.inputs[i];
    if (in < 0 || in >= static_cast<int>(g.nodes.size()))
      throw CompileError("ascgraph @" + g.name + ": node %" + n.name + " (" + n.op +
                         ") has input index " + std::to_string(in) + " out of range");
    if (i) out += ", ";
    out += "%" + g.nodes[in].name;
  }
  out += ")";
  if (!n.attrs.empty()) {
    out += " {";
    bool first = true;
    for (const auto& [key, value] : n.attrs) {
      if (!first) out += ", ";
      first = false;
      out += key + " = " + attr_str(value);
    }
    out += "}";
  }
  out += " sched " + axis_list(g, n.sched_axes);
  out += " : ";
  out += dtype_name(n.out.dtype);
  out += " " + axis_list(g, n.out.axes);
  out += " repeats " + sym::str(n.out.repeats);
  out += " strides " + sym::str(n.out.strides);
  if (n.out.offset != sym::Expr(0)) out += " offset " + n.out.offset.str();
  out += "\n";
}

void print_schedule(const AscGraph& g, const ScheduleInfo& s, std::string& out) {
  out += "  schedule " + attr_str(Attr(std::string(name(s.family)))) + " key " +
         std::to_string(s.tiling_key) + " {\n";
  if (!s.tiling_cases.empty()) {
    out += "    cases [";
    for (size_t i = 0; i < s.tiling_cases.size(); ++i)
      out += (i ? ", " : "") + attr_str(Attr(std::string(name(s.tiling_cases[i]))));
    out += "]\n";
  }
  if (s.block_axis != -1) out += "    block_axis " + g.axis(s.block_axis).name + "\n";
  if (s.vectorized_axis != -1)
    out += "    vectorized_axis " + g.axis(s.vectorized_axis).name + "\n";
  out += "    ub_bytes " + std::to_string(s.ub_bytes) + "\n";
  out += "    bytes_per_element " + std::to_string(s.bytes_per_element) + "\n";
  for (const TilingParam& p : s.params)
    out += "    param " + p.name + " = " + std::string(name(p.role)) + "(" + g.axis(p.axis).name +
           ") align " + std::to_string(p.align) + "\n";
  out += "  }\n";
}

}  // namespace

std::string print(const AscGraph& g) {
  std::string out = "ascgraph @" + g.name + " {\n";
  std::vector<const Axis*> axes;
  for (const Axis& a : g.axes) axes.push_back(&a);
  std::stable_sort(axes.begin(), axes.end(),
                   [](const Axis* a, const Axis* b) { return a->id < b->id; });
  for (const Axis* a : axes) print_axis(g, *a, out);
  for (const AscNode& n : g.nodes) print_node(g, n, out);
  if (g.schedule) print_schedule(g, *g.schedule, out);
  out += "}\n";
  return out;
}

}  // namespace af::ascir
