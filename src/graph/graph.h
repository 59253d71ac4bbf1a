// Graph IR: the op-level DAG autofuse receives from a frontend (the "Ascend IR" of the seed).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/attr.h"
#include "support/dtype.h"
#include "sym/expr.h"

namespace af::graph {

/// A tensor's type: dtype, symbolic shape, and its layout in memory as strides (in elements) and
/// an offset from the start of its storage. Every value carries the layout eager PyTorch gives it
/// (the frontend copies it from the FX meta), so kernels load and store through these strides
/// and outputs match eager's layout; strides are 0 for an expanded dim. A view's strides and
/// offset are relative to its operand's storage.
struct TensorType {
  DType dtype = DType::F32;
  std::vector<sym::Expr> shape;
  std::vector<sym::Expr> strides;
  sym::Expr offset = 0;

  size_t rank() const { return shape.size(); }
  sym::Expr numel() const { return sym::product(shape); }
  bool is_contiguous() const;
  /// A contiguous (row-major) tensor of this dtype and shape.
  static TensorType contiguous(DType dtype, std::vector<sym::Expr> shape);
};
/// Row-major strides for `shape`.
std::vector<sym::Expr> contiguous_strides(const std::vector<sym::Expr>& shape);

/// A size symbol of the graph with its hint (the value seen when the graph was captured).
struct Symbol {
  std::string name;
  int64_t hint = 0;
};

/// One op; its result is the value named `name` (every op has exactly one result).
/// `kind` names an entry of the op registry (graph/op_registry.h): "add", "sigmoid", "input",
/// "const", "broadcast", "cast", "permute", "opaque", ...
struct Node {
  std::string name;  // result value name, printed "%name"
  std::string kind;
  std::vector<int> operands;  // indices of producer nodes in Graph::nodes
  AttrMap attrs;
  TensorType type;
  /// The value's stable id: what a compiled program's steps name it by (the frontend's node
  /// order for a graph built or parsed in order). Graph::add gives the next one when unset; a
  /// pass that adds, drops or reorders nodes keeps the others' ids.
  int id = -1;
};

/// A whole graph in topological order: operands always precede their users.
struct Graph {
  std::string name = "main";
  std::vector<Symbol> symbols;
  std::vector<Node> nodes;
  std::vector<int> outputs;  // node indices returned by the graph, in order
  int next_id = 0;           // the id Graph::add gives the next node without one

  /// Appends a node (given the next id when its id is unset) and returns its index.
  int add(Node n);
  /// Index of the node named `name`, or -1.
  int find(std::string_view name) const;
  /// Indices of the input nodes, ordered by their `index` attribute.
  std::vector<int> inputs() const;
  /// For each node, the indices of the nodes that use it.
  std::vector<std::vector<int>> users() const;
  /// Symbol hints as bindings for sym::Expr::eval.
  sym::Bindings hints() const;
};

/// Integer attribute by name; throws CompileError naming the node when absent or mistyped.
int64_t attr_int(const Node& n, std::string_view key);
double attr_float(const Node& n, std::string_view key);
const std::string& attr_string(const Node& n, std::string_view key);
const std::vector<sym::Expr>& attr_list(const Node& n, std::string_view key);
bool has_attr(const Node& n, std::string_view key);

/// The `dims` attribute of a reduce node as integers (in attribute order); throws CompileError
/// naming the node when it is missing, not a list, or holds a non-constant entry.
std::vector<int64_t> reduce_dims(const Node& n);
/// Whether reduce node `n` keeps its reduced dims (attr keepdim = 1).
bool reduce_keepdim(const Node& n);

/// Bytes of value `v` of `g` at `hints`: the elements its strides address (a stride-0 dim
/// once) times its dtype's size; a const is a literal (0). The one byte count fusion's priority
/// and the pictures' traffic use.
int64_t value_bytes(const Graph& g, int v, const sym::Bindings& hints);

}  // namespace af::graph
