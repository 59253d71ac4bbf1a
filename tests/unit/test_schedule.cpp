// Schedule pass tests: axis reorder and merge, tile and block split, vectorized axis, tensor
// rewrite and the printed TilingCase (which must verify and parse back).
#include <gtest/gtest.h>

#include "asc_test_util.h"
#include "ascir/parser.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"

namespace af {
namespace {

using asc_test::AscBuilder;
using ascir::AscGraph;
using ascir::AxisKind;

target::Target avx2() {
  return target::Target().with_isa(target::Isa::Avx2);
}

/// Schedules, verifies, and checks print -> parse -> print is the identity.
void schedule_checked(AscGraph& g, const target::Target& t = avx2()) {
  ascir::verify(g);
  schedule::schedule_kernel(g, t);
  ascir::verify(g);
  std::string text = ascir::print(g);
  EXPECT_EQ(ascir::print(ascir::parse_asc_graph(text)), text);
}

const ascir::Axis& axis_named(const AscGraph& g, const std::string& name) {
  for (const auto& a : g.axes)
    if (a.name == name) return a;
  throw std::runtime_error("no axis " + name);
}
std::vector<std::string> names(const AscGraph& g, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(g.axis(id).name);
  return out;
}
const ascir::AscNode& node_op(const AscGraph& g, const std::string& op, int nth = 0) {
  for (const auto& n : g.nodes)
    if (n.op == op && nth-- == 0) return n;
  throw std::runtime_error("no node " + op);
}
using Names = std::vector<std::string>;

TEST(Schedule, ContiguousAxesMergeIntoOneTiledBlockedAxis) {
  AscBuilder b("k", {3, 1000});
  int x = b.contiguous_input();
  b.output(b.op("add", {b.op("mul", {b.op("sigmoid", {x}), b.scalar(1.5)}), b.scalar(-0.25)}));
  schedule_checked(b.g);
  const AscGraph& g = b.g;
  const auto& merged = axis_named(g, "z0z1");
  EXPECT_EQ(merged.kind, AxisKind::Merged);
  EXPECT_EQ(names(g, merged.from), (Names{"z0", "z1"}));
  EXPECT_EQ(merged.size, sym::Expr(3000));
  EXPECT_EQ(axis_named(g, "z0z1T").kind, AxisKind::TileOuter);
  EXPECT_EQ(axis_named(g, "z0z1t").kind, AxisKind::TileInner);
  EXPECT_EQ(axis_named(g, "z0z1t").size, sym::Expr::symbol("z0z1t_size"));
  EXPECT_EQ(axis_named(g, "z0z1TB").kind, AxisKind::BlockOuter);
  EXPECT_EQ(names(g, axis_named(g, "z0z1TB").from), (Names{"z0z1T"}));
  ASSERT_TRUE(g.schedule);
  const auto& s = *g.schedule;
  EXPECT_EQ(s.family, ascir::ScheduleFamily::Elementwise);
  EXPECT_EQ(s.tiling_key, 0);
  EXPECT_EQ(g.axis(s.block_axis).name, "z0z1TB");
  EXPECT_EQ(g.axis(s.vectorized_axis).name, "z0z1t");
  EXPECT_EQ(s.ub_bytes, 256 * 1024);
  EXPECT_EQ(s.bytes_per_element, 8);  // f32 in + f32 out
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].name, "z0z1t_size");
  EXPECT_EQ(s.params[0].role, ascir::ParamRole::Tile);
  EXPECT_EQ(s.params[0].align, 8);
  EXPECT_EQ(g.axis(s.params[0].axis).name, "z0z1");
  EXPECT_EQ(s.params[1].name, "z0z1Tb_size");
  EXPECT_EQ(s.params[1].role, ascir::ParamRole::Block);
  for (const auto& n : g.nodes)
    EXPECT_EQ(names(g, n.sched_axes), (Names{"z0z1TB", "z0z1Tb", "z0z1t"})) << n.name;
  const auto& data = node_op(g, "data");
  EXPECT_EQ(names(g, data.out.axes), Names{"z0z1"});
  EXPECT_EQ(data.out.strides, std::vector<sym::Expr>{1});
  const auto& load = node_op(g, "load");
  EXPECT_EQ(names(g, load.out.axes), Names{"z0z1t"});
  EXPECT_EQ(load.out.repeats, std::vector<sym::Expr>{sym::Expr::symbol("z0z1t_size")});
  EXPECT_TRUE(node_op(g, "scalar").out.axes.empty());
  EXPECT_EQ(names(g, node_op(g, "output").out.axes), Names{"z0z1"});
}

TEST(Schedule, RowBroadcastKeepsAxesAndMergesOuterWithTileOuter) {
  sym::Expr s0 = sym::Expr::symbol("s0");
  AscBuilder b("k", {s0, 1000});
  int x = b.contiguous_input();
  int gm = b.input(DType::F32, {0, 1});
  int bt = b.input(DType::F32, {0, 1});
  b.output(b.op("add", {b.op("mul", {x, b.broadcast(gm)}), b.broadcast(bt)}));
  schedule_checked(b.g);
  const AscGraph& g = b.g;
  // No memory merge (gamma has stride 0 then 1); the loop merge of z0 with z1T is blocked.
  for (const auto& a : g.axes) EXPECT_NE(a.name, "z0z1");
  const auto& x_axis = axis_named(g, "z0z1T");
  EXPECT_EQ(x_axis.kind, AxisKind::Merged);
  EXPECT_EQ(names(g, x_axis.from), (Names{"z0", "z1T"}));
  EXPECT_EQ(g.axis(g.schedule->vectorized_axis).name, "z1t");
  EXPECT_EQ(g.axis(g.schedule->block_axis).name, "z0z1TB");
  EXPECT_EQ(g.axis(g.schedule->params[0].axis).name, "z1");
  EXPECT_EQ(g.axis(g.schedule->params[1].axis).name, "z0z1T");
  EXPECT_EQ(g.schedule->bytes_per_element, 16);
  const auto& gamma = node_op(g, "data", 1);
  EXPECT_EQ(names(g, gamma.out.axes), (Names{"z0", "z1"}));
  EXPECT_EQ(gamma.out.strides, (std::vector<sym::Expr>{0, 1}));
  EXPECT_EQ(gamma.out.repeats, (std::vector<sym::Expr>{1, 1000}));
  // gamma's tile varies along the vectorized axis (stride 1 there).
  EXPECT_EQ(node_op(g, "load", 1).out.strides, std::vector<sym::Expr>{1});
}

TEST(Schedule, ColumnBroadcastIsTileInvariant) {
  AscBuilder b("k", {64, 100});
  int x = b.contiguous_input();
  int y = b.input(DType::F32, {1, 0});
  b.output(b.op("sub", {x, b.broadcast(y)}));
  schedule_checked(b.g);
  const AscGraph& g = b.g;
  const auto& ly = node_op(g, "load", 1);
  EXPECT_EQ(ly.out.repeats, std::vector<sym::Expr>{1});
  EXPECT_EQ(ly.out.strides, std::vector<sym::Expr>{0});
  const auto& bc = node_op(g, "broadcast");
  EXPECT_EQ(bc.out.repeats, std::vector<sym::Expr>{sym::Expr::symbol("z1t_size")});
  EXPECT_EQ(g.schedule->bytes_per_element, 8);  // y is read once per tile, not per element
}

TEST(Schedule, TransposedOutputReordersLoops) {
  AscBuilder b("k", {13, 29});
  int x = b.contiguous_input();
  b.output(b.op("neg", {x}), DType::F32, {1, 13});
  schedule_checked(b.g);
  const AscGraph& g = b.g;
  // Loop order follows the output: z1 (stride 13) outside, z0 (stride 1) vectorized.
  EXPECT_EQ(g.axis(g.schedule->params[0].axis).name, "z0");
  const auto& data = node_op(g, "data");
  EXPECT_EQ(names(g, data.out.axes), (Names{"z1", "z0"}));
  EXPECT_EQ(data.out.strides, (std::vector<sym::Expr>{1, 29}));  // gathered along z0
  const auto& store = node_op(g, "store");
  EXPECT_EQ(store.out.strides, (std::vector<sym::Expr>{13, 1}));
}

TEST(Schedule, UnitDimsDropAndPartialMerge) {
  AscBuilder b("k", {1, 5, 1, 7});
  b.output(b.op("exp", {b.contiguous_input()}));
  schedule_checked(b.g);
  EXPECT_EQ(names(b.g, axis_named(b.g, "z1z3").from), (Names{"z1", "z3"}));
  EXPECT_EQ(names(b.g, node_op(b.g, "data").out.axes), Names{"z1z3"});

  // y broadcast over the two inner axes: they merge, z0 stays apart.
  AscBuilder c("k3", {4, 6, 8});
  int x = c.contiguous_input();
  int y = c.input(DType::F32, {1, 0, 0});
  c.output(c.op("mul", {x, c.broadcast(y)}));
  schedule_checked(c.g);
  EXPECT_EQ(names(c.g, node_op(c.g, "data", 1).out.axes), (Names{"z0", "z1z2"}));
  EXPECT_EQ(node_op(c.g, "data", 1).out.strides, (std::vector<sym::Expr>{1, 0}));
  EXPECT_EQ(node_op(c.g, "data", 0).out.strides, (std::vector<sym::Expr>{48, 1}));
}

TEST(Schedule, SymbolicContiguousMerges) {
  sym::Expr s0 = sym::Expr::symbol("s0"), s1 = sym::Expr::symbol("s1");
  AscBuilder b("k", {s0, s1});
  b.output(b.op("relu", {b.contiguous_input(DType::BF16)}), DType::BF16);
  schedule_checked(b.g);
  EXPECT_EQ(axis_named(b.g, "z0z1").size, s0 * s1);
  EXPECT_EQ(b.g.schedule->bytes_per_element, 4);  // bf16 in + bf16 out
}

TEST(Schedule, RankZeroKernelGetsAnAxis) {
  AscBuilder b("k", {});
  b.output(b.op("add", {b.contiguous_input(), b.scalar(1.0)}));
  schedule_checked(b.g);
  EXPECT_EQ(b.g.axis(b.g.schedule->params[0].axis).size, sym::Expr(1));
}

TEST(Schedule, VectorLanesFollowTheIsa) {
  target::Target t;
  t.vector_bytes = 64;
  EXPECT_EQ(schedule::vector_lanes(t), 16);
  t.vector_bytes = 4;
  EXPECT_EQ(schedule::vector_lanes(t), 1);
  AscBuilder b("k", {100});
  b.output(b.op("exp", {b.contiguous_input()}));
  t = t.with_isa(target::Isa::Avx512);
  schedule_checked(b.g, t);
  EXPECT_EQ(b.g.schedule->params[0].align, 16);
}

TEST(Schedule, HostTargetIsConsistent) {
  target::Target t = target::Target::host_cpu();
  EXPECT_GE(t.cores, 1);
  EXPECT_EQ(t.ub_bytes, 256 * 1024);
  int64_t want = t.isa == target::Isa::Avx512 ? 64 : t.isa == target::Isa::Avx2 ? 32 : 4;
  EXPECT_EQ(t.vector_bytes, want) << target::isa_name(t.isa);
  for (target::Isa isa : target::all_isas())
    EXPECT_EQ(target::parse_isa(target::isa_name(isa)), isa);
  EXPECT_THROW(target::parse_isa("sse2"), CompileError);
}

TEST(Schedule, Errors) {
  AscBuilder b("k", {8});
  b.output(b.op("exp", {b.contiguous_input()}));
  schedule::schedule_kernel(b.g, avx2());
  EXPECT_THROW(schedule::schedule_kernel(b.g, avx2()), CompileError);  // already scheduled

  AscBuilder c("nostore", {8});
  c.op("exp", {c.contiguous_input()});
  EXPECT_THROW(schedule::schedule_kernel(c.g, avx2()), CompileError);

  AscBuilder d("badrepeat", {8, 4});
  d.output(d.op("exp", {d.contiguous_input()}));
  d.g.nodes[0].out.repeats[0] = 3;  // data covers 3 of 8 rows
  try {
    schedule::schedule_kernel(d.g, avx2());
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("repeat 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace af
