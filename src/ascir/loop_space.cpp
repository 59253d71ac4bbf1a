// LoopSpace: divisor chains, digits and the rewriting of indices over them.
#include "ascir/loop_space.h"

#include <algorithm>

#include "support/error.h"

namespace af::ascir {
namespace {

bool divides(const sym::Expr& a, const sym::Expr& b) {
  return sym::exact_quotient(b, a).has_value();
}

sym::Expr quotient(const sym::Expr& b, const sym::Expr& a) {
  return *sym::exact_quotient(b, a);
}

/// The boundaries below `n` as a divisibility chain 1 = b0 | b1 | ... | bk | n.
std::vector<sym::Expr> chain_of(const std::vector<sym::Expr>& bounds, const sym::Expr& n) {
  std::vector<sym::Expr> below;
  for (const sym::Expr& b : bounds)
    if (b != n) below.push_back(b);
  std::vector<std::pair<size_t, sym::Expr>> ranked;  // by how many boundaries divide each
  for (const sym::Expr& b : below)
    ranked.emplace_back(std::count_if(below.begin(), below.end(),
                                      [&](const sym::Expr& c) { return divides(c, b); }),
                        b);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (size_t i = 0; i < below.size(); ++i) below[i] = ranked[i].second;
  for (size_t i = 0; i < below.size(); ++i) {
    const sym::Expr& hi = i + 1 < below.size() ? below[i + 1] : n;
    if (!divides(below[i], hi))
      throw CompileError("loop variable of range " + n.str() + " is split by " + below[i].str() +
                         " and " + hi.str() + ", not a chain of divisors");
  }
  return below;
}

}  // namespace

LoopSpace::LoopSpace(std::vector<std::string> vars, const std::vector<sym::Expr>& ranges,
                     const std::vector<sym::Expr>& indices)
    : vars_(std::move(vars)) {
  std::map<std::string, std::vector<sym::Expr>> bounds;
  auto add = [&](const std::string& v, const sym::Expr& b) {
    std::vector<sym::Expr>& list = bounds[v];
    if (std::find(list.begin(), list.end(), b) == list.end()) list.push_back(b);
  };
  for (const std::string& v : vars_) add(v, 1);
  for (const sym::Expr& e : indices)
    sym::for_each_call(e, [&](sym::CallKind kind, const sym::Expr& a, const sym::Expr& b) {
      std::string v;
      sym::Expr d;
      if (kind == sym::CallKind::FloorDiv && var_index(a) >= 0) add(*a.as_symbol(), b);
      if (kind == sym::CallKind::Mod && split(a, &v, &d)) add(v, d), add(v, d * b);
    });
  for (size_t i = 0; i < vars_.size(); ++i) {
    const std::string& v = vars_[i];
    const sym::Expr& n = ranges.at(i);
    std::vector<sym::Expr> chain = chain_of(bounds[v], n);
    std::vector<Digit>& digits = digits_[v];
    for (size_t k = chain.size(); k-- > 0;) {  // most significant first
      sym::Expr size = quotient(k + 1 < chain.size() ? chain[k + 1] : n, chain[k]);
      if (size == sym::Expr(1)) continue;
      digits.push_back(Digit{static_cast<int>(axes_.size()), chain[k]});
      axes_.push_back(size);
    }
    chain_[v] = std::move(chain);
  }
}

int LoopSpace::var_index(const sym::Expr& e) const {
  std::optional<std::string> s = e.as_symbol();
  auto it = s ? std::find(vars_.begin(), vars_.end(), *s) : vars_.end();
  return it == vars_.end() ? -1 : static_cast<int>(it - vars_.begin());
}

bool LoopSpace::split(const sym::Expr& a, std::string* var, sym::Expr* d) const {
  if (var_index(a) >= 0) {
    *var = *a.as_symbol(), *d = 1;
    return true;
  }
  std::vector<sym::Term> t = a.terms();
  if (t.size() != 1 || t[0].coeff != 1 || t[0].factors.size() != 1) return false;
  const sym::Factor& f = t[0].factors[0];
  if (f.call != sym::CallKind::FloorDiv || var_index(f.args[0]) < 0) return false;
  *var = *f.args[0].as_symbol(), *d = f.args[1];
  return true;
}

std::vector<int> LoopSpace::axes_of(const std::string& var) const {
  std::vector<int> out;
  for (const Digit& d : digits_.at(var)) out.push_back(d.axis);
  return out;
}

std::vector<std::string> LoopSpace::axis_symbols() const {
  std::vector<std::string> out;
  for (size_t a = 0; a < axes_.size(); ++a) out.push_back(axis_symbol(static_cast<int>(a)));
  return out;
}

size_t LoopSpace::position(const std::string& var, const sym::Expr& b) const {
  const std::vector<sym::Expr>& chain = chain_.at(var);
  return static_cast<size_t>(std::find(chain.begin(), chain.end(), b) - chain.begin());
}

sym::Expr LoopSpace::value(const std::string& var, const sym::Expr& d, const sym::Expr& m) const {
  const size_t lo = position(var, d);
  const size_t hi = m == sym::Expr(0) ? chain_.at(var).size() : position(var, d * m);
  sym::Expr out = 0;
  for (const Digit& digit : digits_.at(var)) {
    size_t at = position(var, digit.place);
    if (lo <= at && at < hi)
      out = out + quotient(digit.place, d) * sym::Expr::symbol(axis_symbol(digit.axis));
  }
  return out;
}

sym::Expr LoopSpace::to_axes(const sym::Expr& index) const {
  sym::Expr e = sym::rewrite_calls(
      index,
      [&](sym::CallKind kind, const sym::Expr& a, const sym::Expr& b) -> std::optional<sym::Expr> {
        std::string v;
        sym::Expr d;
        if (kind == sym::CallKind::FloorDiv && var_index(a) >= 0)
          return value(*a.as_symbol(), b, 0);
        if (kind == sym::CallKind::Mod && split(a, &v, &d)) return value(v, d, b);
        return std::nullopt;
      });
  std::map<std::string, sym::Expr, std::less<>> whole;
  for (const std::string& v : vars_) whole[v] = value(v, 1, 0);
  return e.subs(whole);
}

sym::Linear LoopSpace::affine(const sym::Expr& index, const std::string& what) const {
  std::optional<sym::Linear> lin = sym::linear_in(to_axes(index), axis_symbols());
  if (!lin)
    throw CompileError(what + ": index " + index.str() + " is not affine in the loop variables");
  return *lin;
}

}  // namespace af::ascir
