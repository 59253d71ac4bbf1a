// The op registry table: one row per Graph IR op kind (see docs/ir.md for the list).
//
// Costs are per element relative to an add. How each target computes an op is its emitter's
// (the cpu target calls af_<kind> of runtime/include/autofuse_cpu.h; ascendc: op_rules.cpp).
#include "graph/op_registry.h"

#include <unordered_map>

namespace af::graph {
namespace {

constexpr DTypeMask kAllTypes = 0x3ffu;  // every DType
constexpr DTypeMask kFloatOrBool = kFloatTypes | kBoolType;
constexpr DTypeMask kNumeric = kFloatTypes | kIntTypes;
constexpr DTypeMask kIntOrBool = kIntTypes | kBoolType;

using C = OpClass;

// Elementwise semantics worth stating (all compute in f32 for f16/bf16 operands):
//   div: true division. div_floor: floor(a / b) (torch rounding_mode="floor").
//   div_trunc: trunc(a / b) (rounding_mode="trunc"). pow(x, y): x ** y.
//   cube: (x * x) * x. pow4: (x * x) * (x * x). rsquare: 1 / (x * x) (graph/simplify.h's pow
//   rules produce them; f16/bf16 round once, at the end).
//   maximum/minimum: propagate NaN like torch. relu: max(x, 0).
//   gelu: exact 0.5*x*(1 + erf(x/sqrt(2))); attr approximate = "tanh" selects the tanh form.
//   silu: x * sigmoid(x). sigmoid: 1 / (1 + exp(-x)). rsqrt: 1/sqrt(x).
//   clamp(x, lo, hi) = min(max(x, lo), hi); clamp_min(x, lo) = max(x, lo);
//   clamp_max(x, hi) = min(x, hi).   where(cond, a, b): cond ? a : b (cond is bool).
//   round: half to even (torch.round). sign: -1, 0 or 1 (0 for +-0 and for NaN, as torch).
//   eq ne lt le gt ge, isnan, isinf, logical_*: produce bool.
//   remainder(a, b): a - b * floor(a / b), the sign of b (torch.remainder). fmod(a, b):
//   a - b * trunc(a / b), the sign of a (torch.fmod).
//   Integer operands (kIntTypes) compute in int64 lanes with two's complement wrap; a narrow
//   dtype's result wraps to its width after every op, as eager's narrow math. Integer
//   div_floor / div_trunc / remainder / fmod by 0 raise ZeroDivisionError, as eager.
//   bitwise_left_shift(a, b): 0 for b < 0 or b >= the width; bitwise_right_shift(a, b):
//   arithmetic, the sign fill for b < 0 or b >= the width - 1 (torch's rules).
//   bitwise_* on bool operands: the same as logical_* (and produce bool).
const std::vector<OpDef> kOps = {
    // Sources.
    {"input", C::Input, 0, kAllTypes, 0},
    {"const", C::Const, 0, kAllTypes, 0},
    // Arithmetic.
    {"add", C::Elementwise, 2, kNumeric, 1},
    {"sub", C::Elementwise, 2, kNumeric, 1},
    {"mul", C::Elementwise, 2, kNumeric, 1},
    {"div", C::Elementwise, 2, kFloatTypes, 4},
    {"div_floor", C::Elementwise, 2, kNumeric, 6},
    {"div_trunc", C::Elementwise, 2, kNumeric, 5},
    {"remainder", C::Elementwise, 2, kNumeric, 6},
    {"fmod", C::Elementwise, 2, kNumeric, 5},
    {"neg", C::Elementwise, 1, kNumeric, 1},
    {"abs", C::Elementwise, 1, kNumeric, 1},
    {"reciprocal", C::Elementwise, 1, kFloatTypes, 4},
    {"pow", C::Elementwise, 2, kFloatTypes, 20},
    {"cube", C::Elementwise, 1, kFloatTypes, 2},
    {"pow4", C::Elementwise, 1, kFloatTypes, 2},
    {"rsquare", C::Elementwise, 1, kFloatTypes, 5},
    {"maximum", C::Elementwise, 2, kNumeric, 1},
    {"minimum", C::Elementwise, 2, kNumeric, 1},
    {"clamp", C::Elementwise, 3, kNumeric, 2},
    {"clamp_min", C::Elementwise, 2, kNumeric, 1},
    {"clamp_max", C::Elementwise, 2, kNumeric, 1},
    // Transcendental and roots.
    {"exp", C::Elementwise, 1, kFloatTypes, 10},
    {"exp2", C::Elementwise, 1, kFloatTypes, 10},
    {"log", C::Elementwise, 1, kFloatTypes, 12},
    {"log1p", C::Elementwise, 1, kFloatTypes, 14},
    {"expm1", C::Elementwise, 1, kFloatTypes, 14},
    {"sqrt", C::Elementwise, 1, kFloatTypes, 4},
    {"rsqrt", C::Elementwise, 1, kFloatTypes, 5},
    {"sigmoid", C::Elementwise, 1, kFloatTypes, 12},
    {"tanh", C::Elementwise, 1, kFloatTypes, 14},
    {"erf", C::Elementwise, 1, kFloatTypes, 14},
    {"sin", C::Elementwise, 1, kFloatTypes, 16},
    {"cos", C::Elementwise, 1, kFloatTypes, 16},
    // Activations.
    {"relu", C::Elementwise, 1, kNumeric, 1},
    {"gelu", C::Elementwise, 1, kFloatTypes, 20},
    {"silu", C::Elementwise, 1, kFloatTypes, 12},
    // Rounding and sign.
    {"sign", C::Elementwise, 1, kNumeric, 2},
    {"floor", C::Elementwise, 1, kFloatTypes, 1},
    {"ceil", C::Elementwise, 1, kFloatTypes, 1},
    {"round", C::Elementwise, 1, kFloatTypes, 1},
    {"trunc", C::Elementwise, 1, kFloatTypes, 1},
    // Selection: operand 0 bool, operands 1-2 float or integer (positions checked by the verifier).
    {"where", C::Elementwise, 3, kFloatOrBool | kIntTypes, 1},
    // Comparisons and classification: float (comparisons: also integer) operands, bool result.
    {"eq", C::Elementwise, 2, kNumeric, 1},
    {"ne", C::Elementwise, 2, kNumeric, 1},
    {"lt", C::Elementwise, 2, kNumeric, 1},
    {"le", C::Elementwise, 2, kNumeric, 1},
    {"gt", C::Elementwise, 2, kNumeric, 1},
    {"ge", C::Elementwise, 2, kNumeric, 1},
    {"isnan", C::Elementwise, 1, kFloatTypes, 1},
    {"isinf", C::Elementwise, 1, kFloatTypes, 1},
    // Boolean logic: bool operands, bool result.
    {"logical_and", C::Elementwise, 2, kBoolType, 1},
    {"logical_or", C::Elementwise, 2, kBoolType, 1},
    {"logical_xor", C::Elementwise, 2, kBoolType, 1},
    {"logical_not", C::Elementwise, 1, kBoolType, 1},
    {"bitwise_and", C::Elementwise, 2, kIntOrBool, 1},
    {"bitwise_or", C::Elementwise, 2, kIntOrBool, 1},
    {"bitwise_xor", C::Elementwise, 2, kIntOrBool, 1},
    {"bitwise_not", C::Elementwise, 1, kIntOrBool, 1},
    {"bitwise_left_shift", C::Elementwise, 2, kIntTypes, 1},
    {"bitwise_right_shift", C::Elementwise, 2, kIntTypes, 1},
    // Data movement.
    {"broadcast", C::Broadcast, 1, kAllTypes, 0},
    {"cast", C::Cast, 1, kAllTypes, 1},
    {"reshape", C::View, 1, kAllTypes, 0},
    {"permute", C::View, 1, kAllTypes, 0},
    {"unsqueeze", C::View, 1, kAllTypes, 0},
    {"squeeze", C::View, 1, kAllTypes, 0},
    {"slice", C::View, 1, kAllTypes, 0},
    {"expand", C::View, 1, kAllTypes, 0},
    // Reductions over attr dims (sorted, unique) with attr keepdim 0|1; f16/bf16 reduce in f32,
    // integers in int64 (the frontend casts to the result dtype first, as eager's sum / prod).
    // reduce_mean divides by the product of the reduced extents. Emitted by the reduction
    // schedule, not through cpu_expr.
    {"reduce_sum", C::Reduce, 1, kNumeric, 1},
    {"reduce_mean", C::Reduce, 1, kFloatTypes, 1},
    {"reduce_max", C::Reduce, 1, kNumeric, 1},
    {"reduce_min", C::Reduce, 1, kNumeric, 1},
    {"reduce_prod", C::Reduce, 1, kNumeric, 1},
    {"reduce_any", C::Reduce, 1, kBoolType, 1},
    {"reduce_all", C::Reduce, 1, kBoolType, 1},
    // concat {dim}: the operands one after another along `dim` (torch.cat); a kernel writes
    // each operand's producer straight into its slice of the result.
    {"concat", C::Concat, -1, kAllTypes, 0},
    // Everything else runs as ATen.
    {"opaque", C::Opaque, -1, kAllTypes, 0},
};

}  // namespace

const OpDef* find_op(std::string_view kind) {
  static const std::unordered_map<std::string_view, const OpDef*> index = [] {
    std::unordered_map<std::string_view, const OpDef*> m;
    for (const auto& op : kOps) m.emplace(op.name, &op);
    return m;
  }();
  auto it = index.find(kind);
  return it == index.end() ? nullptr : it->second;
}

bool is_reduce_op(std::string_view kind) {
  const OpDef* def = find_op(kind);
  return def && def->cls == OpClass::Reduce;
}

bool gives_bool(std::string_view kind, DType operand) {
  auto one_of = [&](std::initializer_list<std::string_view> names) {
    for (auto n : names)
      if (kind == n) return true;
    return false;
  };
  if (one_of({"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"}))
    return operand == DType::Bool;
  return one_of({"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "logical_and", "logical_or",
                 "logical_xor", "logical_not"});
}

const std::vector<OpDef>& all_ops() {
  return kOps;
}

}  // namespace af::graph
