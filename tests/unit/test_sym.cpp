// Unit tests of sym::Expr: canonical form, folding, floordiv/mod, evaluation, text round trip.
#include <gtest/gtest.h>

#include "support/error.h"
#include "sym/expr.h"

namespace af::sym {
namespace {

Expr S(const char* n) {
  return Expr::symbol(n);
}

TEST(SymExpr, ConstantsFold) {
  EXPECT_EQ(Expr(2) + Expr(3), Expr(5));
  EXPECT_EQ((Expr(2) * 3 - 6).as_const(), 0);
  EXPECT_TRUE((S("s0") - S("s0")).is_const());
  EXPECT_EQ((S("s0") - S("s0")).as_const(), 0);
  EXPECT_EQ(Expr().str(), "0");
  EXPECT_EQ(Expr(-7).str(), "-7");
  EXPECT_FALSE(S("s0").is_const());
  EXPECT_EQ(S("s0").as_const(), std::nullopt);
}

TEST(SymExpr, CommutativeAndDistributive) {
  Expr s0 = S("s0"), s1 = S("s1");
  EXPECT_EQ(s0 * s1, s1 * s0);
  EXPECT_EQ(s0 + s1, s1 + s0);
  EXPECT_EQ((s0 + 1) * (s1 + 2), s0 * s1 + 2 * s0 + s1 + 2);
  EXPECT_EQ((s0 * s1).str(), (s1 * s0).str());
  EXPECT_EQ((s1 * 2 + s0 * s1 * 3 + 1).str(), "3*s0*s1 + 2*s1 + 1");
  EXPECT_NE(s0 * s1, s0 + s1);
  EXPECT_EQ((s0 * s0).str(), "s0*s0");
  EXPECT_EQ((1 - s0).str(), "-s0 + 1");
}

TEST(SymExpr, AsSymbolAndSymbols) {
  EXPECT_EQ(S("s3").as_symbol(), "s3");
  EXPECT_EQ((2 * S("s3")).as_symbol(), std::nullopt);
  Expr e = S("s1") * S("s0") + Expr::floordiv(S("s2"), 4);
  EXPECT_EQ(e.symbols(), (std::vector<std::string>{"s0", "s1", "s2"}));
}

TEST(SymExpr, FloorDivAndModExactCases) {
  Expr s0 = S("s0");
  EXPECT_EQ(Expr::floordiv(7, 2), Expr(3));
  EXPECT_EQ(Expr::floordiv(-7, 2), Expr(-4));  // floor, not truncation
  EXPECT_EQ(Expr::mod(-7, 2), Expr(1));
  EXPECT_EQ(Expr::floordiv(4 * s0 + 8, 4), s0 + 2);
  EXPECT_EQ(Expr::mod(4 * s0 + 8, 4), Expr(0));
  EXPECT_EQ(Expr::floordiv(s0, 1), s0);
  EXPECT_EQ(Expr::mod(s0, 1), Expr(0));
  EXPECT_EQ(Expr::floordiv(s0, s0), Expr(1));
  EXPECT_EQ(Expr::mod(s0, s0), Expr(0));
  EXPECT_EQ(Expr::floordiv(s0 + 1, 2).str(), "floordiv(s0 + 1, 2)");
  EXPECT_EQ(Expr::ceildiv(s0, 4), Expr::floordiv(s0 + 3, 4));
  EXPECT_EQ(Expr::mod(s0, 3).str(), "mod(s0, 3)");
  EXPECT_THROW(Expr::floordiv(s0, 0), CompileError);
  EXPECT_THROW(Expr::mod(s0, 0), CompileError);
}

TEST(SymExpr, MinMaxCanonicalOrder) {
  Expr s0 = S("s0"), s1 = S("s1");
  EXPECT_EQ(Expr::min(s0, s1), Expr::min(s1, s0));
  EXPECT_EQ(Expr::max(s0, s1), Expr::max(s1, s0));
  EXPECT_EQ(Expr::min(s0, s0), s0);
  EXPECT_EQ(Expr::max(3, 5), Expr(5));
  EXPECT_NE(Expr::min(s0, s1), Expr::max(s0, s1));
}

TEST(SymExpr, Eval) {
  Bindings b{{"s0", 10}, {"s1", 3}};
  Expr s0 = S("s0"), s1 = S("s1");
  EXPECT_EQ((2 * s0 * s1 + 1).eval(b), 61);
  EXPECT_EQ(Expr::floordiv(s0, s1).eval(b), 3);
  EXPECT_EQ(Expr::ceildiv(s0, s1).eval(b), 4);
  EXPECT_EQ(Expr::mod(s0, s1).eval(b), 1);
  EXPECT_EQ(Expr::min(s0, s1).eval(b), 3);
  EXPECT_EQ(Expr::max(s0, s1 * 5).eval(b), 15);
  EXPECT_EQ((s0 - 4 * s1).eval(b), -2);
  try {
    (s0 + S("s9")).eval(b);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("s9"), std::string::npos) << e.what();
  }
}

TEST(SymExpr, Subs) {
  Expr s0 = S("s0"), s1 = S("s1");
  Expr e = Expr::floordiv(s0 * s1, 4) + s0;
  Expr r = e.subs({{"s0", Expr(8)}});
  EXPECT_EQ(r, 2 * s1 + 8);
  EXPECT_EQ(e.subs({{"s1", s0}}).str(), "floordiv(s0*s0, 4) + s0");
}

TEST(SymExpr, ParsePrintRoundTrip) {
  Expr s0 = S("s0"), s1 = S("s1");
  std::vector<Expr> cases = {
      Expr(0),
      Expr(-3),
      s0,
      2 * s0 * s1 + Expr::floordiv(s0, 4) + 1,
      Expr::mod(s0 + 1, s1) - 5,
      Expr::min(s0, 3 * s1) * Expr::max(s1, 2),
      Expr::floordiv(Expr::floordiv(s0, 2) + s1, 3),
      -s0 * s1 + 7,
  };
  for (const Expr& e : cases) {
    Expr back = parse_expr(e.str());
    EXPECT_EQ(back, e) << e.str() << " -> " << back.str();
    EXPECT_EQ(back.str(), e.str());
  }
}

TEST(SymExpr, ParseAcceptsParensOperatorsAndSpaces) {
  Expr s0 = S("s0"), s1 = S("s1");
  EXPECT_EQ(parse_expr("2 * (s0 + 1)"), 2 * s0 + 2);
  EXPECT_EQ(parse_expr("s0 // 4"), Expr::floordiv(s0, 4));
  EXPECT_EQ(parse_expr("s0 % 4"), Expr::mod(s0, 4));
  EXPECT_EQ(parse_expr("ceildiv(s0, s1)"), Expr::ceildiv(s0, s1));
  EXPECT_EQ(parse_expr("  -s0+3 "), 3 - s0);
  EXPECT_EQ(parse_expr("floordiv( s1 , 2 )"), Expr::floordiv(s1, 2));
}

TEST(SymExpr, ParseErrors) {
  EXPECT_THROW(parse_expr(""), ParseError);
  EXPECT_THROW(parse_expr("s0 +"), ParseError);
  EXPECT_THROW(parse_expr("(s0"), ParseError);
  EXPECT_THROW(parse_expr("s0 s1"), ParseError);
  EXPECT_THROW(parse_expr("frob(s0, 1)"), ParseError);
  EXPECT_THROW(parse_expr("min(s0)"), ParseError);
  try {
    parse_expr("s0 + $");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("'$'"), std::string::npos) << e.what();
  }
}

TEST(SymExpr, CppText) {
  Expr s0 = S("s0"), s1 = S("s1");
  auto name = [](const std::string& s) { return "t->" + s; };
  EXPECT_EQ(s0.cpp(name), "t->s0");
  EXPECT_EQ((2 * s0 + 1).cpp(name), "(2*t->s0 + 1)");
  EXPECT_EQ(Expr::floordiv(s0, s1).cpp(name), "af_floordiv(t->s0, t->s1)");
  EXPECT_EQ(Expr::min(s0 + 1, 4).cpp(name), "af_min((t->s0 + 1), 4)");
  EXPECT_EQ(Expr::min(4, s0 + 1).cpp(name), Expr::min(s0 + 1, 4).cpp(name));
  EXPECT_EQ(Expr(5).cpp(name), "5");
}

TEST(SymExpr, OrderAndHashAgreeWithEquality) {
  Expr a = S("s0") * S("s1"), b = S("s1") * S("s0"), c = S("s0") + 1;
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_FALSE(a < b);
  EXPECT_FALSE(b < a);
  EXPECT_TRUE((a < c) != (c < a));
  EXPECT_EQ(product({2, S("s0"), 3}), 6 * S("s0"));
  EXPECT_EQ(product({}), Expr(1));
  EXPECT_EQ(str({S("s0"), 4}), "[s0, 4]");
}

TEST(SymExpr, AddressedElementsCountAStrideZeroDimOnce) {
  // a [s0, 8] value expanded from [1, 8] addresses 8 elements; a dense one s0 * 8
  const Bindings hints{{"s0", 4}};
  EXPECT_EQ(addressed_elements({S("s0"), 8}, {0, 1}, hints), 8);
  EXPECT_EQ(addressed_elements({S("s0"), 8}, {8, 1}, hints), 32);
  EXPECT_EQ(addressed_elements({}, {}, hints), 1);
}

}  // namespace
}  // namespace af::sym
