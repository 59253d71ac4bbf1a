// Affine analysis of index expressions: exact quotients, linearity in chosen symbols, signs, and
// walking and rewriting the floordiv/mod/min/max calls of an expression.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sym/expr.h"

namespace af::sym {

/// b / a where it is an integer for every value of the (positive) size symbols, provably so: a
/// is one term c*m and every term of b is a multiple of c with m's factors among its own (4 | 64,
/// s0 | 2*s0, 2*s0 | 6*s0*s1). Else nullopt.
std::optional<Expr> exact_quotient(const Expr& b, const Expr& a);

/// An expression as sum(coeffs[i] * vars[i]) + rest, coefficients and rest free of the vars.
struct Linear {
  std::vector<Expr> coeffs;
  Expr rest;
};
/// `e` as a Linear in the symbols `vars`; nullopt where a var is inside a call, or multiplies
/// another var or itself.
std::optional<Linear> linear_in(const Expr& e, const std::vector<std::string>& vars);

/// Whether `e` uses any of the symbols `vars`.
bool uses_any(const Expr& e, const std::vector<std::string>& vars);

/// True when `e` >= 0 and false when `e` <= 0 for every value of its (non-negative) symbols, as
/// its terms' coefficients show; nullopt when they differ in sign or a factor's sign is unknown.
std::optional<bool> sign_of(const Expr& e);

/// `e` with its calls replaced, outer first: a call `fn` gives a value for becomes that value;
/// one it leaves (nullopt) keeps its function, its arguments rewritten the same way.
Expr rewrite_calls(
    const Expr& e,
    const std::function<std::optional<Expr>(CallKind, const Expr&, const Expr&)>& fn);

/// Calls `fn` on every call in `e` (its function and arguments), outer before inner.
void for_each_call(const Expr& e,
                   const std::function<void(CallKind, const Expr&, const Expr&)>& fn);

}  // namespace af::sym
