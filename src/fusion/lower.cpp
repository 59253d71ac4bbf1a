// Lowering: each fusible Graph IR op becomes a one-op AscGraph kernel; the rest Opaque steps.
#include "fusion/lower.h"

#include <algorithm>
#include <map>
#include <set>

#include "ascir/builder.h"
#include "fusion/concat_merge.h"
#include "fusion/steps.h"
#include "graph/op_registry.h"
#include "graph/verifier.h"
#include "schedule/reduce_schedule.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscTensor;
using graph::OpClass;

/// Most operands of a concat that becomes a kernel (one segment each; their TilingData must fit
/// AF_MAX_TILING_DATA_BYTES).
constexpr int kMaxConcatSegments = 16;

/// The dtypes this frontend's kernels read and write (the registry's rows say which ops).
constexpr graph::DTypeMask kKernelTypes = graph::kFloatTypes | graph::kBoolType | graph::kIntTypes;

/// The dtype a kernel computes a value of dtype `t` in.
DType compute_dtype(DType t) {
  return is_low_precision_float(t) ? DType::F32 : t;
}

std::string where(const graph::Graph& g, int node) {
  const graph::Node& n = g.nodes[node];
  return "node %" + n.name + " (" + n.kind + ")";
}

/// Builds the one-op kernel of Graph IR node `op` through ascir::Builder, typed as the graph
/// types it (compute_typed, the tensor store).
class KernelBuilder {
 public:
  /// The kernel of node `op`; for a concat, the kernel of its segment `segment` (operand
  /// `segment` copied into its slice of the result).
  KernelBuilder(const graph::Graph& g, int op, bool round_results, int segment = -1)
      : g_(g),
        op_(op),
        n_(g.nodes[op]),
        reduce_(graph::find_op(n_.kind)->cls == OpClass::Reduce),
        segment_(segment),
        space_(reduce_ || segment >= 0 ? g.nodes[n_.operands.at(reduce_ ? 0 : segment)].type.shape
                                       : n_.type.shape),
        result_(n_.type),
        round_results_(round_results),
        b_("k", ascir::BuilderRules{kKernelTypes, /*cse=*/false}) {
    for (const sym::Expr& size : space_) axes_.push_back(b_.add_axis(size));
    if (reduce_) {
      std::vector<int64_t> dims = graph::reduce_dims(n_);
      for (size_t d = 0; d < space_.size(); ++d)
        if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end())
          reduced_.push_back(static_cast<int>(d));
    }
    if (segment_ >= 0) {  // the slice of the result operand `segment` fills
      size_t dim = static_cast<size_t>(graph::attr_int(n_, "dim"));
      for (int k = 0; k < segment_; ++k)
        result_.offset =
            result_.offset + g.nodes[n_.operands[k]].type.shape[dim] * result_.strides[dim];
      result_.shape = space_;
    }
  }

  FusedNode build() {
    const graph::OpDef* def = graph::find_op(n_.kind);
    std::vector<int> args;
    if (segment_ >= 0) {
      args.push_back(operand(n_.operands[segment_], false));
    } else {
      for (int v : n_.operands) args.push_back(operand(v, def->cls == OpClass::Broadcast));
    }
    int value = -1;
    if (segment_ >= 0) {
      value = copy_value(args[0]);
    } else if (def->cls == OpClass::Cast) {
      value = lower_cast(args.at(0));
    } else if (reduce_) {
      // Repeat 1 / stride 0 on the reduced axes; no attributes (the tensors say which).
      value = b_.reduce(n_.kind, args.at(0), reduced_, n_.name);
    } else {
      AttrMap attrs;
      if (def->cls == OpClass::Elementwise) attrs = n_.attrs;
      // Eager rounds the steps of a rounding division of two f16/bf16 tensors (see
      // af_div_floor_f16); with a scalar divisor it divides in f32 and rounds once.
      if ((n_.kind == "div_floor" || n_.kind == "div_trunc") &&
          is_low_precision_float(n_.type.dtype) && g_.nodes[n_.operands.at(1)].kind != "const")
        attrs["round"] = std::string(dtype_name(n_.type.dtype));
      // Eager's bf16 pow(x, 3) / pow(x, -2) multiply in Vectorized<BFloat16>, rounding x*x to
      // bf16 (af_cube_bf16); its f16 pow rounds powf's result once.
      if ((n_.kind == "cube" || n_.kind == "rsquare") && n_.type.dtype == DType::BF16 &&
          round_results_)
        attrs["round"] = std::string("bf16");
      std::string kind = def->cls == OpClass::Broadcast ? "broadcast" : n_.kind;
      value = b_.compute_typed(kind, args, compute_dtype(n_.type.dtype), std::move(attrs), n_.name);
    }
    store(value);
    FusedNode step;
    step.kind = FusedNode::Kind::Kernel;
    step.ops = {op_};
    step.inputs = inputs_;
    step.input_axes = input_axes_;
    step.outputs = {op_};
    step.kernel = b_.finish();
    sort_kernel_io(step);
    return step;
  }

 private:
  /// The compute-dtype node of operand value `v`: a scalar for a const, else data -> load
  /// (-> cast to f32). A broadcast operand keeps repeat 1 / stride 0 on the dims it expands.
  int operand(int v, bool broadcast) {
    auto it = loaded_.find(v);
    if (it != loaded_.end()) return it->second;
    const graph::Node& p = g_.nodes[v];
    const graph::TensorType& t = p.type;
    if (p.kind == "const") {
      if (t.rank() != 0)
        throw CompileError(where(g_, op_) + ": const operand %" + p.name + " has shape " +
                           sym::str(t.shape) + ", expected rank 0");
      return loaded_[v] = b_.scalar(p.attrs.at("value"), compute_dtype(t.dtype), p.name);
    }
    const auto& rshape = space_;
    if (!broadcast && t.shape != rshape)
      throw CompileError(where(g_, op_) + ": operand %" + p.name + " has shape " +
                         sym::str(t.shape) + ", expected the result shape " + sym::str(rshape));
    if (t.rank() > rshape.size())
      throw CompileError(where(g_, op_) + ": operand %" + p.name + " of shape " +
                         sym::str(t.shape) + " has a higher rank than the result " +
                         sym::str(rshape));
    std::vector<sym::Expr> repeats, strides;
    size_t lead = rshape.size() - t.rank();
    for (size_t i = 0; i < rshape.size(); ++i) {
      bool kept = i >= lead && t.shape[i - lead] == rshape[i];
      repeats.push_back(kept ? rshape[i] : sym::Expr(1));
      strides.push_back(kept ? t.strides[i - lead] : sym::Expr(0));
    }
    inputs_.push_back(v);
    input_axes_.emplace_back(axes_.begin() + static_cast<std::ptrdiff_t>(lead), axes_.end());
    int node = b_.load(b_.data(p.name, t.dtype, repeats, strides, 0));
    if (is_low_precision_float(t.dtype)) node = b_.cast(node, DType::F32, false, p.name + ".f32");
    return loaded_[v] = node;
  }

  /// A Graph IR cast from the operand's dtype A to the result's B on compute value `x`: the
  /// node holding the result (in B, or in f32 when B's values compute in f32 and the cast is
  /// exact there). A cast to f16/bf16 rounds explicitly; an exact one adds no node.
  int lower_cast(int x) {
    DType a = g_.nodes[n_.operands[0]].type.dtype;
    DType b = n_.type.dtype;
    const ascir::AscNode& xn = b_.node(x);
    if (a == b && is_low_precision_float(b) && xn.op == "cast" && b_.dtype(xn.inputs[0]) == b)
      return xn.inputs[0];  // the loaded f16/bf16 value itself
    if (is_low_precision_float(b)) return a == b ? x : b_.cast(x, b, false, n_.name);
    if (compute_dtype(a) == b) return x;  // f16/bf16 -> f32: already f32
    return b_.cast(x, b, false, n_.name);
  }

  /// A copy of compute value `x` (a concat segment): the loaded f16/bf16 value itself, else x.
  int copy_value(int x) {
    const ascir::AscNode& xn = b_.node(x);
    if (is_low_precision_float(n_.type.dtype) && xn.op == "cast") return xn.inputs[0];
    return x;
  }

  /// Store + output of value node `value`. An f32 value of an f16/bf16 result is rounded by the
  /// store itself unless results round (a merge then hands consumers the f32 value; with a cast
  /// node it hands them the rounded one).
  void store(int value) {
    const graph::TensorType& t = result_;
    AscTensor out;
    out.dtype = t.dtype;
    out.offset = t.offset;
    if (!reduce_) {
      out.axes = axes_;
      out.repeats = t.shape;
      out.strides = t.strides;
    } else {
      // The axes of the result's dims: all (stride 0 on the reduced ones) or the kept ones.
      bool keep = graph::reduce_keepdim(n_);
      size_t dim = 0;
      for (size_t d = 0; d < axes_.size(); ++d) {
        bool reduced =
            std::find(reduced_.begin(), reduced_.end(), static_cast<int>(d)) != reduced_.end();
        if (reduced && !keep) continue;
        out.axes.push_back(axes_[d]);
        out.repeats.push_back(t.shape.at(dim));
        out.strides.push_back(reduced ? sym::Expr(0) : t.strides.at(dim));
        ++dim;
      }
    }
    b_.store(n_.name, value, out, !round_results_);
  }

  const graph::Graph& g_;
  int op_;
  const graph::Node& n_;
  bool reduce_;                   // a reduce: iterates over its operand's shape
  int segment_;                   // a concat segment: the operand it copies; else -1
  std::vector<sym::Expr> space_;  // the iteration space: one original axis per dim
  graph::TensorType result_;      // what the store writes: the result, or a segment's slice
  bool round_results_;            // an f16/bf16 result is rounded by a cast node before its store
  ascir::Builder b_;
  std::vector<int> axes_;                     // per dim, its axis
  std::vector<int> reduced_;                  // the reduced axes (reduce only)
  std::vector<int> inputs_;                   // data index -> graph node
  std::vector<std::vector<int>> input_axes_;  // data index -> the axes of the value's dims
  std::map<int, int> loaded_;                 // graph node -> its compute node in this kernel
};

/// The concat kernel of node `node`: one segment per operand, each copying its operand into its
/// slice of the result.
FusedNode concat_step(const graph::Graph& g, int node, bool round_results) {
  const graph::Node& n = g.nodes[node];
  FusedNode step;
  step.kind = FusedNode::Kind::Kernel;
  step.ops = {node};
  step.outputs = {node};
  step.concat_dim = static_cast<int>(graph::attr_int(n, "dim"));
  step.concat_shape = n.type.shape;
  sym::Expr start = 0;
  for (size_t k = 0; k < n.operands.size(); ++k) {
    step.segments.push_back(KernelBuilder(g, node, round_results, static_cast<int>(k)).build());
    step.segment_starts.push_back(start);
    start = start + g.nodes[n.operands[k]].type.shape[step.concat_dim];
  }
  set_concat_io(step);
  return step;
}

/// Why reduce node `node` reduces nothing: a reduced dim of size 0; else nullopt.
std::optional<std::string> empty_reduction(const graph::Graph& g, int node) {
  const graph::Node& n = g.nodes[node];
  for (int64_t d : graph::reduce_dims(n)) {
    const auto& shape = g.nodes.at(n.operands.at(0)).type.shape;
    if (d >= 0 && d < static_cast<int64_t>(shape.size()) && shape[d] == sym::Expr(0))
      return "empty reduction: dim " + std::to_string(d) + " of %" + g.nodes[n.operands[0]].name +
             " has size 0 (" + n.kind + ")";
  }
  return std::nullopt;
}

}  // namespace

/// Why node `node`'s operand or result dtype keeps it out of this frontend's kernels; else
/// nullopt.
std::optional<std::string> dtype_reason(const graph::Graph& g, int node) {
  const graph::Node& n = g.nodes[node];
  const graph::OpDef* def = graph::find_op(n.kind);
  auto unsupported = [&](DType t) {
    return "dtype " + std::string(dtype_name(t)) + " is not supported by generated kernels (" +
           n.kind + ")";
  };
  for (int v : n.operands) {
    DType t = g.nodes.at(v).type.dtype;
    if (!(graph::mask_of(t) & def->operand_dtypes & kKernelTypes)) return unsupported(t);
  }
  if (!(graph::mask_of(n.type.dtype) & kKernelTypes)) return unsupported(n.type.dtype);
  return std::nullopt;
}

std::optional<std::string> kernel_reason(const graph::Graph& g, int node) {
  const graph::Node& n = g.nodes[node];
  const graph::OpDef* def = graph::find_op(n.kind);
  if (!def) throw CompileError(where(g, node) + ": unknown op kind");
  switch (def->cls) {
    case OpClass::Input:
    case OpClass::Const: return "`" + n.kind + "` values are supplied by the frontend";
    case OpClass::View: return "view op " + n.kind + " runs as an ATen alias";
    case OpClass::Opaque: {
      auto it = n.attrs.find("target");
      const std::string* target =
          it == n.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
      return "opaque ATen op " + (target ? *target : std::string("(no target)"));
    }
    case OpClass::Reduce:
      if (auto empty = empty_reduction(g, node)) return empty;
      break;
    default: break;
  }
  return dtype_reason(g, node);
}

std::optional<std::string> not_fusible_reason(const graph::Graph& g, int node,
                                              const FusionOptions& opts) {
  const graph::Node& n = g.nodes[node];
  const graph::OpDef* def = graph::find_op(n.kind);
  if (!def) throw CompileError(where(g, node) + ": unknown op kind");
  if (def->cls == OpClass::Concat) {
    if (!opts.concat)
      return std::string("concat pass is disabled (--autofuse_disable_pass=concat)");
    // One segment per operand, each with its own TilingData in the kernel's.
    int most = std::min(opts.max_inputs, kMaxConcatSegments);
    if (static_cast<int>(n.operands.size()) > most)
      return "concat of " + std::to_string(n.operands.size()) + " operands, more than " +
             std::to_string(most) + " (max_inputs " + std::to_string(opts.max_inputs) +
             ", at most " + std::to_string(kMaxConcatSegments) + " segments per kernel)";
  }
  if (def->cls == OpClass::Reduce && !opts.reduce)
    return std::string("reduce pass is disabled (--autofuse_disable_pass=reduce)");
  return kernel_reason(g, node);
}

std::optional<std::string> candidate_reason(const graph::Graph& g) {
  if (g.nodes.empty()) return std::string("no op to judge");
  const int op = static_cast<int>(g.nodes.size()) - 1;
  for (int i = 0; i < op; ++i)
    if (auto bad = graph::node_error(g, i)) return "node %" + g.nodes[i].name + ": " + *bad;
  if (auto bad = graph::node_error(g, op)) {
    // Said as the dtype kernels lack where that is why (the registry's dtypes are the rule);
    // a malformed op's kernel_reason may not be computable.
    try {
      if (auto lacking = kernel_reason(g, op)) return lacking;
    } catch (const std::exception&) {
    }
    return bad;
  }
  const OpClass cls = graph::find_op(g.nodes[op].kind)->cls;
  if (cls == OpClass::Reduce) return empty_reduction(g, op);
  if (cls != OpClass::Elementwise && cls != OpClass::Cast) return std::nullopt;
  // Scalar math outside f32 lanes (Python floats and ints that dynamic shapes made graph
  // inputs, a step counter) stays ATen: a kernel launch costs more than the op.
  const graph::Node& n = g.nodes[op];
  auto wide = [&](DType t) { return t == DType::F64 || is_integer(t); };
  bool scalar_math = wide(n.type.dtype);
  for (int v : n.operands) scalar_math = scalar_math || wide(g.nodes[v].type.dtype);
  if (scalar_math && n.type.shape.empty())
    return "f64 or integer scalar math (one element) stays ATen: a kernel launch costs more "
           "than the op";
  if (cls == OpClass::Elementwise) return dtype_reason(g, op);
  return std::nullopt;
}

FusedGraph lower(const graph::Graph& g, const FusionOptions& opts) {
  FusedGraph fg;
  fg.source = g;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    const graph::Node& n = g.nodes[i];
    const graph::OpDef* def = graph::find_op(n.kind);
    if (!def) throw CompileError(where(g, i) + ": unknown op kind");
    if (def->cls == OpClass::Input || def->cls == OpClass::Const) continue;
    for (int v : n.operands)
      if (v < 0 || v >= i)
        throw CompileError(where(g, i) + ": operand #" + std::to_string(v) +
                           " does not precede it");
    if (auto reason = not_fusible_reason(g, i, opts)) {
      fg.nodes.push_back(opaque_step(g, i, std::move(*reason)));
      continue;
    }
    if (def->cls == OpClass::Concat) {
      fg.nodes.push_back(concat_step(g, i, opts.emulate_precision_casts));
      continue;
    }
    FusedNode step = KernelBuilder(g, i, opts.emulate_precision_casts).build();
    // A reduction no TilingCase can schedule (reduced dims not contiguous) stays ATen.
    if (auto why = schedule::reduce_unsupported_reason(step.kernel)) {
      fg.nodes.push_back(opaque_step(g, i, "no reduction schedule: " + *why));
      continue;
    }
    fg.nodes.push_back(std::move(step));
  }
  renumber_kernels(fg);
  return fg;
}

FusedNode opaque_step(const graph::Graph& g, int node, std::string reason) {
  FusedNode s;
  s.kind = FusedNode::Kind::Opaque;
  s.name = g.nodes[node].name;
  s.ops = {node};
  s.inputs = g.nodes[node].operands;
  s.outputs = {node};
  s.reason = std::move(reason);
  return s;
}

}  // namespace af::fusion
