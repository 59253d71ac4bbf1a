// ascir::Builder: nodes, the dtype rule, CSE and the finishing cut of one kernel's AscGraph.
#include "ascir/builder.h"

#include <cctype>
#include <cmath>

#include "ascir/verifier.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "support/error.h"

namespace af::ascir {
namespace {

bool is_int_lane(DType t) {
  return t == DType::I64 || t == DType::I32;
}

bool is_f32_lane(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// `base` as a node name ([A-Za-z0-9_.]+).
std::string sanitized(const std::string& base) {
  std::string out;
  for (char c : base)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ? c : '_';
  return out.empty() ? "v" : out;
}

/// The structure CSE compares: op, inputs, attributes and output tensor.
std::string structure(const AscNode& n, const std::string& extra) {
  std::string key = n.op + "(";
  for (int i : n.inputs) key += std::to_string(i) + ",";
  key += ")";
  for (const auto& [k, v] : n.attrs) key += k + "=" + attr_str(v) + ";";
  key += std::string(dtype_name(n.out.dtype)) + "[";
  for (int a : n.out.axes) key += std::to_string(a) + ",";
  key += "]" + sym::str(n.out.repeats) + sym::str(n.out.strides) + n.out.offset.str() + extra;
  return key;
}

}  // namespace

Builder::Builder(std::string name, BuilderRules rules) : rules_(rules) {
  g_.name = std::move(name);
}

void Builder::check_dtype(DType t, const std::string& what) const {
  if (rules_.dtypes & graph::mask_of(t)) return;
  std::string allowed;
  for (DType d : all_dtypes())
    if (rules_.dtypes & graph::mask_of(d))
      allowed += (allowed.empty() ? "" : ", ") + std::string(dtype_name(d));
  throw CompileError(what + " of dtype " + std::string(dtype_name(t)) + " (kernels compute " +
                     allowed + ")");
}

int Builder::add_axis(sym::Expr size) {
  if (!g_.nodes.empty()) throw CompileError("ascgraph @" + g_.name + ": an axis after a node");
  int i = num_axes();
  all_axes_.push_back(g_.add_axis("z" + std::to_string(i), std::move(size)));
  return i;
}

AscTensor Builder::local(DType dtype, const std::vector<bool>& varies) const {
  AscTensor t;
  t.dtype = dtype;
  t.axes = all_axes_;
  for (size_t a = 0; a < all_axes_.size(); ++a)
    t.repeats.push_back(varies.at(a) ? g_.axes[a].size : sym::Expr(1));
  t.strides = graph::contiguous_strides(t.repeats);
  for (size_t a = 0; a < t.repeats.size(); ++a)
    if (t.repeats[a] == sym::Expr(1)) t.strides[a] = 0;
  return t;
}

int Builder::add(AscNode n, const std::string& key_extra) {
  std::string key = structure(n, n.op == "data" ? "@" + n.name : key_extra);
  bool io = n.op == "store" || n.op == "output";
  if (rules_.cse && !io) {
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
  }
  const std::string base = sanitized(n.name);
  n.name = base;
  for (int k = 2; names_.count(n.name); ++k) n.name = base + "." + std::to_string(k);
  names_.insert(n.name);
  n.sched_axes = all_axes_;
  int v = g_.add_node(std::move(n));
  if (rules_.cse && !io) memo_.emplace(std::move(key), v);
  return v;
}

int Builder::node_of(const std::string& base, const std::string& op, std::vector<int> inputs,
                     DType dtype, const std::vector<bool>& varies, AttrMap attrs,
                     const std::string& key_extra) {
  AscNode n;
  n.name = base;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.out = local(dtype, varies);
  return add(std::move(n), key_extra);
}

std::vector<bool> Builder::varies(int v) const {
  const AscNode& n = node(v);
  std::vector<bool> out(all_axes_.size(), false);
  for (size_t d = 0; d < n.out.axes.size(); ++d)
    for (size_t a = 0; a < all_axes_.size(); ++a)
      if (all_axes_[a] == n.out.axes[d]) out[a] = n.out.repeats[d] != sym::Expr(1);
  return out;
}

std::vector<bool> Builder::union_of(const std::vector<int>& values) const {
  std::vector<bool> out(all_axes_.size(), false);
  for (int v : values) {
    if (is_scalar(v)) continue;
    std::vector<bool> w = varies(v);
    for (size_t a = 0; a < out.size(); ++a) out[a] = out[a] || w[a];
  }
  return out;
}

std::string Builder::fail_text(const std::string& what, const std::vector<int>& operands) const {
  std::string s = what + " on ";
  for (size_t i = 0; i < operands.size(); ++i)
    s += (i ? ", " : "") + std::string(dtype_name(node(operands[i]).out.dtype));
  return s + " values";
}

int Builder::data(const std::string& name, DType dtype, const std::vector<sym::Expr>& strides,
                  const sym::Expr& offset) {
  std::vector<sym::Expr> repeats;
  for (size_t a = 0; a < strides.size() && a < all_axes_.size(); ++a)
    repeats.push_back(strides[a] != sym::Expr(0) ? g_.axes[a].size : sym::Expr(1));
  return data(name, dtype, repeats, strides, offset);
}

int Builder::data(const std::string& name, DType dtype, const std::vector<sym::Expr>& repeats,
                  const std::vector<sym::Expr>& strides, const sym::Expr& offset) {
  if (strides.size() != all_axes_.size() || repeats.size() != all_axes_.size())
    throw CompileError("input " + name + ": " + std::to_string(strides.size()) + " strides, " +
                       std::to_string(repeats.size()) + " repeats for " +
                       std::to_string(all_axes_.size()) + " axes");
  check_dtype(dtype, "input " + name);
  AscNode d;
  d.name = name + ".data";
  d.op = "data";
  d.attrs = {{"index", int64_t{-1}}};  // numbered by finish()
  d.out.dtype = dtype;
  d.out.axes = all_axes_;
  d.out.repeats = repeats;
  d.out.strides = strides;
  d.out.offset = offset;
  int v = add(std::move(d));
  inputs_.emplace(v, name);
  return v;
}

int Builder::load(int data) {
  const AscNode& d = node(data);
  if (d.op != "data") throw CompileError("load of %" + d.name + ", not a data node");
  return node_of(inputs_.at(data) + ".load", "load", {data}, d.out.dtype, varies(data));
}

int Builder::gather(int data, int index, int64_t row_stride, int64_t bound) {
  const AscNode& d = node(data);
  if (d.op != "data") throw CompileError("gather from %" + d.name + ", not a data node");
  if (!is_int_lane(node(index).out.dtype))
    throw CompileError(fail_text("a gather by index", {index}) + " (expected i64 or i32)");
  std::vector<bool> w = union_of({index});
  std::vector<bool> dv = varies(data);
  for (size_t a = 0; a < w.size(); ++a) w[a] = w[a] || dv[a];
  return node_of(inputs_.at(data) + ".gather", "load", {data, index}, d.out.dtype, w,
                 {{"index_stride", row_stride}, {"index_bound", bound}});
}

int Builder::scalar(const Attr& value, DType dtype, const std::string& name) {
  check_dtype(dtype, "a constant");
  Attr v = value;
  if (!std::holds_alternative<int64_t>(v) && !std::holds_alternative<double>(v))
    throw CompileError("a constant must be a number, not " + attr_str(value));
  if (!is_floating(dtype)) {
    if (const double* f = std::get_if<double>(&value)) {
      if (dtype != DType::Bool && !std::isfinite(*f))
        throw CompileError("the constant " + attr_str(value) + " cast to " +
                           std::string(dtype_name(dtype)));
      v = dtype == DType::Bool ? int64_t{*f != 0.0} : static_cast<int64_t>(*f);
    } else if (dtype == DType::Bool) {
      v = int64_t{std::get<int64_t>(value) != 0};
    }
  }
  AscNode s;
  s.name = name;
  s.op = "scalar";
  s.attrs = {{"value", v}};
  s.out.dtype = dtype;
  return add(std::move(s));
}

int Builder::broadcast(int x, const std::vector<bool>& varies_to, const std::string& name) {
  if (is_scalar(x) || local(dtype(x), varies_to).repeats == node(x).out.repeats) return x;
  return node_of(name.empty() ? node(x).name + ".b" : name, "broadcast", {x}, dtype(x), varies_to);
}

int Builder::cast(int x, DType to, bool compute_types, const std::string& name) {
  const DType from = dtype(x);
  if (from == to) return x;
  check_dtype(to, "a cast to a value");
  if (is_scalar(x)) {
    Attr v = node(x).attrs.at("value");
    if (const int64_t* i = std::get_if<int64_t>(&v); i && is_floating(to))
      v = static_cast<double>(*i);
    return scalar(v, to);
  }
  if (to == DType::F32) {
    auto it = widened_.find(x);
    if (it != widened_.end()) return it->second;
  }
  // A rounding in compute types is not the explicit rounding of the same value (CSE keeps them
  // apart): only the first is undone by a widening.
  bool kept = compute_types && from == DType::F32 && (to == DType::F16 || to == DType::BF16);
  int out = node_of(name.empty() ? node(x).name + "." + std::string(dtype_name(to)) : name, "cast",
                    {x}, to, varies(x), {}, kept ? "compute types" : "");
  if (kept) widened_[out] = x;
  return out;
}

int Builder::compute(const std::string& kind, const std::vector<int>& operands,
                     const std::string& name) {
  const std::string what = name.empty() ? kind : name;
  const graph::OpDef* def = graph::find_op(kind);
  if (!def || def->cls != graph::OpClass::Elementwise)
    throw CompileError("op " + what + " has no AscIR kernel form");
  if (def->arity >= 0 && static_cast<int>(operands.size()) != def->arity)
    throw CompileError("op " + what + " takes " + std::to_string(def->arity) + " operands, not " +
                       std::to_string(operands.size()));
  std::vector<int> ops = operands;
  DType result;
  if (def->operand_dtypes == graph::kBoolType) {  // logic
    for (int v : ops)
      if (dtype(v) != DType::Bool) throw CompileError(fail_text(what, operands));
    result = DType::Bool;
  } else if (kind == "where") {
    DType x = dtype(ops[1]), y = dtype(ops[2]);
    if (dtype(ops[0]) != DType::Bool)
      throw CompileError("where with a " + std::string(dtype_name(dtype(ops[0]))) +
                         " condition (expected bool)");
    if (x == DType::Bool || y == DType::Bool) throw CompileError("where over bool values");
    if (is_int_lane(x) && is_int_lane(y)) {
      result = x == DType::I64 || y == DType::I64 ? DType::I64 : DType::I32;
    } else if ((is_int_lane(x) && !is_scalar(ops[1])) || (is_int_lane(y) && !is_scalar(ops[2]))) {
      throw CompileError("where over " + std::string(dtype_name(x)) + " and " +
                         std::string(dtype_name(y)) + " values");
    } else {
      result = DType::F32;
    }
    ops[1] = cast(ops[1], result), ops[2] = cast(ops[2], result);
  } else {
    bool ints = true;
    for (int v : ops) ints = ints && is_int_lane(dtype(v));
    DType lanes = DType::F32;
    if (ints) {
      const graph::DTypeMask both = graph::mask_of(DType::I64) | graph::mask_of(DType::I32);
      if ((def->operand_dtypes & both) != both)
        throw CompileError(fail_text(what, operands) + " (no integer kernel form)");
      lanes = DType::I32;
      for (int v : ops)
        if (dtype(v) == DType::I64) lanes = DType::I64;
    } else {
      for (int v : ops)
        if (!is_f32_lane(dtype(v)) && !is_scalar(v))
          throw CompileError(fail_text(what, operands) +
                             " (kernels compute it on floats, or on i64/i32 alone)");
      if (!(def->operand_dtypes & graph::mask_of(DType::F32)))
        throw CompileError(fail_text(what, operands) + " (no float kernel form)");
    }
    for (int& v : ops) v = cast(v, lanes);
    result = graph::gives_bool(kind, lanes) ? DType::Bool : lanes;
  }
  std::vector<bool> w = union_of(ops);
  for (int& v : ops) v = broadcast(v, w);
  return node_of(what, kind, ops, result, w);
}

int Builder::compute_typed(const std::string& kind, const std::vector<int>& operands, DType result,
                           AttrMap attrs, const std::string& name) {
  const graph::OpDef* def = graph::find_op(kind);
  if (kind != "broadcast" && (!def || def->cls != graph::OpClass::Elementwise))
    throw CompileError("op " + name + " (" + kind + ") has no AscIR kernel form");
  check_dtype(result, "op " + name);
  return node_of(name, kind, operands, result, std::vector<bool>(all_axes_.size(), true),
                 std::move(attrs));
}

int Builder::reduce(const std::string& kind, int x, const std::vector<int>& axes,
                    const std::string& name) {
  if (!graph::is_reduce_op(kind)) throw CompileError("the " + kind + " reduction");
  const DType t = dtype(x);
  if (!(graph::find_op(kind)->operand_dtypes & graph::mask_of(t)))  // reduce_any/all: bool
    throw CompileError(kind + " over " + std::string(dtype_name(t)) + " values");
  if (is_low_precision_float(t)) x = cast(x, DType::F32);
  std::vector<bool> full = varies(x);
  for (int a : axes) full.at(static_cast<size_t>(a)) = true;
  x = broadcast(x, full);
  std::vector<bool> out = full;
  for (int a : axes) out[static_cast<size_t>(a)] = false;
  return node_of(name.empty() ? kind : name, kind, {x}, dtype(x), out);
}

void Builder::store(const std::string& name, int x, DType dtype,
                    const std::vector<sym::Expr>& strides, const sym::Expr& offset) {
  if (strides.size() != all_axes_.size())
    throw CompileError("output " + name + ": " + std::to_string(strides.size()) + " strides for " +
                       std::to_string(all_axes_.size()) + " axes");
  std::vector<bool> want, have = varies(x);
  for (const sym::Expr& s : strides) want.push_back(s != sym::Expr(0));
  for (size_t a = 0; a < want.size(); ++a)
    if (have[a] && !want[a])
      throw CompileError("the value stored to " + name +
                         " varies along an axis its index does not");
  AscTensor t;
  t.dtype = dtype;
  t.offset = offset;
  for (size_t a = 0; a < want.size(); ++a) {
    if (!want[a]) continue;
    t.axes.push_back(all_axes_[a]);
    t.repeats.push_back(g_.axes[a].size);
    t.strides.push_back(strides[a]);
  }
  store(name, broadcast(x, want), t, false);
}

void Builder::store(const std::string& name, int x, const AscTensor& out, bool store_rounds) {
  check_dtype(out.dtype, "output " + name);
  bool rounds = store_rounds && is_low_precision_float(out.dtype) && dtype(x) == DType::F32;
  if (dtype(x) != out.dtype && !rounds)
    x = cast(x, out.dtype, false, name + "." + std::string(dtype_name(out.dtype)));
  AscNode s;
  s.name = name + ".store";
  s.op = "store";
  s.inputs = {x};
  s.out = out;
  AscNode o;
  o.name = name + ".out";
  o.op = "output";
  o.attrs = {{"index", int64_t{outputs_++}}};
  o.out = out;
  o.inputs = {add(std::move(s))};
  add(std::move(o));
}

AscGraph Builder::finish(std::vector<std::string>* inputs) const {
  const int n = static_cast<int>(g_.nodes.size());
  std::vector<bool> live(static_cast<size_t>(n), false);
  for (int i = n; i-- > 0;) {
    const AscNode& node = g_.nodes[static_cast<size_t>(i)];
    if (node.op == "store" || node.op == "output") live[static_cast<size_t>(i)] = true;
    if (live[static_cast<size_t>(i)])
      for (int in : node.inputs) live[static_cast<size_t>(in)] = true;
  }
  std::vector<int> order;
  for (int pass = 0; pass < 2; ++pass)  // the body, then the stores and outputs
    for (int i = 0; i < n; ++i) {
      const std::string& op = g_.nodes[static_cast<size_t>(i)].op;
      bool io = op == "store" || op == "output";
      if (live[static_cast<size_t>(i)] && io == (pass == 1)) order.push_back(i);
    }
  AscGraph out;
  out.name = g_.name;
  out.axes = g_.axes;
  std::vector<int> at(static_cast<size_t>(n), -1);
  int64_t data_index = 0;
  if (inputs) inputs->clear();
  for (int i : order) {
    AscNode node = g_.nodes[static_cast<size_t>(i)];
    for (int& in : node.inputs) in = at[static_cast<size_t>(in)];
    if (node.op == "data") {
      node.attrs["index"] = data_index++;
      if (inputs) inputs->push_back(inputs_.at(i));
    }
    at[static_cast<size_t>(i)] = out.add_node(std::move(node));
  }
  verify(out);
  return out;
}

}  // namespace af::ascir
