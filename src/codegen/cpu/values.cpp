// The C++ text of one AscIR value for the CPU emitter (see values.h).
#include "codegen/cpu/values.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "graph/op_registry.h"
#include "support/error.h"

namespace af::codegen {
namespace {

using ascir::AscGraph;
using ascir::AscNode;

/// An f32 C++ literal for `v`, exact (hexadecimal) and with inf/nan spelled out.
std::string float_literal(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return "__builtin_nanf(\"\")";
  if (std::isinf(f)) return f < 0 ? "-__builtin_inff()" : "__builtin_inff()";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af /* %.9g */", static_cast<double>(f), static_cast<double>(f));
  return buf;
}

/// An f64 C++ literal for `v`, exact (hexadecimal) and with inf/nan spelled out.
std::string double_literal(double v) {
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v < 0 ? "-__builtin_inf()" : "__builtin_inf()";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a /* %.17g */", v, v);
  return buf;
}

std::string scalar_expr(const AscGraph& g, const AscNode& n) {
  auto it = n.attrs.find("value");
  double v = 0;
  if (it != n.attrs.end() && std::holds_alternative<double>(it->second))
    v = std::get<double>(it->second);
  else if (it != n.attrs.end() && std::holds_alternative<int64_t>(it->second))
    v = static_cast<double>(std::get<int64_t>(it->second));
  else
    codegen_fail(g, "scalar %" + n.name + " needs a numeric attribute 'value'");
  if (is_integer(n.out.dtype)) {
    if (!std::holds_alternative<int64_t>(it->second))
      codegen_fail(g, "scalar %" + n.name + " of dtype " + std::string(dtype_name(n.out.dtype)) +
                          " needs an integer 'value'");
    int64_t x = wrap_to(std::get<int64_t>(it->second), n.out.dtype);
    // INT64_MIN has no literal: written as a difference.
    return x == INT64_MIN ? "af_splat_i64(-9223372036854775807LL - 1)"
                          : "af_splat_i64(" + std::to_string(x) + "LL)";
  }
  switch (n.out.dtype) {
    case DType::F64: return "af_splat_f64(" + double_literal(v) + ")";
    case DType::Bool: return std::string("af_mask_splat(") + (v != 0 ? "true" : "false") + ")";
    case DType::F16: return "af_round_f16(af_splat(" + float_literal(v) + "))";
    case DType::BF16: return "af_round_bf16(af_splat(" + float_literal(v) + "))";
    default: return "af_splat(" + float_literal(v) + ")";  // computed in f32
  }
}

/// Whether node i's value is exactly representable in `t` (f16/bf16): a load or cast of that
/// dtype, or an f32 cast / broadcast of such a value. Rounding it to `t` changes nothing.
bool exact_in(const AscGraph& g, int i, DType t) {
  const AscNode& n = g.nodes[i];
  if (n.out.dtype == t && (n.op == "load" || n.op == "cast")) return true;
  if ((n.op == "cast" && n.out.dtype == DType::F32) || n.op == "broadcast")
    return exact_in(g, n.inputs.at(0), t);
  return false;
}

std::string cast_expr(const AscGraph& g, int i, const std::string& x,
                      const std::vector<int>& users) {
  const AscNode& n = g.nodes[i];
  const AscNode& in = g.nodes[n.inputs[0]];
  mem_suffix(g, in, in.out.dtype);
  std::string to = mem_suffix(g, n, n.out.dtype);
  // f16/bf16 values live in f32 lanes: widening is free, and rounding a value that is already
  // exact in the narrow type (a weight cast to f32 and back) is the identity.
  if (n.out.dtype == DType::F32 && (in.out.dtype == DType::F16 || in.out.dtype == DType::BF16))
    return x;
  if ((n.out.dtype == DType::F16 || n.out.dtype == DType::BF16) &&
      exact_in(g, n.inputs[0], n.out.dtype))
    return x;
  if (n.out.dtype == DType::F16 || n.out.dtype == DType::BF16) {
    // From f32 lanes, feeding only stores of the same dtype: the store rounds the same way.
    bool only_stores = !users.empty() && (graph::mask_of(in.out.dtype) & graph::kF32LaneTypes);
    for (int u : users)
      only_stores = only_stores && g.nodes[u].op == "store" && g.nodes[u].out.dtype == n.out.dtype;
    if (only_stores) return x;
  }
  return "af_to_" + to + "(" + x + ")";
}

}  // namespace

/// The vector library's name for `t` in af_load_<T> and friends.
std::string mem_suffix(const AscGraph& g, const AscNode& n, DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Bool: return "bool";
    case DType::I64: return "i64";
    case DType::I32: return "i32";
    case DType::I16: return "i16";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    case DType::F64: return "f64";
    default:
      codegen_fail(g, "%" + n.name + " (" + n.op + ") has dtype " + std::string(dtype_name(t)) +
                          "; CPU kernels do not read or write it");
  }
}

std::string storage_type(DType t) {
  return std::string(dtype_storage_cpp(t));
}

std::string vector_type(DType t) {
  if (t == DType::Bool) return "af_vm";
  if (is_integer(t)) return "af_vl";
  if (t == DType::F64) return "af_vd";
  return "af_vf";
}

std::string splat_expr(DType t, const std::string& value) {
  if (t == DType::Bool) return "af_mask_splat(" + value + ")";
  if (t == DType::F64) return "af_splat_f64(" + value + ")";
  if (is_integer(t)) return "af_splat_i64(" + value + ")";
  return "af_splat(" + value + ")";
}

bool is_integer_division(const AscNode& n) {
  return is_integer(n.out.dtype) &&
         (n.op == "div_floor" || n.op == "div_trunc" || n.op == "remainder" || n.op == "fmod");
}

bool is_gather(const AscNode& n) {
  return n.op == "load" && n.inputs.size() == 2;
}

namespace {
int64_t gather_attr(const AscNode& n, const char* name) {
  return std::get<int64_t>(n.attrs.at(name));  // present: the verifier checks
}
}  // namespace

std::string gather_row_pointer(const AscGraph& g, int i, const std::string& index) {
  const AscNode& n = g.nodes[i];
  const int d = n.inputs.at(0);
  return "const " + storage_type(g.nodes[d].out.dtype) + "* g" + std::to_string(i) + " = p" +
         std::to_string(d) + " + af_checked_index(" + index + ", " +
         std::to_string(gather_attr(n, "index_bound")) + ", &" + kIndexFault + ") * " +
         std::to_string(gather_attr(n, "index_stride")) + ";  // the row %" + n.name + " gathers";
}

std::string take_expr(const AscGraph& g, int i, const std::string& at, const sym::Expr& ls,
                      const std::string& index, bool tail) {
  const AscNode& n = g.nodes[i];
  const int d = n.inputs.at(0);
  std::string s = ls == sym::Expr(0) ? "0" : ls == sym::Expr(1) ? "1" : "ls" + std::to_string(d);
  return "af_take_" + mem_suffix(g, g.nodes[d], g.nodes[d].out.dtype) + (tail ? "_n(" : "(") + at +
         ", " + s + ", " + index + ", " + std::to_string(gather_attr(n, "index_stride")) + ", " +
         std::to_string(gather_attr(n, "index_bound")) + ", &" + kIndexFault +
         (tail ? ", rem)" : ")");
}

std::string compute_expr(const AscGraph& g, int i, const std::vector<std::string>& args_in,
                         const std::vector<int>& users, bool tail) {
  std::vector<std::string> args = args_in;
  if (tail && is_integer_division(g.nodes[i]))
    args.at(1) = "af_live_divisor(" + args.at(1) + ", rem)";
  const AscNode& n = g.nodes[i];
  if (n.op == "scalar") return scalar_expr(g, n);
  if (n.op == "cast") return cast_expr(g, i, args.at(0), users);
  for (int in : n.inputs) mem_suffix(g, g.nodes[in], g.nodes[in].out.dtype);
  mem_suffix(g, n, n.out.dtype);
  const graph::OpDef* def = graph::find_op(n.op);
  if (!def || def->cls != graph::OpClass::Elementwise)
    codegen_fail(g, "%" + n.name + ": op '" + n.op + "' is not an elementwise op of the registry");
  // The registry's operand dtypes are the rule (where's condition is its bool operand).
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    DType t = g.nodes[n.inputs[k]].out.dtype;
    bool allowed = n.op == "where" && k == 0 ? t == DType::Bool || is_floating(t)
                                             : (graph::mask_of(t) & def->operand_dtypes) != 0;
    if (!allowed)
      codegen_fail(g, "%" + n.name + " (" + n.op + "): operand " + std::to_string(k) + " is " +
                          std::string(dtype_name(t)) + ", which CPU kernels do not compute " +
                          n.op + " on");
  }
  if (def->arity >= 0 && static_cast<size_t>(def->arity) != args.size())
    codegen_fail(g, "%" + n.name + " (" + n.op + ") has " + std::to_string(args.size()) +
                        " operands, the registry says " + std::to_string(def->arity));
  // The vector library's af_<kind>, or its variant af_<kind>_<mode> / af_<kind>_<dtype>.
  std::string fn = "af_" + n.op;
  auto approx = n.attrs.find("approximate");
  if (approx != n.attrs.end() && std::holds_alternative<std::string>(approx->second)) {
    const std::string& mode = std::get<std::string>(approx->second);
    if (mode != "none") {
      if (c_ident(mode) != mode)
        codegen_fail(g,
                     "%" + n.name + " (" + n.op + "): unsupported approximate = \"" + mode + "\"");
      fn += "_" + mode;
    }
  }
  auto round = n.attrs.find("round");
  if (round != n.attrs.end()) {
    // div_floor / div_trunc (f16, bf16) and cube / rsquare (bf16) computing with eager's
    // per-step rounding: the runtime's af_<op>_<dtype>.
    const std::string* to = std::get_if<std::string>(&round->second);
    const bool div = n.op == "div_floor" || n.op == "div_trunc";
    const bool pow = (n.op == "cube" || n.op == "rsquare") && to && *to == "bf16";
    if (!to || (*to != "f16" && *to != "bf16") || !(div || pow))
      codegen_fail(g, "%" + n.name + " (" + n.op + "): unsupported attribute round");
    fn += "_" + *to;
  }
  std::string call = fn + "(";
  for (size_t k = 0; k < args.size(); ++k) call += (k ? ", " : "") + args[k];
  call += ")";
  // Narrow integers live in int64 lanes: their results wrap to their width, as eager's math.
  if (is_integer(n.out.dtype) && n.out.dtype != DType::I64)
    return "af_to_" + mem_suffix(g, n, n.out.dtype) + "(" + call + ")";
  return call;
}

}  // namespace af::codegen
