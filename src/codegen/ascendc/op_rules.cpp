// The Ascend C emitter's op table (op_rules.h).
#include "codegen/ascendc/op_rules.h"

#include <string>
#include <variant>

namespace af::codegen {

namespace {
// A comparison's result from its mask: 1 where the bit is set, else 0.
constexpr std::string_view kOne = "Duplicate({d}, 1.0f, {n})";
constexpr std::string_view kPick =
    "Select({d}, {mask}, {d}, 0.0f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, {n})";
}  // namespace

const std::vector<OpRule>& op_rules() {
  // clang-format off
  static const std::vector<OpRule> rules = {
      {"add", "", 0, {"Add({d}, {0}, {1}, {n})"}},
      {"sub", "", 0, {"Sub({d}, {0}, {1}, {n})"}},
      {"mul", "", 0, {"Mul({d}, {0}, {1}, {n})"}},
      {"div", "", 0, {"Div({d}, {0}, {1}, {n})"}},
      {"neg", "", 0, {"Muls({d}, {0}, -1.0f, {n})"}},
      {"abs", "", 0, {"Abs({d}, {0}, {n})"}},
      {"reciprocal", "", 0, {"Div({d}, {one}, {0}, {n})"}},
      {"exp", "", 0, {"Exp({d}, {0}, {n})"}},
      {"log", "", 0, {"Ln({d}, {0}, {n})"}},
      {"sqrt", "", 0, {"Sqrt({d}, {0}, {n})"}},
      {"rsqrt", "", 0, {"Sqrt({d}, {0}, {n})", "Div({d}, {one}, {d}, {n})"}},
      {"relu", "", 0, {"Relu({d}, {0}, {n})"}},
      // NaN in either operand gives NaN (torch's rule), as ascendc_emu's Max/Min: the device's
      // NaN behaviour is not documented (docs/ascendc.md).
      {"maximum", "", 0, {"Max({d}, {0}, {1}, {n})"}},
      {"minimum", "", 0, {"Min({d}, {0}, {1}, {n})"}},
      {"clamp_min", "", 0, {"Max({d}, {0}, {1}, {n})"}},
      {"clamp_max", "", 0, {"Min({d}, {0}, {1}, {n})"}},
      {"clamp", "", 0, {"Max({d}, {0}, {1}, {n})", "Min({d}, {d}, {2}, {n})"}},
      // Rounding: Cast f32 -> f32 with a round mode (RINT is half to even, as torch.round).
      {"floor", "", 0, {"Cast({d}, {0}, AscendC::RoundMode::CAST_FLOOR, {n})"}},
      {"ceil", "", 0, {"Cast({d}, {0}, AscendC::RoundMode::CAST_CEIL, {n})"}},
      {"round", "", 0, {"Cast({d}, {0}, AscendC::RoundMode::CAST_RINT, {n})"}},
      {"trunc", "", 0, {"Cast({d}, {0}, AscendC::RoundMode::CAST_TRUNC, {n})"}},
      {"div_trunc", "", 0, {"Div({d}, {0}, {1}, {n})",
                            "Cast({d}, {d}, AscendC::RoundMode::CAST_TRUNC, {n})"}},
      // bool values are f32 0 / 1 in UB (uint8_t in GM): a comparison is Compare into the bit
      // mask {mask} (whole 256-byte repeats: {n} is) and Select of 1 or 0; logic is arithmetic.
      {"eq", "", 0, {"Compare({mask}, {0}, {1}, AscendC::CMPMODE::EQ, {n})", kOne, kPick}},
      {"ne", "", 0, {"Compare({mask}, {0}, {1}, AscendC::CMPMODE::NE, {n})", kOne, kPick}},
      {"lt", "", 0, {"Compare({mask}, {0}, {1}, AscendC::CMPMODE::LT, {n})", kOne, kPick}},
      {"le", "", 0, {"Compare({mask}, {0}, {1}, AscendC::CMPMODE::LE, {n})", kOne, kPick}},
      {"gt", "", 0, {"Compare({mask}, {0}, {1}, AscendC::CMPMODE::GT, {n})", kOne, kPick}},
      {"ge", "", 0, {"Compare({mask}, {0}, {1}, AscendC::CMPMODE::GE, {n})", kOne, kPick}},
      {"isnan", "", 0, {"Compare({mask}, {0}, {0}, AscendC::CMPMODE::NE, {n})", kOne, kPick}},
      {"isinf", "", 0, {"Abs({d}, {0}, {n})",
                        "{compare_scalar}({mask}, {d}, af_f32_bits(0x7f800000u), AscendC::CMPMODE::EQ, {n})",
                        kOne, kPick}},
      {"where", "", 0, {"{compare_scalar}({mask}, {0}, 0.0f, AscendC::CMPMODE::NE, {n})",
                        "Select({d}, {mask}, {1}, {2}, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {n})"}},
      {"logical_and", "", 0, {"Mul({d}, {0}, {1}, {n})"}},
      {"logical_or", "", 0, {"Max({d}, {0}, {1}, {n})"}},
      {"logical_xor", "", 0, {"Sub({d}, {0}, {1}, {n})", "Abs({d}, {d}, {n})"}},
      {"logical_not", "", 0, {"Muls({d}, {0}, -1.0f, {n})", "Adds({d}, {d}, 1.0f, {n})"}},
      {"bitwise_and", "", 0, {"Mul({d}, {0}, {1}, {n})"}},
      {"bitwise_or", "", 0, {"Max({d}, {0}, {1}, {n})"}},
      {"bitwise_xor", "", 0, {"Sub({d}, {0}, {1}, {n})", "Abs({d}, {d}, {n})"}},
      {"bitwise_not", "", 0, {"Muls({d}, {0}, -1.0f, {n})", "Adds({d}, {d}, 1.0f, {n})"}},
      // The advanced API with its temporary buffer {tmp}: a TBuf of its own as large as the
      // kernel's largest need (uses_tmp_buffer): 1 tile for Tanh, 3 for Erf/Sin/Cos (256 x K
      // bytes at least: a tile is >= 256 B), 6 for Power (1,536 B at least).
      {"tanh", "", 1, {"Tanh({d}, {0}, {tmp}, {n})"}},
      {"erf", "", 3, {"Erf({d}, {0}, {tmp}, {n})"}},
      {"sin", "", 3, {"Sin({d}, {0}, {tmp}, {n})"}},
      {"cos", "", 3, {"Cos({d}, {0}, {tmp}, {n})"}},
      {"pow", "", 6, {"Power({d}, {0}, {1}, {tmp}, {n})"}},
      {"exp2", "", 6, {"Power({d}, 2.0f, {0}, {tmp}, {n})"}},
      {"cube", "", 0, {"Mul({d}, {0}, {0}, {n})", "Mul({d}, {d}, {0}, {n})"}},
      {"pow4", "", 0, {"Mul({d}, {0}, {0}, {n})", "Mul({d}, {d}, {d}, {n})"}},
      {"rsquare", "", 0, {"Mul({d}, {0}, {0}, {n})", "Div({d}, {one}, {d}, {n})"}},
      // 1 / x is Div of a tile of ones ({one}), never Reciprocal (nor 1 / sqrt(x) Rsqrt): on
      // float their API docs promise no better than 1e-4 relative error and send high precision
      // to Div and Sqrt, and leave 0 (Rsqrt: x <= 0) undefined.
      // 1 / (1 + exp(-x))
      {"sigmoid", "", 0, {"Muls({d}, {0}, -1.0f, {n})", "Exp({d}, {d}, {n})",
                          "Adds({d}, {d}, 1.0f, {n})", "Div({d}, {one}, {d}, {n})"}},
      // x * sigmoid(x) = x / (1 + exp(-x))
      {"silu", "", 0, {"Muls({d}, {0}, -1.0f, {n})", "Exp({d}, {d}, {n})",
                       "Adds({d}, {d}, 1.0f, {n})", "Div({d}, {0}, {d}, {n})"}},
      // 0.5 * x * (1 + erf(x / sqrt 2)) = 0.5 * (x + |x| * erf(|x| / sqrt 2)) (erf is odd), erf
      // of a = |x| / sqrt 2 >= 0 as 1 - t * P(t) * exp(-a^2), t = 1 / (1 + p a) (Abramowitz and
      // Stegun 7.1.26, absolute error <= 1.5e-7). {t0}: a, then t, then |x|; {t1}: t * P(t).
      {"gelu", "", 2, {"Abs({t0}, {0}, {n})", "Muls({t0}, {t0}, 0.70710678f, {n})",
                       "Mul({d}, {t0}, {t0}, {n})", "Muls({d}, {d}, -1.0f, {n})",
                       "Exp({d}, {d}, {n})",
                       "Muls({t0}, {t0}, 0.3275911f, {n})", "Adds({t0}, {t0}, 1.0f, {n})",
                       "Div({t0}, {one}, {t0}, {n})",
                       "Muls({t1}, {t0}, 1.061405429f, {n})", "Adds({t1}, {t1}, -1.453152027f, {n})",
                       "Mul({t1}, {t1}, {t0}, {n})", "Adds({t1}, {t1}, 1.421413741f, {n})",
                       "Mul({t1}, {t1}, {t0}, {n})", "Adds({t1}, {t1}, -0.284496736f, {n})",
                       "Mul({t1}, {t1}, {t0}, {n})", "Adds({t1}, {t1}, 0.254829592f, {n})",
                       "Mul({t1}, {t1}, {t0}, {n})",
                       "Mul({d}, {d}, {t1}, {n})", "Muls({d}, {d}, -1.0f, {n})",
                       "Adds({d}, {d}, 1.0f, {n})",
                       "Abs({t0}, {0}, {n})", "Mul({d}, {d}, {t0}, {n})",
                       "Add({d}, {d}, {0}, {n})", "Muls({d}, {d}, 0.5f, {n})"}},
      // 0.5 x (1 + tanh(z)) = x * sigmoid(2 z) = x / (1 + exp(-2 z)),
      // z = sqrt(2 / pi) * (x + 0.044715 x^3)
      {"gelu", "tanh", 0, {"Mul({d}, {0}, {0}, {n})", "Muls({d}, {d}, 0.044715f, {n})",
                           "Adds({d}, {d}, 1.0f, {n})", "Mul({d}, {d}, {0}, {n})",
                           "Muls({d}, {d}, -1.5957691216f, {n})", "Exp({d}, {d}, {n})",
                           "Adds({d}, {d}, 1.0f, {n})", "Div({d}, {0}, {d}, {n})"}},
  };
  // clang-format on
  return rules;
}

std::string_view compare_scalar_name(CannVersion v) {
  return v == CannVersion::V9 ? "Compares" : "CompareScalar";
}

namespace {
bool any_call_has(const OpRule& r, std::string_view key) {
  for (std::string_view c : r.calls)
    if (c.find(key) != std::string_view::npos) return true;
  return false;
}
}  // namespace

bool uses_tmp_buffer(const OpRule& r) {
  return any_call_has(r, "{tmp}");
}

bool uses_ones(const OpRule& r) {
  return any_call_has(r, "{one}");
}

std::vector<std::string> expand_rule(const OpRule& r, const RuleOperands& ops) {
  std::vector<std::string> out;
  for (std::string_view call : r.calls) {
    std::string s(call);
    auto put = [&s](const std::string& key, const std::string& value) {
      for (size_t pos; (pos = s.find(key)) != std::string::npos;) s.replace(pos, key.size(), value);
    };
    put("{d}", ops.dst);
    put("{n}", ops.count);
    put("{mask}", ops.mask);
    put("{compare_scalar}", std::string(compare_scalar_name(ops.cann)));
    put("{tmp}", ops.tmp);
    put("{one}", ops.one);
    for (size_t t = 0; t < ops.temps.size(); ++t) put("{t" + std::to_string(t) + "}", ops.temps[t]);
    for (size_t a = 0; a < ops.inputs.size(); ++a)
      put("{" + std::to_string(a) + "}", ops.inputs[a]);
    out.push_back("AscendC::" + s);
  }
  return out;
}

const OpRule* find_rule(const ascir::AscNode& n) {
  std::string approximate;
  auto it = n.attrs.find("approximate");
  if (it != n.attrs.end() && std::holds_alternative<std::string>(it->second))
    approximate = std::get<std::string>(it->second);
  if (approximate == "none") approximate.clear();
  for (const OpRule& r : op_rules())
    if (r.op == n.op && r.approximate == approximate) return &r;
  return nullptr;
}

}  // namespace af::codegen
