// BodyOps: what the ops of an Inductor loop body compute, as AscIR (the Inductor frontend's
// lowering, as src/aten is the FX frontend's): the tracer forwards each call of Inductor's ops
// handler here, and the kernel is built in an ascir::LoopNestBuilder.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ascir/loop_nest_builder.h"

namespace af::inductor {

/// A value of a loop body: a node of the kernel, or what is not one (yet).
struct BodyValue {
  enum class Kind {
    Node,     // a node of the kernel
    Size,     // a loop-invariant size (index_expr of sizes): only a mean's divisor
    Narrow,   // an integer constant of a dtype kernels do not compute: a node once cast
    Foreign,  // a read of a buffer of a dtype kernels do not compute: its use fails
  } kind = Kind::Node;
  int node = -1;
  std::string dtype;     // the AscIR dtype name (torch's spelling for an unknown one)
  sym::Expr size;        // Size
  int64_t constant = 0;  // Narrow
  std::string buffer;    // Foreign
};

/// The ops of one group's loop bodies over a LoopSpace, each a value id (an index into the
/// values made so far). Every method throws CompileError with the reason where a kernel cannot
/// compute the call; the group then stays Inductor's.
///
/// The rules: Inductor's op names are the registry's kinds (truediv is div, bitwise_* on bools
/// logical_*, square and fma expanded); constants and index values of floats are f32, of i64/i32
/// their own; a load of a buffer the group wrote at the same index is the written value; a load
/// by an indirect index is a row gather (the index wrapped by + size where negative when asked);
/// welford_reduce is a mean and a sum of squared deviations, sum(x) / N over N reduced elements a
/// reduce_mean; stores are kept until finish writes the ones read after the group.
class BodyOps {
 public:
  /// `emulate_precision_casts`: Inductor's setting (no f32 compute types when set).
  BodyOps(ascir::LoopSpace space, std::vector<std::string> loop_vars, bool emulate_precision_casts);

  const ascir::LoopNestBuilder& kernel() const { return b_; }
  const BodyValue& value(int v) const { return values_.at(static_cast<size_t>(v)); }

  /// The reduction loop variables of the body traced next (none: a pointwise body).
  void set_reduction_vars(const std::vector<std::string>& vars);
  /// A literal operand: bool, int (i64) or float (f32).
  int number(const Attr& value, bool is_bool);
  /// ops.constant(value, dtype).
  int constant(const Attr& value, const std::string& dtype);
  int index_expr(const sym::Expr& index, const std::string& dtype);
  int to_dtype(int x, const std::string& dtype, bool compute_types);
  /// Any other op by Inductor's name.
  int op(const std::string& name, const std::vector<int>& args);
  int load(const std::string& buffer, const std::string& dtype, const sym::Expr& index);
  /// The symbol standing for value `x` as an index into a dim of `size` in later indices.
  std::string indirect_indexing(int x, const sym::Expr& size, bool wrap_neg);
  /// The lowest and highest value of an affine index; nullopt for a gather's (the kernel
  /// checks it).
  std::optional<std::pair<sym::Expr, sym::Expr>> bounds(const sym::Expr& index) const;
  /// A store (`mode` empty) or store_reduction of `x` to `buffer` at `index`.
  void store(const std::string& buffer, const sym::Expr& index, int x, const std::string& mode);
  /// One value, or welford_reduce's three (mean, m2, count).
  std::vector<int> reduction(const std::string& type, int x);
  /// The buffers stored, in order.
  std::vector<std::string> stored() const;
  /// Writes the stored buffers `outputs` (name, dtype), in that order, and returns the kernel;
  /// `inputs` receives each data index's buffer.
  ascir::AscGraph finish(const std::vector<std::pair<std::string, std::string>>& outputs,
                         std::vector<std::string>* inputs);

 private:
  int add(BodyValue v);
  int add_node(int node);
  int node_of(int v, const std::string& what);  // the node of `v`, a Size made a constant
  int materialize(int v);
  int cast(int v, DType to, bool compute_types = false);
  int compute(const std::string& kind, const std::vector<int>& args, const std::string& name);
  int where(int cond, int a, int b);
  int reduce(const std::string& kind, int v);
  bool is_scalar(int v) const;
  std::vector<std::string> gathers_in(const sym::Expr& index) const;

  ascir::LoopNestBuilder b_;
  std::vector<std::string> loop_vars_;
  bool emulate_precision_casts_;
  std::vector<BodyValue> values_;
  std::vector<int> reduce_axes_;
  std::vector<std::pair<std::string, std::pair<int, int64_t>>>
      indirect_;  // symbol -> (i64 index, size)
  std::vector<std::pair<std::string, std::pair<sym::Expr, int>>>
      stored_;  // buffer -> (index, value)
};

}  // namespace af::inductor
