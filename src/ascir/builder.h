// ascir::Builder: one kernel's AscGraph built a value at a time (the frontends' one way to make
// AscIR: the Inductor tracer through the bindings; no frontend prints AscIR text).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"

namespace af::ascir {

/// Builds one kernel's AscGraph as a frontend describes a kernel: loop axes, inputs read (a
/// tile, or rows gathered by an index value), constants, elementwise ops, reductions, stores.
/// Every node is scheduled over all axes in order. Dtypes follow one rule, eager's on CPU:
/// f16/bf16 values compute in f32 (an op widens its operands; a store or an explicit cast
/// rounds), i64/i32 values in their own lanes where the op registry has an integer form,
/// comparisons and logic give bool. An op's operands are broadcast to the union of the axes
/// they vary along. A node equal to an earlier one (op, inputs, attributes, type) is that node.
/// finish() keeps what the stores need, numbers the inputs and verifies the graph. What the
/// rules cannot build throws CompileError with the reason, as does a value of a dtype kernels
/// do not compute (they compute f32, f16, bf16, bool, i64 and i32).
class Builder {
 public:
  explicit Builder(std::string name);

  /// Adds loop axis z<i> of extent `size`; returns i. Axes come before any value.
  int add_axis(sym::Expr size);
  int num_axes() const { return static_cast<int>(g_.axes.size()); }

  /// Kernel input `name` of `dtype` whose element at loop index (i0, i1, ...) is at
  /// offset + sum(strides[a] * ia) (stride 0: the same along axis a).
  int data(const std::string& name, DType dtype, const std::vector<sym::Expr>& strides,
           const sym::Expr& offset);
  /// The tile of input `data` (varies along the axes of its non-zero strides).
  int load(int data);
  /// Rows of input `data` picked by integer value `index` (row r at r * row_stride elements
  /// past its affine address; the kernel checks 0 <= r < bound).
  int gather(int data, int index, int64_t row_stride, int64_t bound);
  /// A constant: an int64 value for integer and bool dtypes, a double for floats.
  int scalar(const Attr& value, DType dtype);
  /// `x` repeated along the axes `varies` marks; `x` itself for a scalar or when it already
  /// varies so.
  int broadcast(int x, const std::vector<bool>& varies);
  /// `x` as `to`. With `compute_types`, an f32 value rounded to f16/bf16 here and widened to
  /// f32 again later is the f32 value itself (Inductor's compute types).
  int cast(int x, DType to, bool compute_types = false);
  /// Elementwise op `kind` of the registry over `operands` (the rule above); `name` names the
  /// node (default: the kind).
  int compute(const std::string& kind, const std::vector<int>& operands,
              const std::string& name = "");
  /// Reduce `kind` of `x` over the axes `axes` (its result repeats 1 along them); x is widened
  /// to f32 first, except for reduce_any / reduce_all (bool).
  int reduce(const std::string& kind, int x, const std::vector<int>& axes);
  /// Stores `x` as output `name` of `dtype` at offset + sum(strides[a] * ia) over the axes of
  /// non-zero stride: x broadcast to them and cast to `dtype`. Outputs are numbered in order.
  void store(const std::string& name, int x, DType dtype, const std::vector<sym::Expr>& strides,
             const sym::Expr& offset);
  /// The kernel: the nodes the stores need (stores last, in order), its data nodes indexed
  /// in order; verified. `inputs` receives each data index's input name.
  AscGraph finish(std::vector<std::string>* inputs = nullptr) const;

  const AscNode& node(int v) const { return g_.nodes.at(static_cast<size_t>(v)); }
  /// Per axis, whether value `v` varies along it (all false for a scalar).
  std::vector<bool> varies(int v) const;
  bool is_scalar(int v) const { return node(v).op == "scalar"; }

 private:
  int add(AscNode n, const std::string& key_extra = "");  // CSE, a fresh name; the node
  int node_of(const std::string& base, const std::string& op, std::vector<int> inputs, DType dtype,
              const std::vector<bool>& varies, AttrMap attrs = {},
              const std::string& key_extra = "");
  AscTensor local(DType dtype, const std::vector<bool>& varies) const;
  std::vector<bool> union_of(const std::vector<int>& values) const;
  std::string fail_text(const std::string& what, const std::vector<int>& operands) const;

  AscGraph g_;
  std::vector<int> all_axes_;
  std::set<std::string> names_;
  std::map<std::string, int> memo_;     // a node's structure -> the node
  std::map<int, int> widened_;          // a rounding in compute types -> the f32 value it rounds
  std::vector<std::string> data_name_;  // per node: the input a data node reads ("" otherwise)
};

}  // namespace af::ascir
