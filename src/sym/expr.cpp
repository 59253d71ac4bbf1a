// Canonical polynomial representation of symbolic sizes, its arithmetic, printing and parsing.
#include "sym/expr.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "support/error.h"

namespace af::sym {

/// One factor of a monomial: a symbol or an uninterpreted call over canonical arguments.
struct Atom {
  enum Kind { Sym, FloorDiv, Mod, Min, Max } kind;
  std::string name;        // symbol name, or the call's function name
  std::vector<Expr> args;  // call arguments
  std::string key;         // canonical text: identity and order
};

namespace {
const char* call_name(Atom::Kind k) {
  switch (k) {
    case Atom::FloorDiv: return "floordiv";
    case Atom::Mod: return "mod";
    case Atom::Min: return "min";
    case Atom::Max: return "max";
    default: return "";
  }
}
CallKind call_kind(Atom::Kind k) {
  switch (k) {
    case Atom::FloorDiv: return CallKind::FloorDiv;
    case Atom::Mod: return CallKind::Mod;
    case Atom::Min: return CallKind::Min;
    default: return CallKind::Max;
  }
}
}  // namespace

/// A product of atoms, kept sorted by key (repeats allowed: s0*s0).
struct Monomial {
  std::vector<std::shared_ptr<const Atom>> atoms;
  bool operator<(const Monomial& o) const {
    // Higher degree first, then by atom keys; the constant monomial (degree 0) sorts last.
    if (atoms.size() != o.atoms.size()) return atoms.size() > o.atoms.size();
    for (size_t i = 0; i < atoms.size(); ++i)
      if (atoms[i]->key != o.atoms[i]->key) return atoms[i]->key < o.atoms[i]->key;
    return false;
  }
  bool operator==(const Monomial& o) const { return !(*this < o) && !(o < *this); }
};

/// The canonical form: monomial -> non-zero coefficient.
struct Poly {
  std::map<Monomial, int64_t> terms;
};

struct ExprBuilder {
  static Expr make(Poly p) {
    for (auto it = p.terms.begin(); it != p.terms.end();)
      it = it->second == 0 ? p.terms.erase(it) : std::next(it);
    return Expr(std::make_shared<const Poly>(std::move(p)));
  }
  static Expr atom(Atom a) {
    if (a.kind == Atom::Sym) {
      a.key = a.name;
    } else {
      a.key = std::string(call_name(a.kind)) + "(" + a.args[0].str() + ", " + a.args[1].str() + ")";
    }
    Poly p;
    p.terms[Monomial{{std::make_shared<const Atom>(std::move(a))}}] = 1;
    return make(std::move(p));
  }
};

namespace {
int64_t floordiv_i(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t mod_i(int64_t a, int64_t b) {
  return a - floordiv_i(a, b) * b;
}

/// True when every coefficient of `a` is divisible by k.
bool all_divisible(const Expr& a, int64_t k) {
  for (const auto& [m, c] : a.poly().terms)
    if (c % k != 0) return false;
  return true;
}
Expr divide_exact(const Expr& a, int64_t k) {
  Poly p = a.poly();
  for (auto& [m, c] : p.terms) c /= k;
  return ExprBuilder::make(std::move(p));
}
}  // namespace

Expr::Expr() : p_(std::make_shared<const Poly>()) {}
Expr::Expr(int64_t value) {
  Poly p;
  if (value != 0) p.terms[Monomial{}] = value;
  p_ = std::make_shared<const Poly>(std::move(p));
}
Expr Expr::symbol(std::string_view name) {
  return ExprBuilder::atom(Atom{Atom::Sym, std::string(name), {}, {}});
}

Expr operator+(const Expr& a, const Expr& b) {
  Poly p = a.poly();
  for (const auto& [m, c] : b.poly().terms) p.terms[m] += c;
  return ExprBuilder::make(std::move(p));
}
Expr Expr::operator-() const {
  return *this * Expr(-1);
}
Expr operator-(const Expr& a, const Expr& b) {
  return a + (-b);
}
Expr operator*(const Expr& a, const Expr& b) {
  Poly p;
  for (const auto& [ma, ca] : a.poly().terms) {
    for (const auto& [mb, cb] : b.poly().terms) {
      Monomial m;
      m.atoms = ma.atoms;
      m.atoms.insert(m.atoms.end(), mb.atoms.begin(), mb.atoms.end());
      std::sort(m.atoms.begin(), m.atoms.end(),
                [](const auto& x, const auto& y) { return x->key < y->key; });
      p.terms[m] += ca * cb;
    }
  }
  return ExprBuilder::make(std::move(p));
}

Expr Expr::floordiv(const Expr& a, const Expr& b) {
  auto ca = a.as_const(), cb = b.as_const();
  if (cb && *cb == 0) throw CompileError("symbolic floordiv by zero: " + a.str() + " // 0");
  if (ca && cb) return floordiv_i(*ca, *cb);
  if (cb && *cb == 1) return a;
  if (ca && *ca == 0) return 0;
  if (a == b) return 1;
  if (cb && *cb > 0 && all_divisible(a, *cb)) return divide_exact(a, *cb);
  return ExprBuilder::atom(Atom{Atom::FloorDiv, "floordiv", {a, b}, {}});
}
Expr Expr::ceildiv(const Expr& a, const Expr& b) {
  return floordiv(a + b - 1, b);
}
Expr Expr::mod(const Expr& a, const Expr& b) {
  auto ca = a.as_const(), cb = b.as_const();
  if (cb && *cb == 0) throw CompileError("symbolic mod by zero: " + a.str() + " % 0");
  if (ca && cb) return mod_i(*ca, *cb);
  if (cb && *cb == 1) return 0;
  if (a == b) return 0;
  if (cb && *cb > 0 && all_divisible(a, *cb)) return 0;
  return ExprBuilder::atom(Atom{Atom::Mod, "mod", {a, b}, {}});
}
Expr Expr::min(const Expr& a, const Expr& b) {
  auto ca = a.as_const(), cb = b.as_const();
  if (ca && cb) return std::min(*ca, *cb);
  if (a == b) return a;
  return b < a ? ExprBuilder::atom(Atom{Atom::Min, "min", {b, a}, {}})
               : ExprBuilder::atom(Atom{Atom::Min, "min", {a, b}, {}});
}
Expr Expr::max(const Expr& a, const Expr& b) {
  auto ca = a.as_const(), cb = b.as_const();
  if (ca && cb) return std::max(*ca, *cb);
  if (a == b) return a;
  return b < a ? ExprBuilder::atom(Atom{Atom::Max, "max", {b, a}, {}})
               : ExprBuilder::atom(Atom{Atom::Max, "max", {a, b}, {}});
}

Expr Expr::call(CallKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
    case CallKind::FloorDiv: return floordiv(a, b);
    case CallKind::Mod: return mod(a, b);
    case CallKind::Min: return min(a, b);
    default: return max(a, b);
  }
}

std::vector<Term> Expr::terms() const {
  std::vector<Term> out;
  for (const auto& [m, c] : p_->terms) {
    Term t{c, {}};
    for (const auto& a : m.atoms) {
      std::optional<CallKind> kind;
      if (a->kind != Atom::Sym) kind = call_kind(a->kind);
      t.factors.push_back(Factor{kind, a->name, a->args});
    }
    out.push_back(std::move(t));
  }
  return out;
}

Expr Factor::expr() const {
  return call ? Expr::call(*call, args.at(0), args.at(1)) : Expr::symbol(name);
}

bool Expr::is_const() const {
  return p_->terms.empty() || (p_->terms.size() == 1 && p_->terms.begin()->first.atoms.empty());
}
std::optional<int64_t> Expr::as_const() const {
  if (p_->terms.empty()) return 0;
  if (is_const()) return p_->terms.begin()->second;
  return std::nullopt;
}
std::optional<std::string> Expr::as_symbol() const {
  if (p_->terms.size() != 1) return std::nullopt;
  const auto& [m, c] = *p_->terms.begin();
  if (c != 1 || m.atoms.size() != 1 || m.atoms[0]->kind != Atom::Sym) return std::nullopt;
  return m.atoms[0]->name;
}

namespace {
int64_t eval_atom(const Atom& a, const Bindings& b) {
  if (a.kind == Atom::Sym) {
    auto it = b.find(a.name);
    if (it == b.end()) throw CompileError("unbound size symbol '" + a.name + "'");
    return it->second;
  }
  int64_t x = a.args[0].eval(b), y = a.args[1].eval(b);
  switch (a.kind) {
    case Atom::FloorDiv:
      if (y == 0) throw CompileError("floordiv by zero evaluating " + a.key);
      return floordiv_i(x, y);
    case Atom::Mod:
      if (y == 0) throw CompileError("mod by zero evaluating " + a.key);
      return mod_i(x, y);
    case Atom::Min: return std::min(x, y);
    default: return std::max(x, y);
  }
}

void collect_symbols(const Poly& p, std::set<std::string>& out) {
  for (const auto& [m, c] : p.terms)
    for (const auto& a : m.atoms) {
      if (a->kind == Atom::Sym) out.insert(a->name);
      for (const auto& arg : a->args) collect_symbols(arg.poly(), out);
    }
}

/// Shared printer for str() and cpp(): `atom_text` renders one atom.
std::string print_poly(const Poly& p, const std::function<std::string(const Atom&)>& atom_text) {
  if (p.terms.empty()) return "0";
  std::string out;
  bool first = true;
  for (const auto& [m, c] : p.terms) {
    int64_t mag = c < 0 ? -c : c;
    if (first) {
      if (c < 0) out += "-";
    } else {
      out += c < 0 ? " - " : " + ";
    }
    first = false;
    std::string factors;
    for (const auto& a : m.atoms) factors += (factors.empty() ? "" : "*") + atom_text(*a);
    if (factors.empty())
      out += std::to_string(mag);
    else if (mag == 1)
      out += factors;
    else
      out += std::to_string(mag) + "*" + factors;
  }
  return out;
}
}  // namespace

int64_t Expr::eval(const Bindings& b) const {
  int64_t sum = 0;
  for (const auto& [m, c] : p_->terms) {
    int64_t prod = c;
    for (const auto& a : m.atoms) prod *= eval_atom(*a, b);
    sum += prod;
  }
  return sum;
}

std::vector<std::string> Expr::symbols() const {
  std::set<std::string> s;
  collect_symbols(*p_, s);
  return {s.begin(), s.end()};
}

Expr Expr::subs(const std::map<std::string, Expr, std::less<>>& m) const {
  Expr sum = 0;
  for (const auto& [mono, c] : p_->terms) {
    Expr prod = c;
    for (const auto& a : mono.atoms) {
      if (a->kind == Atom::Sym) {
        auto it = m.find(a->name);
        prod = prod * (it == m.end() ? Expr::symbol(a->name) : it->second);
        continue;
      }
      prod = prod * call(call_kind(a->kind), a->args[0].subs(m), a->args[1].subs(m));
    }
    sum = sum + prod;
  }
  return sum;
}

std::string Expr::str() const {
  return print_poly(*p_, [](const Atom& a) { return a.key; });
}

std::string Expr::cpp(const std::function<std::string(const std::string&)>& name) const {
  std::string body = print_poly(*p_, [&](const Atom& a) -> std::string {
    if (a.kind == Atom::Sym) return name(a.name);
    return std::string("af_") + call_name(a.kind) + "(" + a.args[0].cpp(name) + ", " +
           a.args[1].cpp(name) + ")";
  });
  return p_->terms.size() > 1 ? "(" + body + ")" : body;
}

bool operator==(const Expr& a, const Expr& b) {
  if (a.p_ == b.p_) return true;
  return a.p_->terms == b.p_->terms;
}
bool operator<(const Expr& a, const Expr& b) {
  return std::lexicographical_compare(a.p_->terms.begin(), a.p_->terms.end(), b.p_->terms.begin(),
                                      b.p_->terms.end(), [](const auto& x, const auto& y) {
                                        if (x.first < y.first) return true;
                                        if (y.first < x.first) return false;
                                        return x.second < y.second;
                                      });
}
size_t Expr::hash() const {
  return std::hash<std::string>()(str());
}

Expr product(const std::vector<Expr>& sizes) {
  Expr p = 1;
  for (const auto& s : sizes) p = p * s;
  return p;
}
int64_t addressed_elements(const std::vector<Expr>& sizes, const std::vector<Expr>& strides,
                           const Bindings& b) {
  int64_t elems = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (d >= strides.size() || strides[d].eval(b) != 0) elems *= sizes[d].eval(b);
  return elems;
}
std::string str(const std::vector<Expr>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + list[i].str();
  return out + "]";
}

// ---- parser ----
namespace {
class ExprParser {
 public:
  explicit ExprParser(std::string_view s) : s_(s) {}
  Expr parse_all() {
    Expr e = parse_sum();
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw ParseError("in size expression '" + std::string(s_) + "' at column " +
                     std::to_string(pos_ + 1) + ": " + what);
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view tok) {
    skip_ws();
    if (s_.substr(pos_, tok.size()) == tok) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }
  Expr parse_sum() {
    Expr e = parse_product();
    for (;;) {
      if (eat("+"))
        e = e + parse_product();
      else if (eat("-"))
        e = e - parse_product();
      else
        return e;
    }
  }
  Expr parse_product() {
    Expr e = parse_unary();
    for (;;) {
      if (eat("//"))
        e = Expr::floordiv(e, parse_unary());
      else if (eat("*"))
        e = e * parse_unary();
      else if (eat("%"))
        e = Expr::mod(e, parse_unary());
      else
        return e;
    }
  }
  Expr parse_unary() {
    if (eat("-")) return -parse_unary();
    return parse_primary();
  }
  Expr parse_primary() {
    skip_ws();
    if (pos_ >= s_.size()) fail("expected a size, found end of text");
    if (eat("(")) {
      Expr e = parse_sum();
      if (!eat(")")) fail("expected ')'");
      return e;
    }
    char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      return Expr(std::stoll(std::string(s_.substr(start, pos_ - start))));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      std::string id(s_.substr(start, pos_ - start));
      if (!eat("(")) return Expr::symbol(id);
      Expr a = parse_sum();
      if (!eat(",")) fail("expected ',' in " + id + "(...)");
      Expr b = parse_sum();
      if (!eat(")")) fail("expected ')' closing " + id + "(...)");
      if (id == "floordiv") return Expr::floordiv(a, b);
      if (id == "ceildiv") return Expr::ceildiv(a, b);
      if (id == "mod") return Expr::mod(a, b);
      if (id == "min") return Expr::min(a, b);
      if (id == "max") return Expr::max(a, b);
      fail("unknown function '" + id + "' (expected floordiv, ceildiv, mod, min, max)");
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
  std::string_view s_;
  size_t pos_ = 0;
};
}  // namespace

Expr parse_expr(std::string_view text) {
  return ExprParser(text).parse_all();
}

}  // namespace af::sym
