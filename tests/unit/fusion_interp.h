// Test helper for test_fusion.cpp: a reference interpreter of Graph IR and an interpreter of a
// FusedGraph (kernels run node by node, each over every point of the loop axes, reading and
// writing memory through the data/store tensors' strides). A kernel node is computed once per
// index of the axes it varies along (repeat != 1) and is constant along the others, so a node
// that claims repeat 1 on an axis its (non-reduce) input varies along is an error; a reduce
// folds its input over the axes it reduces; a store that writes two different values to one
// address is an error. A concat kernel (FusedNode::segments) runs each segment as a kernel of its
// own into the outputs it allocates once: each segment writes its slice, and two segments that
// write one element are an error. Views alias their operand's storage (the view's type gives its
// strides and offset); concat copies its operands one after another. Values are doubles;
// f16/bf16 rounding is not modelled, so numeric tests use f32 and bool.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fusion/fused_graph.h"
#include "graph/graph.h"

namespace af::fusion::testing {

/// A strided view of shared storage.
struct Buffer {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  std::shared_ptr<std::vector<double>> storage;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  double at(const std::vector<int64_t>& idx) const {
    int64_t a = offset;
    for (size_t d = 0; d < idx.size(); ++d) a += idx[d] * strides[d];
    return storage->at(a);
  }
};

/// Row-major multi-index of flat position `flat` within `shape`.
inline std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

inline std::vector<int64_t> eval_all(const std::vector<sym::Expr>& es, const sym::Bindings& b) {
  std::vector<int64_t> out;
  for (const auto& e : es) out.push_back(e.eval(b));
  return out;
}

/// Fresh storage for a value of type `t` (large enough for its strides).
inline Buffer alloc(const graph::TensorType& t, const sym::Bindings& b) {
  Buffer buf;
  buf.shape = eval_all(t.shape, b);
  buf.strides = eval_all(t.strides, b);
  buf.offset = t.offset.eval(b);
  int64_t span = buf.offset + 1;
  for (size_t d = 0; d < buf.shape.size(); ++d)
    if (buf.shape[d] > 0) span += (buf.shape[d] - 1) * buf.strides[d];
  buf.storage = std::make_shared<std::vector<double>>(span, std::nan(""));
  return buf;
}

/// The math of one elementwise op (the subset the tests use).
inline double apply_op(const std::string& op, const std::vector<double>& x) {
  if (op == "add") return x[0] + x[1];
  if (op == "sub") return x[0] - x[1];
  if (op == "mul") return x[0] * x[1];
  if (op == "div") return x[0] / x[1];
  if (op == "maximum") return std::max(x[0], x[1]);
  if (op == "minimum") return std::min(x[0], x[1]);
  if (op == "log") return std::log(x[0]);
  if (op == "sqrt") return std::sqrt(x[0]);
  if (op == "rsqrt") return 1 / std::sqrt(x[0]);
  if (op == "reciprocal") return 1 / x[0];
  if (op == "neg") return -x[0];
  if (op == "abs") return std::fabs(x[0]);
  if (op == "exp") return std::exp(x[0]);
  if (op == "sigmoid") return 1 / (1 + std::exp(-x[0]));
  if (op == "tanh") return std::tanh(x[0]);
  if (op == "relu") return std::max(x[0], 0.0);
  if (op == "gt") return x[0] > x[1] ? 1 : 0;
  if (op == "where") return x[0] != 0 ? x[1] : x[2];
  throw std::runtime_error("interpreter: no math for op " + op);
}

inline double convert(double v, DType to) {
  return to == DType::Bool ? (v != 0 ? 1 : 0) : v;
}

/// Folds `x` (the elements one reduction combines) with reduce kind `op`.
inline double reduce_values(const std::string& op, const std::vector<double>& x) {
  double r = op == "reduce_prod" || op == "reduce_all" ? 1
             : op == "reduce_max"                      ? -INFINITY
             : op == "reduce_min"                      ? INFINITY
                                                       : 0;
  for (double v : x) {
    if (op == "reduce_sum" || op == "reduce_mean")
      r += v;
    else if (op == "reduce_prod")
      r *= v;
    else if (op == "reduce_max")
      r = std::isnan(v) || std::isnan(r) ? NAN : std::max(r, v);
    else if (op == "reduce_min")
      r = std::isnan(v) || std::isnan(r) ? NAN : std::min(r, v);
    else if (op == "reduce_any")
      r = r != 0 || v != 0 ? 1 : 0;
    else if (op == "reduce_all")
      r = r != 0 && v != 0 ? 1 : 0;
    else
      throw std::runtime_error("interpreter: no math for reduce " + op);
  }
  if (op == "reduce_mean") r /= static_cast<double>(x.size());
  return r;
}

inline bool is_reduce_kind(const std::string& op) {
  return op.rfind("reduce_", 0) == 0;
}

/// Graph IR reduce node `n` over operand buffer `x`.
inline Buffer eval_reduce(const graph::Node& n, const Buffer& x, const sym::Bindings& b) {
  Buffer out = alloc(n.type, b);
  std::vector<int64_t> dims = graph::reduce_dims(n);
  bool keep = graph::reduce_keepdim(n);
  auto reduced = [&](size_t d) {
    return std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
  };
  std::vector<std::vector<double>> groups(static_cast<size_t>(out.numel()));
  for (int64_t f = 0; f < x.numel(); ++f) {
    auto xi = unflatten(f, x.shape);
    std::vector<int64_t> oi;
    for (size_t d = 0; d < xi.size(); ++d)
      if (!reduced(d))
        oi.push_back(xi[d]);
      else if (keep)
        oi.push_back(0);
    int64_t flat = 0;
    for (size_t d = 0; d < oi.size(); ++d) flat = flat * out.shape[d] + oi[d];
    groups[flat].push_back(x.at(xi));
  }
  for (int64_t f = 0; f < out.numel(); ++f) {
    auto idx = unflatten(f, out.shape);
    int64_t a = out.offset;
    for (size_t d = 0; d < idx.size(); ++d) a += idx[d] * out.strides[d];
    (*out.storage)[a] = reduce_values(n.kind, groups[f]);
  }
  return out;
}

/// Views other than permute (whose operand may itself be a strided view): the result type
/// describes the view over the operand's storage.
inline bool is_view_kind(const std::string& kind) {
  return kind == "slice" || kind == "reshape" || kind == "unsqueeze" || kind == "squeeze" ||
         kind == "expand";
}

/// Graph IR concat node `n`: its operands one after another along attribute `dim`.
inline Buffer eval_concat(const graph::Node& n, const std::vector<Buffer>& vals,
                          const sym::Bindings& b) {
  Buffer out = alloc(n.type, b);
  const size_t dim = static_cast<size_t>(graph::attr_int(n, "dim"));
  int64_t start = 0;
  for (int o : n.operands) {
    const Buffer& x = vals[o];
    for (int64_t f = 0; f < x.numel(); ++f) {
      auto idx = unflatten(f, x.shape);
      int64_t a = out.offset;
      for (size_t d = 0; d < idx.size(); ++d)
        a += (idx[d] + (d == dim ? start : 0)) * out.strides[d];
      (*out.storage).at(a) = x.at(idx);
    }
    start += x.shape.at(dim);
  }
  return out;
}

/// Evaluates node `i` of `g` the way eager would (views alias, opaque "test.neg" negates).
inline Buffer eval_node(const graph::Graph& g, int i, std::vector<Buffer>& vals,
                        const sym::Bindings& b) {
  const graph::Node& n = g.nodes[i];
  if (n.kind == "permute") {
    Buffer v = vals[n.operands[0]];
    Buffer out = v;
    const auto& dims = graph::attr_list(n, "dims");
    for (size_t d = 0; d < dims.size(); ++d) {
      out.shape[d] = v.shape[dims[d].eval(b)];
      out.strides[d] = v.strides[dims[d].eval(b)];
    }
    return out;
  }
  if (is_view_kind(n.kind)) {  // the type holds the view's layout over the operand's storage
    Buffer out = vals[n.operands[0]];
    out.shape = eval_all(n.type.shape, b);
    out.strides = eval_all(n.type.strides, b);
    out.offset = n.type.offset.eval(b);
    return out;
  }
  if (is_reduce_kind(n.kind)) return eval_reduce(n, vals[n.operands[0]], b);
  if (n.kind == "concat") return eval_concat(n, vals, b);
  Buffer out = alloc(n.type, b);
  for (int64_t f = 0; f < out.numel(); ++f) {
    auto idx = unflatten(f, out.shape);
    double r;
    if (n.kind == "broadcast") {
      const Buffer& x = vals[n.operands[0]];
      std::vector<int64_t> xi(x.shape.size());
      size_t lead = idx.size() - xi.size();
      for (size_t d = 0; d < xi.size(); ++d) xi[d] = x.shape[d] == 1 ? 0 : idx[lead + d];
      r = x.at(xi);
    } else if (n.kind == "cast") {
      r = convert(vals[n.operands[0]].at(idx), n.type.dtype);
    } else if (n.kind == "opaque") {
      r = -vals[n.operands[0]].at(idx);
    } else {
      std::vector<double> args;
      for (int o : n.operands)
        args.push_back(vals[o].shape.empty() ? vals[o].at({}) : vals[o].at(idx));
      r = apply_op(n.kind, args);
    }
    int64_t a = out.offset;
    for (size_t d = 0; d < idx.size(); ++d) a += idx[d] * out.strides[d];
    (*out.storage)[a] = r;
  }
  return out;
}

/// Random inputs and the consts of `g` (deterministic for a seed).
inline std::vector<Buffer> make_sources(const graph::Graph& g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  sym::Bindings b = g.hints();
  std::vector<Buffer> vals(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (n.kind != "input" && n.kind != "const") continue;
    vals[i] = alloc(n.type, b);
    for (double& v : *vals[i].storage)
      v = n.kind == "const" ? graph::attr_float(n, "value") : convert(dist(rng), n.type.dtype);
  }
  return vals;
}

/// Eager reference: every node of `g` in order.
inline std::vector<Buffer> run_reference(const graph::Graph& g, unsigned seed) {
  std::vector<Buffer> vals = make_sources(g, seed);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind != "input" && g.nodes[i].kind != "const")
      vals[i] = eval_node(g, static_cast<int>(i), vals, g.hints());
  return vals;
}

inline int64_t index_of(const ascir::AscNode& n) {
  return std::get<int64_t>(n.attrs.at("index"));
}

/// Runs one loop nest (a kernel, or a segment of a concat kernel) into the already allocated
/// buffers of its outputs: every node in order, each over every point of the loop axes. Records
/// every (output value, address) it writes in `owner` as written by nest number `nest`.
inline void run_nest(const FusedGraph& fg, const FusedNode& step, std::vector<Buffer>& vals,
                     std::map<std::pair<int, int64_t>, int>& owner, int nest) {
  const graph::Graph& g = fg.source;
  sym::Bindings b = g.hints();
  const ascir::AscGraph& k = step.kernel;
  std::vector<int64_t> sizes;
  for (const auto& a : k.axes) sizes.push_back(a.size.eval(b));
  const size_t rank = sizes.size();
  int64_t points = 1;
  for (int64_t s : sizes) points *= s;
  auto pos = [&](int axis) {
    for (size_t i = 0; i < rank; ++i)
      if (k.axes[i].id == axis) return i;
    throw std::runtime_error("interpreter: unknown axis id " + std::to_string(axis));
  };
  // Per node: whether it varies along each axis (listed with a repeat other than 1).
  auto varies = [&](const ascir::AscNode& n) {
    std::vector<bool> v(rank, false);
    for (size_t d = 0; d < n.out.axes.size(); ++d)
      if (n.out.repeats[d].eval(b) != 1) v[pos(n.out.axes[d])] = true;
    return v;
  };
  auto flat_of = [&](const std::vector<int64_t>& idx) {
    int64_t f = 0;
    for (size_t d = 0; d < rank; ++d) f = f * sizes[d] + idx[d];
    return f;
  };
  auto address = [&](const ascir::AscTensor& t, const std::vector<int64_t>& idx) {
    int64_t a = t.offset.eval(b);
    for (size_t d = 0; d < t.axes.size(); ++d)
      if (t.repeats[d].eval(b) != 1) a += idx[pos(t.axes[d])] * t.strides[d].eval(b);
    return a;
  };
  std::vector<std::vector<double>> v(k.nodes.size());
  std::vector<std::vector<bool>> var(k.nodes.size());
  std::map<std::pair<int, int64_t>, double> written;  // (output value, address) -> value
  for (size_t i = 0; i < k.nodes.size(); ++i) {
    const ascir::AscNode& n = k.nodes[i];
    if (n.op == "data" || n.op == "output") continue;
    var[i] = varies(n);
    std::vector<bool> reduced(rank, false);
    for (int x : n.inputs)
      for (size_t d = 0; d < rank && k.nodes[x].op != "data"; ++d)
        if (var[x][d] && !var[i][d]) {
          if (!is_reduce_kind(n.op))
            throw std::runtime_error("interpreter: node %" + n.name + " has repeat 1 on axis " +
                                     k.axes[d].name + " but its input %" + k.nodes[x].name +
                                     " varies along it");
          reduced[d] = true;
        }
    v[i].assign(points, NAN);
    for (int64_t f = 0; f < points; ++f) {
      auto idx = unflatten(f, sizes);
      std::vector<int64_t> at = idx;  // where this node's value is computed
      for (size_t d = 0; d < rank; ++d)
        if (!var[i][d]) at[d] = 0;
      if (at != idx) {
        v[i][f] = v[i][flat_of(at)];
        continue;
      }
      std::vector<double> in;
      for (int x : n.inputs) in.push_back(k.nodes[x].op == "data" ? NAN : v[x].at(f));
      if (n.op == "load") {
        const ascir::AscNode& d = k.nodes[n.inputs[0]];
        const Buffer& src = vals[step.inputs.at(index_of(d))];
        v[i][f] = src.storage->at(src.offset + address(d.out, idx));
      } else if (n.op == "store") {
        v[i][f] = in[0];
        for (size_t j = i + 1; j < k.nodes.size(); ++j)
          if (k.nodes[j].op == "output" && k.nodes[j].inputs[0] == static_cast<int>(i)) {
            int value = step.outputs.at(index_of(k.nodes[j]));
            Buffer& dst = vals[value];
            int64_t a = dst.offset + address(n.out, idx);
            auto [it, fresh] = written.emplace(std::make_pair(value, a), in[0]);
            if (!fresh && !(it->second == in[0] || (std::isnan(it->second) && std::isnan(in[0]))))
              throw std::runtime_error("interpreter: store %" + n.name +
                                       " writes two different values to one element");
            (*dst.storage).at(a) = in[0];
            auto [by, first] = owner.emplace(std::make_pair(value, a), nest);
            if (!first && by->second != nest)
              throw std::runtime_error("interpreter: %" + g.nodes[value].name + " element at " +
                                       std::to_string(a) + " is written by segments " +
                                       std::to_string(by->second) + " and " + std::to_string(nest));
          }
      } else if (n.op == "scalar") {
        const Attr& a = n.attrs.at("value");
        v[i][f] = std::holds_alternative<double>(a) ? std::get<double>(a)
                                                    : static_cast<double>(std::get<int64_t>(a));
      } else if (n.op == "broadcast") {
        v[i][f] = in[0];
      } else if (n.op == "cast") {
        v[i][f] = convert(in[0], n.out.dtype);
      } else if (is_reduce_kind(n.op)) {
        // Every point that differs from idx only on the reduced axes.
        std::vector<int64_t> rsizes;
        for (size_t d = 0; d < rank; ++d) rsizes.push_back(reduced[d] ? sizes[d] : 1);
        int64_t count = 1;
        for (int64_t s : rsizes) count *= s;
        std::vector<double> group;
        for (int64_t r = 0; r < count; ++r) {
          auto ri = unflatten(r, rsizes);
          std::vector<int64_t> q = idx;
          for (size_t d = 0; d < rank; ++d)
            if (reduced[d]) q[d] = ri[d];
          group.push_back(v[n.inputs[0]][flat_of(q)]);
        }
        v[i][f] = reduce_values(n.op, group);
      } else {
        v[i][f] = apply_op(n.op, in);
      }
    }
  }
}

/// Runs one kernel step: its outputs are allocated once, then its loop nest runs, or for a
/// concat kernel each segment's (segments run in parallel blocks, so no segment may read a value
/// the kernel writes, and no element of an output may be written by two segments).
inline void run_kernel(const FusedGraph& fg, const FusedNode& step, std::vector<Buffer>& vals) {
  const graph::Graph& g = fg.source;
  for (int out : step.outputs) vals[out] = alloc(g.nodes[out].type, g.hints());
  std::map<std::pair<int, int64_t>, int> owner;
  if (!step.is_concat()) {
    run_nest(fg, step, vals, owner, 0);
    return;
  }
  for (size_t s = 0; s < step.segments.size(); ++s) {
    const FusedNode& seg = step.segments[s];
    for (int in : seg.inputs)
      if (std::find(step.outputs.begin(), step.outputs.end(), in) != step.outputs.end())
        throw std::runtime_error("interpreter: segment @" + seg.name + " reads %" +
                                 g.nodes[in].name + ", which concat kernel @" + step.name +
                                 " writes");
    for (int out : seg.outputs)
      if (std::find(step.outputs.begin(), step.outputs.end(), out) == step.outputs.end())
        throw std::runtime_error("interpreter: segment @" + seg.name + " writes %" +
                                 g.nodes[out].name + ", not an output of @" + step.name);
    run_nest(fg, seg, vals, owner, static_cast<int>(s));
  }
}

/// Runs the fused program: kernels by interpretation, opaque steps like eager. Throws when a
/// step reads a value no earlier step computed.
inline std::vector<Buffer> run_fused(const FusedGraph& fg, unsigned seed) {
  const graph::Graph& g = fg.source;
  std::vector<Buffer> vals = make_sources(g, seed);
  for (const FusedNode& step : fg.nodes) {
    for (int in : step.inputs)
      if (!vals[in].storage)
        throw std::runtime_error("step " + step.name + " reads %" + g.nodes[in].name +
                                 " before it is computed");
    if (step.kind == FusedNode::Kind::Kernel)
      run_kernel(fg, step, vals);
    else
      for (int op : step.ops) vals[op] = eval_node(g, op, vals, g.hints());
  }
  return vals;
}

/// Largest |a - b| over the elements of two same-shaped buffers (inf when one is NaN).
inline double max_diff(const Buffer& a, const Buffer& b) {
  if (!a.storage || !b.storage || a.shape != b.shape) return INFINITY;
  double m = 0;
  for (int64_t f = 0; f < a.numel(); ++f) {
    auto idx = unflatten(f, a.shape);
    double d = std::fabs(a.at(idx) - b.at(idx));
    m = std::isnan(d) ? INFINITY : std::max(m, d);
  }
  return m;
}

}  // namespace af::fusion::testing
