// LoopSpace: a loop nest's iteration space as kernel axes, splitting the loop variables that its
// indices divide (floordiv) or wrap (mod) into digits, so that every index is affine in the axes.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sym/affine.h"

namespace af::ascir {

/// The kernel axes of loop variables given every index expression of the nest.
///
/// A frontend may flatten dims into one loop variable (Inductor reads a [B*H, S] view of a
/// [B, S, H, D] tensor as 16384*floordiv(x, 32) + 64*mod(x, 32) + ...). A variable x of range N
/// becomes digits: with the boundaries of its calls (d for floordiv(x, d), d and d*m for
/// mod(floordiv(x, d), m)) sorted 1 = b0 | b1 | ... | bk | N, each dividing the next, x is
/// sum(b_i * digit_i), digit_i in [0, b_{i+1} / b_i), each digit an axis (most significant
/// first; a digit of extent 1 is none). Then floordiv(x, d) and mod(floordiv(x, d), m) are sums
/// of digits. Boundaries may be sizes (mod(x, s0) over a range of 2*s0) where each provably
/// divides the next.
class LoopSpace {
 public:
  /// Loop variables `vars` of extents `ranges`, indexed by `indices`; throws CompileError when
  /// a variable's boundaries are not a chain of divisors.
  LoopSpace(std::vector<std::string> vars, const std::vector<sym::Expr>& ranges,
            const std::vector<sym::Expr>& indices);

  /// The axes' extents, the first variable's digits first.
  const std::vector<sym::Expr>& axes() const { return axes_; }
  /// The axes of loop variable `var`, most significant first.
  std::vector<int> axes_of(const std::string& var) const;
  /// The symbol standing for axis `a` in to_axes' results.
  static std::string axis_symbol(int a) { return "af_z" + std::to_string(a); }
  /// All the axis symbols, in order.
  std::vector<std::string> axis_symbols() const;

  /// `index` over the axes: calls that split a variable become sums of its digits.
  sym::Expr to_axes(const sym::Expr& index) const;
  /// `index` as (stride per axis, offset); CompileError naming `what` where it is not affine.
  sym::Linear affine(const sym::Expr& index, const std::string& what) const;

 private:
  struct Digit {
    int axis;
    sym::Expr place;  // its place value in the variable
  };
  /// (var // d) % m as a sum of var's digits (no modulo when `m` is 0).
  sym::Expr value(const std::string& var, const sym::Expr& d, const sym::Expr& m) const;
  /// The place of boundary `b` in var's chain (the chain's length where it is none of them).
  size_t position(const std::string& var, const sym::Expr& b) const;
  int var_index(const sym::Expr& e) const;  // the loop variable `e` is, or -1
  /// Whether `a` is a variable (d = 1) or floordiv(variable, d): what a mod's digits come from.
  bool split(const sym::Expr& a, std::string* var, sym::Expr* d) const;

  std::vector<std::string> vars_;
  std::vector<sym::Expr> axes_;
  std::map<std::string, std::vector<sym::Expr>> chain_;  // a variable's boundaries, ascending
  std::map<std::string, std::vector<Digit>> digits_;     // most significant first
};

}  // namespace af::ascir
