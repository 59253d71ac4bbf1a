#include "aten/op_table.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>

#include "aten/promotion.h"
#include "aten/view_rules.h"

namespace af::aten {
namespace {

struct Row;
/// A rule: the plan of a call of its row's op.
using RuleFn = PlanOrReason (*)(const Row&, const Call&);

/// One overload of the table: its family, its rule and the rule's parameters (the Graph IR kind;
/// argument names or, for reductions, the dim argument and whether the operand is read as bool).
struct Row {
  Family family;
  RuleFn rule;
  std::string kind;
  std::string p1 = "self", p2 = "other";
  bool flag = false;
};

const Arg kNone{};

/// The argument `name` (None where the call has none).
const Arg& arg(const Call& c, std::string_view name) {
  auto it = c.args.find(name);
  return it == c.args.end() ? kNone : it->second;
}

bool is_scalar(const Arg& a) {
  return a.kind == ArgKind::Bool || a.kind == ArgKind::Int || a.kind == ArgKind::Float;
}

/// Python's str() of an argument.
std::string str(const Arg& a) {
  return a.kind == ArgKind::Object || a.kind == ArgKind::Tensor || a.kind == ArgKind::Node ? a.text
                                                                                           : a.repr;
}

/// torch's repr of a dtype ("torch.float32").
std::string dtype_repr(std::string_view name) {
  return "torch." + std::string(name);
}

/// The plan `kind` over arguments `names` read as `dtypes`, or why an operand cannot be one.
PlanOrReason plan_of(const Call& c, const std::string& kind,
                     std::initializer_list<std::pair<std::string_view, std::string>> operands) {
  Plan p{kind, {}, {}, false};
  for (const auto& [name, dtype] : operands) {
    const Arg& a = arg(c, name);
    if (a.kind == ArgKind::Node) return "operand %" + a.text + " is not a tensor";
    if (a.kind != ArgKind::Tensor && !is_scalar(a))
      return "operand " + a.repr + " is not a tensor or a number";
    p.operands.push_back({std::string(name), -1, dtype});
  }
  return p;
}

PlanOrReason unary(const Row& r, const Call& c) {
  return plan_of(c, r.kind, {{"self", c.out.dtype}});
}

PlanOrReason binary(const Row& r, const Call& c) {
  const Arg& alpha = arg(c, "alpha");
  const bool one = alpha.kind == ArgKind::None ||
                   ((alpha.kind == ArgKind::Int || alpha.kind == ArgKind::Bool) && alpha.i == 1) ||
                   (alpha.kind == ArgKind::Float && alpha.f == 1.0);
  if (!one) return "alpha=" + str(alpha);
  return plan_of(c, r.kind, {{r.p1, c.out.dtype}, {r.p2, c.out.dtype}});
}

PlanOrReason compare(const Row& r, const Call& c) {
  const std::string common = promoted_dtype({&arg(c, "self"), &arg(c, "other")}, c.default_float);
  if (common.empty()) return "no type promotion of the operands' dtypes";
  return plan_of(c, r.kind, {{"self", common}, {"other", common}});
}

PlanOrReason classify(const Row& r, const Call& c) {
  const Arg& self = arg(c, "self");
  return plan_of(c, r.kind, {{"self", self.kind == ArgKind::Tensor ? self.dtype : c.out.dtype}});
}

PlanOrReason logical(const Row& r, const Call& c) {
  if (c.out.dtype != "bool") return r.kind + " with a " + dtype_repr(c.out.dtype) + " result";
  if (r.flag) return plan_of(c, r.kind, {{"self", "bool"}});
  return plan_of(c, r.kind, {{"self", "bool"}, {"other", "bool"}});
}

PlanOrReason bitwise(const Row& r, const Call& c) {
  const DTypeCategory cat = category_of(c.out.dtype);
  if (cat == DTypeCategory::Floating || cat == DTypeCategory::Complex)
    return r.kind + " on " + dtype_repr(c.out.dtype);
  if (r.flag) return plan_of(c, r.kind, {{"self", c.out.dtype}});
  return plan_of(c, r.kind, {{"self", c.out.dtype}, {"other", c.out.dtype}});
}

PlanOrReason div(const Row&, const Call& c) {
  const Arg& mode = arg(c, "rounding_mode");
  std::string kind;
  if (mode.kind == ArgKind::None)
    kind = "div";
  else if (mode.kind == ArgKind::Object && mode.text == "floor")
    kind = "div_floor";
  else if (mode.kind == ArgKind::Object && mode.text == "trunc")
    kind = "div_trunc";
  else
    return "rounding_mode=" + mode.repr;
  return plan_of(c, kind, {{"self", c.out.dtype}, {"other", c.out.dtype}});
}

PlanOrReason where(const Row&, const Call& c) {
  if (category_of(c.out.dtype) == DTypeCategory::Complex)
    return "where on " + dtype_repr(c.out.dtype);
  return plan_of(c, "where",
                 {{"condition", "bool"}, {"self", c.out.dtype}, {"other", c.out.dtype}});
}

/// clamp / clamp_min / clamp_max / hardtanh by which bounds are present (p1: the lower bound's
/// argument, p2: the upper's; empty: none).
PlanOrReason clamp(const Row& r, const Call& c) {
  const bool lo = !r.p1.empty() && arg(c, r.p1).kind != ArgKind::None;
  const bool hi = !r.p2.empty() && arg(c, r.p2).kind != ArgKind::None;
  const std::string& d = c.out.dtype;
  if (lo && hi) return plan_of(c, "clamp", {{"self", d}, {r.p1, d}, {r.p2, d}});
  if (lo) return plan_of(c, "clamp_min", {{"self", d}, {r.p1, d}});
  if (hi) return plan_of(c, "clamp_max", {{"self", d}, {r.p2, d}});
  return std::string("clamp without bounds");
}

PlanOrReason round(const Row&, const Call& c) {
  const Arg& decimals = arg(c, "decimals");
  if (decimals.kind != ArgKind::None && !(decimals.kind == ArgKind::Int && decimals.i == 0))
    return "round with decimals=" + str(decimals);
  return plan_of(c, "round", {{"self", c.out.dtype}});
}

PlanOrReason gelu(const Row&, const Call& c) {
  const Arg& approximate = arg(c, "approximate");
  const std::string mode = approximate.kind == ArgKind::None ? "none" : approximate.text;
  if (approximate.kind != ArgKind::None &&
      (approximate.kind != ArgKind::Object || (mode != "none" && mode != "tanh")))
    return "gelu approximate=" + approximate.repr;
  PlanOrReason p = plan_of(c, "gelu", {{"self", c.out.dtype}});
  if (mode == "tanh" && std::holds_alternative<Plan>(p))
    std::get<Plan>(p).attrs["approximate"] = std::string("tanh");
  return p;
}

/// A same-dtype or dtype-changing copy of tensor argument p1 (_to_copy, clone, convert).
PlanOrReason copy(const Row& r, const Call& c) {
  const Arg& src = arg(c, r.p1);
  if (src.kind != ArgKind::Tensor) return std::string("operand is not a tensor");
  if (r.flag) {  // _to_copy: only a dtype change
    const Arg& layout = arg(c, "layout");
    const Arg& device = arg(c, "device");
    const Arg& format = arg(c, "memory_format");
    if (layout.kind != ArgKind::None && layout.text != "torch.strided")
      return "layout " + str(layout);
    if (device.kind != ArgKind::None && str(device) != src.device)
      return "device change to " + str(device);
    if (format.kind != ArgKind::None && format.text != "torch.preserve_format")
      return "memory_format " + str(format);
  }
  return plan_of(c, "cast", {{r.p1, src.dtype}});
}

PlanOrReason scalar_tensor(const Row&, const Call& c) {
  if (!is_scalar(arg(c, "s"))) return std::string("symbolic scalar");
  return Plan{"const", {{"s", -1, c.out.dtype}}, {}, false};
}

PlanOrReason full(const Row&, const Call& c) {
  if (!is_scalar(arg(c, "fill_value"))) return std::string("symbolic fill value");
  const Arg& layout = arg(c, "layout");
  if (layout.kind != ArgKind::None && layout.text != "torch.strided")
    return "layout " + str(layout);
  const std::string kind = c.out.sizes.empty() ? "const" : "broadcast";
  return Plan{kind, {{"fill_value", -1, c.out.dtype}}, {}, false};
}

/// Python's repr of a list of arguments.
std::string list_repr(const std::vector<Arg>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i].repr;
  return s + "]";
}

/// reduce_* (kind) of `self` over argument p1's dims (p1 empty: all), keepdim; `flag`: any/all,
/// reading the operand as bool (where an empty dim list reduces no dims).
PlanOrReason reduce(const Row& r, const Call& c) {
  const Arg& src = arg(c, "self");
  if (src.kind != ArgKind::Tensor) return std::string("operand is not a tensor");
  const int64_t rank = static_cast<int64_t>(src.sizes.size());
  const Arg& dim = r.p1.empty() ? kNone : arg(c, r.p1);
  std::vector<Arg> dims;
  if (dim.kind == ArgKind::None) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back({ArgKind::Int, d, 0, "", std::to_string(d)});
  } else if (dim.kind == ArgKind::List) {
    dims = dim.items;
    if (dims.empty() && !r.flag)
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back({ArgKind::Int, d, 0, "", std::to_string(d)});
  } else {
    dims = {dim};
  }
  if (rank == 0) return std::string("reduction of a rank-0 tensor");
  if (dims.empty()) return std::string("reduction over no dims");
  for (const Arg& d : dims)
    if (d.kind != ArgKind::Int || d.i < -rank || d.i >= rank)
      return "reduction dims " + list_repr(dims) + " out of range for rank " + std::to_string(rank);
  std::vector<int64_t> out;  // sorted
  for (const Arg& d : dims) {
    const int64_t n = norm_dim(d.i, rank);
    auto at = std::lower_bound(out.begin(), out.end(), n);
    if (at != out.end() && *at == n) return "repeated reduction dims " + list_repr(dims);
    out.insert(at, n);
  }
  std::string dtype = c.out.dtype;
  if (r.flag) {
    if (category_of(src.dtype) == DTypeCategory::Complex)
      return r.kind + " of a " + dtype_repr(src.dtype) + " tensor";
    dtype = "bool";
  }
  if (r.kind == "reduce_prod" && (dtype == "float16" || dtype == "bfloat16"))
    return "reduce_prod on " + dtype_repr(c.out.dtype) + " (eager accumulates it in " +
           dtype_repr(c.out.dtype) + ", kernels in f32)";
  Plan p{r.kind, {{"self", -1, dtype}}, {}, false};
  const Arg& keepdim = arg(c, "keepdim");
  p.attrs["dims"] = out;
  p.attrs["keepdim"] =
      int64_t{(keepdim.kind == ArgKind::Bool || keepdim.kind == ArgKind::Int) && keepdim.i != 0};
  return p;
}

/// cat(tensors, dim): the inputs one after another along `dim`. Inputs of extent 0 along `dim`
/// add nothing and are left out, and so are torch's legacy 1-D empty tensors of any rank's cat
/// (eager skips them: a KV cache starts as one); another rank than the result's, or all inputs
/// empty, stay ATen.
PlanOrReason concat(const Row&, const Call& c) {
  const int64_t rank = static_cast<int64_t>(c.out.sizes.size());
  const Arg& dim = arg(c, "dim");
  const int64_t d = dim.kind == ArgKind::None ? 0 : dim.i;
  if (rank == 0 || (dim.kind != ArgKind::None && dim.kind != ArgKind::Int) || d < -rank ||
      d >= rank)
    return "cat dim " + (dim.kind == ArgKind::None ? std::string("0") : dim.repr) +
           " is out of range for a rank-" + std::to_string(rank) + " result";
  const int64_t axis = norm_dim(d, rank);
  Plan p{"concat", {}, {{"dim", axis}}, false};
  const std::vector<Arg>& tensors = arg(c, "tensors").items;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Arg& v = tensors[i];
    if (v.kind != ArgKind::Tensor)
      return "cat input " + (v.kind == ArgKind::Node ? "%" + v.text : v.repr) +
             " is not a tensor node";
    const auto r = static_cast<int64_t>(v.sizes.size());
    if (r == 1 && v.sizes[0] == "0") continue;
    if (r != rank) {
      std::string shape = "[";
      for (int64_t k = 0; k < r; ++k) shape += (k ? ", " : "") + v.sizes[k];
      return "cat input %" + v.text + " of shape " + shape + "] has rank " + std::to_string(r) +
             ", the result rank " + std::to_string(rank) + " (a legacy 1-D empty tensor)";
    }
    if (v.sizes[axis] != "0") p.operands.push_back({"tensors", static_cast<int>(i), c.out.dtype});
  }
  if (p.operands.empty())
    return "cat of inputs that are all empty along dim " + std::to_string(axis);
  return p;
}

using Table = std::unordered_map<std::string, Row>;

void add(Table& t, const std::string& op, Row row) {
  t.emplace(op, std::move(row));
}

Row elementwise(RuleFn fn, std::string kind = "", std::string p1 = "self", std::string p2 = "other",
                bool flag = false) {
  return Row{Family::Elementwise, fn, std::move(kind), std::move(p1), std::move(p2), flag};
}

Row reduction(Family family, std::string kind, std::string dim, bool bool_operand = false) {
  return Row{family, reduce, std::move(kind), std::move(dim), "", bool_operand};
}

Table build_table() {
  Table t;
  for (const char* n : {"exp",        "exp2",    "log",  "log1p", "expm1", "sqrt", "rsqrt",
                        "reciprocal", "sigmoid", "tanh", "erf",   "sin",   "cos",  "relu",
                        "silu",       "neg",     "abs",  "sign",  "floor", "ceil", "trunc"})
    add(t, std::string("aten.") + n + ".default", elementwise(unary, n));
  add(t, "aten.special_expit.default", elementwise(unary, "sigmoid"));
  add(t, "aten.round.default", elementwise(round));
  add(t, "aten.round.decimals", elementwise(round));
  add(t, "aten.gelu.default", elementwise(gelu));
  for (const char* n : {"add", "sub", "mul"})
    for (const char* o : {"Tensor", "Scalar"})
      add(t, std::string("aten.") + n + "." + o, elementwise(binary, n));
  for (const char* o : {"Tensor", "Scalar", "Tensor_mode", "Scalar_mode"})
    add(t, std::string("aten.div.") + o, elementwise(div));
  for (const char* o : {"Tensor_Scalar", "Tensor_Tensor", "Scalar"})
    add(t, std::string("aten.pow.") + o, elementwise(binary, "pow", "self", "exponent"));
  add(t, "aten.maximum.default", elementwise(binary, "maximum"));
  add(t, "aten.minimum.default", elementwise(binary, "minimum"));
  for (const char* o : {"default", "Tensor"}) {
    add(t, std::string("aten.clamp.") + o, elementwise(clamp, "", "min", "max"));
    add(t, std::string("aten.clamp_min.") + o, elementwise(clamp, "", "min", ""));
    add(t, std::string("aten.clamp_max.") + o, elementwise(clamp, "", "", "max"));
  }
  add(t, "aten.hardtanh.default", elementwise(clamp, "", "min_val", "max_val"));
  add(t, "aten.where.self", elementwise(where));
  add(t, "aten.isnan.default", elementwise(classify, "isnan"));
  add(t, "aten.isinf.default", elementwise(classify, "isinf"));
  add(t, "aten.logical_not.default", elementwise(logical, "logical_not", "self", "other", true));
  for (const char* n : {"and", "or", "xor"}) {
    add(t, std::string("aten.logical_") + n + ".default",
        elementwise(logical, std::string("logical_") + n));
    for (const char* o : {"Tensor", "Scalar", "Scalar_Tensor"})
      add(t, std::string("aten.bitwise_") + n + "." + o,
          elementwise(bitwise, std::string("bitwise_") + n));
  }
  add(t, "aten.bitwise_not.default", elementwise(bitwise, "bitwise_not", "self", "other", true));
  for (const auto& [name, dunder] :
       {std::pair{"left_shift", "__lshift__"}, std::pair{"right_shift", "__rshift__"}}) {
    const std::string kind = std::string("bitwise_") + name;
    for (const char* o : {"Tensor", "Tensor_Scalar", "Scalar_Tensor"})
      add(t, "aten." + kind + "." + o, elementwise(bitwise, kind));
    for (const char* o : {"Tensor", "Scalar"})
      add(t, std::string("aten.") + dunder + "." + o, elementwise(bitwise, kind));
  }
  for (const char* n : {"remainder", "fmod"})
    for (const char* o : {"Tensor", "Scalar"})
      add(t, std::string("aten.") + n + "." + o, elementwise(binary, n));
  add(t, "aten.remainder.Scalar_Tensor", elementwise(binary, "remainder"));
  for (const char* n : {"eq", "ne", "lt", "le", "gt", "ge"})
    for (const char* o : {"Tensor", "Scalar"})
      add(t, std::string("aten.") + n + "." + o, elementwise(compare, n));
  add(t, "aten._to_copy.default", elementwise(copy, "", "self", "", true));
  add(t, "aten.clone.default", elementwise(copy, "", "self"));
  add(t, "prims.convert_element_type.default", elementwise(copy, "", "a"));
  add(t, "aten.scalar_tensor.default", elementwise(scalar_tensor));
  add(t, "aten.full.default", elementwise(full));

  for (const auto& [op, kind] : {std::pair{"sum", "reduce_sum"}, std::pair{"mean", "reduce_mean"},
                                 std::pair{"prod", "reduce_prod"}})
    add(t, std::string("aten.") + op + ".default", reduction(Family::Reduce, kind, ""));
  add(t, "aten.sum.dim_IntList", reduction(Family::Reduce, "reduce_sum", "dim"));
  add(t, "aten.mean.dim", reduction(Family::Reduce, "reduce_mean", "dim"));
  add(t, "aten.prod.dim_int", reduction(Family::Reduce, "reduce_prod", "dim"));
  add(t, "aten.amax.default", reduction(Family::Reduce, "reduce_max", "dim"));
  add(t, "aten.amin.default", reduction(Family::Reduce, "reduce_min", "dim"));
  add(t, "aten.max.default", reduction(Family::Reduce, "reduce_max", ""));
  add(t, "aten.min.default", reduction(Family::Reduce, "reduce_min", ""));
  for (const char* n : {"any", "all"}) {
    const std::string kind = std::string("reduce_") + n;
    add(t, std::string("aten.") + n + ".default", reduction(Family::Reduce, kind, "", true));
    add(t, std::string("aten.") + n + ".dim", reduction(Family::Reduce, kind, "dim", true));
    add(t, std::string("aten.") + n + ".dims", reduction(Family::Reduce, kind, "dim", true));
  }
  add(t, "aten.max.dim", reduction(Family::ValuesOnly, "reduce_max", "dim"));
  add(t, "aten.min.dim", reduction(Family::ValuesOnly, "reduce_min", "dim"));

  // aten.concat / aten.concatenate decompose into aten.cat before the backend sees them; they
  // are listed for graphs traced without that decomposition.
  for (const char* op : {"aten.cat.default", "aten.concat.default", "aten.concatenate.default"})
    add(t, op, Row{Family::Concat, concat, "concat"});
  for (const auto& [op, kind] : view_rows()) add(t, op, Row{Family::View, nullptr, kind});
  return t;
}

const Table& table() {
  static const Table t = build_table();
  return t;
}

}  // namespace

Family family_of(std::string_view op) {
  auto it = table().find(std::string(op));
  return it == table().end() ? Family::None : it->second.family;
}

PlanOrReason plan_call(std::string_view op, const Call& call) {
  auto it = table().find(std::string(op));
  if (it == table().end()) return std::string(op) + " is not in the ATen op table";
  const Row& row = it->second;
  if (row.family == Family::View) return plan_view(op, call);
  return row.rule(row, call);
}

}  // namespace af::aten
