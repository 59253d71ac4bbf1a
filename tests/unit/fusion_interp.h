// Test helper for test_fusion.cpp: a reference interpreter of Graph IR and an interpreter of a
// FusedGraph (kernels run node by node over every point of their loop axes, reading and
// writing memory through the data/store tensors' strides). Values are doubles; f16/bf16
// rounding is not modelled, so numeric tests use f32 and bool.
#pragma once
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

/// Runs one kernel: for every point of its loop axes, every node in order.
inline void run_kernel(const FusedGraph& fg, const FusedNode& step, std::vector<Buffer>& vals) {
  const graph::Graph& g = fg.source;
  sym::Bindings b = g.hints();
  const ascir::AscGraph& k = step.kernel;
  for (int out : step.outputs) vals[out] = alloc(g.nodes[out].type, b);
  std::vector<int64_t> sizes;
  for (const auto& a : k.axes) sizes.push_back(a.size.eval(b));
  int64_t points = 1;
  for (int64_t s : sizes) points *= s;
  std::vector<double> v(k.nodes.size());
  for (int64_t f = 0; f < points; ++f) {
    auto idx = unflatten(f, sizes);
    auto address = [&](const ascir::AscTensor& t) {
      int64_t a = t.offset.eval(b);
      for (size_t d = 0; d < t.axes.size(); ++d) {
        bool expanded = t.repeats[d].eval(b) == 1;
        a += (expanded ? 0 : idx[t.axes[d]]) * t.strides[d].eval(b);
      }
      return a;
    };
    for (size_t i = 0; i < k.nodes.size(); ++i) {
      const ascir::AscNode& n = k.nodes[i];
      std::vector<double> in;
      for (int x : n.inputs) in.push_back(v[x]);
      if (n.op == "data" || n.op == "output") continue;
      if (n.op == "load") {
        const ascir::AscNode& d = k.nodes[n.inputs[0]];
        const Buffer& src = vals[step.inputs.at(index_of(d))];
        v[i] = src.storage->at(src.offset + address(d.out));
      } else if (n.op == "store") {
        v[i] = in[0];
        for (size_t j = i + 1; j < k.nodes.size(); ++j)
          if (k.nodes[j].op == "output" && k.nodes[j].inputs[0] == static_cast<int>(i)) {
            Buffer& dst = vals[step.outputs.at(index_of(k.nodes[j]))];
            (*dst.storage).at(dst.offset + address(n.out)) = in[0];
          }
      } else if (n.op == "scalar") {
        const Attr& a = n.attrs.at("value");
        v[i] = std::holds_alternative<double>(a) ? std::get<double>(a)
                                                 : static_cast<double>(std::get<int64_t>(a));
      } else if (n.op == "broadcast") {
        v[i] = in[0];
      } else if (n.op == "cast") {
        v[i] = convert(in[0], n.out.dtype);
      } else {
        v[i] = apply_op(n.op, in);
      }
    }
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
