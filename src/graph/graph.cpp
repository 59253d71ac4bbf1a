// Graph IR data structure helpers: layouts, lookups, use lists and typed attribute access.
#include "graph/graph.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "support/error.h"

namespace af::graph {

std::vector<sym::Expr> contiguous_strides(const std::vector<sym::Expr>& shape) {
  std::vector<sym::Expr> strides(shape.size());
  sym::Expr s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s = s * shape[i];
  }
  return strides;
}

// Strict: the strides are exactly the row-major ones (a size-1 dim's stride counts too), so a
// printer can omit them and the parser restore them; the offset is not considered.
bool TensorType::is_contiguous() const {
  return strides == contiguous_strides(shape);
}

TensorType TensorType::contiguous(DType dtype, std::vector<sym::Expr> shape) {
  TensorType t;
  t.dtype = dtype;
  t.strides = contiguous_strides(shape);
  t.shape = std::move(shape);
  return t;
}

int Graph::add(Node n) {
  if (n.id < 0) n.id = next_id;
  next_id = std::max(next_id, n.id + 1);
  nodes.push_back(std::move(n));
  return static_cast<int>(nodes.size()) - 1;
}

int Graph::find(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::inputs() const {
  std::vector<std::pair<int64_t, int>> idx;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].kind == "input")
      idx.emplace_back(attr_int(nodes[i], "index"), static_cast<int>(i));
  std::stable_sort(idx.begin(), idx.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> out;
  for (const auto& [index, node] : idx) out.push_back(node);
  return out;
}

// Each user appears once per producer, in node order, even when it uses the producer twice.
std::vector<std::vector<int>> Graph::users() const {
  std::vector<std::vector<int>> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int op : nodes[i].operands) {
      if (op < 0 || op >= static_cast<int>(nodes.size())) continue;
      auto& u = out[op];
      if (u.empty() || u.back() != static_cast<int>(i)) u.push_back(static_cast<int>(i));
    }
  return out;
}

sym::Bindings Graph::hints() const {
  sym::Bindings b;
  for (const auto& s : symbols) b[s.name] = s.hint;
  return b;
}

namespace {
const char* attr_type_name(const Attr& a) {
  switch (a.index()) {
    case 0: return "an int";
    case 1: return "a float";
    case 2: return "a string";
    default: return "a size list";
  }
}

/// The attribute `key` of `n`; throws CompileError naming the node when absent.
const Attr& get(const Node& n, std::string_view key) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end())
    throw CompileError("node %" + n.name + " (" + n.kind + "): missing attribute '" +
                       std::string(key) + "'");
  return it->second;
}

[[noreturn]] void mistyped(const Node& n, std::string_view key, const Attr& a,
                           const char* expected) {
  throw CompileError("node %" + n.name + " (" + n.kind + "): attribute '" + std::string(key) +
                     "' is " + attr_type_name(a) + " (" + attr_str(a) + "), expected " + expected);
}
}  // namespace

int64_t attr_int(const Node& n, std::string_view key) {
  const Attr& a = get(n, key);
  if (auto* v = std::get_if<int64_t>(&a)) return *v;
  mistyped(n, key, a, "an int");
}

double attr_float(const Node& n, std::string_view key) {
  const Attr& a = get(n, key);
  if (auto* v = std::get_if<double>(&a)) return *v;
  if (auto* v = std::get_if<int64_t>(&a)) return static_cast<double>(*v);
  mistyped(n, key, a, "a float");
}

const std::string& attr_string(const Node& n, std::string_view key) {
  const Attr& a = get(n, key);
  if (auto* v = std::get_if<std::string>(&a)) return *v;
  mistyped(n, key, a, "a string");
}

const std::vector<sym::Expr>& attr_list(const Node& n, std::string_view key) {
  const Attr& a = get(n, key);
  if (auto* v = std::get_if<std::vector<sym::Expr>>(&a)) return *v;
  mistyped(n, key, a, "a size list");
}

bool has_attr(const Node& n, std::string_view key) {
  return n.attrs.count(key) > 0;
}

std::vector<int64_t> reduce_dims(const Node& n) {
  std::vector<int64_t> dims;
  for (const sym::Expr& e : attr_list(n, "dims")) {
    auto v = e.as_const();
    if (!v)
      throw CompileError("node %" + n.name + " (" + n.kind + "): dims " +
                         sym::str(attr_list(n, "dims")) + " must be integers");
    dims.push_back(*v);
  }
  return dims;
}

bool reduce_keepdim(const Node& n) {
  return attr_int(n, "keepdim") != 0;
}

int64_t value_bytes(const Graph& g, int v, const sym::Bindings& hints) {
  const Node& n = g.nodes[v];
  const OpDef* def = find_op(n.kind);
  if (def != nullptr && def->cls == OpClass::Const) return 0;
  return sym::addressed_elements(n.type.shape, n.type.strides, hints) * dtype_size(n.type.dtype);
}

}  // namespace af::graph
