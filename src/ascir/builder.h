// ascir::Builder: one kernel's AscGraph built a value at a time, the one way both frontends make
// AscIR (fusion/lower's one-op kernels; the Inductor tracer through the bindings).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "graph/op_registry.h"

namespace af::ascir {

/// The dtypes the Inductor frontend's values may have: f32 and the floats computed in f32
/// lanes, bool, i64 and i32.
constexpr graph::DTypeMask kTracedTypes = graph::kF32LaneTypes | graph::kBoolType |
                                          graph::mask_of(DType::I64) | graph::mask_of(DType::I32);

/// What a frontend lets a Builder make.
struct BuilderRules {
  graph::DTypeMask dtypes = kTracedTypes;  // the dtypes values may have
  bool cse = true;  // a node equal to an earlier one (op, inputs, attributes, type) is that node
};

/// Builds one kernel's AscGraph as a frontend describes a kernel: loop axes, inputs read (a
/// tile, or rows gathered by an index value), constants, elementwise ops, reductions, stores.
/// Every node is scheduled over all axes in order; a local tile is contiguous over its repeats
/// (the axis size where the value varies, else 1) with stride 0 where the repeat is 1.
///
/// A value is typed by one rule, eager's on CPU, where the frontend leaves it to the builder
/// (compute, the strided store): f16/bf16 values compute in f32 (an op widens its operands; a
/// store or an explicit cast rounds), i64/i32 values in their own lanes where the op registry
/// has an integer form, comparisons and logic give bool, and operands are broadcast to the
/// union of the axes they vary along. A frontend whose graph is typed already (Graph IR) says
/// the type (compute_typed, the tensor store). finish() keeps what the stores need, numbers the
/// inputs and verifies the graph. What the rules cannot build throws CompileError with the
/// reason, as does a value of a dtype outside BuilderRules::dtypes.
class Builder {
 public:
  explicit Builder(std::string name, BuilderRules rules = {});

  /// Adds loop axis z<i> of extent `size`; returns i. Axes come before any value.
  int add_axis(sym::Expr size);
  int num_axes() const { return static_cast<int>(g_.axes.size()); }

  /// Kernel input `name` of `dtype` whose element at loop index (i0, i1, ...) is at
  /// offset + sum(strides[a] * ia); it repeats the axis size where its stride is not 0, else 1.
  int data(const std::string& name, DType dtype, const std::vector<sym::Expr>& strides,
           const sym::Expr& offset);
  /// The same with the repeat per axis given (an extent with stride 0: read again along it).
  int data(const std::string& name, DType dtype, const std::vector<sym::Expr>& repeats,
           const std::vector<sym::Expr>& strides, const sym::Expr& offset);
  /// The tile of input `data`, over its repeats.
  int load(int data);
  /// Rows of input `data` picked by integer value `index` (row r at r * row_stride elements
  /// past its affine address; the kernel checks 0 <= r < bound).
  int gather(int data, int index, int64_t row_stride, int64_t bound);
  /// A constant of `dtype` (a double or an int64 value; an integer or bool dtype takes it as
  /// an int64).
  int scalar(const Attr& value, DType dtype, const std::string& name = "c");
  /// `x` repeated along the axes `varies` marks; `x` itself for a scalar or when its repeats
  /// are already those.
  int broadcast(int x, const std::vector<bool>& varies, const std::string& name = "");
  /// `x` as `to` (a scalar: a scalar of `to`). With `compute_types`, an f32 value rounded to
  /// f16/bf16 here and widened to f32 again later is the f32 value itself (Inductor's compute
  /// types).
  int cast(int x, DType to, bool compute_types = false, const std::string& name = "");
  /// Elementwise op `kind` of the registry over `operands`, typed by the rule above; `name`
  /// names the node (default: the kind).
  int compute(const std::string& kind, const std::vector<int>& operands,
              const std::string& name = "");
  /// Op `kind` (a registry elementwise kind, or "broadcast") over all axes with the result
  /// dtype and attributes the frontend gives; the operands as they are.
  int compute_typed(const std::string& kind, const std::vector<int>& operands, DType result,
                    AttrMap attrs, const std::string& name);
  /// Reduce `kind` of `x` over the axes `axes` (its result repeats 1 along them): f16/bf16
  /// widened to f32 first; the operand dtypes are the registry row's (reduce_any: bool).
  int reduce(const std::string& kind, int x, const std::vector<int>& axes,
             const std::string& name = "");
  /// Stores `x` as output `name` of `dtype` at offset + sum(strides[a] * ia) over the axes of
  /// non-zero stride: x broadcast to them and cast to `dtype`. Outputs are numbered in order.
  void store(const std::string& name, int x, DType dtype, const std::vector<sym::Expr>& strides,
             const sym::Expr& offset);
  /// Stores `x` as output `name` of tensor `out` (its axes, repeats, strides, offset), cast to
  /// its dtype first unless `store_rounds` and x is an f32 value of an f16/bf16 output (the
  /// store then rounds it).
  void store(const std::string& name, int x, const AscTensor& out, bool store_rounds);
  /// The kernel: the nodes the stores need (stores last, in order), its data nodes indexed
  /// in order; verified. `inputs` receives each data index's input name.
  AscGraph finish(std::vector<std::string>* inputs = nullptr) const;

  const AscNode& node(int v) const { return g_.nodes.at(static_cast<size_t>(v)); }
  DType dtype(int v) const { return node(v).out.dtype; }
  /// Per axis, whether value `v` repeats more than once along it (all false for a scalar).
  std::vector<bool> varies(int v) const;
  bool is_scalar(int v) const { return node(v).op == "scalar"; }

 private:
  int add(AscNode n, const std::string& key_extra = "");  // CSE, a fresh name; the node
  int node_of(const std::string& base, const std::string& op, std::vector<int> inputs, DType dtype,
              const std::vector<bool>& varies, AttrMap attrs = {},
              const std::string& key_extra = "");
  AscTensor local(DType dtype, const std::vector<bool>& varies) const;
  std::vector<bool> union_of(const std::vector<int>& values) const;
  void check_dtype(DType t, const std::string& what) const;
  std::string fail_text(const std::string& what, const std::vector<int>& operands) const;

  AscGraph g_;
  BuilderRules rules_;
  std::vector<int> all_axes_;
  std::set<std::string> names_;
  std::map<std::string, int> memo_;    // a node's structure -> the node
  std::map<int, int> widened_;         // a rounding in compute types -> the f32 value it rounds
  std::map<int, std::string> inputs_;  // a data node -> the input it reads
  int outputs_ = 0;
};

}  // namespace af::ascir
