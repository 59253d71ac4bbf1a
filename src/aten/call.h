// An ATen call as the torch frontend sees it (its arguments bound to the op's schema, the
// result's type), and the plan the ATen op table makes of it: the Graph IR node that computes
// it, or why none does. The frontend binds and describes; what an op means is decided here.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace af::aten {

/// What an argument is.
enum class ArgKind {
  None,    // Python None (or an argument the schema omits with no default)
  Bool,    // a Python bool
  Int,     // a Python int
  Float,   // a Python float
  Object,  // anything else that is not a graph value: a string, a dtype, a layout, a device...
  Tensor,  // a graph value holding a tensor
  Node,    // a graph value holding something else (a SymInt, a tuple)
  List,    // a list or tuple of arguments
};

/// One argument of a call.
struct Arg {
  ArgKind kind = ArgKind::None;
  int64_t i = 0;  // Bool, Int
  double f = 0;   // Float
  /// Object: Python's str() of it; Tensor, Node: the graph value's name.
  std::string text;
  /// Python's repr() (None, Bool, Int, Float, Object, List): what reasons quote.
  std::string repr;
  /// Tensor: torch's name of its dtype ("float32", "complex64"); Node: the Python type of its
  /// value where it is a number ("bool", "int", "float"), else empty.
  std::string dtype;
  std::vector<std::string> sizes;  // Tensor: str() of each size ("4", "s0")
  std::string device;              // Tensor: str() of its device ("cpu")
  std::vector<Arg> items;          // List
};

/// The result of a call: the (first) tensor it returns.
struct Result {
  std::string dtype;               // torch's name
  std::vector<std::string> sizes;  // str() of each size
};

/// A call: its arguments by schema name (defaults filled in) and its result.
struct Call {
  std::map<std::string, Arg, std::less<>> args;
  Result out;
  /// torch.get_default_dtype() (a Python float's dtype under type promotion).
  std::string default_float = "float32";
};

/// One operand of a planned node: argument `arg` (item `item` of it where it is a list, else
/// -1), read as dtype `dtype` (torch's name): a tensor is cast to it, a number becomes a const.
struct Operand {
  std::string arg;
  int item = -1;
  std::string dtype;
};

/// An attribute value of a planned node.
using PlanAttr = std::variant<int64_t, std::string, std::vector<int64_t>>;

/// The Graph IR node computing a call: `kind` over `operands` with `attrs`; a view whose
/// `shape` attribute is its result's shape says so by `result_shape` (the frontend writes the
/// sizes, symbolic ones included).
struct Plan {
  std::string kind;
  std::vector<Operand> operands;
  std::map<std::string, PlanAttr, std::less<>> attrs;
  bool result_shape = false;
};

/// A plan, or the reason no node computes the call (it then runs as ATen).
using PlanOrReason = std::variant<Plan, std::string>;

}  // namespace af::aten
