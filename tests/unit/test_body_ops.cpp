// Unit tests of inductor::BodyOps: Inductor's loop-body ops as AscIR (op names, constants, index
// values, loads of what the group wrote, gathers, stores and reductions), with their reasons.
#include <gtest/gtest.h>

#include "ascir/printer.h"
#include "inductor/body_ops.h"
#include "inductor/group_parts.h"
#include "support/error.h"

namespace af::inductor {
namespace {

using sym::parse_expr;

BodyOps rows(const char* n = "s0", const char* r = "64") {
  std::string index = std::string(r) + "*x + r";
  return BodyOps(ascir::LoopSpace({"x", "r"}, {parse_expr(n), parse_expr(r)}, {parse_expr(index)}),
                 {"x", "r"}, false);
}

/// The CompileError `fn` throws (empty when none).
template <typename F>
std::string reason(F fn) {
  try {
    fn();
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(BodyOps, InductorsOpNamesAreRegistryKinds) {
  BodyOps o = rows();
  int x = o.load("in", "bf16", parse_expr("64*x + r"));
  int y = o.op("truediv", {o.op("square", {x}), o.number(2.0, false)});
  int z = o.op("fma", {y, x, o.number(int64_t{1}, false)});
  o.store("out", parse_expr("64*x + r"), z, "");
  std::vector<std::string> inputs;
  std::string text = ascir::print(o.finish({{"out", "bf16"}}, &inputs));
  for (const char* op : {"div(", "mul(", "add(", "cast("})
    EXPECT_NE(text.find(op), std::string::npos) << text;
  EXPECT_EQ(inputs, std::vector<std::string>{"in"});
  EXPECT_EQ(o.value(y).dtype, "f32");  // bf16 computes in f32
  EXPECT_NE(reason([&] { o.op("frexp", {x}); }).find("op frexp has no AscIR kernel form"),
            std::string::npos);
  // and_ / or_ (logical ops lowered) and bitwise_* on bools are the logical kinds; bitwise_* on
  // integers stay bitwise.
  int p = o.op("gt", {x, o.number(0.0, false)}), q = o.op("lt", {x, o.number(1.0, false)});
  EXPECT_EQ(o.kernel().node(o.value(o.op("and_", {p, q})).node).op, "logical_and");
  EXPECT_EQ(o.kernel().node(o.value(o.op("bitwise_or", {p, q})).node).op, "logical_or");
  int i = o.load("ids", "i64", parse_expr("r"));
  EXPECT_EQ(o.kernel().node(o.value(o.op("bitwise_and", {i, i})).node).op, "bitwise_and");
}

TEST(BodyOps, ConstantsOfDtypesKernelsDoNotComputeWaitForACast) {
  BodyOps o = rows();
  int c = o.constant(int64_t{7}, "u8");
  EXPECT_EQ(o.value(c).kind, BodyValue::Kind::Narrow);
  EXPECT_EQ(o.value(o.to_dtype(c, "f32", true)).kind, BodyValue::Kind::Node);
  int f = o.load("f", "f64", parse_expr("r"));
  EXPECT_EQ(o.value(f).kind, BodyValue::Kind::Foreign);
  EXPECT_EQ(reason([&] { o.op("exp", {f}); }),
            "exp of f64 values read from f (kernels compute f32, f16, bf16, bool, i64, i32)");
}

TEST(BodyOps, WelfordAndMeansOverTheReducedCount) {
  BodyOps o = rows("s0", "s1");
  EXPECT_NE(reason([&] { o.reduction("sum", o.number(1.0, false)); }).find("outside a reduction"),
            std::string::npos);
  o.set_reduction_vars({"r"});
  int x = o.load("in", "f32", parse_expr("s1*x + r"));
  std::vector<int> w = o.reduction("welford_reduce", x);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(o.kernel().node(o.value(w[0]).node).op, "reduce_mean");
  EXPECT_EQ(o.value(w[2]).kind, BodyValue::Kind::Size);
  EXPECT_EQ(o.value(w[2]).size, parse_expr("s1"));
  int sum = o.reduction("sum", x)[0];
  int mean = o.op("truediv", {sum, o.index_expr(parse_expr("s1"), "f32")});
  EXPECT_EQ(o.kernel().node(o.value(mean).node).op, "reduce_mean");
  EXPECT_NE(reason([&] { o.reduction("argmax", x); }).find("the argmax reduction"),
            std::string::npos);
}

TEST(BodyOps, LoadsOfWhatTheGroupWroteGathersAndScatters) {
  BodyOps o = rows("8", "64");
  int x = o.load("in", "f32", parse_expr("64*x + r"));
  o.store("buf", parse_expr("64*x + r"), x, "");
  EXPECT_EQ(o.load("buf", "f32", parse_expr("r + 64*x")), x);
  EXPECT_NE(reason([&] { o.load("buf", "f32", parse_expr("r")); }).find("at another index"),
            std::string::npos);
  EXPECT_NE(reason([&] { o.store("buf", parse_expr("r"), x, ""); }).find("written twice"),
            std::string::npos);
  int ids = o.load("ids", "i64", parse_expr("x"));
  std::string g = o.indirect_indexing(ids, 100, true);
  EXPECT_EQ(g, "af_gather0");
  int row = o.load("table", "f32", parse_expr("64*" + g + " + r"));
  EXPECT_EQ(o.kernel().node(o.value(row).node).attrs.count("index_bound"), 1u);
  EXPECT_FALSE(o.bounds(parse_expr("64*" + g + " + r")));
  EXPECT_NE(reason([&] { o.store("t", parse_expr(g), x, ""); }).find("(a scatter)"),
            std::string::npos);
  EXPECT_NE(
      reason([&] { o.store("t", parse_expr("x"), x, "atomic_add"); }).find("scatter-accumulate"),
      std::string::npos);
  EXPECT_NE(reason([&] { o.indirect_indexing(x, 100, true); }).find("indirect indexing by f32"),
            std::string::npos);
}

TEST(SplitGroup, UntraceableNodesThatDependOnNothingRunFirst) {
  // 0: a (traceable); 1: b <- a (untraceable, depends on 0); 2: c (untraceable, free);
  // 3: d <- b (traceable); 4: e <- c (traceable).
  std::vector<GroupNode> nodes = {
      {{"x"}, {"a"}, true}, {{"a"}, {"b"}, false}, {{"x"}, {"c"}, false},
      {{"b"}, {"d"}, true}, {{"c"}, {"e"}, true},
  };
  std::vector<GroupPart> parts = split_group(nodes);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].nodes, std::vector<int>{2});  // c first: reads nothing the group writes
  EXPECT_FALSE(parts[0].traceable);
  EXPECT_EQ(parts[1].nodes, std::vector<int>{0});
  EXPECT_TRUE(parts[1].traceable);
  EXPECT_EQ(parts[2].nodes, std::vector<int>{1});
  EXPECT_FALSE(parts[2].traceable);
  EXPECT_EQ(parts[3].nodes, (std::vector<int>{3, 4}));
  // An untraceable node writing what an earlier node read cannot move before it.
  std::vector<GroupPart> kept = split_group({{{"w"}, {"a"}, true}, {{}, {"w"}, false}});
  EXPECT_EQ(kept[0].nodes, std::vector<int>{0});
  EXPECT_EQ(kept[1].nodes, std::vector<int>{1});
}

}  // namespace
}  // namespace af::inductor
