// Unit tests of lowering (Graph IR -> one-op kernels), the fusion policy, the merge mechanics,
// the greedy driver and the FusedGraph printer. Numeric checks run the fused program with the
// interpreter of fusion_interp.h and compare every graph output with an eager reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "ascir/parser.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"
#include "fusion/can_fuse.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/merge.h"
#include "fusion/parser.h"
#include "fusion/printer.h"
#include "fusion/steps.h"
#include "fusion_check.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscGraph;

graph::Graph parse(const char* text) {
  graph::Graph g = graph::parse_graph(text);
  graph::verify(g);
  return g;
}

int count_op(const AscGraph& k, const std::string& op) {
  int n = 0;
  for (const auto& node : k.nodes) n += node.op == op ? 1 : 0;
  return n;
}

std::vector<std::string> names(const graph::Graph& g, const std::vector<int>& nodes) {
  std::vector<std::string> out;
  for (int n : nodes) out.push_back(g.nodes[n].name);
  return out;
}

using testing::check_program;

const char* kSigmoidScaleBias = R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 5]
  %bias = input() {index = 1} : f32[s0, 5]
  %c = const() {value = 2.5} : f32[]
  %0 = sigmoid(%x) : f32[s0, 5]
  %1 = mul(%0, %c) : f32[s0, 5]
  %2 = add(%1, %bias) : f32[s0, 5]
  return %2
})";

TEST(FusionLower, OneKernelPerFusibleOp) {
  FusedGraph fg = lower(parse(kSigmoidScaleBias));
  ASSERT_EQ(fg.nodes.size(), 3u);
  EXPECT_EQ(fg.num_kernels(), 3);
  const FusedNode& k1 = fg.nodes[1];
  EXPECT_EQ(k1.name, "k1");
  EXPECT_EQ(k1.kernel.name, "k1");
  EXPECT_EQ(names(fg.source, k1.inputs), std::vector<std::string>{"0"});
  EXPECT_EQ(names(fg.source, k1.outputs), std::vector<std::string>{"1"});
  ASSERT_EQ(k1.kernel.axes.size(), 2u);
  EXPECT_EQ(k1.kernel.axes[0].name, "z0");
  EXPECT_EQ(k1.kernel.axes[0].size, sym::Expr::symbol("s0"));
  std::vector<std::string> ops;
  for (const auto& n : k1.kernel.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"data", "load", "scalar", "mul", "store", "output"}));
  EXPECT_TRUE(k1.kernel.nodes[2].out.axes.empty());  // the inlined const is a scalar
  check_program(fg);
}

TEST(FusionLower, StridesAndBroadcastTensors) {
  FusedGraph fg = lower(parse(R"(graph @t(s0 = 4) {
  %x = input() {index = 0} : f32[s0, 6] strides [1, s0]
  %g = input() {index = 1} : f32[6]
  %0 = broadcast(%g) : f32[s0, 6]
  %1 = exp(%x) : f32[s0, 6]
  return %0, %1
})"));
  ASSERT_EQ(fg.nodes.size(), 2u);
  const AscGraph& b = fg.nodes[0].kernel;
  const auto& data = b.nodes[b.data_nodes()[0]].out;
  EXPECT_EQ(sym::str(data.repeats), "[1, 6]");
  EXPECT_EQ(sym::str(data.strides), "[0, 1]");
  EXPECT_EQ(sym::str(b.nodes[1].out.strides), "[0, 1]");  // load: local, 0 on the expanded dim
  EXPECT_EQ(b.nodes[2].op, "broadcast");
  EXPECT_EQ(sym::str(b.nodes[2].out.repeats), "[s0, 6]");
  const AscGraph& e = fg.nodes[1].kernel;
  EXPECT_EQ(sym::str(e.nodes[0].out.strides), "[1, s0]");  // data: global strides
  EXPECT_EQ(sym::str(e.nodes[1].out.strides), "[6, 1]");   // load: local contiguous
  EXPECT_EQ(sym::str(e.nodes[3].out.strides), "[6, 1]");   // store: the result's layout
  check_program(fg);
}

TEST(FusionLower, MixedPrecisionComputesInF32) {
  FusedGraph fg = lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f16[8]
  %c = const() {value = 0.5} : f16[]
  %0 = mul(%x, %c) : f16[8]
  %1 = gt(%0, %c) : bool[8]
  %2 = cast(%0) : bf16[8]
  return %1, %2
})"));
  std::vector<std::string> ops;
  for (const auto& n : fg.nodes[0].kernel.nodes)
    ops.push_back(n.op + ":" + std::string(dtype_name(n.out.dtype)));
  // The store rounds the f32 product to f16 (no cast node: a merge hands consumers f32).
  EXPECT_EQ(ops, (std::vector<std::string>{"data:f16", "load:f16", "cast:f32", "scalar:f32",
                                           "mul:f32", "store:f16", "output:f16"}));
  const AscGraph& cmp = fg.nodes[1].kernel;
  EXPECT_EQ(cmp.nodes[4].op, "gt");
  EXPECT_EQ(cmp.nodes[4].out.dtype, DType::Bool);
  EXPECT_EQ(cmp.nodes[5].op, "store");
  EXPECT_EQ(cmp.nodes[5].inputs[0], 4);  // a bool result is stored as is
  ops.clear();
  for (const auto& n : fg.nodes[2].kernel.nodes)
    ops.push_back(n.op + ":" + std::string(dtype_name(n.out.dtype)));
  EXPECT_EQ(ops, (std::vector<std::string>{"data:f16", "load:f16", "cast:f32", "cast:bf16",
                                           "store:bf16", "output:bf16"}));
}

TEST(FusionLower, EmulatedPrecisionCastsRoundBeforeTheStore) {
  FusionOptions emulate;
  emulate.emulate_precision_casts = true;
  FusedGraph fg = lower(parse(R"(graph @t() {
  %x = input() {index = 0} : bf16[8]
  %0 = cube(%x) : bf16[8]
  return %0
})"),
                        emulate);
  std::vector<std::string> ops;
  for (const auto& n : fg.nodes[0].kernel.nodes)
    ops.push_back(n.op + ":" + std::string(dtype_name(n.out.dtype)));
  EXPECT_EQ(ops, (std::vector<std::string>{"data:bf16", "load:bf16", "cast:f32", "cube:f32",
                                           "cast:bf16", "store:bf16", "output:bf16"}));
  EXPECT_EQ(attr_str(fg.nodes[0].kernel.nodes[3].attrs.at("round")), "\"bf16\"");
  // Without emulation bf16 cube is x*x*x in f32, rounded once by the store.
  FusedGraph plain = lower(parse(R"(graph @t() {
  %x = input() {index = 0} : bf16[8]
  %0 = cube(%x) : bf16[8]
  return %0
})"));
  EXPECT_EQ(plain.nodes[0].kernel.nodes[3].attrs.count("round"), 0u);
}

TEST(FusionLower, NonFusibleOpsAreOpaqueWithReason) {
  FusedGraph fg = lower(parse(R"(graph @t(s0 = 2) {
  %x = input() {index = 0} : f32[s0, 3]
  %d = input() {index = 1} : i16[3]
  %0 = permute(%x) {dims = [1, 0]} : f32[3, s0] strides [1, 3]
  %1 = opaque(%x, %0) {target = "aten.mm.default"} : f32[s0, s0]
  %2 = neg(%1) : f32[s0, s0]
  %3 = broadcast(%d) : i16[s0, 3]
  return %2, %3
})"));
  ASSERT_EQ(fg.nodes.size(), 4u);
  EXPECT_EQ(fg.num_kernels(), 2);
  EXPECT_EQ(fg.nodes[0].reason, "view op permute runs as an ATen alias");
  EXPECT_EQ(fg.nodes[1].reason, "opaque ATen op aten.mm.default");
  EXPECT_EQ(fg.nodes[2].kind, FusedNode::Kind::Kernel);
  EXPECT_EQ(fg.nodes[2].name, "k0");
  EXPECT_EQ(fg.nodes[3].kind, FusedNode::Kind::Kernel);  // integers are kernels' values too
  EXPECT_EQ(fg.nodes[1].name, "1");
  EXPECT_EQ(names(fg.source, fg.nodes[1].inputs), (std::vector<std::string>{"x", "0"}));
}

TEST(FusionLower, UnsupportedIntegerMath) {
  // Not a verified graph (the verifier rejects i64 pow); lowering still explains it.
  graph::Graph g = graph::parse_graph(R"(graph @t() {
  %a = input() {index = 0} : i64[4]
  %0 = pow(%a, %a) : i64[4]
  return %0
})");
  FusedGraph fg = lower(g);
  ASSERT_EQ(fg.nodes.size(), 1u);
  EXPECT_EQ(fg.nodes[0].reason, "dtype i64 is not supported by generated kernels (pow)");
}

TEST(FusionLower, CandidateReasonIsWhatTheFrontendAsks) {
  auto reason = [](const char* text) { return candidate_reason(graph::parse_graph(text)); };
  // Fine: the op after an input, a cast and a broadcast of it, and a const.
  EXPECT_EQ(reason(R"(graph @t() {
  %a = input() {index = 0} : f16[3]
  %a_f32 = cast(%a) : f32[3]
  %a_b = broadcast(%a_f32) : f32[2, 3]
  %c = const() {value = 2} : f32[]
  %y = mul(%a_b, %c) : f32[2, 3] strides [1, 2]
  return
})"),
            std::nullopt);
  // A valid op whose dtype kernels lack is emitted (lowering leaves it to ATen).
  EXPECT_EQ(reason(R"(graph @t() {
  %a = input() {index = 0} : bool[3]
  %y = cast(%a) : i64[3]
  return
})"),
            std::nullopt);
  // An op the registry's dtypes rule out: said as the dtype kernels lack.
  EXPECT_EQ(reason(R"(graph @t() {
  %a = input() {index = 0} : i16[3]
  %y = exp(%a) : i16[3]
  return
})"),
            "dtype i16 is not supported by generated kernels (exp)");
  EXPECT_EQ(reason(R"(graph @t() {
  %a = input() {index = 0} : f32[0, 3]
  %y = reduce_sum(%a) {dims = [0], keepdim = 0} : f32[3]
  return
})"),
            "empty reduction: dim 0 of %a has size 0 (reduce_sum)");
  // A rule the op breaks, and a value it reads that breaks one (named).
  EXPECT_EQ(reason(R"(graph @t() {
  %a = input() {index = 0} : f32[2, 3]
  %y = neg(%a) : f32[2, 3] strides [6, 2]
  return
})"),
            "a computed value must be dense (a permutation of a contiguous layout), has type "
            "f32[2, 3] strides [6, 2]");
  EXPECT_EQ(reason(R"(graph @t() {
  %a = input() {index = 0} : f32[2]
  %a_b = broadcast(%a) : f32[2, 3]
  %y = neg(%a_b) : f32[2, 3]
  return
})")
                .value_or("")
                .rfind("node %a_b: ", 0),
            0u);
}

TEST(FusionLower, RankZero) {
  FusedGraph fg = lower(parse(R"(graph @t() {
  %a = input() {index = 0} : f32[]
  %c = const() {value = 3} : f32[]
  %0 = add(%a, %c) : f32[]
  %1 = broadcast(%0) : f32[2, 3]
  return %0, %1
})"));
  ASSERT_EQ(fg.num_kernels(), 2);
  EXPECT_TRUE(fg.nodes[0].kernel.axes.empty());
  const auto& d = fg.nodes[1].kernel.nodes[0].out;
  EXPECT_EQ(sym::str(d.repeats), "[1, 1]");
  EXPECT_EQ(sym::str(d.strides), "[0, 0]");
  check_program(fg);
  check_program(fuse(fg));
}

TEST(FusionFuse, SigmoidScaleBiasIsOneKernel) {
  FusedGraph fg = fuse(lower(parse(kSigmoidScaleBias)));
  ASSERT_EQ(fg.nodes.size(), 1u);
  const FusedNode& k = fg.nodes[0];
  EXPECT_EQ(k.name, "k0");
  EXPECT_EQ(names(fg.source, k.ops), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(names(fg.source, k.inputs), (std::vector<std::string>{"x", "bias"}));
  EXPECT_EQ(names(fg.source, k.outputs), std::vector<std::string>{"2"});
  EXPECT_EQ(count_op(k.kernel, "load"), 2);
  EXPECT_EQ(count_op(k.kernel, "store"), 1);
  EXPECT_TRUE(fg.rejected.empty());
  check_program(fg);
}

TEST(FusionFuse, AffineWithBroadcastIsOneKernel) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t(s0 = 4) {
  %x = input() {index = 0} : f32[s0, 6] strides [1, s0]
  %gamma = input() {index = 1} : f32[6]
  %beta = input() {index = 2} : f32[6]
  %0 = broadcast(%gamma) : f32[s0, 6]
  %1 = mul(%x, %0) : f32[s0, 6]
  %2 = broadcast(%beta) : f32[s0, 6]
  %3 = add(%1, %2) : f32[s0, 6]
  return %3
})")));
  ASSERT_EQ(fg.nodes.size(), 1u);
  EXPECT_EQ(names(fg.source, fg.nodes[0].inputs), (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_EQ(count_op(fg.nodes[0].kernel, "broadcast"), 2);
  check_program(fg);
}

TEST(FusionFuse, ChainThroughOpaqueIsTwoKernels) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = neg(%0) : f32[8]
  %2 = opaque(%1) {target = "test.neg"} : f32[8]
  %3 = mul(%2, %2) : f32[8]
  %4 = relu(%3) : f32[8]
  return %4
})")));
  ASSERT_EQ(fg.nodes.size(), 3u);
  EXPECT_EQ(fg.num_kernels(), 2);
  EXPECT_EQ(names(fg.source, fg.nodes[0].ops), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(fg.nodes[1].kind, FusedNode::Kind::Opaque);
  EXPECT_EQ(names(fg.source, fg.nodes[2].ops), (std::vector<std::string>{"3", "4"}));
  EXPECT_EQ(fg.nodes[2].name, "k1");
  check_program(fg);
}

TEST(FusionFuse, ValueUsedByOpaqueAndInsideIsStoredOnce) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = opaque(%0) {target = "test.neg"} : f32[8]
  %2 = mul(%0, %x) : f32[8]
  return %1, %2
})")));
  ASSERT_EQ(fg.nodes.size(), 2u);
  const FusedNode& k = fg.nodes[0];
  EXPECT_EQ(k.kind, FusedNode::Kind::Kernel);
  EXPECT_EQ(names(fg.source, k.inputs), std::vector<std::string>{"x"});
  EXPECT_EQ(names(fg.source, k.outputs), (std::vector<std::string>{"0", "2"}));
  EXPECT_EQ(count_op(k.kernel, "store"), 2);
  EXPECT_EQ(count_op(k.kernel, "load"), 1);  // %x shared, %0 used in registers
  EXPECT_EQ(fg.nodes[1].kind, FusedNode::Kind::Opaque);
  check_program(fg);
}

TEST(FusionFuse, DiamondThroughOpaqueIsRejectedAsCycle) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = opaque(%0) {target = "test.neg"} : f32[8]
  %2 = add(%0, %1) : f32[8]
  return %2
})")));
  EXPECT_EQ(fg.num_kernels(), 2);
  ASSERT_EQ(fg.rejected.size(), 1u);
  EXPECT_EQ(fg.rejected[0].producer, "%0");
  EXPECT_EQ(fg.rejected[0].consumer, "%2");
  EXPECT_FALSE(fg.rejected[0].sibling);
  EXPECT_EQ(fg.rejected[0].reason, "fusing %0 into %2 would create a cycle through %1");
  check_program(fg);
}

TEST(FusionFuse, RejectionReasonNamesTheRecordedEdge) {
  // The consumer kernel's last op (%4) is not the op reading the edge (%2 reads %0): the reason
  // names the same producer -> consumer pair as the record, which the pictures draw red.
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = opaque(%0) {target = "test.neg"} : f32[8]
  %2 = add(%0, %1) : f32[8]
  %3 = relu(%2) : f32[8]
  %4 = tanh(%3) : f32[8]
  return %4
})")));
  ASSERT_EQ(fg.rejected.size(), 1u);
  const RejectedFusion& r = fg.rejected[0];
  EXPECT_EQ(r.producer + " -> " + r.consumer, "%0 -> %2");
  EXPECT_EQ(r.reason, "fusing %0 into %2 would create a cycle through %1");
  EXPECT_EQ(pair_labels(fg, 0, 2), std::make_pair(std::string("%0"), std::string("%2")));
  EXPECT_EQ(first_edge(fg, 0, 2), fg.source.find("0"));
  EXPECT_EQ(first_edge(fg, 1, 0), -1);
}

TEST(FusionFuse, DifferentShapesAreRejectedWithReason) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t(s0 = 3) {
  %x = input() {index = 0} : f32[s0, 4]
  %y = input() {index = 1} : f32[4]
  %0 = exp(%y) : f32[4]
  %1 = broadcast(%0) : f32[s0, 4]
  %2 = add(%x, %1) : f32[s0, 4]
  return %2
})")));
  ASSERT_EQ(fg.num_kernels(), 2);
  EXPECT_EQ(names(fg.source, fg.nodes[1].ops), (std::vector<std::string>{"1", "2"}));
  ASSERT_EQ(fg.rejected.size(), 1u);
  EXPECT_EQ(fg.rejected[0].producer, "%0");
  EXPECT_EQ(fg.rejected[0].consumer, "%1");
  EXPECT_EQ(fg.rejected[0].reason, "different loop axes [4] vs [s0, 4]");
  check_program(fg);
}

TEST(FusionFuse, GraphOutputUsedInsideKeepsItsStore) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = neg(%0) : f32[8]
  return %1, %0
})")));
  ASSERT_EQ(fg.nodes.size(), 1u);
  EXPECT_EQ(names(fg.source, fg.nodes[0].outputs), (std::vector<std::string>{"0", "1"}));
  check_program(fg);
}

TEST(FusionFuse, SiblingsShareOneLoad) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[2, 8]
  %0 = exp(%x) : f32[2, 8]
  %1 = neg(%x) : f32[2, 8]
  return %0, %1
})")));
  ASSERT_EQ(fg.nodes.size(), 1u);
  EXPECT_EQ(count_op(fg.nodes[0].kernel, "data"), 1);
  EXPECT_EQ(count_op(fg.nodes[0].kernel, "load"), 1);
  EXPECT_EQ(names(fg.source, fg.nodes[0].outputs), (std::vector<std::string>{"0", "1"}));
  check_program(fg);
}

TEST(FusionFuse, SiblingReports) {
  // %w feeds two layers separated by an opaque op: those siblings depend on each other and are
  // not reported; %w's reader of another shape is.
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[2, 8]
  %w = input() {index = 1} : f32[8]
  %0 = broadcast(%w) : f32[2, 8]
  %1 = mul(%x, %0) : f32[2, 8]
  %2 = opaque(%1) {target = "test.neg"} : f32[2, 8]
  %3 = broadcast(%w) : f32[2, 8]
  %4 = add(%2, %3) : f32[2, 8]
  %5 = exp(%w) : f32[8]
  return %4, %5
})")));
  EXPECT_EQ(fg.num_kernels(), 3);
  ASSERT_EQ(fg.rejected.size(), 1u);
  EXPECT_TRUE(fg.rejected[0].sibling);
  EXPECT_EQ(fg.rejected[0].producer, "%4");
  EXPECT_EQ(fg.rejected[0].consumer, "%5");
  EXPECT_EQ(fg.rejected[0].reason, "different loop axes [2, 8] vs [8]");
  EXPECT_NE(print(fg).find("\n  rejected siblings %4, %5: different loop axes [2, 8] vs [8]\n"),
            std::string::npos);
  check_program(fg);
}

TEST(FusionFuse, MixedPrecisionIntermediateStaysF32) {
  const char* text = R"(graph @t() {
  %x = input() {index = 0} : f16[8]
  %0 = exp(%x) : f16[8]
  %1 = cast(%0) : f32[8]
  %2 = cast(%1) : bf16[8]
  %3 = neg(%2) : bf16[8]
  return %3
})";
  auto ops_of = [](const FusedGraph& fg) {
    std::vector<std::string> ops;
    for (const auto& n : fg.nodes.at(0).kernel.nodes)
      ops.push_back(n.op + ":" + std::string(dtype_name(n.out.dtype)));
    return ops;
  };
  // exp's f16 result is never rounded (the cast to f32 reads the f32 value); the explicit cast
  // to bf16 rounds.
  FusedGraph fg = fuse(lower(parse(text)));
  ASSERT_EQ(fg.nodes.size(), 1u);
  EXPECT_EQ(ops_of(fg),
            (std::vector<std::string>{"data:f16", "load:f16", "cast:f32", "exp:f32", "cast:bf16",
                                      "cast:f32", "neg:f32", "store:bf16", "output:bf16"}));
  // Emulated: rounded to f16 after exp, as eager rounds it.
  FusionOptions emulate;
  emulate.emulate_precision_casts = true;
  FusedGraph round = fuse(lower(parse(text), emulate), emulate);
  ASSERT_EQ(round.nodes.size(), 1u);
  EXPECT_EQ(ops_of(round),
            (std::vector<std::string>{"data:f16", "load:f16", "cast:f32", "exp:f32", "cast:f16",
                                      "cast:f32", "cast:bf16", "cast:f32", "neg:f32", "cast:bf16",
                                      "store:bf16", "output:bf16"}));
}

TEST(FusionFuse, LimitsAndDisabled) {
  const char* text = R"(graph @t() {
  %a = input() {index = 0} : f32[8]
  %b = input() {index = 1} : f32[8]
  %c = input() {index = 2} : f32[8]
  %0 = add(%a, %b) : f32[8]
  %1 = exp(%0) : f32[8]
  %2 = mul(%1, %c) : f32[8]
  return %2
})";
  FusionOptions few_inputs;
  few_inputs.max_inputs = 2;
  FusedGraph fg = fuse(lower(parse(text)), few_inputs);
  EXPECT_EQ(fg.num_kernels(), 2);
  ASSERT_EQ(fg.rejected.size(), 1u);
  EXPECT_EQ(fg.rejected[0].reason, "the merged kernel would read 3 inputs, more than max_inputs 2");
  check_program(fg);

  FusionOptions few_nodes;
  few_nodes.max_nodes = 2;
  fg = fuse(lower(parse(text)), few_nodes);
  EXPECT_EQ(fg.num_kernels(), 2);
  ASSERT_EQ(fg.rejected.size(), 1u);
  EXPECT_EQ(fg.rejected[0].reason,
            "the merged kernel would have 3 compute nodes, more than max_nodes 2");
  check_program(fg);

  FusionOptions off;
  off.enabled = false;
  fg = fuse(lower(parse(text)), off);
  EXPECT_EQ(fg.num_kernels(), 3);
  ASSERT_EQ(fg.rejected.size(), 2u);
  EXPECT_EQ(fg.rejected[0].reason, "fusion is disabled");
  check_program(fg);
}

TEST(FusionCanFuse, ReasonsAndOrderContract) {
  FusedGraph fg = lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = opaque(%0) {target = "test.neg"} : f32[8]
  %2 = add(%0, %1) : f32[8]
  return %2
})"));
  FusionOptions opts;
  FusionDecision d = can_fuse(fg, 0, 1, opts);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, "step %1 is not a kernel (opaque ATen op test.neg)");
  d = can_fuse(fg, 0, 2, opts);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, "fusing %0 into %2 would create a cycle through %1");
  EXPECT_THROW(can_fuse(fg, 2, 0, opts), CompileError);
  EXPECT_THROW(merge_kernels(fg, 0, 1), CompileError);
  FusedGraph chain = lower(parse(kSigmoidScaleBias));
  EXPECT_TRUE(can_fuse(chain, 0, 1, opts).ok);
  EXPECT_EQ(can_fuse(chain, 0, 2, opts).reason,
            "fusing %0 into %2 would create a cycle through %1");
}

TEST(FusionMerge, KeepsDenseIndicesAndDropsInternalStores) {
  FusedGraph fg = lower(parse(kSigmoidScaleBias));
  FusedNode m = merge_kernels(fg, 0, 1);  // %0 -> %1; %2 still reads %1
  EXPECT_EQ(names(fg.source, m.ops), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(names(fg.source, m.inputs), std::vector<std::string>{"x"});
  EXPECT_EQ(names(fg.source, m.outputs), std::vector<std::string>{"1"});  // %0 is internal
  ascir::verify(m.kernel);
  FusedNode s = merge_kernels(fg, 0, 2);  // no edge: both keep their stores
  EXPECT_EQ(names(fg.source, s.inputs), (std::vector<std::string>{"x", "bias", "1"}));
  EXPECT_EQ(names(fg.source, s.outputs), (std::vector<std::string>{"0", "2"}));
  ascir::verify(s.kernel);
}

TEST(FusionPrinter, FusedGraphText) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = opaque(%0) {target = "test.neg"} : f32[8]
  %2 = add(%0, %1) : f32[8]
  return %2
})")));
  std::string text = print(fg);
  // the source graph first, then the steps
  EXPECT_EQ(
      text.rfind(graph::print(fg.source) +
                     "fusedgraph @t {\n  kernel @k0(%x) -> (%0) ops [%0] {\n    ascgraph @k0 {\n",
                 0),
      0u)
      << text;
  EXPECT_NE(text.find("\n  opaque %1 = opaque(%0) {target = \"test.neg\"} : f32[8]  // opaque ATen "
                      "op test.neg\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  kernel @k1(%0, %1) -> (%2) ops [%2] {\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  return %2\n  rejected %0 -> %2: fusing %0 into %2 would create a "
                      "cycle through %1\n}\n"),
            std::string::npos)
      << text;
}

TEST(FusionParser, PrintParsePrintIsTheIdentity) {
  // lowered and fused, with an opaque step, a reduction and a rejected pair; and a concat kernel
  for (const char* src : {R"(graph @t(s0 = 4) {
  %x = input() {index = 0} : f32[s0, 8]
  %b = input() {index = 1} : f32[8]
  %0 = exp(%x) : f32[s0, 8]
  %1 = opaque(%0) {target = "test.neg"} : f32[s0, 8]
  %2 = add(%0, %1) : f32[s0, 8]
  %3 = reduce_sum(%2) {dims = [1], keepdim = 0} : f32[s0]
  %bb = broadcast(%b) : f32[s0, 8]
  %4 = mul(%2, %bb) : f32[s0, 8]
  return %3, %4
})",
                          R"(graph @c() {
  %a = input() {index = 0} : f32[4, 8]
  %b = input() {index = 1} : f32[4, 8]
  %e = exp(%a) : f32[4, 8]
  %t = tanh(%b) : f32[4, 8]
  %c = concat(%e, %t) {dim = 1} : f32[4, 16]
  %r = relu(%c) : f32[4, 16]
  return %r
})"}) {
    FusedGraph lowered = lower(parse(src));
    FusedGraph fused = fuse(lowered);
    for (const FusedGraph* fg : {&lowered, &fused}) {
      const std::string text = print(*fg);
      std::vector<FusedGraph> back = parse_fused_graphs(text);
      ASSERT_EQ(back.size(), 1u);
      EXPECT_EQ(print(back[0]), text);
      ASSERT_EQ(back[0].nodes.size(), fg->nodes.size());
      for (size_t i = 0; i < fg->nodes.size(); ++i)
        EXPECT_EQ(back[0].nodes[i].input_axes, fg->nodes[i].input_axes) << fg->nodes[i].name;
    }
  }
}

TEST(FusionParser, ErrorsNameTheLine) {
  const std::string text =
      "graph @t() {\n  %x = input() {index = 0} : f32[8]\n  return %x\n}\n"
      "fusedgraph @t {\n  kernel @k0(%y) -> (%x) ops [%x] {\n  }\n}\n";
  try {
    parse_fused_graphs(text);
    FAIL() << "parsed";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "line 6: '%y' is not a value of @t");
  }
}

/// Random DAGs of f32 elementwise/broadcast ops over two shapes, with opaque ops mixed in:
/// the fused program must match eager, every kernel must verify, the order must stay valid.
TEST(FusionFuse, RandomGraphsMatchEager) {
  const char* unary[] = {"exp", "neg", "tanh", "relu", "abs"};
  const char* binary[] = {"add", "sub", "mul", "maximum"};
  int lowered_kernels = 0, fused_kernels = 0;
  for (unsigned seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    graph::Graph g;
    g.name = "r" + std::to_string(seed);
    g.symbols = {{"s0", 3}};
    std::vector<sym::Expr> big = {sym::Expr::symbol("s0"), 4}, small = {4};
    std::vector<int> of_big, of_small;
    auto add = [&](std::string kind, std::vector<int> ops, std::vector<sym::Expr> shape,
                   AttrMap attrs = {}) {
      graph::Node n;
      n.name =
          kind == "input" ? "in" + std::to_string(g.nodes.size()) : std::to_string(g.nodes.size());
      n.kind = std::move(kind);
      n.operands = std::move(ops);
      n.type = graph::TensorType::contiguous(DType::F32, shape);
      n.attrs = std::move(attrs);
      int i = g.add(std::move(n));
      (shape.size() == 2 ? of_big : of_small).push_back(i);
      return i;
    };
    add("input", {}, big, {{"index", int64_t{0}}});
    add("input", {}, small, {{"index", int64_t{1}}});
    add("input", {}, big, {{"index", int64_t{2}}});
    int c = g.add([] {
      graph::Node n;
      n.name = "c";
      n.kind = "const";
      n.attrs = {{"value", 0.5}};
      n.type = graph::TensorType::contiguous(DType::F32, {});
      return n;
    }());
    for (int step = 0; step < 18; ++step) {
      bool on_big = pick(3) != 0;
      auto& pool = on_big ? of_big : of_small;
      auto shape = on_big ? big : small;
      auto any = [&] { return pool[pick(static_cast<int>(pool.size()))]; };
      switch (pick(5)) {
        case 0: add(unary[pick(5)], {any()}, shape); break;
        case 1: add(binary[pick(4)], {any(), any()}, shape); break;
        case 2: add("mul", {any(), c}, shape); break;
        case 3:
          if (on_big)
            add("broadcast", {of_small[pick(static_cast<int>(of_small.size()))]}, big);
          else
            add("opaque", {any()}, shape, {{"target", std::string("test.neg")}});
          break;
        default: add("opaque", {any()}, shape, {{"target", std::string("test.neg")}});
      }
    }
    for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
      if ((g.users()[i].empty() || pick(6) == 0) && g.nodes[i].kind != "input" &&
          g.nodes[i].kind != "const")
        g.outputs.push_back(i);
    SCOPED_TRACE(g.name);
    graph::verify(g);
    FusedGraph lowered = lower(g);
    check_program(lowered, seed);
    FusedGraph fused = fuse(lowered);
    SCOPED_TRACE(print(fused));
    EXPECT_LE(fused.num_kernels(), lowered.num_kernels());
    lowered_kernels += lowered.num_kernels();
    fused_kernels += fused.num_kernels();
    check_program(fused, seed);
    FusionOptions tight;
    tight.max_nodes = 3;
    tight.max_inputs = 2;
    check_program(fuse(lowered, tight), seed);
  }
  std::printf("random graphs: %d kernels lowered, %d fused\n", lowered_kernels, fused_kernels);
  EXPECT_LT(fused_kernels * 2, lowered_kernels);  // the fuser does merge
}

}  // namespace
}  // namespace af::fusion
