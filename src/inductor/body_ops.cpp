// BodyOps: Inductor's loop-body ops as AscIR values, through an ascir::LoopNestBuilder.
#include "inductor/body_ops.h"

#include <algorithm>
#include <map>

#include "graph/op_registry.h"
#include "support/error.h"

namespace af::inductor {
namespace {

using Kind = BodyValue::Kind;

/// Inductor's op names the registry spells otherwise (bitwise_* only on bools; and_ and or_ are
/// what logical_and and logical_or lower to, on bools).
const std::map<std::string, std::string, std::less<>> kRenamed = {
    {"truediv", "div"},
    {"and_", "logical_and"},
    {"or_", "logical_or"},
    {"bitwise_and", "logical_and"},
    {"bitwise_or", "logical_or"},
    {"bitwise_xor", "logical_xor"},
    {"bitwise_not", "logical_not"},
};

bool is_float_name(const std::string& d) {
  std::optional<DType> t = parse_dtype(d);
  return t && is_floating(*t);
}

bool is_int_lane(const std::string& d) {
  return d == "i64" || d == "i32";
}

double as_double(const Attr& v) {
  const int64_t* i = std::get_if<int64_t>(&v);
  return i ? static_cast<double>(*i) : std::get<double>(v);
}

int64_t as_int(const Attr& v) {
  const double* d = std::get_if<double>(&v);
  return d ? static_cast<int64_t>(*d) : std::get<int64_t>(v);
}

DType dtype_named(const std::string& name) {
  std::optional<DType> t = parse_dtype(name);
  if (!t) throw CompileError("unknown dtype '" + name + "'");
  return *t;
}

}  // namespace

BodyOps::BodyOps(ascir::LoopSpace space, std::vector<std::string> loop_vars,
                 bool emulate_precision_casts)
    : b_("k", std::move(space)),
      loop_vars_(std::move(loop_vars)),
      emulate_precision_casts_(emulate_precision_casts) {}

int BodyOps::add(BodyValue v) {
  values_.push_back(std::move(v));
  return static_cast<int>(values_.size()) - 1;
}

int BodyOps::add_node(int node) {
  BodyValue v;
  v.node = node;
  v.dtype = std::string(dtype_name(b_.dtype(node)));
  return add(std::move(v));
}

bool BodyOps::is_scalar(int v) const {
  const BodyValue& x = value(v);
  return x.kind == Kind::Node ? b_.is_scalar(x.node) : x.kind != Kind::Foreign;
}

void BodyOps::set_reduction_vars(const std::vector<std::string>& vars) {
  reduce_axes_.clear();
  for (const std::string& v : vars)
    for (int a : b_.space().axes_of(v)) reduce_axes_.push_back(a);
}

int BodyOps::number(const Attr& value, bool is_bool) {
  if (is_bool) return add_node(b_.scalar(int64_t{as_int(value) != 0}, DType::Bool));
  return add_node(std::holds_alternative<double>(value) ? b_.scalar(value, DType::F32)
                                                        : b_.scalar(value, DType::I64));
}

int BodyOps::constant(const Attr& value, const std::string& dtype) {
  if (dtype == "bool") return add_node(b_.scalar(int64_t{as_double(value) != 0.0}, DType::Bool));
  if (is_float_name(dtype)) return add_node(b_.scalar(as_double(value), DType::F32));
  if (is_int_lane(dtype)) return add_node(b_.scalar(as_int(value), dtype_named(dtype)));
  BodyValue narrow;  // a node only once cast to a kernel dtype or used by an op
  narrow.kind = Kind::Narrow;
  narrow.dtype = dtype;
  narrow.constant = as_int(value);
  return add(std::move(narrow));
}

int BodyOps::index_expr(const sym::Expr& index, const std::string& dtype) {
  if (is_float_name(dtype) && !index.is_const() && !sym::uses_any(index, loop_vars_)) {
    BodyValue size;  // a size: a mean's divisor
    size.kind = Kind::Size;
    size.dtype = "f32";
    size.size = index;
    return add(std::move(size));
  }
  std::optional<DType> t = parse_dtype(dtype);
  if (!t)
    throw CompileError("index_expr of dtype " + dtype +
                       " (kernels compute f32, f16, bf16, i64, i32)");
  return add_node(b_.index_value(index, *t));
}

int BodyOps::materialize(int v) {
  const BodyValue& x = value(v);
  if (x.kind != Kind::Size) return v;
  std::optional<int64_t> c = x.size.as_const();
  if (!c)
    throw CompileError("the size " + x.size.str() +
                       " is used as a value (only as a mean's divisor)");
  return add_node(b_.scalar(static_cast<double>(*c), DType::F32));
}

int BodyOps::node_of(int v, const std::string& what) {
  const BodyValue& x = value(materialize(v));
  if (x.kind != Kind::Node)
    throw CompileError(what + " of " + x.dtype + " values" +
                       (x.buffer.empty() ? "" : " read from " + x.buffer) +
                       " (kernels compute f32, f16, bf16, bool, i64, i32)");
  return x.node;
}

int BodyOps::cast(int v, DType to, bool compute_types) {
  if (value(v).kind == Kind::Narrow) v = add_node(b_.scalar(value(v).constant, DType::I64));
  return add_node(b_.cast(node_of(v, "cast"), to, compute_types));
}

int BodyOps::to_dtype(int x, const std::string& dtype, bool compute_types) {
  const BodyValue v = value(x);
  if (v.kind == Kind::Size && is_float_name(dtype)) return x;
  if (dtype == "bool" && v.dtype != "bool" && !is_int_lane(v.dtype) && !is_scalar(x))
    return compute("ne", {cast(x, DType::F32), number(0.0, false)}, "ne");
  return cast(x, dtype_named(dtype), compute_types && !emulate_precision_casts_);
}

int BodyOps::compute(const std::string& kind, const std::vector<int>& args,
                     const std::string& name) {
  if (kind == "div" && args.size() == 2 && value(args[1]).kind == Kind::Size &&
      value(args[0]).kind == Kind::Node) {
    int mean = b_.mean_of(value(args[0]).node, value(args[1]).size);  // sum(x) / N, N elements
    if (mean >= 0) return add_node(mean);
  }
  std::vector<int> nodes;
  for (int a : args) nodes.push_back(node_of(a, name));
  return add_node(b_.compute(kind, nodes, name));
}

int BodyOps::where(int cond, int a, int b) {
  if (value(cond).dtype != "bool") cond = to_dtype(cond, "bool", true);
  return compute("where", {cond, a, b}, "where");
}

int BodyOps::op(const std::string& name, const std::vector<int>& args) {
  if (name == "square" && args.size() == 1) return compute("mul", {args[0], args[0]}, "mul");
  if (name == "fma" && args.size() == 3)
    return compute("add", {compute("mul", {args[0], args[1]}, "mul"), args[2]}, "add");
  bool bools = true;
  for (int a : args) bools = bools && value(a).dtype == "bool";
  auto renamed = kRenamed.find(name);  // bitwise_* of integers are the registry's own kinds
  const bool rename = renamed != kRenamed.end() && (bools || name.rfind("bitwise_", 0) != 0);
  const std::string kind = rename ? renamed->second : name;
  const graph::OpDef* def = graph::find_op(kind);
  if (!def || def->cls != graph::OpClass::Elementwise)
    throw CompileError("op " + name + " has no AscIR kernel form");
  if (kind == "where") {
    if (args.size() != 3) throw CompileError("where takes 3 operands");
    return where(args[0], args[1], args[2]);
  }
  return compute(kind, args, name);
}

std::vector<std::string> BodyOps::gathers_in(const sym::Expr& index) const {
  std::vector<std::string> out;
  for (const std::string& s : index.symbols())
    for (const auto& [symbol, at] : indirect_)
      if (s == symbol) out.push_back(s);
  return out;
}

int BodyOps::load(const std::string& buffer, const std::string& dtype, const sym::Expr& index) {
  std::vector<std::string> gathers = gathers_in(index);
  for (const auto& [name, at] : stored_) {
    if (name != buffer) continue;
    if (!gathers.empty() || !b_.same_index(at.first, index))
      throw CompileError("reads " + buffer + ", written in the same kernel, at another index");
    return at.second;
  }
  BodyValue foreign;  // not a node: the value's use fails with its own reason
  foreign.kind = Kind::Foreign;
  foreign.dtype = dtype;
  foreign.buffer = buffer;
  std::optional<DType> t = parse_dtype(dtype);
  if (!t) return add(std::move(foreign));
  if (gathers.size() > 1)
    throw CompileError("load of " + buffer + ": index " + index.str() + " gathers by two values");
  int node;
  if (gathers.empty()) {
    node = b_.read(buffer, *t, index);
  } else {
    auto it = std::find_if(indirect_.begin(), indirect_.end(),
                           [&](const auto& g) { return g.first == gathers[0]; });
    node = b_.gather(buffer, *t, index, gathers[0], it->second.first, it->second.second);
  }
  return node < 0 ? add(std::move(foreign)) : add_node(node);
}

std::string BodyOps::indirect_indexing(int x, const sym::Expr& size, bool wrap_neg) {
  x = materialize(x);
  const BodyValue v = value(x);
  if (!is_int_lane(v.dtype) || v.kind != Kind::Node)
    throw CompileError("indirect indexing by " + v.dtype + " values" +
                       (v.buffer.empty() ? "" : " of " + v.buffer));
  std::optional<int64_t> n = size.as_const();
  if (!n || *n < 1)
    throw CompileError("indirect indexing into a dim of size " + size.str() + " (not a constant)");
  if (b_.is_scalar(v.node)) throw CompileError("indirect indexing by a constant");
  if (wrap_neg)  // index + size where negative
    x = where(compute("lt", {x, number(int64_t{0}, false)}, "lt"),
              compute("add", {x, number(*n, false)}, "add"), x);
  std::string symbol = "af_gather" + std::to_string(indirect_.size());
  indirect_.push_back({symbol, {node_of(cast(x, DType::I64), "an index"), *n}});
  return symbol;
}

std::optional<std::pair<sym::Expr, sym::Expr>> BodyOps::bounds(const sym::Expr& index) const {
  if (!gathers_in(index).empty()) return std::nullopt;  // the gather checks its index
  return b_.bounds(index);
}

void BodyOps::store(const std::string& buffer, const sym::Expr& index, int x,
                    const std::string& mode) {
  if (!mode.empty())
    throw CompileError("a store with mode " + mode + " into " + buffer + " (a scatter-accumulate)");
  for (const auto& s : stored_)
    if (s.first == buffer) throw CompileError(buffer + " is written twice in one kernel");
  if (!gathers_in(index).empty())
    throw CompileError("a store into " + buffer + " by an index value (a scatter)");
  stored_.push_back({buffer, {index, materialize(x)}});
}

int BodyOps::reduce(const std::string& kind, int v) {
  const BodyValue x = value(v);
  if (kind != "reduce_any" && !is_float_name(x.dtype) && x.kind != Kind::Size)
    throw CompileError(kind + " over " + x.dtype + " values (integer reductions stay Inductor's)");
  return add_node(b_.reduce(kind, node_of(v, kind), reduce_axes_));
}

std::vector<int> BodyOps::reduction(const std::string& type, int x) {
  if (reduce_axes_.empty()) throw CompileError("a " + type + " reduction outside a reduction loop");
  if (type == "welford_reduce") {
    int mean = reduce("reduce_mean", x);
    int dev = compute("sub", {cast(x, DType::F32), mean}, "welford.dev");
    int m2 = reduce("reduce_sum", compute("mul", {dev, dev}, "welford.sq"));
    BodyValue count;
    count.kind = Kind::Size;
    count.dtype = "f32";
    count.size = b_.count(reduce_axes_);
    return {mean, m2, add(std::move(count))};
  }
  if (type == "any" && value(x).dtype != "bool") x = to_dtype(x, "bool", true);
  static const char* kReductions[] = {"sum", "max", "min", "prod", "any"};
  if (std::find(std::begin(kReductions), std::end(kReductions), type) == std::end(kReductions))
    throw CompileError("the " + type + " reduction");
  return {reduce("reduce_" + type, x)};
}

std::vector<std::string> BodyOps::stored() const {
  std::vector<std::string> out;
  for (const auto& s : stored_) out.push_back(s.first);
  return out;
}

ascir::AscGraph BodyOps::finish(const std::vector<std::pair<std::string, std::string>>& outputs,
                                std::vector<std::string>* inputs) {
  for (const auto& [buffer, dtype] : outputs) {
    auto it = std::find_if(stored_.begin(), stored_.end(),
                           [&](const auto& s) { return s.first == buffer; });
    if (it == stored_.end()) throw CompileError(buffer + " is not stored by the group");
    b_.write(buffer, node_of(it->second.second, "the store of " + buffer), dtype_named(dtype),
             it->second.first);
  }
  return b_.finish(inputs);
}

}  // namespace af::inductor
