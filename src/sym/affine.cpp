// Affine analysis of index expressions over the canonical terms of sym::Expr.
#include "sym/affine.h"

#include <algorithm>

namespace af::sym {
namespace {

/// The factors' canonical texts, sorted (a multiset to compare monomials by).
std::vector<std::string> factor_keys(const Term& t) {
  std::vector<std::string> keys;
  for (const Factor& f : t.factors) keys.push_back(f.expr().str());
  std::sort(keys.begin(), keys.end());
  return keys;
}

Expr term_expr(int64_t coeff, const std::vector<Factor>& factors) {
  Expr e = coeff;
  for (const Factor& f : factors) e = e * f.expr();
  return e;
}

/// Whether the factor is >= 0 for non-negative symbols.
bool nonnegative(const Factor& f) {
  if (!f.call) return true;
  auto sign = [](const Expr& e) { return sign_of(e) == std::optional<bool>(true); };
  switch (*f.call) {
    case CallKind::Max: return sign(f.args[0]) || sign(f.args[1]);
    default: return sign(f.args[0]) && sign(f.args[1]);
  }
}

}  // namespace

std::optional<Expr> exact_quotient(const Expr& b, const Expr& a) {
  std::vector<Term> divisor = a.terms();
  if (divisor.size() != 1 || divisor[0].coeff == 0) return std::nullopt;
  const int64_t c = divisor[0].coeff;
  const std::vector<std::string> m = factor_keys(divisor[0]);
  Expr out = 0;
  for (const Term& t : b.terms()) {
    if (t.coeff % c != 0) return std::nullopt;
    std::vector<Factor> rest = t.factors;
    for (const std::string& key : m) {
      auto it = std::find_if(rest.begin(), rest.end(),
                             [&](const Factor& f) { return f.expr().str() == key; });
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    out = out + term_expr(t.coeff / c, rest);
  }
  return out;
}

bool uses_any(const Expr& e, const std::vector<std::string>& vars) {
  for (const std::string& s : e.symbols())
    if (std::find(vars.begin(), vars.end(), s) != vars.end()) return true;
  return false;
}

std::optional<Linear> linear_in(const Expr& e, const std::vector<std::string>& vars) {
  Linear out{std::vector<Expr>(vars.size(), Expr(0)), Expr(0)};
  for (const Term& t : e.terms()) {
    int var = -1;
    std::vector<Factor> rest;
    for (const Factor& f : t.factors) {
      auto it = f.call ? vars.end() : std::find(vars.begin(), vars.end(), f.name);
      if (it == vars.end()) {
        if (f.call && uses_any(f.expr(), vars)) return std::nullopt;
        rest.push_back(f);
      } else if (var >= 0) {
        return std::nullopt;  // a product of loop indices
      } else {
        var = static_cast<int>(it - vars.begin());
      }
    }
    Expr part = term_expr(t.coeff, rest);
    if (var < 0)
      out.rest = out.rest + part;
    else
      out.coeffs[static_cast<size_t>(var)] = out.coeffs[static_cast<size_t>(var)] + part;
  }
  return out;
}

std::optional<bool> sign_of(const Expr& e) {
  bool pos = false, neg = false;
  for (const Term& t : e.terms()) {
    for (const Factor& f : t.factors)
      if (!nonnegative(f)) return std::nullopt;
    (t.coeff > 0 ? pos : neg) = true;
  }
  if (pos && neg) return std::nullopt;
  return !neg;
}

Expr rewrite_calls(
    const Expr& e,
    const std::function<std::optional<Expr>(CallKind, const Expr&, const Expr&)>& fn) {
  Expr out = 0;
  for (const Term& t : e.terms()) {
    Expr prod = t.coeff;
    for (const Factor& f : t.factors) {
      if (!f.call) {
        prod = prod * f.expr();
      } else if (std::optional<Expr> v = fn(*f.call, f.args[0], f.args[1])) {
        prod = prod * *v;
      } else {
        prod =
            prod * Expr::call(*f.call, rewrite_calls(f.args[0], fn), rewrite_calls(f.args[1], fn));
      }
    }
    out = out + prod;
  }
  return out;
}

void for_each_call(const Expr& e,
                   const std::function<void(CallKind, const Expr&, const Expr&)>& fn) {
  for (const Term& t : e.terms())
    for (const Factor& f : t.factors)
      if (f.call) {
        fn(*f.call, f.args[0], f.args[1]);
        for_each_call(f.args[0], fn);
        for_each_call(f.args[1], fn);
      }
}

}  // namespace af::sym
