// Unit tests of reductions in lowering and fusion: one-op reduce kernels, axis embedding in the
// merge (host = producer and host = consumer), the reduction policy checks with their reasons,
// and the normalization patterns (LayerNorm, RMSNorm, softmax, ...) that must end as one kernel.
// Numeric checks run the fused program with the interpreter of fusion_interp.h against eager.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "ascir/printer.h"
#include "fusion/can_fuse.h"
#include "fusion/embed.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/merge.h"
#include "fusion/printer.h"
#include "fusion/reduce_check.h"
#include "fusion/steps.h"
#include "fusion_check.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using testing::check_program;

graph::Graph parse(const std::string& text) {
  graph::Graph g = graph::parse_graph(text);
  graph::verify(g);
  return g;
}

const AscNode& node(const AscGraph& k, const std::string& name) {
  for (const AscNode& n : k.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node %" + name + " in\n" + ascir::print(k));
}

/// "axes : repeats : strides" of a node's tensor, axes by name.
std::string tensor(const AscGraph& k, const std::string& name) {
  const AscNode& n = node(k, name);
  std::string axes;
  for (int a : n.out.axes) axes += (axes.empty() ? "" : ",") + k.axis(a).name;
  return axes + " : " + sym::str(n.out.repeats) + " : " + sym::str(n.out.strides);
}

std::vector<std::string> ops_of(const AscGraph& k) {
  std::vector<std::string> out;
  for (const AscNode& n : k.nodes) out.push_back(n.op + ":" + std::string(dtype_name(n.out.dtype)));
  return out;
}

/// The step computing Graph IR value `name`.
int step_of(const FusedGraph& fg, const std::string& name) {
  return StepIndex(fg).step_of.at(fg.source.find(name));
}

// ---- lowering ----

TEST(ReduceLower, KindsKeepdimAndSeveralDims) {
  // x is laid out z1-outermost so that dims 0 and 2 (reduced by %m) are adjacent in memory and
  // a reduction TilingCase can run every one of these kernels.
  FusedGraph fg = lower(parse(R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 4, 5] strides [5, 5*s0, 1]
  %b = input() {index = 1} : bool[s0, 4]
  %s = reduce_sum(%x) {dims = [2], keepdim = 1} : f32[s0, 4, 1]
  %m = reduce_mean(%x) {dims = [0, 2], keepdim = 0} : f32[4]
  %p = reduce_prod(%x) {dims = [1], keepdim = 0} : f32[s0, 5]
  %a = reduce_max(%x) {dims = [0, 1, 2], keepdim = 0} : f32[]
  %n = reduce_min(%x) {dims = [0, 1], keepdim = 1} : f32[1, 1, 5]
  %y = reduce_any(%b) {dims = [1], keepdim = 1} : bool[s0, 1]
  %z = reduce_all(%b) {dims = [0], keepdim = 0} : bool[4]
  return %s, %m, %p, %a, %n, %y, %z
})"));
  ASSERT_EQ(fg.num_kernels(), 7);
  // The iteration space is the operand's shape; the reduce lists every axis.
  const AscGraph& s = fg.nodes[0].kernel;
  EXPECT_EQ(loop_axes_str(s), "[s0, 4, 5]");
  EXPECT_EQ(ops_of(s), (std::vector<std::string>{"data:f32", "load:f32", "reduce_sum:f32",
                                                 "store:f32", "output:f32"}));
  EXPECT_TRUE(node(s, "s").attrs.empty());
  EXPECT_EQ(tensor(s, "s"), "z0,z1,z2 : [s0, 4, 1] : [4, 1, 0]");
  EXPECT_EQ(tensor(s, "s.store"), "z0,z1,z2 : [s0, 4, 1] : [4, 1, 0]");  // keepdim: all axes
  EXPECT_EQ(tensor(fg.nodes[1].kernel, "m"), "z0,z1,z2 : [1, 4, 1] : [0, 1, 0]");
  EXPECT_EQ(tensor(fg.nodes[1].kernel, "m.store"), "z1 : [4] : [1]");  // the kept axes only
  EXPECT_EQ(tensor(fg.nodes[2].kernel, "p.store"), "z0,z2 : [s0, 5] : [5, 1]");
  EXPECT_EQ(tensor(fg.nodes[3].kernel, "a"), "z0,z1,z2 : [1, 1, 1] : [0, 0, 0]");
  EXPECT_EQ(tensor(fg.nodes[3].kernel, "a.store"), " : [] : []");
  EXPECT_EQ(tensor(fg.nodes[4].kernel, "n.store"), "z0,z1,z2 : [1, 1, 5] : [0, 0, 1]");
  EXPECT_EQ(tensor(fg.nodes[5].kernel, "y"), "z0,z1 : [s0, 1] : [1, 0]");
  EXPECT_EQ(node(fg.nodes[5].kernel, "y").out.dtype, DType::Bool);
  EXPECT_EQ(tensor(fg.nodes[6].kernel, "z.store"), "z1 : [4] : [1]");
  for (const FusedNode& k : fg.nodes) {
    ASSERT_EQ(k.input_axes.size(), 1u);
    EXPECT_EQ(k.input_axes[0].size(), fg.source.nodes[k.inputs[0]].type.rank());
    EXPECT_NO_THROW(reduction_check(k, fg.source, FusionOptions{}));
  }
  check_program(fg);
}

TEST(ReduceLower, LowPrecisionReducesInF32) {
  FusedGraph fg = lower(parse(R"(graph @t() {
  %x = input() {index = 0} : bf16[4, 8]
  %s = reduce_sum(%x) {dims = [1], keepdim = 1} : bf16[4, 1]
  return %s
})"));
  const AscGraph& k = fg.nodes[0].kernel;
  EXPECT_EQ(ops_of(k), (std::vector<std::string>{"data:bf16", "load:bf16", "cast:f32",
                                                 "reduce_sum:f32", "store:bf16", "output:bf16"}));
  EXPECT_EQ(tensor(k, "s"), "z0,z1 : [4, 1] : [1, 0]");
}

TEST(ReduceLower, DisabledPassAndUnsupportedAreOpaque) {
  const char* text = R"(graph @t() {
  %x = input() {index = 0} : f32[4, 8]
  %d = input() {index = 1} : i16[4, 8]
  %s = reduce_sum(%x) {dims = [1], keepdim = 0} : f32[4]
  %e = exp(%s) : f32[4]
  %t = reduce_mean(%d) {dims = [0], keepdim = 0} : i16[8]
  %z = input() {index = 2} : f32[0, 3]
  %u = reduce_max(%z) {dims = [0], keepdim = 0} : f32[3]
  return %e, %t, %u
})";
  graph::Graph g = graph::parse_graph(text);  // i16 mean: not verified, still explained
  FusedGraph on = lower(g);
  EXPECT_EQ(on.nodes[0].kind, FusedNode::Kind::Kernel);
  EXPECT_EQ(on.nodes[2].reason, "dtype i16 is not supported by generated kernels (reduce_mean)");
  EXPECT_EQ(on.nodes[3].reason, "empty reduction: dim 0 of %z has size 0 (reduce_max)");
  FusionOptions opts;
  opts.reduce = false;
  FusedGraph off = lower(g, opts);
  ASSERT_EQ(off.nodes.size(), 4u);
  EXPECT_EQ(off.nodes[0].kind, FusedNode::Kind::Opaque);
  EXPECT_EQ(off.nodes[0].reason, "reduce pass is disabled (--autofuse_disable_pass=reduce)");
  EXPECT_EQ(off.nodes[1].kind, FusedNode::Kind::Kernel);
  EXPECT_EQ(off.nodes[2].reason, "reduce pass is disabled (--autofuse_disable_pass=reduce)");
  EXPECT_NE(print(off).find("opaque %s = reduce_sum(%x) {dims = [1], keepdim = 0} : f32[4]  // "
                            "reduce pass is disabled (--autofuse_disable_pass=reduce)"),
            std::string::npos)
      << print(off);
}

// ---- merge with axis embedding ----

const char* kRowChain = R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 6]
  %eps = const() {value = 0.5} : f32[]
  %v = reduce_sum(%x) {dims = [1], keepdim = 1} : f32[s0, 1]
  %a = add(%v, %eps) : f32[s0, 1]
  %r = rsqrt(%a) : f32[s0, 1]
  %b = broadcast(%r) : f32[s0, 6]
  %y = mul(%x, %b) : f32[s0, 6]
  return %y, %a
})";

TEST(ReduceMerge, HostIsTheProducer) {
  FusedGraph fg = lower(parse(kRowChain));
  int v = step_of(fg, "v"), a = step_of(fg, "a");
  AxisEmbedding e = embed_axes(fg, v, a);
  ASSERT_TRUE(e.ok) << e.reason;
  EXPECT_TRUE(e.a_is_host);
  EXPECT_FALSE(e.same_nest);
  EXPECT_EQ(e.smaller, std::vector<int>{1});  // z1: the guest [s0, 1] is a row value there
  FusedNode m = merge_kernels(fg, v, a);
  const AscGraph& k = m.kernel;
  EXPECT_EQ(loop_axes_str(k), "[s0, 6]");
  EXPECT_EQ(tensor(k, "a"), "z0,z1 : [s0, 1] : [1, 0]");
  EXPECT_EQ(k.nodes[node(k, "a").inputs[0]].name, "v");  // the load of %v is gone
  // %a is a graph output: its store lists its dims' axes, stride 0 on the host's z1 (size 6).
  EXPECT_EQ(tensor(k, "a.store"), "z0,z1 : [s0, 1] : [1, 0]");
  EXPECT_EQ(std::count_if(k.nodes.begin(), k.nodes.end(),
                          [](const AscNode& n) { return n.op == "store"; }),
            1);  // %v is internal: its store is dropped
  EXPECT_EQ(reduction_check(m, fg.source, FusionOptions{}), std::nullopt);
  FusedGraph merged = fg;
  merged.nodes[v] = m;
  merged.nodes.erase(merged.nodes.begin() + a);
  check_program(merged);
}

TEST(ReduceMerge, AYesCarriesTheMergedKernelTheMechanicsBuild) {
  // The policy builds the merged kernel to judge a reduce pair; the driver places that one.
  FusedGraph fg = lower(parse(kRowChain));
  int v = step_of(fg, "v"), a = step_of(fg, "a");
  FusionDecision d = can_fuse(fg, v, a, FusionOptions{});
  ASSERT_TRUE(d.ok) << d.reason;
  ASSERT_TRUE(d.merged.has_value());
  EXPECT_EQ(ascir::print(d.merged->kernel), ascir::print(merge_kernels(fg, v, a).kernel));
  // Equal loop nests under the node limit are not merged to be judged.
  FusedGraph plain = lower(parse(R"(graph @p() {
  %x = input() {index = 0} : f32[4, 6]
  %e = exp(%x) : f32[4, 6]
  %t = tanh(%e) : f32[4, 6]
  return %t
})"));
  FusionDecision p = can_fuse(plain, 0, 1, FusionOptions{});
  EXPECT_TRUE(p.ok);
  EXPECT_FALSE(p.merged.has_value());
}

TEST(ReduceMerge, HostIsTheConsumer) {
  // exp(%bias) [6] embeds into the broadcast kernel [s0, 6]: guest = producer.
  FusedGraph fg = lower(parse(R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 6]
  %bias = input() {index = 1} : f32[6]
  %eb = exp(%bias) : f32[6]
  %0 = broadcast(%eb) : f32[s0, 6]
  %1 = add(%x, %0) : f32[s0, 6]
  %s = reduce_max(%1) {dims = [1], keepdim = 0} : f32[s0]
  return %s, %eb
})"));
  AxisEmbedding e = embed_axes(fg, 0, 1);
  ASSERT_TRUE(e.ok) << e.reason;
  EXPECT_FALSE(e.a_is_host);
  EXPECT_EQ(e.a_to_host.at(0), 1);  // the guest's z0 runs on the host's z1
  EXPECT_EQ(e.smaller, std::vector<int>{0});
  FusedNode m = merge_kernels(fg, 0, 1);
  const AscGraph& k = m.kernel;
  EXPECT_EQ(loop_axes_str(k), "[s0, 6]");
  EXPECT_EQ(tensor(k, "bias.data"), "z0,z1 : [1, 6] : [0, 1]");
  EXPECT_EQ(tensor(k, "eb"), "z0,z1 : [1, 6] : [0, 1]");
  EXPECT_EQ(tensor(k, "eb.store"), "z1 : [6] : [1]");  // a graph output: keeps its store
  EXPECT_EQ(m.input_axes, (std::vector<std::vector<int>>{{1}}));
  FusedGraph merged = fg;
  merged.nodes[0] = m;
  merged.nodes.erase(merged.nodes.begin() + 1);
  check_program(merged);
  // The policy: recomputing exp per row is fine, storing %eb once per row is not.
  FusedGraph all = fuse(lower(fg.source));
  EXPECT_EQ(all.num_kernels(), 2);
  ASSERT_EQ(all.rejected.size(), 1u);
  EXPECT_EQ(all.rejected[0].reason, "would store %eb repeatedly along axis z0");
  check_program(all);
  graph::Graph internal = fg.source;
  internal.outputs.pop_back();
  FusedGraph one = fuse(lower(internal));
  EXPECT_EQ(one.num_kernels(), 1) << print(one);
  check_program(one);
}

TEST(ReduceMerge, KeepdimZeroGuestAndInputAxes) {
  // The guest [s0] sits on the host's z0; a later producer of another [s0] input pairs through
  // the recorded input axes, not by aligning right.
  FusedGraph fg = lower(parse(R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 5]
  %u = input() {index = 1} : f32[s0]
  %s = reduce_sum(%x) {dims = [1], keepdim = 0} : f32[s0]
  %e = exp(%u) : f32[s0]
  %y = add(%s, %e) : f32[s0]
  return %y
})"));
  int s = step_of(fg, "s"), y = step_of(fg, "y");
  FusedNode m = merge_kernels(fg, s, y);
  ASSERT_EQ(m.inputs.size(), 2u);
  EXPECT_EQ(fg.source.nodes[m.inputs[1]].name, "e");
  EXPECT_EQ(m.input_axes[1], std::vector<int>{0});  // z0, although the kernel has 2 axes
  EXPECT_EQ(tensor(m.kernel, "e.data"), "z0,z1 : [s0, 1] : [1, 0]");
  // Now merge exp(%u) into it: %e's dim pairs with z0 (aligning right would pick z1 of size 5).
  FusedGraph two = fg;
  two.nodes[y] = m;
  two.nodes.erase(two.nodes.begin() + s);
  int e = step_of(two, "e"), sy = step_of(two, "y");
  ASSERT_LT(e, sy);
  AxisEmbedding emb = embed_axes(two, e, sy);
  ASSERT_TRUE(emb.ok) << emb.reason;
  EXPECT_EQ(emb.a_to_host.at(0), 0);
  FusedNode all = merge_kernels(two, e, sy);
  EXPECT_EQ(tensor(all.kernel, "e"), "z0,z1 : [s0, 1] : [1, 0]");
  two.nodes[sy] = all;
  two.nodes.erase(two.nodes.begin() + e);
  check_program(two);
  FusedGraph fused = fuse(fg);
  EXPECT_EQ(fused.num_kernels(), 1) << print(fused);
  check_program(fused);
}

TEST(ReduceMerge, SiblingsNeedTheSameLoopAxes) {
  FusedGraph fg = lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[4, 8]
  %s = reduce_sum(%x) {dims = [1], keepdim = 1} : f32[4, 1]
  %t = reduce_max(%x) {dims = [1], keepdim = 1} : f32[4, 1]
  %c = reduce_sum(%x) {dims = [0], keepdim = 1} : f32[1, 8]
  %e = exp(%x) : f32[4, 8]
  %d = reduce_sum(%e) {dims = [0, 1], keepdim = 0} : f32[]
  return %s, %t, %c, %d
})"));
  AxisEmbedding e = embed_axes(fg, 0, 1);
  EXPECT_TRUE(e.ok && e.same_nest);
  FusionOptions opts;
  EXPECT_TRUE(can_fuse(fg, 0, 1, opts).ok);
  EXPECT_EQ(can_fuse(fg, 1, 2, opts).reason, "reductions over different axes {z1} vs {z0}");
  EXPECT_EQ(can_fuse(fg, 0, 4, opts).reason, "reductions over different axes {z1} vs {z0, z1}");
  FusedGraph fused = fuse(fg);
  EXPECT_EQ(fused.num_kernels(), 3) << print(fused);
  check_program(fused);
}

// ---- policy ----

const char* kLayerNorm = R"(graph @ln(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 7]
  %w = input() {index = 1} : f32[7]
  %b = input() {index = 2} : f32[7]
  %eps = const() {value = 1e-05} : f32[]
  %mean = reduce_mean(%x) {dims = [1], keepdim = 1} : f32[s0, 1]
  %0 = broadcast(%mean) : f32[s0, 7]
  %xc = sub(%x, %0) : f32[s0, 7]
  %sq = mul(%xc, %xc) : f32[s0, 7]
  %var = reduce_mean(%sq) {dims = [1], keepdim = 1} : f32[s0, 1]
  %1 = add(%var, %eps) : f32[s0, 1]
  %rstd = rsqrt(%1) : f32[s0, 1]
  %2 = broadcast(%rstd) : f32[s0, 7]
  %3 = mul(%xc, %2) : f32[s0, 7]
  %4 = broadcast(%w) : f32[s0, 7]
  %5 = mul(%3, %4) : f32[s0, 7]
  %6 = broadcast(%b) : f32[s0, 7]
  %y = add(%5, %6) : f32[s0, 7]
  return %y
})";

TEST(ReducePolicy, Reasons) {
  // Two reductions over different axes meet in one consumer.
  FusedGraph two = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[4, 8]
  %r = reduce_sum(%x) {dims = [1], keepdim = 1} : f32[4, 1]
  %c = reduce_sum(%x) {dims = [0], keepdim = 1} : f32[1, 8]
  %0 = broadcast(%r) : f32[4, 8]
  %1 = broadcast(%c) : f32[4, 8]
  %y = add(%0, %1) : f32[4, 8]
  return %y
})")));
  EXPECT_EQ(two.num_kernels(), 2);
  ASSERT_FALSE(two.rejected.empty());
  for (const RejectedFusion& r : two.rejected)
    EXPECT_EQ(r.reason, "reductions over different axes {z1} vs {z0}") << print(two);
  check_program(two);

  // The epilogue limit.
  FusionOptions small;
  small.max_reduce_epilogue = 3;
  FusedGraph ln = fuse(lower(parse(kLayerNorm)), small);
  EXPECT_GT(ln.num_kernels(), 1);
  bool found = false;
  for (const RejectedFusion& r : ln.rejected)
    found =
        found || r.reason.find("compute nodes after a reduce, more than max_reduce_epilogue 3") !=
                     std::string::npos;
  EXPECT_TRUE(found) << print(ln);
  for (const FusedNode& k : ln.nodes)
    EXPECT_EQ(reduction_check(k, ln.source, small), std::nullopt) << ascir::print(k.kernel);
  check_program(ln);

  // Broadcast recomputation beyond the threshold keeps the old reason.
  const char* two_ops = R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 6]
  %bias = input() {index = 1} : f32[6]
  %eb = exp(%bias) : f32[6]
  %nb = neg(%eb) : f32[6]
  %0 = broadcast(%nb) : f32[s0, 6]
  %1 = add(%x, %0) : f32[s0, 6]
  %s = reduce_sum(%1) {dims = [1], keepdim = 1} : f32[s0, 1]
  return %s
})";
  FusedGraph rec = fuse(lower(parse(two_ops)));
  EXPECT_EQ(rec.num_kernels(), 2);
  ASSERT_EQ(rec.rejected.size(), 1u);
  EXPECT_EQ(rec.rejected[0].reason, "different loop axes [6] vs [s0, 6]");
  check_program(rec);
  FusionOptions generous;
  generous.recomputation_threshold = 2;
  FusedGraph rec2 = fuse(lower(parse(two_ops)), generous);
  EXPECT_EQ(rec2.num_kernels(), 1) << print(rec2);
  check_program(rec2);

  // Without a reduce, a producer constant along the innermost axis merges (computed once per
  // row); one that varies along it would be computed per element and does not.
  FusedGraph rows = fuse(lower(parse(R"(graph @t(s0 = 3) {
  %v = input() {index = 0} : f32[s0, 1]
  %r = exp(%v) : f32[s0, 1]
  %b = broadcast(%r) : f32[s0, 6]
  return %b
})")));
  EXPECT_EQ(rows.num_kernels(), 1) << print(rows);
  check_program(rows);
  FusedGraph cols = fuse(lower(parse(R"(graph @t(s0 = 3) {
  %v = input() {index = 0} : f32[1, 6]
  %r = rsqrt(%v) : f32[1, 6]
  %b = broadcast(%r) : f32[s0, 6]
  return %b
})")));
  EXPECT_EQ(cols.num_kernels(), 2);
  ASSERT_EQ(cols.rejected.size(), 1u);
  EXPECT_EQ(cols.rejected[0].reason, "different loop axes [1, 6] vs [s0, 6]");
}

// ---- whole patterns ----

struct Pattern {
  const char* name;
  std::string text;
};

std::vector<Pattern> patterns() {
  return {
      {"layernorm", kLayerNorm},
      {"rmsnorm", R"(graph @rms(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 6]
  %w = input() {index = 1} : f32[6]
  %eps = const() {value = 1e-06} : f32[]
  %sq = mul(%x, %x) : f32[s0, 6]
  %ms = reduce_mean(%sq) {dims = [1], keepdim = 1} : f32[s0, 1]
  %0 = add(%ms, %eps) : f32[s0, 1]
  %r = rsqrt(%0) : f32[s0, 1]
  %1 = broadcast(%r) : f32[s0, 6]
  %2 = mul(%x, %1) : f32[s0, 6]
  %3 = broadcast(%w) : f32[s0, 6]
  %y = mul(%2, %3) : f32[s0, 6]
  return %y
})"},
      {"softmax", R"(graph @sm(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 9]
  %m = reduce_max(%x) {dims = [1], keepdim = 1} : f32[s0, 1]
  %0 = broadcast(%m) : f32[s0, 9]
  %1 = sub(%x, %0) : f32[s0, 9]
  %e = exp(%1) : f32[s0, 9]
  %z = reduce_sum(%e) {dims = [1], keepdim = 1} : f32[s0, 1]
  %2 = broadcast(%z) : f32[s0, 9]
  %y = div(%e, %2) : f32[s0, 9]
  return %y
})"},
      {"log_softmax", R"(graph @lsm(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 9]
  %m = reduce_max(%x) {dims = [1], keepdim = 1} : f32[s0, 1]
  %0 = broadcast(%m) : f32[s0, 9]
  %s = sub(%x, %0) : f32[s0, 9]
  %e = exp(%s) : f32[s0, 9]
  %z = reduce_sum(%e) {dims = [1], keepdim = 1} : f32[s0, 1]
  %lz = log(%z) : f32[s0, 1]
  %1 = broadcast(%lz) : f32[s0, 9]
  %y = sub(%s, %1) : f32[s0, 9]
  return %y
})"},
      {"residual_rmsnorm", R"(graph @res(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 6]
  %res = input() {index = 1} : f32[s0, 6]
  %w = input() {index = 2} : f32[6]
  %eps = const() {value = 1e-06} : f32[]
  %h = add(%x, %res) : f32[s0, 6]
  %sq = mul(%h, %h) : f32[s0, 6]
  %ms = reduce_mean(%sq) {dims = [1], keepdim = 1} : f32[s0, 1]
  %0 = add(%ms, %eps) : f32[s0, 1]
  %r = rsqrt(%0) : f32[s0, 1]
  %1 = broadcast(%r) : f32[s0, 6]
  %2 = mul(%h, %1) : f32[s0, 6]
  %3 = broadcast(%w) : f32[s0, 6]
  %y = mul(%2, %3) : f32[s0, 6]
  return %h, %y
})"},
      {"sum_scale", R"(graph @ss(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 7]
  %c = const() {value = 0.25} : f32[]
  %s = reduce_sum(%x) {dims = [1], keepdim = 0} : f32[s0]
  %y = mul(%s, %c) : f32[s0]
  return %y
})"},
      {"dim0", R"(graph @d0(s0 = 5) {
  %x = input() {index = 0} : f32[s0, 4]
  %c = const() {value = 0.25} : f32[]
  %e = exp(%x) : f32[s0, 4]
  %s = reduce_sum(%e) {dims = [0], keepdim = 1} : f32[1, 4]
  %0 = broadcast(%s) : f32[s0, 4]
  %y = div(%e, %0) : f32[s0, 4]
  %t = reduce_max(%x) {dims = [0], keepdim = 0} : f32[4]
  %u = mul(%t, %c) : f32[4]
  return %y, %u
})"},
      {"middle_dim", R"(graph @mid(s0 = 2) {
  %x = input() {index = 0} : f32[s0, 5, 3]
  %m = reduce_mean(%x) {dims = [1], keepdim = 1} : f32[s0, 1, 3]
  %0 = broadcast(%m) : f32[s0, 5, 3]
  %xc = sub(%x, %0) : f32[s0, 5, 3]
  %sq = mul(%xc, %xc) : f32[s0, 5, 3]
  %v = reduce_sum(%sq) {dims = [1], keepdim = 0} : f32[s0, 3]
  %r = sqrt(%v) : f32[s0, 3]
  return %xc, %r
})"},
  };
}

TEST(ReduceFuse, NormalizationPatternsAreOneKernel) {
  for (const Pattern& p : patterns()) {
    SCOPED_TRACE(p.name);
    FusedGraph lowered = lower(parse(p.text));
    check_program(lowered);
    FusedGraph fused = fuse(lowered);
    SCOPED_TRACE(print(fused));
    EXPECT_EQ(fused.num_kernels(), 1);
    EXPECT_EQ(fused.nodes.size(), 1u);
    EXPECT_TRUE(fused.rejected.empty());
    EXPECT_EQ(reduction_check(fused.nodes[0], fused.source, FusionOptions{}), std::nullopt);
    check_program(fused);
  }
}

/// A family of shapes for random graphs: shape 0 is the full iteration space; `reductions`
/// reduce shape 0 into another shape; `broadcasts` lists shapes that broadcast back to shape 0.
struct ShapeFamily {
  std::vector<std::vector<sym::Expr>> shapes;
  struct Reduction {
    std::vector<sym::Expr> dims;
    int64_t keepdim;
    size_t result;  // index into shapes
  };
  std::vector<Reduction> reductions;
  std::vector<size_t> broadcasts;
};

std::vector<ShapeFamily> shape_families() {
  const sym::Expr s0 = sym::Expr::symbol("s0");
  ShapeFamily two{{{s0, 4}, {s0, 1}, {1, 4}, {s0}, {4}},
                  {{{1}, 1, 1}, {{0}, 1, 2}, {{1}, 0, 3}, {{0}, 0, 4}},
                  {1, 2, 4}};
  ShapeFamily three{{{s0, 3, 4}, {s0, 1, 4}, {1, 3, 1}, {s0, 4}, {3, 4}, {4}},
                    {{{1}, 1, 1}, {{0, 2}, 1, 2}, {{1}, 0, 3}, {{0}, 0, 4}, {{0, 1}, 0, 5}},
                    {1, 2, 4, 5}};
  return {two, three};
}

/// A random DAG over `fam`: inputs of shapes 0 and the last one, then elementwise ops on any
/// shape, reductions of shape-0 values and broadcasts back.
graph::Graph random_reduce_graph(const ShapeFamily& fam, unsigned seed) {
  const char* unary[] = {"exp", "neg", "tanh", "abs"};
  const char* binary[] = {"add", "sub", "mul", "maximum"};
  const char* reduce[] = {"reduce_sum", "reduce_max", "reduce_mean", "reduce_min"};
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % static_cast<unsigned>(n)); };
  graph::Graph g;
  g.name = "r" + std::to_string(seed);
  g.symbols = {{"s0", 2}};
  std::vector<std::vector<int>> pool(fam.shapes.size());
  auto add = [&](std::string kind, std::vector<int> ops, size_t shape, AttrMap attrs = {}) {
    graph::Node n;
    n.name =
        kind == "input" ? "in" + std::to_string(g.nodes.size()) : std::to_string(g.nodes.size());
    n.kind = std::move(kind);
    n.operands = std::move(ops);
    n.type = graph::TensorType::contiguous(DType::F32, fam.shapes[shape]);
    n.attrs = std::move(attrs);
    int i = g.add(std::move(n));
    pool[shape].push_back(i);
  };
  add("input", {}, 0, {{"index", int64_t{0}}});
  add("input", {}, fam.shapes.size() - 1, {{"index", int64_t{1}}});
  auto any = [&](size_t shape) { return pool[shape][pick(pool[shape].size())]; };
  for (int step = 0; step < 16; ++step) {
    size_t shape = pick(fam.shapes.size());
    if (pool[shape].empty()) shape = 0;
    switch (pick(6)) {
      case 0: add(unary[pick(4)], {any(shape)}, shape); break;
      case 1: add(binary[pick(4)], {any(shape), any(shape)}, shape); break;
      case 2:
      case 3: {
        const auto& r = fam.reductions[pick(fam.reductions.size())];
        add(reduce[pick(4)], {any(0)}, r.result, {{"dims", r.dims}, {"keepdim", r.keepdim}});
        break;
      }
      default: {
        size_t from = fam.broadcasts[pick(fam.broadcasts.size())];
        if (pool[from].empty()) from = fam.shapes.size() - 1;
        add("broadcast", {any(from)}, 0);
      }
    }
  }
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if ((g.users()[i].empty() || pick(6) == 0) && g.nodes[i].kind != "input")
      g.outputs.push_back(i);
  return g;
}

/// Random DAGs with reductions over every dim set of a family, keepdim 0 and 1, broadcasts back
/// and elementwise ops on every shape: the fused program must match eager (the interpreter also
/// rejects a node that claims to be constant along an axis its input varies along, and a store
/// that writes different values to one element), every kernel must verify, and every kernel
/// with a reduce must pass reduction_check.
TEST(ReduceFuse, RandomGraphsMatchEager) {
  int lowered_kernels = 0, fused_kernels = 0;
  for (const ShapeFamily& fam : shape_families()) {
    for (unsigned seed = 0; seed < 30; ++seed) {
      graph::Graph g = random_reduce_graph(fam, seed);
      SCOPED_TRACE(graph::print(g));
      graph::verify(g);
      FusedGraph lowered = lower(g);
      FusedGraph fused = fuse(lowered);
      SCOPED_TRACE(print(fused));
      lowered_kernels += lowered.num_kernels();
      fused_kernels += fused.num_kernels();
      for (const FusedNode& k : fused.nodes) {
        if (has_reduce(k.kernel)) {
          EXPECT_EQ(reduction_check(k, fused.source, FusionOptions{}), std::nullopt);
        }
      }
      check_program(fused, seed);
      FusionOptions tight;
      tight.max_nodes = 4;
      tight.max_reduce_epilogue = 2;
      tight.recomputation_threshold = 3;
      check_program(fuse(lowered, tight), seed);
    }
  }
  std::printf("random reduce graphs: %d kernels lowered, %d fused\n", lowered_kernels,
              fused_kernels);
  EXPECT_LT(fused_kernels * 2, lowered_kernels);
}

}  // namespace
}  // namespace af::fusion
