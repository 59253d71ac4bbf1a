// Unit tests of concat fusion (fusion/concat_fuse.h): the lowered concat kernel (one segment per
// operand), producers merging into their segment, whole-space kernels sliced into every segment
// (their loads and stores offset by the segment's start), the rotary-embedding pattern, and the
// fusions the policy declines with their reasons. Numeric checks run the fused program with the
// interpreter of fusion_interp.h (each segment writes its slice) against eager, on hand-written
// and random concat programs; ConcatCompiled also schedules, emits, compiles (g++) and runs the
// kernels, block by block, against eager.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "asc_test_util.h"
#include "ascir/printer.h"
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

graph::Graph parse(const std::string& text) {
  graph::Graph g = graph::parse_graph(text);
  graph::verify(g);
  return g;
}

FusedGraph fused(const std::string& text, const FusionOptions& opts = {}) {
  return fuse(lower(parse(text), opts), opts);
}

std::vector<std::string> names(const graph::Graph& g, const std::vector<int>& nodes) {
  std::vector<std::string> out;
  for (int n : nodes) out.push_back(g.nodes[n].name);
  return out;
}

std::vector<std::string> strs(const std::vector<sym::Expr>& es) {
  std::vector<std::string> out;
  for (const sym::Expr& e : es) out.push_back(e.str());
  return out;
}

const AscNode& node(const AscGraph& k, const std::string& name) {
  for (const AscNode& n : k.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node %" + name + " in\n" + ascir::print(k));
}

/// "repeats [..] strides [..] offset E" of a node's tensor.
std::string layout(const AscGraph& k, const std::string& name) {
  const AscNode& n = node(k, name);
  return "repeats " + sym::str(n.out.repeats) + " strides " + sym::str(n.out.strides) + " offset " +
         n.out.offset.str();
}

/// The kernel steps of `fg`.
std::vector<const FusedNode*> kernels(const FusedGraph& fg) {
  std::vector<const FusedNode*> out;
  for (const FusedNode& n : fg.nodes)
    if (n.kind == FusedNode::Kind::Kernel) out.push_back(&n);
  return out;
}

/// The one kernel step of `fg`, which must be a concat kernel.
const FusedNode& one_concat_kernel(const FusedGraph& fg) {
  auto ks = kernels(fg);
  if (ks.size() != 1 || !ks[0]->is_concat())
    throw std::runtime_error("expected one concat kernel in\n" + print(fg));
  return *ks[0];
}

// Two elementwise branches, a concat along the last dim, a consumer.
const char* kBranches = R"(graph @g() {
  %a = input() {index = 0} : f32[8, 24]
  %b = input() {index = 1} : f32[8, 40]
  %c = const() {value = 2.0} : f32[]
  %sa = sigmoid(%a) : f32[8, 24]
  %ma = mul(%sa, %c) : f32[8, 24]
  %rb = relu(%b) : f32[8, 40]
  %cat = concat(%ma, %rb) {dim = 1} : f32[8, 64]
  %t = tanh(%cat) : f32[8, 64]
  return %t
})";

// A concat along dim 1 of 3-D values; the consumer reads %w laid out with dim 1 innermost.
const char* kMiddleTransposed = R"(graph @g() {
  %a = input() {index = 0} : f32[4, 3, 16]
  %b = input() {index = 1} : f32[4, 5, 16]
  %w = input() {index = 2} : f32[4, 8, 16] strides [128, 1, 8]
  %ea = exp(%a) : f32[4, 3, 16]
  %nb = neg(%b) : f32[4, 5, 16]
  %cat = concat(%ea, %nb) {dim = 1} : f32[4, 8, 16]
  %y = add(%cat, %w) : f32[4, 8, 16]
  return %y
})";

// Three branches of odd widths and a symbolic row count.
const char* kThreeSegments = R"(graph @g(s0 = 3) {
  %a = input() {index = 0} : f32[s0, 7]
  %b = input() {index = 1} : f32[s0, 13]
  %c = input() {index = 2} : f32[s0, 9]
  %two = const() {value = 2.0} : f32[]
  %half = const() {value = 0.5} : f32[]
  %sa = sigmoid(%a) : f32[s0, 7]
  %mb = mul(%b, %two) : f32[s0, 13]
  %ec = exp(%c) : f32[s0, 9]
  %cat = concat(%sa, %mb, %ec) {dim = 1} : f32[s0, 29]
  %y = mul(%cat, %half) : f32[s0, 29]
  return %y
})";

// %w = exp(%v) spans the concat's space; %r is constant along the concat dim.
const char* kWholeSpaceProducer = R"(graph @g() {
  %a = input() {index = 0} : f32[8, 24]
  %b = input() {index = 1} : f32[8, 40]
  %v = input() {index = 2} : f32[8, 64]
  %r = input() {index = 3} : f32[8, 1]
  %w = exp(%v) : f32[8, 64]
  %ea = neg(%a) : f32[8, 24]
  %cat = concat(%ea, %b) {dim = 1} : f32[8, 64]
  %y = add(%cat, %w) : f32[8, 64]
  %rb = broadcast(%r) : f32[8, 64]
  %z = mul(%y, %rb) : f32[8, 64]
  return %z
})";

// x * cos + cat(-x[..., h:], x[..., :h]) * sin, the slices views of x, cos/sin broadcast.
const char* kRotary = R"(graph @rotary(s0 = 16) {
  %x = input() {index = 0} : f32[2, 4, s0, 64]
  %cos = input() {index = 1} : f32[s0, 64]
  %sin = input() {index = 2} : f32[s0, 64]
  %hi = slice(%x) {dim = 3, end = 64, start = 32, step = 1} : f32[2, 4, s0, 32] strides [256*s0, 64*s0, 64, 1] offset 32
  %lo = slice(%x) {dim = 3, end = 32, start = 0, step = 1} : f32[2, 4, s0, 32] strides [256*s0, 64*s0, 64, 1]
  %nh = neg(%hi) : f32[2, 4, s0, 32]
  %rot = concat(%nh, %lo) {dim = 3} : f32[2, 4, s0, 64]
  %cb = broadcast(%cos) : f32[2, 4, s0, 64]
  %m1 = mul(%x, %cb) : f32[2, 4, s0, 64]
  %sb = broadcast(%sin) : f32[2, 4, s0, 64]
  %m2 = mul(%rot, %sb) : f32[2, 4, s0, 64]
  %y = add(%m1, %m2) : f32[2, 4, s0, 64]
  return %y
})";

// A reduce producing operand 0: its segment iterates over the reduce's space.
const char* kReduceProducer = R"(graph @g() {
  %x = input() {index = 0} : f32[8, 24, 5]
  %b = input() {index = 1} : f32[8, 40]
  %s = reduce_sum(%x) {dims = [2], keepdim = 0} : f32[8, 24]
  %cat = concat(%s, %b) {dim = 1} : f32[8, 64]
  return %cat
})";

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
  EXPECT_EQ(d.reason, "both %cat and %cat2 are concat kernels");
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
  EXPECT_TRUE(can_fuse(fg, 0, 1, opts).ok);
  FusedGraph out = fuse(fg, opts);
  EXPECT_EQ(out.num_kernels(), 2);
  check_program(out);
}

// ---- random concat programs ----

/// Builds the text of a random graph around concats: branches of elementwise ops (with second
/// inputs, broadcasts, a reduce producer) into each operand, consumers over the concat's space
/// (whole-space producers, values constant along the concat dim, transposed inputs, diamonds),
/// sometimes a reduce, a second concat or an intermediate graph output.
class RandomConcatGraph {
 public:
  RandomConcatGraph(unsigned seed, int64_t hint) : rng_(seed), hint_(hint) {}

  std::string build() {
    const size_t rank = 1 + pick(3);
    const size_t dim = pick(rank);
    std::vector<sym::Expr> base;
    for (size_t d = 0; d < rank; ++d) base.push_back(pick(4) == 0 ? s0_ : sym::Expr(1 + pick(4)));
    const size_t n = 1 + pick(3);
    std::vector<std::string> operands;
    sym::Expr total = 0;
    for (size_t i = 0; i < n; ++i) {
      std::vector<sym::Expr> shape = base;
      shape[dim] = pick(4) == 0 ? s0_ : sym::Expr(1 + pick(4));
      if (i > 0 && pick(5) == 0 && types_[operands[0]] == shape) {
        operands.push_back(operands[0]);  // the same value twice
      } else {
        operands.push_back(branch(shape));
      }
      total = total + types_[operands.back()][dim];
    }
    std::vector<sym::Expr> space = base;
    space[dim] = total;
    std::string cat = add("concat", join(operands), space, "{dim = " + std::to_string(dim) + "}");
    if (pick(4) == 0) outputs_.push_back(cat);
    std::string y = cat;
    for (size_t c = 0, m = pick(4); c < m; ++c) {
      y = consume(y, space, dim);
      if (pick(8) == 0) outputs_.push_back(y);
    }
    for (const std::string& o : operands)  // an operand also read whole by a consumer
      if (types_[o][dim] == sym::Expr(1) && pick(3) == 0)
        y = add("add", y + ", " + add("broadcast", o, space), space);
    if (pick(5) == 0) {  // a second concat along the same dim
      std::vector<sym::Expr> shape = space;
      shape[dim] = 2;
      std::vector<sym::Expr> out = space;
      out[dim] = space[dim] + 2;
      y = add("concat", y + ", " + input(shape), out, "{dim = " + std::to_string(dim) + "}");
      space = out;
      if (pick(2) == 0) y = add(unary(), y, space);
    }
    if (pick(5) == 0) {  // a reduce over one dim
      size_t r = pick(rank);
      std::vector<sym::Expr> out = space;
      out[r] = 1;
      y = add("reduce_sum", y, out, "{dims = [" + std::to_string(r) + "], keepdim = 1}");
    }
    outputs_.push_back(y);
    std::string text = "graph @r(s0 = " + std::to_string(hint_) + ") {\n" + body_ + "  return " +
                       join(outputs_) + "\n}\n";
    return text;
  }

 private:
  size_t pick(size_t n) { return rng_() % n; }

  static std::string join(const std::vector<std::string>& xs) {
    std::string s;
    for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  /// A unary op that keeps values small (chains of exp would overflow to inf).
  std::string unary() {
    const char* ops[] = {"neg", "tanh", "relu", "abs", "sigmoid"};
    return ops[pick(5)];
  }

  std::string add(const std::string& kind, const std::string& args,
                  const std::vector<sym::Expr>& shape, const std::string& attrs = "",
                  const std::string& layout = "") {
    std::string name = "%v" + std::to_string(next_++);
    body_ += "  " + name + " = " + kind + "(" + args + ")" + (attrs.empty() ? "" : " " + attrs) +
             " : f32" + sym::str(shape) + layout + "\n";
    types_[name] = shape;
    return name;
  }

  /// A fresh input of `shape`, sometimes laid out with its dims reversed.
  std::string input(const std::vector<sym::Expr>& shape) {
    std::string layout;
    if (shape.size() > 1 && pick(4) == 0) {
      std::vector<sym::Expr> strides(shape.size());
      sym::Expr s = 1;
      for (size_t d = 0; d < shape.size(); ++d) {
        strides[d] = s;
        s = s * shape[d];
      }
      layout = " strides " + sym::str(strides);
    }
    return add("input", "", shape, "{index = " + std::to_string(inputs_++) + "}", layout);
  }

  /// `shape` with a random dim (or `keep`'s complement) set to 1, broadcast back to `shape`.
  std::string broadcast_of(const std::vector<sym::Expr>& shape, int one_dim) {
    std::vector<sym::Expr> small = shape;
    small[static_cast<size_t>(one_dim >= 0 ? one_dim : static_cast<int>(pick(shape.size())))] = 1;
    return add("broadcast", input(small), shape);
  }

  /// A slice [1, 1 + shape[d]) along a random dim d of constant size of a fresh bigger input (a
  /// view), or a fresh input when every dim is symbolic.
  std::string slice_of(const std::vector<sym::Expr>& shape) {
    size_t d = pick(shape.size());
    if (!shape[d].is_const()) return input(shape);
    std::vector<sym::Expr> big = shape;
    big[d] = shape[d] + 2;
    std::string x = add("input", "", big, "{index = " + std::to_string(inputs_++) + "}");
    std::vector<sym::Expr> strides = graph::contiguous_strides(big);
    std::string layout = " strides " + sym::str(strides) + " offset " + strides[d].str();
    return add("slice", x, shape,
               "{dim = " + std::to_string(d) + ", end = " + (shape[d] + 1).str() +
                   ", start = 1, step = 1}",
               layout);
  }

  /// A value of `shape` computed by a short chain of ops.
  std::string branch(const std::vector<sym::Expr>& shape) {
    std::string x = pick(4) == 0 ? slice_of(shape) : input(shape);
    for (size_t i = 0, m = pick(4); i < m; ++i) {
      switch (pick(5)) {
        case 0: x = add(unary(), x, shape); break;
        case 1: x = add("add", x + ", " + input(shape), shape); break;
        case 2: x = add("mul", x + ", " + constant(), shape); break;
        case 3: x = add("mul", x + ", " + broadcast_of(shape, -1), shape); break;
        default: {  // a reduce producer over one more trailing dim
          std::vector<sym::Expr> big = shape;
          big.push_back(3);
          std::string r = add("reduce_sum", input(big), shape,
                              "{dims = [" + std::to_string(shape.size()) + "], keepdim = 0}");
          x = add("sub", x + ", " + r, shape);
        }
      }
      if (pick(6) == 0) outputs_.push_back(x);
    }
    return x;
  }

  /// One consumer of `y` over the concat's `space`.
  std::string consume(const std::string& y, const std::vector<sym::Expr>& space, size_t dim) {
    switch (pick(5)) {
      case 0: return add(unary(), y, space);
      case 1: {  // a fresh input, or one an earlier consumer read (siblings)
        if (shared_.empty() || pick(2) == 0) shared_.push_back(input(space));
        return add("sub", y + ", " + shared_[pick(shared_.size())], space);
      }
      case 2: return add("mul", add("exp", input(space), space) + ", " + y, space);
      case 3: return add("add", y + ", " + broadcast_of(space, static_cast<int>(dim)), space);
      default: return add("maximum", y + ", " + add(unary(), y, space), space);
    }
  }

  std::string constant() {
    if (const_.empty()) {
      const_ = "%half";
      body_ = "  %half = const() {value = 0.5} : f32[]\n" + body_;
    }
    return const_;
  }

  std::mt19937 rng_;
  sym::Expr s0_ = sym::Expr::symbol("s0");
  std::string body_, const_;
  int64_t hint_;
  std::vector<std::string> outputs_, shared_;
  std::map<std::string, std::vector<sym::Expr>> types_;
  int next_ = 0, inputs_ = 0;
};

TEST(ConcatFuse, RandomProgramsMatchEager) {
  int concat_kernels = 0, merged = 0;
  for (unsigned seed = 0; seed < 300; ++seed) {
    std::string text = RandomConcatGraph(seed, 1 + seed % 3).build();
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    graph::Graph g = parse(text);
    FusedGraph lowered = lower(g);
    check_program(lowered, seed);
    FusedGraph out = fuse(lowered);
    SCOPED_TRACE(print(out));
    check_program(out, seed);
    for (const FusedNode* k : kernels(out)) {
      concat_kernels += k->is_concat() ? 1 : 0;
      merged += k->is_concat() && k->ops.size() > 1 ? 1 : 0;
    }
    FusionOptions tight;
    tight.max_nodes = 3;
    tight.max_inputs = 3;
    check_program(fuse(lowered, tight), seed);
    FusionOptions off;
    off.concat = false;
    check_program(fuse(lower(g, off), off), seed);
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("random concat programs: %d concat kernels, %d with fused ops\n", concat_kernels,
              merged);
  EXPECT_GT(merged * 2, concat_kernels);  // most concat kernels take in other ops
}

// ---- compiled: the emitted C++ of concat kernels against eager ----

/// Every kernel step of `programs` scheduled and emitted into one source (kernels renamed
/// p<i>_kN), compiled, and run block by block (every block of every segment, with `cores`
/// cores) on the eager reference's values of its inputs; each output must match eager and
/// nothing may be written past its end.
void check_compiled(std::vector<FusedGraph> programs, int64_t cores) {
  constexpr float kCanary = -12345.0f;  // fills each output and kPad elements after it
  constexpr size_t kPad = 64;
  const schedule::Target t = asc_test::test_target();
  std::vector<codegen::KernelUnit> units;
  std::vector<std::pair<size_t, const FusedNode*>> steps;  // (program, kernel step) per unit
  for (size_t p = 0; p < programs.size(); ++p) {
    FusedGraph& fg = programs[p];
    for (FusedNode& n : fg.nodes) {
      if (n.kind != FusedNode::Kind::Kernel) continue;
      n.name = "p" + std::to_string(p) + "_" + n.name;
      n.kernel.name = n.name;
      for (size_t s = 0; s < n.segments.size(); ++s)
        n.segments[s].name = n.segments[s].kernel.name = n.name + ".s" + std::to_string(s);
    }
    schedule_kernels(fg, t);
  }
  for (size_t p = 0; p < programs.size(); ++p) {
    for (codegen::KernelUnit& u : kernel_units(programs[p])) units.push_back(std::move(u));
    for (const FusedNode* k : kernels(programs[p])) steps.emplace_back(p, k);
  }
  asc_test::KernelLib lib(codegen::emit_cpu_source(units, t), t);
  ASSERT_EQ(lib.source().kernels.size(), steps.size());
  for (size_t u = 0; u < steps.size(); ++u) {
    const FusedGraph& fg = programs[steps[u].first];
    const FusedNode& step = *steps[u].second;
    const codegen::EmittedKernel& ek = lib.source().kernels[u];
    SCOPED_TRACE(ek.name + " of\n" + print(fg));
    const sym::Bindings b = fg.source.hints();
    auto want = testing::run_reference(fg.source, 7);
    // Each argument: float storage laid out like the value (outputs filled with a canary).
    std::vector<std::vector<float>> store;
    std::vector<void*> args;
    for (int v : step.inputs) {
      const testing::Buffer& x = want[v];
      store.emplace_back(x.storage->begin(), x.storage->end());
      args.push_back(store.back().data() + x.offset);
    }
    for (int v : step.outputs) {
      testing::Buffer o = testing::alloc(fg.source.nodes[v].type, b);
      store.emplace_back(o.storage->size() + kPad, kCanary);
    }
    for (size_t i = step.inputs.size(); i < store.size(); ++i) args.push_back(store[i].data());
    std::vector<int64_t> symbols;
    for (const std::string& name : ek.symbols) symbols.push_back(b.at(name));
    auto tiling = reinterpret_cast<af_tiling_fn>(lib.symbol(ek.name + "_tiling"));
    auto kernel = reinterpret_cast<af_kernel_fn>(lib.symbol(ek.name + "_kernel"));
    ASSERT_TRUE(tiling && kernel) << ek.name;
    alignas(64) unsigned char td[AF_MAX_TILING_DATA_BYTES];
    af_target target{cores, 256 * 1024, 32, 32};
    tiling(symbols.data(), &target, td);
    af_tiling_header h;
    std::memcpy(&h, td, sizeof h);
    EXPECT_GE(h.block_dim, static_cast<int64_t>(std::max<size_t>(step.segments.size(), 1)));
    for (int64_t blk = h.block_dim; blk-- > 0;) kernel(args.data(), td, blk);
    for (size_t j = 0; j < step.outputs.size(); ++j) {
      const testing::Buffer& w = want[step.outputs[j]];
      const std::vector<float>& got = store[step.inputs.size() + j];
      for (size_t i = got.size() - kPad; i < got.size(); ++i)
        ASSERT_EQ(got[i], kCanary)
            << "write past the end of %" << fg.source.nodes[step.outputs[j]].name;
      for (int64_t f = 0; f < w.numel(); ++f) {
        auto idx = testing::unflatten(f, w.shape);
        int64_t a = w.offset;
        for (size_t d = 0; d < idx.size(); ++d) a += idx[d] * w.strides[d];
        ASSERT_TRUE(asc_test::close(got.at(a), w.at(idx), 1e-5, 1e-5))
            << "%" << fg.source.nodes[step.outputs[j]].name << " element " << f << ": got "
            << got.at(a) << ", want " << w.at(idx);
      }
    }
  }
}

TEST(ConcatCompiled, FusedKernelsMatchEager) {
  std::vector<FusedGraph> programs;
  for (const char* text : {kBranches, kRotary, kMiddleTransposed, kThreeSegments, kReduceProducer,
                           kWholeSpaceProducer})
    programs.push_back(fused(text));
  // Odd segment widths (no vector boundary at a segment start) and segments of several blocks.
  programs.push_back(fused(R"(graph @big(s0 = 64) {
  %a = input() {index = 0} : f32[s0, 7]
  %b = input() {index = 1} : f32[s0, 1213]
  %c = input() {index = 2} : f32[s0, 601]
  %ea = exp(%a) : f32[s0, 7]
  %sb = sigmoid(%b) : f32[s0, 1213]
  %cat = concat(%ea, %sb, %c) {dim = 1} : f32[s0, 1821]
  %y = tanh(%cat) : f32[s0, 1821]
  return %y
})"));
  // An operand empty along the concat dim: its segment has no element to write.
  programs.push_back(fused(R"(graph @empty() {
  %a = input() {index = 0} : f32[4, 3]
  %z = input() {index = 1} : f32[4, 0]
  %ea = exp(%a) : f32[4, 3]
  %cat = concat(%z, %ea, %z) {dim = 1} : f32[4, 3]
  %t = tanh(%cat) : f32[4, 3]
  return %t
})"));
  for (unsigned seed = 0; seed < 24; ++seed)
    programs.push_back(fuse(lower(parse(RandomConcatGraph(seed, 1 + seed % 3).build()))));
  check_compiled(programs, 4);
  check_compiled({fused(kBranches), fused(kRotary)}, 1);
}

}  // namespace
}  // namespace af::fusion
