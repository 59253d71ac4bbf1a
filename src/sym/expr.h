// Expr: a symbolic integer size (the sizes, strides and tile sizes of every IR) in canonical form.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace af::sym {

/// Values for size symbols, by name ("s0" -> 64).
using Bindings = std::map<std::string, int64_t, std::less<>>;

struct Poly;
struct Term;

/// The function of a call factor.
enum class CallKind { FloorDiv, Mod, Min, Max };

/// An integer expression over named symbols: +, -, *, floordiv, mod, min, max.
/// Canonical form: a sum of (coefficient x monomial), monomials sorted; a monomial is a sorted
/// product of atoms, an atom being a symbol or a floordiv/mod/min/max call whose arguments are
/// themselves canonical. So two expressions that are equal as polynomials compare equal, and
/// printing is deterministic. Immutable and cheap to copy.
class Expr {
 public:
  Expr();               // 0
  Expr(int64_t value);  // NOLINT: implicit, so sizes read naturally (Expr e = 4).
  static Expr symbol(std::string_view name);
  /// floor(a / b) for b > 0 (sizes are non-negative).
  static Expr floordiv(const Expr& a, const Expr& b);
  static Expr ceildiv(const Expr& a, const Expr& b);
  static Expr mod(const Expr& a, const Expr& b);
  static Expr min(const Expr& a, const Expr& b);
  static Expr max(const Expr& a, const Expr& b);
  /// The call `kind` of a and b (one of the four above).
  static Expr call(CallKind kind, const Expr& a, const Expr& b);

  friend Expr operator+(const Expr& a, const Expr& b);
  friend Expr operator-(const Expr& a, const Expr& b);
  friend Expr operator*(const Expr& a, const Expr& b);
  Expr operator-() const;
  Expr& operator+=(const Expr& o) { return *this = *this + o; }
  Expr& operator*=(const Expr& o) { return *this = *this * o; }

  bool is_const() const;
  /// The value when constant, else nullopt.
  std::optional<int64_t> as_const() const;
  /// The symbol's name when this is exactly one symbol.
  std::optional<std::string> as_symbol() const;
  /// Value under `b`; throws CompileError naming the first unbound symbol.
  int64_t eval(const Bindings& b) const;
  /// Names of all symbols, sorted, unique.
  std::vector<std::string> symbols() const;
  /// Replaces symbols by expressions and re-canonicalises.
  Expr subs(const std::map<std::string, Expr, std::less<>>& m) const;

  /// Canonical text, e.g. "2*s0*s1 + floordiv(s0, 4) + 1"; parse_expr reads it back.
  std::string str() const;
  /// C++ text; symbols are printed by `name` (e.g. "t->s0"), calls as af_floordiv(...) etc.
  std::string cpp(const std::function<std::string(const std::string&)>& name) const;

  friend bool operator==(const Expr& a, const Expr& b);
  friend bool operator!=(const Expr& a, const Expr& b) { return !(a == b); }
  /// Total order on canonical forms (for maps and sorting).
  friend bool operator<(const Expr& a, const Expr& b);
  size_t hash() const;

  /// The canonical sum's terms, in order (none for 0).
  std::vector<Term> terms() const;

  const Poly& poly() const { return *p_; }

 private:
  explicit Expr(std::shared_ptr<const Poly> p) : p_(std::move(p)) {}
  std::shared_ptr<const Poly> p_;
  friend struct ExprBuilder;
};

/// One factor of a term: a symbol, or a call of two canonical arguments.
struct Factor {
  std::optional<CallKind> call;  // nullopt: the symbol `name`
  std::string name;              // the symbol's name
  std::vector<Expr> args;        // the call's arguments
  Expr expr() const;             // the factor alone
};

/// A term of the canonical sum: coefficient x product of factors.
struct Term {
  int64_t coeff = 0;
  std::vector<Factor> factors;
};

/// Parses the text form printed by Expr::str (also accepts parentheses, "//" and "%").
/// Throws ParseError.
Expr parse_expr(std::string_view text);

/// Product of a list of sizes (1 for an empty list).
Expr product(const std::vector<Expr>& sizes);
/// The elements a tensor of `sizes` at `strides` addresses, under `b`: a dim of stride 0
/// (broadcast, expanded) counts once. The one element count of every byte count (Graph IR
/// values' for fusion and explain, AscIR kernels' for the Inductor frontend's report).
int64_t addressed_elements(const std::vector<Expr>& sizes, const std::vector<Expr>& strides,
                           const Bindings& b);
/// Prints "[a, b, c]".
std::string str(const std::vector<Expr>& list);

}  // namespace af::sym

template <>
struct std::hash<af::sym::Expr> {
  size_t operator()(const af::sym::Expr& e) const { return e.hash(); }
};
