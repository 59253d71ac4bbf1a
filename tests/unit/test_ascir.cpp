// AscIR: building, printing, parsing (round trip) and verifying loop-level kernel graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "ascir/asc_graph.h"
#include "ascir/parser.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"
#include "graph/attr_parse.h"
#include "support/error.h"

namespace af::ascir {
namespace {

using sym::Expr;

const Expr s0 = Expr::symbol("s0");

// The example of docs/ir.md "AscIR", verbatim.
const char* kDocExample = R"(ascgraph @k0 {
  axis z0 : s0
  axis z1 : 1000
  %d0 = data() {index = 0} sched [z0, z1] : f32 [z0, z1] repeats [s0, 1000] strides [1, s0]
  %l0 = load(%d0) sched [z0, z1] : f32 [z0, z1] repeats [s0, 1000] strides [1000, 1]
  %d1 = data() {index = 1} sched [z0, z1] : f32 [z0, z1] repeats [1, 1000] strides [0, 1]
  %l1 = load(%d1) sched [z0, z1] : f32 [z0, z1] repeats [1, 1000] strides [0, 1]
  %b1 = broadcast(%l1) sched [z0, z1] : f32 [z0, z1] repeats [s0, 1000] strides [1000, 1]
  %c = scalar() {value = 2.5} sched [z0, z1] : f32 [] repeats [] strides []
  %m = mul(%l0, %b1) sched [z0, z1] : f32 [z0, z1] repeats [s0, 1000] strides [1000, 1]
  %s = store(%m) sched [z0, z1] : f32 [z0, z1] repeats [s0, 1000] strides [1000, 1]
  %o = output(%s) {index = 0} sched [z0, z1] : f32 [z0, z1] repeats [s0, 1000] strides [1000, 1]
}
)";

// A scheduled kernel: merged, block-split and tile-split axes, a cast, an offset, a schedule.
const char* kScheduled = R"(ascgraph @k1 {
  axis z0 : s0
  axis z1 : 1000
  axis z0z1 : 1000*s0 merged(z0, z1)
  axis z0z1B : floordiv(1000*s0 + z0z1b_size - 1, z0z1b_size) block_outer(z0z1)
  axis z0z1b : z0z1b_size block_inner(z0z1)
  axis z0z1T : floordiv(z0z1b_size + z0z1t_size - 1, z0z1t_size) tile_outer(z0z1b)
  axis z0z1t : z0z1t_size tile_inner(z0z1b)
  %d0 = data() {index = 0} sched [z0z1B, z0z1T, z0z1t] : f16 [z0z1] repeats [1000*s0] strides [1] offset 2*s0 + 4
  %l0 = load(%d0) sched [z0z1B, z0z1T, z0z1t] : f16 [z0z1t] repeats [z0z1t_size] strides [1]
  %x = cast(%l0) sched [z0z1B, z0z1T, z0z1t] : f32 [z0z1t] repeats [z0z1t_size] strides [1]
  %e = exp(%x) sched [z0z1B, z0z1T, z0z1t] : f32 [z0z1t] repeats [z0z1t_size] strides [1]
  %s = store(%e) sched [z0z1B, z0z1T, z0z1t] : f32 [z0z1] repeats [1000*s0] strides [1]
  %o = output(%s) {index = 0} sched [z0z1B, z0z1T, z0z1t] : f32 [z0z1] repeats [1000*s0] strides [1]
  schedule "elementwise" key 0 {
    block_axis z0z1B
    vectorized_axis z0z1t
    ub_bytes 262144
    bytes_per_element 12
    param z0z1t_size = tile(z0z1b) align 8
    param z0z1b_size = block(z0z1) align 8
  }
}
)";

AscNode node(std::string name, std::string op, std::vector<int> inputs, AttrMap attrs,
             std::vector<int> sched, std::vector<int> axes, std::vector<Expr> repeats,
             std::vector<Expr> strides, DType dt = DType::F32) {
  AscNode n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.sched_axes = std::move(sched);
  n.out = AscTensor{dt, std::move(axes), std::move(repeats), std::move(strides), 0};
  return n;
}

// docs/ir.md's example built through the C++ API.
AscGraph doc_example() {
  AscGraph g;
  g.name = "k0";
  int z0 = g.add_axis("z0", s0);
  int z1 = g.add_axis("z1", 1000);
  std::vector<int> ax = {z0, z1};
  std::vector<Expr> full = {s0, 1000}, tile = {1000, 1};
  int d0 = g.add_node(node("d0", "data", {}, {{"index", int64_t{0}}}, ax, ax, full, {1, s0}));
  int l0 = g.add_node(node("l0", "load", {d0}, {}, ax, ax, full, tile));
  int d1 = g.add_node(node("d1", "data", {}, {{"index", int64_t{1}}}, ax, ax, {1, 1000}, {0, 1}));
  int l1 = g.add_node(node("l1", "load", {d1}, {}, ax, ax, {1, 1000}, {0, 1}));
  int b1 = g.add_node(node("b1", "broadcast", {l1}, {}, ax, ax, full, tile));
  g.add_node(node("c", "scalar", {}, {{"value", 2.5}}, ax, {}, {}, {}));
  int m = g.add_node(node("m", "mul", {l0, b1}, {}, ax, ax, full, tile));
  int s = g.add_node(node("s", "store", {m}, {}, ax, ax, full, tile));
  g.add_node(node("o", "output", {s}, {{"index", int64_t{0}}}, ax, ax, full, tile));
  return g;
}

int find(const AscGraph& g, std::string_view name) {
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (g.nodes[i].name == name) return i;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

TEST(AscIR, AxisKindNames) {
  EXPECT_EQ(axis_kind_name(AxisKind::Original), "original");
  EXPECT_EQ(axis_kind_name(AxisKind::Merged), "merged");
  EXPECT_EQ(axis_kind_name(AxisKind::TileOuter), "tile_outer");
  EXPECT_EQ(axis_kind_name(AxisKind::TileInner), "tile_inner");
  EXPECT_EQ(axis_kind_name(AxisKind::BlockOuter), "block_outer");
  EXPECT_EQ(axis_kind_name(AxisKind::BlockInner), "block_inner");
}

TEST(AscIR, GraphAccessors) {
  AscGraph g = doc_example();
  EXPECT_EQ(g.axis(1).name, "z1");
  EXPECT_THROW(g.axis(7), CompileError);
  g.axis(0).name = "y0";
  EXPECT_EQ(g.axes[0].name, "y0");
  int t = g.add_axis("t", Expr::symbol("t_size"), AxisKind::TileInner, {1});
  EXPECT_EQ(t, 2);
  EXPECT_EQ(g.axis(t).from, std::vector<int>{1});
  EXPECT_EQ(g.data_nodes(), (std::vector<int>{0, 2}));
  std::swap(g.nodes[0].attrs, g.nodes[2].attrs);  // d1 is now index 0
  EXPECT_EQ(g.data_nodes(), (std::vector<int>{2, 0}));
  EXPECT_EQ(g.output_nodes(), std::vector<int>{8});
  EXPECT_EQ(g.size_symbols(), (std::vector<std::string>{"s0", "t_size"}));
}

TEST(AscIR, PrintsDocExample) {
  AscGraph g = doc_example();
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kDocExample);
}

TEST(AscIR, RoundTripsDocExample) {
  AscGraph g = parse_asc_graph(kDocExample);
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kDocExample);
  AscGraph built = doc_example();
  ASSERT_EQ(g.nodes.size(), built.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(g.nodes[i].inputs, built.nodes[i].inputs) << g.nodes[i].name;
    EXPECT_EQ(g.nodes[i].out.repeats, built.nodes[i].out.repeats) << g.nodes[i].name;
    EXPECT_EQ(g.nodes[i].out.strides, built.nodes[i].out.strides) << g.nodes[i].name;
    EXPECT_EQ(g.nodes[i].sched_axes, built.nodes[i].sched_axes) << g.nodes[i].name;
  }
  EXPECT_EQ(std::get<double>(g.nodes[5].attrs.at("value")), 2.5);
}

TEST(AscIR, RoundTripsScheduledGraph) {
  AscGraph g = parse_asc_graph(kScheduled);
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kScheduled);
  EXPECT_EQ(print(parse_asc_graph(print(g))), kScheduled);
  ASSERT_EQ(g.axes.size(), 7u);
  EXPECT_EQ(g.axes[2].kind, AxisKind::Merged);
  EXPECT_EQ(g.axes[2].from, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.axes[5].kind, AxisKind::TileOuter);
  EXPECT_EQ(g.axes[5].from, std::vector<int>{4});
  EXPECT_EQ(g.axes[3].size, Expr::ceildiv(1000 * s0, Expr::symbol("z0z1b_size")));
  EXPECT_EQ(g.nodes[0].out.offset, 2 * s0 + 4);
  EXPECT_EQ(g.nodes[0].out.dtype, DType::F16);
  ASSERT_TRUE(g.schedule);
  const ScheduleInfo& s = *g.schedule;
  EXPECT_EQ(s.family, ScheduleFamily::Elementwise);
  EXPECT_EQ(s.block_axis, 3);
  EXPECT_EQ(s.vectorized_axis, 6);
  EXPECT_EQ(s.ub_bytes, 262144);
  EXPECT_EQ(s.bytes_per_element, 12);
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].name, "z0z1t_size");
  EXPECT_EQ(s.params[0].role, ParamRole::Tile);
  EXPECT_EQ(s.params[0].axis, 4);
  EXPECT_EQ(s.params[1].align, 8);
}

TEST(AscIR, ScheduleOmitsUnsetAxes) {
  AscGraph g = doc_example();
  ScheduleInfo s;
  s.family = ScheduleFamily::ReduceOuter;
  s.tiling_key = 3;
  g.schedule = s;
  std::string text = print(g);
  EXPECT_NE(text.find("  schedule \"reduce_outer\" key 3 {\n    ub_bytes 0\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("block_axis"), std::string::npos);
  EXPECT_EQ(text.find("vectorized_axis"), std::string::npos);
  AscGraph back = parse_asc_graph(text);
  EXPECT_EQ(back.schedule->family, s.family);
  EXPECT_EQ(back.schedule->block_axis, -1);
  EXPECT_EQ(back.schedule->vectorized_axis, -1);
  EXPECT_EQ(print(back), text);
}

TEST(AscIR, ParsesCommentsSpacingAndSeveralGraphs) {
  std::string text =
      std::string("// leading comment\n") + kDocExample +
      "ascgraph @k2 {  // trailing comment\n"
      "  axis a : floordiv( s0 ,  4 )+1 // size with spaces\n"
      "  axis b : s1 * 2\n"
      "  axis ab : (floordiv(s0, 4) + 1)*2*s1   merged( a , b )\n"
      "  %x = data() { index = 0 , tag = \"a//b\" } sched [ab] :\n"
      "      f32 [a, b] repeats [floordiv(s0, 4) + 1, s1 * 2] strides [max(s1, 2), 1]\n"
      "}\n";
  std::vector<AscGraph> gs = parse_asc_graphs(text);
  ASSERT_EQ(gs.size(), 2u);
  EXPECT_EQ(print(gs[0]), kDocExample);
  const AscGraph& g = gs[1];
  EXPECT_EQ(g.axes[0].size, Expr::floordiv(s0, 4) + 1);
  EXPECT_EQ(g.axes[2].from, (std::vector<int>{0, 1}));
  EXPECT_EQ(std::get<std::string>(g.nodes[0].attrs.at("tag")), "a//b");
  EXPECT_EQ(g.nodes[0].out.strides[0], Expr::max(Expr::symbol("s1"), 2));
  std::string printed = print(g);
  EXPECT_EQ(print(parse_asc_graph(printed)), printed);
  EXPECT_NE(printed.find("  axis ab : "), std::string::npos);
  EXPECT_NE(printed.find(" merged(a, b)\n"), std::string::npos) << printed;
  EXPECT_THROW(parse_asc_graph(text), ParseError);  // two graphs
  EXPECT_TRUE(parse_asc_graphs("  // nothing\n").empty());
}

TEST(AscIR, AttrValuesRoundTrip) {
  AscGraph g = doc_example();
  AttrMap& a = g.nodes[5].attrs;
  a["value"] = 1e-05;
  a["i"] = int64_t{-3};
  a["f"] = 2.0;
  a["n"] = -std::numeric_limits<double>::infinity();
  a["q"] = std::numeric_limits<double>::quiet_NaN();
  a["s"] = std::string("tab\there \\ \"q\"");
  a["l"] = std::vector<Expr>{1, s0 + 2, Expr::floordiv(s0, 4)};
  a["e"] = std::vector<Expr>{};
  std::string text = print(g);
  AscGraph back = parse_asc_graph(text);
  EXPECT_EQ(print(back), text);
  const AttrMap& b = back.nodes[5].attrs;
  EXPECT_EQ(std::get<double>(b.at("value")), 1e-05);
  EXPECT_EQ(std::get<int64_t>(b.at("i")), -3);
  EXPECT_EQ(std::get<double>(b.at("f")), 2.0);
  EXPECT_TRUE(std::isinf(std::get<double>(b.at("n"))));
  EXPECT_TRUE(std::isnan(std::get<double>(b.at("q"))));
  EXPECT_EQ(std::get<std::string>(b.at("s")), std::get<std::string>(a.at("s")));
  EXPECT_EQ(std::get<std::vector<Expr>>(b.at("l")), std::get<std::vector<Expr>>(a.at("l")));
  EXPECT_TRUE(std::get<std::vector<Expr>>(b.at("e")).empty());
}

TEST(AttrParse, ValuesAndPositions) {
  auto [v, end] = parse_attr_value("x =  [min(s0, 3), 4]}", 3);
  EXPECT_EQ(end, 20u);
  EXPECT_EQ(std::get<std::vector<Expr>>(v), (std::vector<Expr>{Expr::min(s0, 3), 4}));
  EXPECT_EQ(std::get<int64_t>(parse_attr_value("42,", 0).first), 42);
  EXPECT_EQ(parse_attr_value("42,", 0).second, 2u);
  EXPECT_EQ(std::get<double>(parse_attr_value("-2.5}", 0).first), -2.5);
  EXPECT_EQ(std::get<double>(parse_attr_value("1e+20", 0).first), 1e20);
  EXPECT_EQ(std::get<std::string>(parse_attr_value("\"a\\x01\\\"\"", 0).first), "a\x01\"");
  EXPECT_EQ(line_col("ab\ncd", 4), "2:2");
  EXPECT_EQ(blank_comments("a // b\n\"//\" c"), "a     \n\"//\" c");
  auto message = [](std::string_view text) {
    try {
      parse_attr_value(text, 0);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("\n  bogus"),
            "line 2:3: expected an attribute value (integer, float, "
            "\"string\" or [sizes]), found 'bogus'");
  EXPECT_NE(message("[1, s0 +]").find("line 1:5:"), std::string::npos) << message("[1, s0 +]");
  EXPECT_NE(message("\"open").find("unterminated"), std::string::npos);
  EXPECT_NE(message("[1, 2").find("missing ']'"), std::string::npos);
  EXPECT_NE(message("0x10").find("found '0x10'"), std::string::npos);
  EXPECT_NE(message("99999999999999999999").find("out of range"), std::string::npos);
}

// The ParseError message for `text`, or "no error".
std::string parse_error(const std::string& text) {
  try {
    parse_asc_graphs(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(AscIR, ScheduleNamesAreAClosedSet) {
  // Families, TilingCases and parameter roles are types: a name no table row has is a parse
  // error naming it, and every value prints as the name that parses back to it.
  const std::string text = kScheduled;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(parse_error(with("schedule \"elementwise\"", "schedule \"diagonal\""))
                .find("unknown schedule family \"diagonal\""),
            std::string::npos);
  EXPECT_NE(
      parse_error(with("= tile(", "= stripe(")).find("role 'stripe' is neither tile nor block"),
      std::string::npos);
  AscGraph g = parse_asc_graph(kScheduled);
  g.schedule->tiling_cases = {TilingCase::ReduceInnerSplit};
  std::string cases = print(g);
  EXPECT_NE(cases.find("cases [\"reduce_inner_split\"]"), std::string::npos) << cases;
  const std::string bad = cases.replace(cases.find("reduce_inner_split"), 18, "zigzag");
  EXPECT_NE(parse_error(bad).find("unknown TilingCase \"zigzag\""), std::string::npos);
  for (ScheduleFamily f :
       {ScheduleFamily::Elementwise, ScheduleFamily::ReduceInner, ScheduleFamily::ReduceOuter})
    EXPECT_EQ(schedule_family_named(name(f)), f);
  for (TilingCase c :
       {TilingCase::Elementwise, TilingCase::ReduceInner, TilingCase::ReduceInnerAllLoad,
        TilingCase::ReduceInnerSplit, TilingCase::ReduceOuter})
    EXPECT_EQ(tiling_case_named(name(c)), c);
  EXPECT_EQ(param_role_named("block"), ParamRole::Block);
}

TEST(AscIR, ParseErrorsCarryLineAndColumn) {
  const std::string head = "ascgraph @g {\n  axis z0 : s0\n";
  EXPECT_EQ(parse_error(head + "  axis z0 : 4\n}\n"), "line 3:8: axis 'z0' declared twice");
  EXPECT_EQ(parse_error(head + "  axis z1 : 4 merged(z0, q)\n}\n"), "line 3:26: unknown axis 'q'");
  EXPECT_NE(parse_error(head + "  axis z1 : 4 frobnicate(z0)\n}\n").find("line 3:13:"),
            std::string::npos);
  EXPECT_EQ(
      parse_error(head + "  %a = load(%nope) sched [z0] : f32 [z0] repeats [s0] strides [1]\n}\n"),
      "line 3:14: unknown value %nope");
  EXPECT_EQ(parse_error(head + "  %a = data() sched [z0] : f99 [z0] repeats [s0] strides [1]\n}\n"),
            "line 3:28: unknown dtype 'f99'");
  EXPECT_EQ(parse_error(head + "  %a = data() sched [z9] : f32 [z0] repeats [s0] strides [1]\n}\n"),
            "line 3:22: unknown axis 'z9'");
  EXPECT_EQ(parse_error(head + "  %a = data() sched [z0] : f32 [z0] strides [1]\n}\n"),
            "line 3:37: expected 'repeats' in the tensor type of %a, found 'strides'");
  EXPECT_EQ(parse_error(head + "  %a = data() sched [z0] : f32 [z0] repeats [s0] strides [1]\n"),
            "line 4:1: missing '}' closing ascgraph @g");
  EXPECT_EQ(parse_error(head + "  bogus\n}\n"),
            "line 3:3: expected 'axis', a %node, 'schedule' or '}', found 'bogus'");
  EXPECT_EQ(
      parse_error(head + "  %a = data() {index = 0, index = 1} sched [z0] : f32 [z0] repeats [s0] "
                         "strides [1]\n}\n"),
      "line 3:27: attribute 'index' given twice");
  EXPECT_EQ(parse_error(head + "  schedule \"elementwise\" key 0 {\n    block_axis q\n  }\n}\n"),
            "line 4:16: unknown axis 'q'");
  EXPECT_EQ(parse_error(head + "  schedule \"elementwise\" key k {\n  }\n}\n"),
            "line 3:30: expected a tiling key (an integer), found 'k'");
  EXPECT_NE(
      parse_error(head +
                  "  %a = data() sched [z0] : f32 [z0] repeats [s0] strides [1] offset s0 +\n}\n")
          .find("line 3:69:"),
      std::string::npos);
}

// Expects verify(g) to throw a CompileError whose message contains `what`.
void expect_rejected(const AscGraph& g, const std::string& what) {
  try {
    verify(g);
    ADD_FAILURE() << "verify accepted a graph that should fail with: " << what;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// Applies `edit` to a fresh copy of the doc example and expects rejection mentioning `what`.
void expect_edit_rejected(const std::function<void(AscGraph&)>& edit, const std::string& what) {
  AscGraph g = doc_example();
  edit(g);
  expect_rejected(g, what);
}

TEST(AscIRVerifier, AcceptsScalarRankZeroAndCast) {
  AscGraph g = parse_asc_graph(kScheduled);
  EXPECT_NO_THROW(verify(g));
  g.nodes[find(g, "e")].op = "add";  // arity 2 with one input
  expect_rejected(g, "node %e (add): expects 2 input(s), has 1");
}

TEST(AscIRVerifier, RejectsBadGraphs) {
  expect_edit_rejected([](AscGraph& g) { std::swap(g.nodes[0], g.nodes[1]); },
                       "node %l0 (load): input %l0 does not precede its user");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[6].inputs = {0, 7};
      },
      "node %m (mul): input %s does not precede its user");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[6].inputs = {0, 42};
      },
      "node %m (mul): input index 42 out of range");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[6].sched_axes = {0, 5};
      },
      "node %m (mul): sched axis id 5 does not exist");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[6].sched_axes = {0, 0};
      },
      "sched axis z0 appears twice");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[6].out.axes = {0, 9};
      },
      "node %m (mul): tensor axis id 9 does not exist");
  expect_edit_rejected([](AscGraph& g) { g.nodes[6].out.strides.pop_back(); },
                       "node %m (mul): tensor has 2 axes, 2 repeats and 1 strides");
  expect_edit_rejected([](AscGraph& g) { g.nodes[2].attrs["index"] = int64_t{0}; },
                       "node %d1 (data): index 0 is also used by %d0");
  expect_edit_rejected([](AscGraph& g) { g.nodes[2].attrs["index"] = int64_t{2}; },
                       "node %d1 (data): index 2 leaves a gap");
  expect_edit_rejected([](AscGraph& g) { g.nodes[8].attrs["index"] = int64_t{1}; },
                       "node %o (output): index 1 leaves a gap");
  expect_edit_rejected([](AscGraph& g) { g.nodes[0].attrs.clear(); },
                       "node %d0 (data): needs an integer attribute 'index'");
  expect_edit_rejected([](AscGraph& g) { g.nodes[3].inputs = {1}; },
                       "node %l1 (load): input %l0 is not a data node");
  expect_edit_rejected([](AscGraph& g) { g.nodes[8].inputs = {6}; },
                       "node %o (output): input %m is not a store");
  expect_edit_rejected(
      [](AscGraph& g) {
        AscNode extra = g.nodes[6];
        extra.name = "after";
        extra.inputs = {7, 4};
        g.nodes.push_back(extra);
      },
      "node %s (store): feeds %after (mul); a store may feed only outputs");
  expect_edit_rejected([](AscGraph& g) { g.nodes[6].inputs = {0}; },
                       "node %m (mul): expects 2 input(s), has 1");
  expect_edit_rejected([](AscGraph& g) { g.nodes[6].op = "frobnicate"; },
                       "node %m (frobnicate): unknown op");
  expect_edit_rejected([](AscGraph& g) { g.nodes[6].op = "permute"; },
                       "node %m (permute): unknown op");
  expect_edit_rejected([](AscGraph& g) { g.nodes[5].attrs.clear(); },
                       "node %c (scalar): needs a numeric attribute 'value'");
  expect_edit_rejected([](AscGraph& g) { g.nodes[3].out.repeats[0] = 7; },
                       "node %b1 (broadcast): input %l1 has repeat 7 on axis z0 it expands to s0");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[3].out.axes = {1, 0};
      },
      "node %b1 (broadcast): input %l1 dim 0 is axis z1, result dim is z0");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.nodes[4].inputs = {3, 1};
      },
      "node %b1 (broadcast): expects 1 input(s), has 2");
  expect_edit_rejected([](AscGraph& g) { g.nodes[6].name = "l0"; },
                       "node %l0 (mul): name is used by an earlier node");
  expect_edit_rejected([](AscGraph& g) { g.nodes[6].name = "a b"; }, "invalid name 'a b'");
  expect_edit_rejected([](AscGraph& g) { g.axes[1].name = "z0"; },
                       "axis z0 (id 1): name is used by another axis");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.add_axis("m", s0 * 1000, AxisKind::Merged, {0, 4});
      },
      "axis m (merged): derived from unknown axis id 4");
  expect_edit_rejected(
      [](AscGraph& g) {
        g.add_axis("t", 8, AxisKind::TileInner, {0, 1});
      },
      "axis t (tile_inner): a split axis needs exactly one parent axis");
  expect_edit_rejected([](AscGraph& g) { g.add_axis("o", 8, AxisKind::Original, {0}); },
                       "axis o (original): an original axis has no source axes");
}

TEST(AscIRVerifier, RejectsBadSchedules) {
  auto scheduled = [](const std::function<void(ScheduleInfo&)>& edit) {
    AscGraph g = parse_asc_graph(kScheduled);
    edit(*g.schedule);
    return g;
  };
  expect_rejected(scheduled([](ScheduleInfo& s) { s.block_axis = 17; }),
                  "schedule \"elementwise\": block axis id 17 does not exist");
  expect_rejected(scheduled([](ScheduleInfo& s) { s.vectorized_axis = 9; }),
                  "schedule \"elementwise\": vectorized axis id 9 does not exist");
  expect_rejected(scheduled([](ScheduleInfo& s) { s.params[1].name = "z0z1t_size"; }),
                  "param z0z1t_size: declared twice");
  expect_rejected(scheduled([](ScheduleInfo& s) { s.params[0].axis = 12; }),
                  "param z0z1t_size: axis id 12 does not exist");
  expect_rejected(scheduled([](ScheduleInfo& s) { s.params[0].align = 0; }),
                  "param z0z1t_size: align 0 must be >= 1");
}

// An unscheduled reduction kernel as lowering and fusion produce it: a reduce lists every axis
// (repeat 1 on the reduced one), a row value follows it, and the keepdim = 0 store lists only
// the kept axis.
const char* kReduceKernel = R"(ascgraph @k0 {
  axis z0 : s0
  axis z1 : 64
  %x.data = data() {index = 0} sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %x.load = load(%x.data) sched [z0, z1] : f32 [z0, z1] repeats [s0, 64] strides [64, 1]
  %s = reduce_sum(%x.load) sched [z0, z1] : f32 [z0, z1] repeats [s0, 1] strides [1, 0]
  %c = scalar() {value = 0.5} sched [z0, z1] : f32 [] repeats [] strides []
  %y = mul(%s, %c) sched [z0, z1] : f32 [z0, z1] repeats [s0, 1] strides [1, 0]
  %y.store = store(%y) sched [z0, z1] : f32 [z0] repeats [s0] strides [1]
  %y.out = output(%y.store) {index = 0} sched [z0, z1] : f32 [z0] repeats [s0] strides [1]
}
)";

TEST(AscIRVerifier, ReduceNodesAndStoresOverSomeAxes) {
  AscGraph ok = parse_asc_graph(kReduceKernel);
  EXPECT_NO_THROW(verify(ok));
  EXPECT_EQ(print(ok), kReduceKernel);
  auto edited = [](const std::function<void(AscGraph&)>& edit) {
    AscGraph g = parse_asc_graph(kReduceKernel);
    edit(g);
    return g;
  };
  expect_rejected(edited([](AscGraph& g) { g.nodes[2].out.dtype = DType::F16; }),
                  "node %s (reduce_sum): has dtype f16, its input %x.load f32");
  expect_rejected(edited([](AscGraph& g) {
                    g.nodes[2].out.axes = {0};
                    g.nodes[2].out.repeats = {s0};
                    g.nodes[2].out.strides = {1};
                  }),
                  "node %s (reduce_sum): tensor axes differ from its input %x.load's");
  expect_rejected(edited([](AscGraph& g) { g.nodes[2].out.repeats[1] = 8; }),
                  "node %s (reduce_sum): has repeat 8 on axis z1 where its input %x.load has 64");
  expect_rejected(edited([](AscGraph& g) {
                    g.nodes[2].inputs = {1, 1};
                  }),
                  "node %s (reduce_sum): expects 1 input(s), has 2");
  expect_rejected(edited([](AscGraph& g) {
                    g.nodes[5].out.axes = {0, 0};
                    g.nodes[5].out.repeats = {s0, s0};
                    g.nodes[5].out.strides = {1, 1};
                  }),
                  "node %y.store (store): tensor axis z0 appears twice");
  expect_rejected(edited([](AscGraph& g) {
                    g.nodes[6].out.axes = {0, 0};
                  }),
                  "node %y.out (output): tensor has 2 axes, 1 repeats and 1 strides");
  expect_rejected(edited([](AscGraph& g) { g.nodes[2].op = "reduce_frob"; }),
                  "node %s (reduce_frob): unknown op");
  // Once scheduled, tensors are over the scheduled axes: only the dtype rule applies.
  AscGraph scheduled = edited([](AscGraph& g) {
    g.schedule = ScheduleInfo{};
    g.schedule->family = ScheduleFamily::ReduceInner;
    g.nodes[2].out.axes = {0};
    g.nodes[2].out.repeats = {s0};
    g.nodes[2].out.strides = {1};
  });
  EXPECT_NO_THROW(verify(scheduled));
}

TEST(AscIRVerifier, ParsedForwardReferenceIsRejected) {
  std::string text(kDocExample);
  // Move the %s line below %o: it parses (names resolve), but the verifier rejects it.
  size_t s_line = text.find("  %s = store");
  size_t o_line = text.find("  %o = output");
  std::string s = text.substr(s_line, o_line - s_line);
  text.erase(s_line, s.size());
  text.insert(text.find("}\n"), s);
  AscGraph g = parse_asc_graph(text);
  expect_rejected(g, "node %o (output): input %s does not precede its user");
}

}  // namespace
}  // namespace af::ascir
