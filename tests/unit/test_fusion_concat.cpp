// Unit tests of concat fusion (fusion/concat_merge.h): the lowered concat kernel (one segment per
// operand), producers merging into their segment, whole-space kernels sliced into every segment
// (their loads and stores offset by the segment's start), the rotary-embedding pattern, and the
// fusions the policy declines with their reasons. Numeric checks run the fused program with the
// interpreter of fusion_interp.h (each segment writes its slice) against eager. Random concat
// programs and the compiled kernels: test_fusion_concat_random.cpp.
#include <gtest/gtest.h>

#include "asc_test_util.h"
#include "ascir/printer.h"
#include "concat_test_graphs.h"
#include "fusion/can_fuse.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/merge.h"
#include "fusion/printer.h"
#include "fusion/steps.h"
#include "fusion_check.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "pipeline/pipeline.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using testing::check_program;
using namespace concat_test;  // NOLINT(build/namespaces): the shared graphs and helpers

// ---- lowering ----

TEST(ConcatLower, OneSegmentPerOperandCopiesItsSlice) {
  FusedGraph fg = lower(parse(R"(graph @g(s0 = 3) {
  %a = input() {index = 0} : f32[4, s0, 5]
  %b = input() {index = 1} : f32[4, 2, 5]
  %c = input() {index = 2} : f32[4, 1, 5]
  %cat = concat(%a, %b, %c) {dim = 1} : f32[4, s0 + 3, 5]
  return %cat
})"));
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(k.name, "k0");
  EXPECT_EQ(k.concat_dim, 1);
  EXPECT_EQ(sym::str(k.concat_shape), "[4, s0 + 3, 5]");
  EXPECT_EQ(strs(k.segment_starts), (std::vector<std::string>{"0", "s0", "s0 + 2"}));
  EXPECT_EQ(names(fg.source, k.inputs), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(names(fg.source, k.outputs), std::vector<std::string>{"cat"});
  EXPECT_EQ(names(fg.source, k.ops), std::vector<std::string>{"cat"});
  ASSERT_EQ(k.segments.size(), 3u);
  const char* want[] = {
      "repeats [4, s0, 5] strides [5*s0 + 15, 5, 1] offset 0",
      "repeats [4, 2, 5] strides [5*s0 + 15, 5, 1] offset 5*s0",
      "repeats [4, 1, 5] strides [5*s0 + 15, 5, 1] offset 5*s0 + 10",
  };
  for (size_t s = 0; s < 3; ++s) {
    const FusedNode& seg = k.segments[s];
    SCOPED_TRACE(ascir::print(seg.kernel));
    EXPECT_EQ(seg.name, "k0.s" + std::to_string(s));
    EXPECT_EQ(seg.kernel.name, seg.name);
    EXPECT_EQ(names(fg.source, seg.inputs), std::vector<std::string>{std::string(1, "abc"[s])});
    EXPECT_EQ(names(fg.source, seg.outputs), std::vector<std::string>{"cat"});
    // A copy: data, load, store, output; the store writes the segment's slice of %cat.
    ASSERT_EQ(seg.kernel.nodes.size(), 4u);
    EXPECT_EQ(layout(seg.kernel, "cat.store"), want[s]);
    EXPECT_EQ(layout(seg.kernel, "cat.out"), want[s]);
  }
  check_program(fg);
}

// ---- fusion into one concat kernel ----

TEST(ConcatFuse, BranchesAndConsumerLastDim) {
  FusedGraph fg = fused(kBranches);
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(names(fg.source, k.ops), (std::vector<std::string>{"sa", "ma", "rb", "cat", "t"}));
  EXPECT_EQ(names(fg.source, k.inputs), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(fg.source, k.outputs), std::vector<std::string>{"t"});
  EXPECT_EQ(strs(k.segment_starts), (std::vector<std::string>{"0", "24"}));
  ASSERT_EQ(k.segments.size(), 2u);
  EXPECT_EQ(layout(k.segments[0].kernel, "t.store"), "repeats [8, 24] strides [64, 1] offset 0");
  EXPECT_EQ(layout(k.segments[1].kernel, "t.store"), "repeats [8, 40] strides [64, 1] offset 24");
  // The consumer's slice computes over the segment's local tile.
  EXPECT_EQ(layout(k.segments[1].kernel, "t"), "repeats [8, 40] strides [40, 1] offset 0");
  EXPECT_TRUE(fg.rejected.empty()) << print(fg);
  check_program(fg);
}

TEST(ConcatFuse, FirstDimWithSymbolicSize) {
  FusedGraph fg = fused(R"(graph @g(s0 = 3) {
  %a = input() {index = 0} : f32[s0, 16]
  %b = input() {index = 1} : f32[5, 16]
  %ea = exp(%a) : f32[s0, 16]
  %nb = neg(%b) : f32[5, 16]
  %cat = concat(%ea, %nb) {dim = 0} : f32[s0 + 5, 16]
  %y = abs(%cat) : f32[s0 + 5, 16]
  return %y
})");
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(strs(k.segment_starts), (std::vector<std::string>{"0", "s0"}));
  EXPECT_EQ(layout(k.segments[0].kernel, "y.store"), "repeats [s0, 16] strides [16, 1] offset 0");
  EXPECT_EQ(layout(k.segments[1].kernel, "y.store"),
            "repeats [5, 16] strides [16, 1] offset 16*s0");
  check_program(fg);
}

TEST(ConcatFuse, MiddleDimOfThreeDWithTransposedInput) {
  // %w is laid out dim 1 innermost: the consumer's slice reads it at offset start * 1.
  FusedGraph fg = fused(kMiddleTransposed);
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(k.concat_dim, 1);
  EXPECT_EQ(strs(k.segment_starts), (std::vector<std::string>{"0", "3"}));
  EXPECT_EQ(layout(k.segments[0].kernel, "w.data"),
            "repeats [4, 3, 16] strides [128, 1, 8] offset 0");
  EXPECT_EQ(layout(k.segments[1].kernel, "w.data"),
            "repeats [4, 5, 16] strides [128, 1, 8] offset 3");
  EXPECT_EQ(layout(k.segments[0].kernel, "y.store"),
            "repeats [4, 3, 16] strides [128, 16, 1] offset 0");
  EXPECT_EQ(layout(k.segments[1].kernel, "y.store"),
            "repeats [4, 5, 16] strides [128, 16, 1] offset 48");
  check_program(fg);
}

TEST(ConcatFuse, ThreeSegmentsWithConsumer) {
  FusedGraph fg = fused(kThreeSegments);
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(strs(k.segment_starts), (std::vector<std::string>{"0", "7", "20"}));
  EXPECT_EQ(layout(k.segments[2].kernel, "y.store"), "repeats [s0, 9] strides [29, 1] offset 20");
  check_program(fg);
}

TEST(ConcatFuse, ProducerChainFeedsOneSegment) {
  // %ea is also a graph output: its producer merges into segment 0 and keeps its store there.
  FusedGraph fg = fused(R"(graph @g() {
  %a = input() {index = 0} : f32[6, 4]
  %b = input() {index = 1} : f32[6, 4]
  %v = input() {index = 2} : f32[6, 12]
  %ea = exp(%a) : f32[6, 4]
  %p = add(%ea, %b) : f32[6, 4]
  %q = tanh(%p) : f32[6, 4]
  %cat = concat(%q, %v) {dim = 1} : f32[6, 16]
  return %cat, %ea
})");
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(names(fg.source, k.outputs), (std::vector<std::string>{"ea", "cat"}));
  EXPECT_EQ(names(fg.source, k.segments[0].inputs), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(fg.source, k.segments[0].outputs), (std::vector<std::string>{"ea", "cat"}));
  EXPECT_EQ(names(fg.source, k.segments[1].inputs), std::vector<std::string>{"v"});
  EXPECT_EQ(names(fg.source, k.segments[1].outputs), std::vector<std::string>{"cat"});
  EXPECT_EQ(layout(k.segments[0].kernel, "ea.store"), "repeats [6, 4] strides [4, 1] offset 0");
  check_program(fg);
}

TEST(ConcatFuse, WholeSpaceProducerIsSlicedIntoEverySegment) {
  // %w = exp(%v) spans the concat's space: each segment computes its own slice of it.
  FusedGraph fg = fused(kWholeSpaceProducer);
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(names(fg.source, k.ops), (std::vector<std::string>{"w", "ea", "cat", "y", "rb", "z"}));
  EXPECT_EQ(layout(k.segments[1].kernel, "v.data"), "repeats [8, 40] strides [64, 1] offset 24");
  // %r is constant along the concat dim: every segment reads it whole.
  EXPECT_EQ(layout(k.segments[1].kernel, "r.data"), "repeats [8, 1] strides [1, 0] offset 0");
  check_program(fg);
}

TEST(ConcatFuse, ConcatAndConsumerBothGraphOutputs) {
  FusedGraph fg = fused(R"(graph @g() {
  %a = input() {index = 0} : f32[5, 3]
  %b = input() {index = 1} : f32[5, 6]
  %ea = exp(%a) : f32[5, 3]
  %cat = concat(%ea, %b) {dim = 1} : f32[5, 9]
  %y = tanh(%cat) : f32[5, 9]
  return %cat, %y
})");
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(names(fg.source, k.outputs), (std::vector<std::string>{"cat", "y"}));
  for (const FusedNode& seg : k.segments)
    EXPECT_EQ(names(fg.source, seg.outputs), (std::vector<std::string>{"cat", "y"}));
  check_program(fg);
}

TEST(ConcatFuse, RotaryEmbeddingIsOneKernel) {
  FusedGraph fg = fused(kRotary);
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(names(fg.source, k.ops),
            (std::vector<std::string>{"nh", "rot", "cb", "m1", "sb", "m2", "y"}));
  EXPECT_EQ(names(fg.source, k.inputs), (std::vector<std::string>{"x", "cos", "sin", "hi", "lo"}));
  EXPECT_EQ(names(fg.source, k.segments[0].inputs),
            (std::vector<std::string>{"x", "cos", "sin", "hi"}));
  EXPECT_EQ(names(fg.source, k.segments[1].inputs),
            (std::vector<std::string>{"x", "cos", "sin", "lo"}));
  const AscGraph& s1 = k.segments[1].kernel;
  EXPECT_EQ(layout(s1, "x.data"),
            "repeats [2, 4, s0, 32] strides [256*s0, 64*s0, 64, 1] offset 32");
  EXPECT_EQ(layout(s1, "cos.data"), "repeats [1, 1, s0, 32] strides [0, 0, 64, 1] offset 32");
  EXPECT_EQ(layout(s1, "y.store"),
            "repeats [2, 4, s0, 32] strides [256*s0, 64*s0, 64, 1] offset 32");
  check_program(fg);
}

TEST(ConcatFuse, ReduceProducerMergesIntoItsSegment) {
  FusedGraph fg = fused(kReduceProducer);
  const FusedNode& k = one_concat_kernel(fg);
  EXPECT_EQ(loop_axes_str(k.segments[0].kernel), "[8, 24, 5]");
  EXPECT_EQ(loop_axes_str(k.segments[1].kernel), "[8, 40]");
  check_program(fg);
}

TEST(ConcatFuse, SliceOffsetsAreStartTimesStride) {
  // Three segments along dim 1; the consumer reads inputs of several layouts: each segment's
  // data node of %v is offset by its start times %v's stride along dim 1 (0 where %v has size 1
  // there, a broadcast read whole by every segment).
  FusedGraph fg = fused(R"(graph @g(s0 = 3) {
  %a = input() {index = 0} : f32[2, s0, 5]
  %b = input() {index = 1} : f32[2, 4, 5]
  %c = input() {index = 2} : f32[2, 1, 5]
  %p = input() {index = 3} : f32[2, s0 + 5, 5] strides [1, 10, 2]
  %q = input() {index = 4} : f32[2, 1, 5]
  %r = input() {index = 5} : f32[s0 + 5, 1]
  %cat = concat(%a, %b, %c) {dim = 1} : f32[2, s0 + 5, 5]
  %0 = add(%cat, %p) : f32[2, s0 + 5, 5]
  %1 = broadcast(%q) : f32[2, s0 + 5, 5]
  %2 = mul(%0, %1) : f32[2, s0 + 5, 5]
  %3 = broadcast(%r) : f32[2, s0 + 5, 5]
  %y = sub(%2, %3) : f32[2, s0 + 5, 5]
  return %y
})");
  const FusedNode& k = one_concat_kernel(fg);
  ASSERT_EQ(k.segments.size(), 3u);
  EXPECT_EQ(strs(k.segment_starts), (std::vector<std::string>{"0", "s0", "s0 + 4"}));
  int checked = 0;
  for (size_t s = 0; s < 3; ++s) {
    const FusedNode& seg = k.segments[s];
    for (int d : seg.kernel.data_nodes()) {
      const AscNode& n = seg.kernel.nodes[d];
      int v = seg.inputs.at(static_cast<size_t>(std::get<int64_t>(n.attrs.at("index"))));
      const std::string& name = fg.source.nodes[v].name;
      if (name == "a" || name == "b" || name == "c") continue;  // the segment's own operand
      const graph::TensorType& t = fg.source.nodes[v].type;
      // %r [s0 + 5, 1] aligns right: its dim 0 is the concat dim 1.
      size_t dim = name == "r" ? 0 : 1;
      sym::Expr want =
          t.shape[dim] == sym::Expr(1) ? sym::Expr(0) : k.segment_starts[s] * t.strides[dim];
      EXPECT_EQ(n.out.offset.str(), want.str()) << "segment " << s << " %" << name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 9);
  EXPECT_EQ(layout(k.segments[2].kernel, "p.data"),
            "repeats [2, 1, 5] strides [1, 10, 2] offset 10*s0 + 40");
  EXPECT_EQ(layout(k.segments[2].kernel, "y.store"),
            "repeats [2, 1, 5] strides [5*s0 + 25, 5, 1] offset 5*s0 + 20");
  check_program(fg);
}

TEST(ConcatFuse, WholeSpaceSiblingIsSliced) {
  // exp(%w) shares %w with the consumer and no value flows between them.
  FusedGraph fg = fused(R"(graph @g(s0 = 4) {
  %a = input() {index = 0} : f32[s0, 3]
  %b = input() {index = 1} : f32[s0, 5]
  %w = input() {index = 2} : f32[s0, 8]
  %cat = concat(%a, %b) {dim = 1} : f32[s0, 8]
  %y = add(%cat, %w) : f32[s0, 8]
  %e = exp(%w) : f32[s0, 8]
  %f = opaque(%e) {target = "test.neg"} : f32[s0, 8]
  return %y, %f
})");
  auto ks = kernels(fg);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(names(fg.source, ks[0]->ops), (std::vector<std::string>{"cat", "y", "e"}));
  EXPECT_EQ(layout(ks[0]->segments[1].kernel, "e.store"),
            "repeats [s0, 5] strides [8, 1] offset 3");
  check_program(fg);
}

/// What running `fg` with the interpreter throws, or "" when it runs.
std::string run_error(const FusedGraph& fg) {
  try {
    testing::run_fused(fg, 1);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ConcatInterp, SegmentsMustWriteDisjointSlicesAndNotReadTheirOutputs) {
  // The interpreter's concat checks can fail: two segments writing one element, and a segment
  // reading a value its kernel writes (segments run as parallel blocks).
  FusedGraph fg = fused(kBranches);
  check_program(fg);
  FusedGraph overlap = fg;
  FusedNode& k = overlap.nodes[0];
  for (AscNode& n : k.segments[1].kernel.nodes)
    if (n.op == "store" || n.op == "output") n.out.offset = 0;
  EXPECT_EQ(run_error(overlap), "interpreter: %t element at 0 is written by segments 0 and 1");
  FusedGraph reads = fg;
  reads.nodes[0].segments[1].inputs[0] = reads.nodes[0].outputs[0];
  EXPECT_EQ(run_error(reads),
            "interpreter: segment @k0.s1 reads %t, which concat kernel @k0 writes");
}

// ---- the policy's answers ----

TEST(ConcatCanFuse, TwoConcatKernelsSayNo) {
  FusedGraph fg = lower(parse(R"(graph @g() {
  %a = input() {index = 0} : f32[8, 24]
  %b = input() {index = 1} : f32[8, 40]
  %c = input() {index = 2} : f32[8, 16]
  %cat = concat(%a, %b) {dim = 1} : f32[8, 64]
  %cat2 = concat(%cat, %c) {dim = 1} : f32[8, 80]
  return %cat2
})"));
  ASSERT_EQ(fg.nodes.size(), 2u);
  FusionDecision d = can_fuse(fg, 0, 1, FusionOptions{});
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, "the kernels of %cat and %cat2 are both concat kernels");
  FusedGraph out = fuse(fg);
  ASSERT_EQ(out.rejected.size(), 1u);
  EXPECT_EQ(out.rejected[0].producer, "%cat");
  EXPECT_EQ(out.rejected[0].consumer, "%cat2");
  EXPECT_EQ(out.rejected[0].reason, d.reason);
  check_program(out);
}

TEST(ConcatCanFuse, ReasonsForKernelsThatCannotJoin) {
  FusedGraph fg = lower(parse(R"(graph @g() {
  %a = input() {index = 0} : f32[8, 24]
  %b = input() {index = 1} : f32[8, 40]
  %z = input() {index = 2} : f32[4, 8, 64]
  %cat = concat(%a, %b) {dim = 1} : f32[8, 64]
  %s = reduce_sum(%cat) {dims = [1], keepdim = 1} : f32[8, 1]
  %bc = broadcast(%cat) : f32[4, 8, 64]
  %y = add(%bc, %z) : f32[4, 8, 64]
  return %s, %y
})"));
  ASSERT_EQ(fg.nodes.size(), 4u);
  FusionOptions opts;
  EXPECT_EQ(can_fuse(fg, 0, 1, opts).reason,
            "concat: it reduces (only elementwise kernels are sliced)");
  EXPECT_EQ(can_fuse(fg, 0, 2, opts).reason,
            "concat: loop axes [4, 8, 64] are not the concat's [8, 64]");
  FusionOptions off = opts;
  off.concat = false;
  EXPECT_EQ(can_fuse(fg, 0, 1, off).reason, "concat pass is disabled");
  FusionOptions narrow = opts;
  narrow.max_inputs = 1;
  EXPECT_EQ(can_fuse(fg, 0, 2, narrow).reason,
            "the merged kernel would read 2 inputs, more than max_inputs 1");
  EXPECT_THROW(merge_kernels(fg, 0, 1), CompileError);
  check_program(fuse(fg));
}

TEST(ConcatCanFuse, NodeLimitCountsEverySegment) {
  // Each segment of the merged kernel holds a slice of tanh: 2 compute nodes, 3 with sigmoid.
  FusedGraph fg = lower(parse(R"(graph @g() {
  %a = input() {index = 0} : f32[8, 24]
  %b = input() {index = 1} : f32[8, 40]
  %cat = concat(%a, %b) {dim = 1} : f32[8, 64]
  %t = tanh(%cat) : f32[8, 64]
  %u = sigmoid(%t) : f32[8, 64]
  return %u
})"));
  FusionOptions opts;
  opts.max_nodes = 1;
  EXPECT_EQ(can_fuse(fg, 0, 1, opts).reason,
            "the merged kernel would have 2 compute nodes, more than max_nodes 1");
  opts.max_nodes = 2;
  FusionDecision d = can_fuse(fg, 0, 1, opts);
  ASSERT_TRUE(d.ok) << d.reason;
  // A yes carries the concat kernel merge_concat builds (each segment merged once).
  ASSERT_TRUE(d.merged.has_value());
  FusedNode again = merge_kernels(fg, 0, 1);
  ASSERT_EQ(d.merged->segments.size(), again.segments.size());
  for (size_t s = 0; s < again.segments.size(); ++s)
    EXPECT_EQ(ascir::print(d.merged->segments[s].kernel), ascir::print(again.segments[s].kernel));
  EXPECT_EQ(d.merged->ops, again.ops);
  FusedGraph out = fuse(fg, opts);
  EXPECT_EQ(out.num_kernels(), 2);
  check_program(out);
}

}  // namespace
}  // namespace af::fusion
