// Unit tests of index analysis: sym/affine.h (exact quotients, linearity, signs, rewriting
// calls), ascir::LoopSpace (loop variables split into digit axes) and ascir::LoopNestBuilder
// (reads, writes and index values by index expressions).
#include <gtest/gtest.h>

#include "ascir/loop_nest_builder.h"
#include "ascir/printer.h"
#include "support/error.h"
#include "sym/affine.h"

namespace af::ascir {
namespace {

using sym::Expr;
using sym::parse_expr;

Expr E(const char* text) {
  return parse_expr(text);
}

TEST(SymAffine, ExactQuotientNeedsAProof) {
  EXPECT_EQ(sym::exact_quotient(E("64"), E("4")), E("16"));
  EXPECT_EQ(sym::exact_quotient(E("2*s0"), E("s0")), E("2"));
  EXPECT_EQ(sym::exact_quotient(E("6*s0*s1 + 2*s0"), E("2*s0")), E("3*s1 + 1"));
  EXPECT_EQ(sym::exact_quotient(E("s0"), E("2")), std::nullopt);
  EXPECT_EQ(sym::exact_quotient(E("s0 + 1"), E("s0")), std::nullopt);
  EXPECT_EQ(sym::exact_quotient(E("4"), E("s0 + 1")), std::nullopt);  // a sum as divisor
}

TEST(SymAffine, LinearInChosenSymbols) {
  std::optional<sym::Linear> l = sym::linear_in(E("3*x + s0*y + s1 + 2"), {"x", "y"});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->coeffs[0], E("3"));
  EXPECT_EQ(l->coeffs[1], E("s0"));
  EXPECT_EQ(l->rest, E("s1 + 2"));
  EXPECT_FALSE(sym::linear_in(E("x*y"), {"x", "y"}));
  EXPECT_FALSE(sym::linear_in(E("x*x"), {"x"}));
  EXPECT_FALSE(sym::linear_in(E("floordiv(x, 2)"), {"x"}));
  EXPECT_TRUE(sym::linear_in(E("floordiv(s0, 2)*x"), {"x"}));
}

TEST(SymAffine, SignsOfNonNegativeSymbols) {
  EXPECT_EQ(sym::sign_of(E("2*s0 + 1")), true);
  EXPECT_EQ(sym::sign_of(E("-s0")), false);
  EXPECT_EQ(sym::sign_of(E("s0 - 1")), std::nullopt);
  EXPECT_EQ(sym::sign_of(E("max(x, -x)")), true);
  EXPECT_EQ(sym::sign_of(E("min(x, -x)")), std::nullopt);
}

TEST(SymAffine, RewriteCallsOuterFirst) {
  Expr e = E("mod(floordiv(x, 4), 8) + floordiv(x, 4)");
  int seen = 0;
  sym::for_each_call(e, [&](sym::CallKind, const Expr&, const Expr&) { ++seen; });
  EXPECT_EQ(seen, 3);  // the mod, its floordiv, the other floordiv
  Expr r =
      sym::rewrite_calls(e, [](sym::CallKind k, const Expr&, const Expr&) -> std::optional<Expr> {
        if (k == sym::CallKind::Mod) return E("m");
        return std::nullopt;
      });
  EXPECT_EQ(r, E("m + floordiv(x, 4)"));
}

TEST(LoopSpace, SplitsAVariableIntoDigits) {
  // A [B*H, S] view of a [B, S, H, D] tensor: x in [0, 64) read as 16384*(x//32) + 64*(x%32).
  LoopSpace s({"x", "y"}, {64, 128}, {E("16384*floordiv(x, 32) + 64*mod(x, 32) + 2048*y")});
  EXPECT_EQ(sym::str(s.axes()), "[2, 32, 128]");
  EXPECT_EQ(s.axes_of("x"), (std::vector<int>{0, 1}));
  EXPECT_EQ(s.axes_of("y"), (std::vector<int>{2}));
  sym::Linear l = s.affine(E("16384*floordiv(x, 32) + 64*mod(x, 32) + 2048*y + 5"), "load");
  EXPECT_EQ(sym::str(l.coeffs), "[16384, 64, 2048]");
  EXPECT_EQ(l.rest, E("5"));
  EXPECT_EQ(s.to_axes(E("x")), E("32*af_z0 + af_z1"));
}

TEST(LoopSpace, SymbolicBoundariesThatDivide) {
  LoopSpace s({"x"}, {E("2*s0")}, {E("mod(x, s0)"), E("floordiv(x, s0)")});
  EXPECT_EQ(sym::str(s.axes()), "[2, s0]");
  EXPECT_EQ(s.to_axes(E("mod(x, s0) + s0*floordiv(x, s0)")), E("s0*af_z0 + af_z1"));
}

TEST(LoopSpace, BoundariesNotAChainAreRejected) {
  try {
    LoopSpace s({"x"}, {24}, {E("mod(x, 4)"), E("floordiv(x, 6)")});
    FAIL() << "4 and 6 are not a chain";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("not a chain of divisors"), std::string::npos) << e.what();
  }
  LoopSpace s({"x"}, {32}, {E("floordiv(2*x + 1, 4)")});
  EXPECT_THROW(s.affine(E("floordiv(2*x + 1, 4)"), "load"), CompileError);
}

TEST(LoopNestBuilder, ReadsWritesAndIotas) {
  LoopNestBuilder b("k", LoopSpace({"x", "y"}, {E("s0"), 16}, {E("16*x + y"), E("y")}));
  int v = b.read("in", DType::F32, E("16*x + y"));
  int bias = b.read("bias", DType::BF16, E("y"));
  EXPECT_EQ(b.read("c", DType::U8, E("y")), -1);    // not a value kernels compute
  int pos = b.index_value(E("y - x"), DType::F32);  // decreasing along x: two reads
  int mix = b.index_value(E("max(y - x, x - y) + x*y"), DType::I64);
  b.write("out", b.compute("add", {b.compute("add", {v, bias}), pos}), DType::F32, E("16*x + y"));
  b.write("idx", mix, DType::I64, E("16*x + y"));
  // One i64 table, as long as the longest read of it: y reads 16 elements, x s0.
  ASSERT_TRUE(b.arange_length());
  EXPECT_EQ(*b.arange_length(), Expr::max(16, E("s0")));
  EXPECT_TRUE(b.same_index(E("16*x + y"), E("y + 16*x")));
  auto [lo, hi] = b.bounds(E("16*x + y - 3"));
  EXPECT_EQ(lo, E("-3"));
  EXPECT_EQ(hi, E("16*s0 - 4"));
  std::vector<std::string> inputs;
  AscGraph g = b.finish(&inputs);
  std::string text = print(g);
  EXPECT_NE(text.find("abs"), std::string::npos) << text;
  EXPECT_NE(text.find("mul"), std::string::npos) << text;
  EXPECT_EQ(g.size_symbols(), std::vector<std::string>{"s0"});
  EXPECT_THROW(b.index_value(E("floordiv(16*x + y, 3)"), DType::I64), CompileError);
  EXPECT_THROW(b.index_value(E("s0"), DType::I64), CompileError);  // a size as a value
}

TEST(LoopNestBuilder, MeanOfASumOverItsCount) {
  LoopNestBuilder b("k", LoopSpace({"x", "r"}, {E("s0"), E("s1")}, {E("s1*x + r")}));
  int sum = b.reduce("reduce_sum", b.read("in", DType::F32, E("s1*x + r")), {1});
  EXPECT_EQ(b.mean_of(sum, E("s0")), -1);
  int mean = b.mean_of(sum, b.count({1}));
  ASSERT_GE(mean, 0);
  EXPECT_EQ(b.node(mean).op, "reduce_mean");
}

}  // namespace
}  // namespace af::ascir
