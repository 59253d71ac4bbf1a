// Bindings of the ATen op table (aten/op_table.h): which family an overload is, and the plan of
// one FX call, whose arguments the frontend encodes as None, bool, int, float, a list of
// arguments, ("t", name, dtype, sizes, device) for a tensor value, ("n", name, number type) for
// another graph value and ("o", str, repr) for any other object.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "aten/op_table.h"

namespace nb = nanobind;
using af::aten::Arg;
using af::aten::ArgKind;

namespace {

std::vector<std::string> strings(nb::handle h) {
  return nb::cast<std::vector<std::string>>(h);
}

Arg arg_of(nb::handle h) {
  Arg a;
  if (h.is_none()) {
    a.repr = "None";
  } else if (nb::isinstance<nb::bool_>(h)) {
    a.kind = ArgKind::Bool;
    a.i = nb::cast<bool>(h);
    a.repr = a.i ? "True" : "False";
  } else if (nb::isinstance<nb::int_>(h)) {
    a.kind = ArgKind::Int;
    a.i = nb::cast<int64_t>(h);
    a.repr = nb::cast<std::string>(nb::repr(h));
  } else if (nb::isinstance<nb::float_>(h)) {
    a.kind = ArgKind::Float;
    a.f = nb::cast<double>(h);
    a.repr = nb::cast<std::string>(nb::repr(h));
  } else if (nb::isinstance<nb::list>(h)) {
    a.kind = ArgKind::List;
    a.repr = "[";
    for (nb::handle item : nb::borrow<nb::list>(h)) {
      a.items.push_back(arg_of(item));
      a.repr += (a.items.size() > 1 ? ", " : "") + a.items.back().repr;
    }
    a.repr += "]";
  } else {
    auto t = nb::borrow<nb::tuple>(h);
    const std::string tag = nb::cast<std::string>(t[0]);
    a.text = nb::cast<std::string>(t[1]);
    a.repr = a.text;
    if (tag == "t") {
      a.kind = ArgKind::Tensor;
      a.dtype = nb::cast<std::string>(t[2]);
      a.sizes = strings(t[3]);
      a.device = nb::cast<std::string>(t[4]);
    } else if (tag == "n") {
      a.kind = ArgKind::Node;
      a.dtype = nb::cast<std::string>(t[2]);
    } else {
      a.kind = ArgKind::Object;
      a.repr = nb::cast<std::string>(t[2]);
    }
  }
  return a;
}

const char* family_name(af::aten::Family f) {
  switch (f) {
    case af::aten::Family::Elementwise: return "elementwise";
    case af::aten::Family::Reduce: return "reduce";
    case af::aten::Family::ValuesOnly: return "values_only";
    case af::aten::Family::Concat: return "concat";
    case af::aten::Family::View: return "view";
    default: return "";
  }
}

nb::object attr_value(const af::aten::PlanAttr& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return nb::int_(*i);
  if (auto* s = std::get_if<std::string>(&v)) return nb::str(s->c_str());
  nb::list l;
  for (int64_t x : std::get<std::vector<int64_t>>(v)) l.append(x);
  return l;
}

/// The plan of a call as (kind, [(argument, item, dtype)], attrs, result_shape), or the reason.
nb::object plan(const std::string& op, const nb::dict& args, const std::string& out_dtype,
                const std::vector<std::string>& out_sizes, const std::string& default_float) {
  af::aten::Call call;
  for (auto [k, v] : args) call.args.emplace(nb::cast<std::string>(k), arg_of(v));
  call.out = {out_dtype, out_sizes};
  call.default_float = default_float;
  af::aten::PlanOrReason r = af::aten::plan_call(op, call);
  if (auto* why = std::get_if<std::string>(&r)) return nb::str(why->c_str());
  const af::aten::Plan& p = std::get<af::aten::Plan>(r);
  nb::list operands;
  for (const auto& o : p.operands) operands.append(nb::make_tuple(o.arg, o.item, o.dtype));
  nb::dict attrs;
  for (const auto& [k, v] : p.attrs) attrs[k.c_str()] = attr_value(v);
  return nb::make_tuple(p.kind, operands, attrs, p.result_shape);
}

}  // namespace

void bind_aten(nb::module_& m) {
  m.def(
      "aten_family", [](const std::string& op) { return family_name(af::aten::family_of(op)); },
      nb::arg("op"),
      "How the ATen op table maps overload `op` ('aten.add.Tensor'): 'elementwise', 'reduce', "
      "'values_only', 'concat', 'view' or '' (not at all).");
  m.def("aten_plan", &plan, nb::arg("op"), nb::arg("args"), nb::arg("out_dtype"),
        nb::arg("out_sizes"), nb::arg("default_float"),
        "The Graph IR node computing a call of `op`: (kind, [(argument, item, dtype)], attrs, "
        "result_shape), or the reason none does.");
}
