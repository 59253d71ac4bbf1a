// Graph IR verifier: structural, type and shape invariants (see verifier.h for the list).
#include "graph/verifier.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "graph/op_registry.h"
#include "graph/printer.h"
#include "support/error.h"
#include "support/names.h"

namespace af::graph {
namespace {

/// [A-Za-z_][A-Za-z0-9_]* (size symbols, attribute keys: what sym::parse_expr and the lexer read).
bool valid_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

/// "f32, f16, bf16" for a dtype mask.
std::string mask_names(DTypeMask m) {
  std::string out;
  for (unsigned t = 0; t <= static_cast<unsigned>(DType::F64); ++t)
    if (m & (1u << t))
      out += (out.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DType>(t)));
  return out;
}

/// Checks one node; `fail` throws with the node named (in its graph's context, or only the
/// rule broken when `in_context` is false).
class NodeChecker {
 public:
  NodeChecker(const Graph& g, int i, const std::set<std::string>& symbols, bool in_context = true)
      : g_(g), i_(i), n_(g.nodes[i]), symbols_(symbols), in_context_(in_context) {}

  void check() {
    def_ = find_op(n_.kind);
    if (!def_) fail("unknown op kind '" + n_.kind + "'");
    for (size_t k = 0; k < n_.operands.size(); ++k) {
      int op = n_.operands[k];
      if (op < 0 || op >= static_cast<int>(g_.nodes.size()))
        fail("operand " + std::to_string(k) + " refers to node index " + std::to_string(op) +
             ", which does not exist");
      if (op >= i_)
        fail("operand " + std::to_string(k) + " (%" + g_.nodes[op].name +
             ") is defined after its use (graph not in topological order)");
    }
    if (def_->arity >= 0 && static_cast<int>(n_.operands.size()) != def_->arity)
      fail("expects " + std::to_string(def_->arity) + " operand(s), has " +
           std::to_string(n_.operands.size()));
    const TensorType& t = n_.type;
    if (t.strides.size() != t.rank())
      fail("strides " + sym::str(t.strides) + " have rank " + std::to_string(t.strides.size()) +
           " but shape " + sym::str(t.shape) + " has rank " + std::to_string(t.rank()));
    check_symbols();
    for (const auto& [key, value] : n_.attrs)
      if (!valid_identifier(key)) fail("bad attribute name '" + key + "'");
    switch (def_->cls) {
      case OpClass::Input: (void)attr_int(n_, "index"); break;
      case OpClass::Const: check_const(); break;
      case OpClass::Elementwise: check_elementwise(); break;
      case OpClass::Broadcast: check_broadcast(); break;
      case OpClass::Cast:
        need_dense();
        if (operand(0).shape != t.shape)
          fail("cast changes shape " + sym::str(operand(0).shape) + " to " + sym::str(t.shape));
        break;
      case OpClass::View: check_view(); break;
      case OpClass::Reduce: check_reduce(); break;
      case OpClass::Concat: check_concat(); break;
      case OpClass::Opaque: (void)attr_string(n_, "target"); break;
    }
  }

  [[noreturn]] void fail(const std::string& msg) const {
    if (!in_context_) throw CompileError(msg);
    throw CompileError("verify @" + g_.name + ": node %" + n_.name + " (" + n_.kind + "): " + msg +
                       "\n  at: " + print_node(g_, i_));
  }

 private:
  const TensorType& operand(size_t k) const { return g_.nodes[n_.operands[k]].type; }
  const std::string& operand_name(size_t k) const { return g_.nodes[n_.operands[k]].name; }

  void check_symbols() const {
    auto check = [&](const sym::Expr& e, const char* where) {
      for (const auto& s : e.symbols())
        if (!symbols_.count(s))
          fail("size symbol '" + s + "' in its " + where + " is not declared in the graph header");
    };
    for (const auto& e : n_.type.shape) check(e, "shape");
    for (const auto& e : n_.type.strides) check(e, "strides");
    check(n_.type.offset, "offset");
    for (const auto& [key, value] : n_.attrs)
      if (auto* list = std::get_if<std::vector<sym::Expr>>(&value))
        for (const auto& e : *list) check(e, "attributes");
  }

  /// A computed value is written densely (no gaps, no overlap) from offset 0, in any dim order:
  /// it takes the layout eager gives it, e.g. the transposed order of a transposed input.
  void need_dense() const {
    const TensorType& t = n_.type;
    if (t.offset != 0) fail("a computed value must start at offset 0, has type " + print_type(t));
    std::vector<size_t> dims;
    for (size_t d = 0; d < t.rank(); ++d)
      if (t.shape[d] != 1) dims.push_back(d);
    sym::Bindings hints = g_.hints();
    std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
      return t.strides[a].eval(hints) > t.strides[b].eval(hints);
    });
    sym::Expr expected = 1;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      if (t.strides[*it] != expected)
        fail("a computed value must be dense (a permutation of a contiguous layout), has type " +
             print_type(t));
      expected = expected * t.shape[*it];
    }
  }

  void check_const() const {
    if (n_.type.rank() != 0) fail("a const must be rank 0, has shape " + sym::str(n_.type.shape));
    (void)attr_float(n_, "value");  // int or float
  }

  void check_elementwise() const {
    need_dense();
    const TensorType& t = n_.type;
    for (size_t k = 0; k < n_.operands.size(); ++k) {
      const Node& p = g_.nodes[n_.operands[k]];
      bool scalar = p.kind == "const" && p.type.rank() == 0;
      if (!scalar && p.type.shape != t.shape)
        fail("operand " + std::to_string(k) + " (%" + p.name + ") has shape " +
             sym::str(p.type.shape) + ", expected the result shape " + sym::str(t.shape) +
             " (use broadcast)");
      DType dt = p.type.dtype;
      DTypeMask allowed = def_->operand_dtypes;
      if (n_.kind == "where") allowed = k == 0 ? kBoolType : allowed & ~kBoolType;
      if (!(allowed & mask_of(dt)))
        fail("operand " + std::to_string(k) + " (%" + p.name + ") has dtype " +
             std::string(dtype_name(dt)) + ", expected one of " + mask_names(allowed));
      bool same_as_result =
          !gives_bool(n_.kind, operand(0).dtype) && !(n_.kind == "where" && k == 0);
      if (same_as_result && dt != t.dtype)
        fail("operand " + std::to_string(k) + " (%" + p.name + ") has dtype " +
             std::string(dtype_name(dt)) + ", expected the result dtype " +
             std::string(dtype_name(t.dtype)) + " (use cast)");
      if (!same_as_result && k > 0 && n_.kind != "where" && dt != operand(0).dtype)
        fail("operands have different dtypes " + std::string(dtype_name(operand(0).dtype)) +
             " and " + std::string(dtype_name(dt)));
    }
    if (!n_.operands.empty() && gives_bool(n_.kind, operand(0).dtype) && t.dtype != DType::Bool)
      fail("result dtype must be bool, is " + std::string(dtype_name(t.dtype)));
    if (n_.kind == "gelu" && has_attr(n_, "approximate")) {
      const std::string& a = attr_string(n_, "approximate");
      if (a != "none" && a != "tanh")
        fail("approximate = \"" + a + "\", expected \"none\" or \"tanh\"");
    }
  }

  /// Operand 0's shape, aligned right, expands to the result shape (dims equal or 1).
  void check_expands_to_result() const {
    const auto& src = operand(0).shape;
    const auto& dst = n_.type.shape;
    if (src.size() > dst.size())
      fail("operand %" + operand_name(0) + " of shape " + sym::str(src) +
           " has a higher rank than the result " + sym::str(dst));
    size_t lead = dst.size() - src.size();
    for (size_t d = 0; d < src.size(); ++d)
      if (src[d] != dst[lead + d] && src[d] != 1)
        fail("operand %" + operand_name(0) + " of shape " + sym::str(src) +
             " does not broadcast to " + sym::str(dst) + " (dim " + std::to_string(d) + ")");
  }

  void check_broadcast() const {
    need_dense();
    same_dtype();
    check_expands_to_result();
  }

  void same_dtype() const {
    if (operand(0).dtype != n_.type.dtype)
      fail("changes dtype " + std::string(dtype_name(operand(0).dtype)) + " to " +
           std::string(dtype_name(n_.type.dtype)));
  }

  /// A non-negative constant dim attribute below `limit`.
  int64_t dim_attr(const char* key, size_t limit) const {
    int64_t d = attr_int(n_, key);
    if (d < 0 || d >= static_cast<int64_t>(limit))
      fail(std::string(key) + " = " + std::to_string(d) + " is out of range [0, " +
           std::to_string(limit) + ")");
    return d;
  }

  /// Result shape == operand shape except dim `skip_src` of the operand / `skip_dst` of the
  /// result (either may be -1).
  void same_except(int64_t skip_src, int64_t skip_dst) const {
    std::vector<sym::Expr> a, b;
    const auto& src = operand(0).shape;
    const auto& dst = n_.type.shape;
    for (size_t d = 0; d < src.size(); ++d)
      if (static_cast<int64_t>(d) != skip_src) a.push_back(src[d]);
    for (size_t d = 0; d < dst.size(); ++d)
      if (static_cast<int64_t>(d) != skip_dst) b.push_back(dst[d]);
    if (a != b)
      fail("result shape " + sym::str(dst) + " does not match operand shape " + sym::str(src));
  }

  /// dims sorted, unique, in range, at least one; keepdim 0|1; the operand's dtype (allowed by
  /// the registry); the operand's shape with each reduced dim 1 (keepdim) or removed; dense.
  void check_reduce() const {
    need_dense();
    const TensorType& src = operand(0);
    if (!(def_->operand_dtypes & mask_of(src.dtype)))
      fail("operand 0 (%" + operand_name(0) + ") has dtype " + std::string(dtype_name(src.dtype)) +
           ", expected one of " + mask_names(def_->operand_dtypes));
    same_dtype();
    const auto& list = attr_list(n_, "dims");
    std::vector<int64_t> dims = reduce_dims(n_);
    if (dims.empty()) fail("dims [] must name at least one dim to reduce");
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] < 0 || dims[k] >= static_cast<int64_t>(src.rank()))
        fail("dims " + sym::str(list) + ": dim " + std::to_string(dims[k]) +
             " is out of range [0, " + std::to_string(src.rank()) + ") for operand %" +
             operand_name(0) + " of shape " + sym::str(src.shape));
      if (k > 0 && dims[k] <= dims[k - 1])
        fail("dims " + sym::str(list) + " must be sorted and unique");
    }
    int64_t keep = attr_int(n_, "keepdim");
    if (keep != 0 && keep != 1) fail("keepdim = " + std::to_string(keep) + ", expected 0 or 1");
    std::vector<sym::Expr> expect;
    for (size_t d = 0; d < src.rank(); ++d) {
      bool reduced = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
      if (!reduced)
        expect.push_back(src.shape[d]);
      else if (keep)
        expect.push_back(1);
    }
    if (n_.type.shape != expect)
      fail("result shape " + sym::str(n_.type.shape) + " is not " + sym::str(expect) +
           " (operand %" + operand_name(0) + " of shape " + sym::str(src.shape) +
           " reduced over dims " + sym::str(list) + ", keepdim = " + std::to_string(keep) + ")");
  }

  /// At least one operand, all of the result's dtype (allowed by the registry) and rank; sizes
  /// equal except along `dim`, where the result's size is their sum; dense.
  void check_concat() const {
    need_dense();
    const TensorType& t = n_.type;
    if (n_.operands.empty()) fail("concat needs at least one operand");
    int64_t d = dim_attr("dim", t.rank());
    sym::Expr total = 0;
    if (!(def_->operand_dtypes & mask_of(t.dtype)))
      fail("result dtype " + std::string(dtype_name(t.dtype)) + ", expected one of " +
           mask_names(def_->operand_dtypes));
    for (size_t k = 0; k < n_.operands.size(); ++k) {
      const TensorType& o = operand(k);
      if (o.dtype != t.dtype)
        fail("operand " + std::to_string(k) + " (%" + operand_name(k) + ") has dtype " +
             std::string(dtype_name(o.dtype)) + ", expected the result dtype " +
             std::string(dtype_name(t.dtype)) + " (use cast)");
      if (o.rank() != t.rank())
        fail("operand " + std::to_string(k) + " (%" + operand_name(k) + ") has shape " +
             sym::str(o.shape) + ", rank " + std::to_string(o.rank()) + " vs the result's " +
             std::to_string(t.rank()));
      for (size_t i = 0; i < t.rank(); ++i)
        if (static_cast<int64_t>(i) != d && o.shape[i] != t.shape[i])
          fail("operand " + std::to_string(k) + " (%" + operand_name(k) + ") has shape " +
               sym::str(o.shape) + ", which differs from the result " + sym::str(t.shape) +
               " outside dim " + std::to_string(d));
      total = total + o.shape[d];
    }
    if (total != t.shape[d])
      fail("result dim " + std::to_string(d) + " is " + t.shape[d].str() +
           ", expected the operands' total " + total.str());
  }

  void check_view() const {
    same_dtype();
    const auto& src = operand(0).shape;
    const auto& dst = n_.type.shape;
    const std::string& k = n_.kind;
    if (k == "reshape") {
      if (attr_list(n_, "shape") != dst)
        fail("attribute shape " + sym::str(attr_list(n_, "shape")) + " differs from the result " +
             sym::str(dst));
      // Element counts compared at the symbol hints (canonical forms of equal products may
      // differ when floordiv/mod are involved); skipped when a hint makes evaluation fail.
      sym::Bindings h = g_.hints();
      int64_t a = 0, b = 0;
      try {
        a = sym::product(src).eval(h);
        b = sym::product(dst).eval(h);
      } catch (const CompileError&) {
        a = b;
      }
      if (a != b)
        fail("reshape of " + sym::str(src) + " to " + sym::str(dst) +
             " changes the element count (at the symbol hints)");
    } else if (k == "permute") {
      const auto& dims = attr_list(n_, "dims");
      if (dims.size() != src.size() || dst.size() != src.size())
        fail("dims " + sym::str(dims) + " do not permute operand shape " + sym::str(src) +
             " into " + sym::str(dst));
      std::vector<bool> seen(src.size());
      for (size_t d = 0; d < dims.size(); ++d) {
        auto v = dims[d].as_const();
        if (!v || *v < 0 || *v >= static_cast<int64_t>(src.size()) || seen[*v])
          fail("dims " + sym::str(dims) + " is not a permutation of 0.." +
               std::to_string(src.size()) + "-1");
        seen[*v] = true;
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        int64_t from = *dims[d].as_const();
        if (dst[d] != src[from])
          fail("result dim " + std::to_string(d) + " is " + dst[d].str() + ", expected " +
               src[from].str() + " (operand dim " + std::to_string(from) + ")");
      }
    } else if (k == "unsqueeze") {
      int64_t d = dim_attr("dim", src.size() + 1);
      if (dst.size() != src.size() + 1 || dst[d] != 1)
        fail("result shape " + sym::str(dst) + " is not " + sym::str(src) + " with a 1 at dim " +
             std::to_string(d));
      same_except(-1, d);
    } else if (k == "squeeze") {
      int64_t d = dim_attr("dim", src.size());
      if (src[d] != 1 || dst.size() + 1 != src.size())
        fail("squeezes dim " + std::to_string(d) + " of " + sym::str(src) + " (must be size 1)" +
             " into " + sym::str(dst));
      same_except(d, -1);
    } else if (k == "slice") {
      int64_t d = dim_attr("dim", src.size());
      if (!has_attr(n_, "start") || !has_attr(n_, "end"))
        fail("slice needs attributes start and end");
      if (attr_int(n_, "step") < 1) fail("slice step must be >= 1");
      if (dst.size() != src.size()) fail("slice changes the rank");
      same_except(d, d);
    } else if (k == "expand") {
      if (attr_list(n_, "shape") != dst)
        fail("attribute shape " + sym::str(attr_list(n_, "shape")) + " differs from the result " +
             sym::str(dst));
      check_expands_to_result();
    }
  }

  const Graph& g_;
  int i_;
  const Node& n_;
  const std::set<std::string>& symbols_;
  const bool in_context_;
  const OpDef* def_ = nullptr;
};

}  // namespace

std::optional<std::string> node_error(const Graph& g, int node) {
  std::set<std::string> symbols;
  for (const auto& s : g.symbols) symbols.insert(s.name);
  try {
    NodeChecker(g, node, symbols, /*in_context=*/false).check();
  } catch (const CompileError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

void verify(const Graph& g) {
  auto graph_fail = [&](const std::string& msg) {
    throw CompileError("verify @" + g.name + ": " + msg);
  };
  if (!is_ir_name(g.name)) graph_fail("bad graph name (expected [A-Za-z0-9_.]+)");
  std::set<std::string> symbols;
  for (const auto& s : g.symbols) {
    if (!valid_identifier(s.name)) graph_fail("bad size symbol name '" + s.name + "'");
    if (!symbols.insert(s.name).second) graph_fail("size symbol '" + s.name + "' declared twice");
  }
  std::unordered_map<std::string, int> names;
  std::unordered_map<int64_t, int> input_index;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    NodeChecker checker(g, static_cast<int>(i), symbols);
    if (!is_ir_name(n.name)) checker.fail("bad value name (expected [A-Za-z0-9_.]+)");
    auto [it, fresh] = names.emplace(n.name, static_cast<int>(i));
    if (!fresh)
      checker.fail("value name defined twice (first at node " + std::to_string(it->second) + ")");
    try {
      checker.check();
    } catch (const CompileError& e) {
      // attr_* helpers name the node but not the graph; add the context once.
      std::string what = e.what();
      if (what.rfind("verify @", 0) == 0) throw;
      checker.fail(what);
    }
    if (n.kind == "input") {
      int64_t idx = attr_int(n, "index");
      auto [prev, ok] = input_index.emplace(idx, static_cast<int>(i));
      if (!ok)
        checker.fail("input index " + std::to_string(idx) + " is also used by %" +
                     g.nodes[prev->second].name);
    }
  }
  for (const auto& [idx, node] : input_index)
    if (idx < 0 || idx >= static_cast<int64_t>(input_index.size()))
      NodeChecker(g, node, symbols)
          .fail("input index " + std::to_string(idx) + " is outside 0.." +
                std::to_string(input_index.size() - 1) + " (indices must be 0..n-1, unique)");
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    int o = g.outputs[k];
    if (o < 0 || o >= static_cast<int>(g.nodes.size()))
      graph_fail("output " + std::to_string(k) + " refers to node index " + std::to_string(o) +
                 ", which does not exist");
  }
}

}  // namespace af::graph
