// Graph IR simplification (see simplify.h). Rules are data: one row per exponent.
#include "graph/simplify.h"

#include <variant>

namespace af::graph {
namespace {

/// pow(x, exponent) == kind(x) (or kind(x, x) when `square`).
struct PowRule {
  double exponent;
  const char* kind;
  bool square;
};

/// What eager's pow_tensor_scalar computes for these exponents (2: x*x, 3: x*x*x, -2: 1/(x*x),
/// 0.5/-0.5/-1: sqrt/rsqrt/reciprocal; 1: a copy of x, a cast to its own dtype here, which
/// autograd's pow backward emits as pow(x, 1.0) for every x.pow(2) in a forward); for 4,
/// (x*x)*(x*x) is within 1.5 ulp of eager's powf, which like our af_pow (SLEEF's 1-ULP powf,
/// double-float log and exp) costs ~20x more.
constexpr PowRule kPowRules[] = {
    {2.0, "mul", true},          {3.0, "cube", false}, {4.0, "pow4", false},
    {-2.0, "rsquare", false},    {0.5, "sqrt", false}, {-0.5, "rsqrt", false},
    {-1.0, "reciprocal", false}, {1.0, "cast", false},
};

/// The value of a rank-0 `const` node, if `n` is one.
bool const_value(const Node& n, double* v) {
  if (n.kind != "const" || n.type.rank() != 0) return false;
  auto it = n.attrs.find("value");
  if (it == n.attrs.end()) return false;
  if (const double* d = std::get_if<double>(&it->second)) return *v = *d, true;
  if (const int64_t* i = std::get_if<int64_t>(&it->second))
    return *v = static_cast<double>(*i), true;
  return false;
}

}  // namespace

int simplify(Graph& g) {
  int rewrites = 0;
  for (Node& n : g.nodes) {
    if (n.kind != "pow" || n.operands.size() != 2) continue;
    double e = 0;
    if (!const_value(g.nodes[n.operands[1]], &e)) continue;
    for (const PowRule& r : kPowRules) {
      if (e != r.exponent) continue;
      int x = n.operands[0];
      n.kind = r.kind;
      n.operands = r.square ? std::vector<int>{x, x} : std::vector<int>{x};
      ++rewrites;
      break;
    }
  }
  return rewrites;
}

}  // namespace af::graph
