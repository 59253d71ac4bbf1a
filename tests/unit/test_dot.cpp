// Unit tests of the FusedGraph DOT printer (fusion/dot.h): step bytes, clusters, ATen steps,
// rejected fusions, TilingCases, escaping, determinism and errors.
#include <gtest/gtest.h>

#include <string>

#include "fusion/dot.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "graph/parser.h"
#include "graph/verifier.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace af::fusion {
namespace {

graph::Graph parse(const char* text) {
  graph::Graph g = graph::parse_graph(text);
  graph::verify(g);
  return g;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// The text of the DOT statement that starts with `head` (up to its ";\n").
std::string statement(const std::string& dot, const std::string& head) {
  size_t at = dot.find("\n  " + head);
  if (at == std::string::npos) return "";
  size_t end = dot.find(";\n", at);
  return dot.substr(at + 3, end - at - 3);
}

// x * 2 + broadcast(b), relu, then an ATen op, then exp: two kernels around it.
const char* kChain = R"(graph @chain() {
  %x = input() {index = 0} : f32[4, 8]
  %b = input() {index = 1} : f32[8]
  %c = const() {value = 2.0} : f32[]
  %m = mul(%x, %c) : f32[4, 8]
  %bb = broadcast(%b) : f32[4, 8]
  %a = add(%m, %bb) : f32[4, 8]
  %r = relu(%a) : f32[4, 8]
  %s = opaque(%r) {target = "aten.cumsum.default"} : f32[4, 8]
  %t = permute(%s) {dims = [1, 0]} : f32[8, 4] strides [1, 8]
  %exp_1 = exp(%t) : f32[8, 4] strides [1, 8]
  return %exp_1, %r
})";

TEST(DotBytes, KernelReadsWritesAndUnfusedTotal) {
  FusedGraph fg = fuse(lower(parse(kChain)));
  ASSERT_EQ(fg.num_kernels(), 2);
  const FusedNode& k0 = fg.nodes[0];
  ASSERT_EQ(k0.kind, FusedNode::Kind::Kernel);
  ASSERT_EQ(k0.ops.size(), 4u);  // mul, broadcast, add, relu
  StepBytes b = step_bytes(fg, k0);
  EXPECT_EQ(b.read, 4 * 8 * 4 + 8 * 4);  // %x and %b (the const is a literal)
  EXPECT_EQ(b.written, 4 * 8 * 4);       // %r
  // mul: %x + result; broadcast: nothing; add: %m + %b (the broadcast's source) + result;
  // relu: %a + result.
  EXPECT_EQ(b.unfused, (128 + 128) + 0 + (128 + 32 + 128) + (128 + 128));
  // The ATen op reads and writes its values; the view moves nothing eagerly.
  StepBytes s = step_bytes(fg, fg.nodes[1]);
  EXPECT_EQ(s.read, 128);
  EXPECT_EQ(s.unfused, 256);
  EXPECT_EQ(step_bytes(fg, fg.nodes[2]).unfused, 0);
}

TEST(DotBytes, SymbolicSizesAtHintsAndExpandedInputs) {
  FusedGraph fg = fuse(lower(parse(R"(graph @sym(s0 = 16) {
  %x = input() {index = 0} : f32[s0, 8] strides [0, 1]
  %y = input() {index = 1} : f16[s0, 8]
  %0 = cast(%y) : f32[s0, 8]
  %1 = add(%x, %0) : f32[s0, 8]
  return %1
})")));
  ASSERT_EQ(fg.num_kernels(), 1);
  StepBytes b = step_bytes(fg, fg.nodes[0]);
  EXPECT_EQ(b.read, 8 * 4 + 16 * 8 * 2);  // %x is expanded along s0: one row in memory
  EXPECT_EQ(b.written, 16 * 8 * 4);
  EXPECT_EQ(b.unfused, (16 * 8 * 2 + 16 * 8 * 4) + (8 * 4 + 16 * 8 * 4 + 16 * 8 * 4));
  std::string dot = print_dot(fg);
  EXPECT_TRUE(contains(dot, "label=\"f16[s0, 8]\"")) << dot;
}

TEST(Dot, ClustersAtenStepsInputsOutputs) {
  FusedGraph fg = fuse(lower(parse(kChain)));
  std::string dot = print_dot(fg);
  EXPECT_EQ(dot.rfind("digraph \"chain\" {\n", 0), 0u) << dot;
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  EXPECT_EQ(print_dot(fg), dot);  // deterministic
  // One cluster per kernel, labelled with op count and bytes; its ops are nodes inside.
  EXPECT_TRUE(contains(dot,
                       "subgraph \"cluster_k0\" {\n    label=\"k0: 4 op(s)\\lread 160 B, "
                       "write 128 B\\lunfused 800 B\\l\";"))
      << dot;
  EXPECT_TRUE(contains(dot, "subgraph \"cluster_k1\""));
  // An op named after its kind (as FX names are) shows only its name.
  EXPECT_TRUE(contains(dot, "\"n9\" [label=\"%exp_1\""));
  size_t k0_at = dot.find("cluster_k0"), k0_end = dot.find("\n  }\n", k0_at);
  std::string cluster = dot.substr(k0_at, k0_end - k0_at);
  for (const char* op : {"\"n3\" [label=\"mul %m\"", "\"n4\" [label=\"broadcast %bb\"",
                         "\"n5\" [label=\"add %a\"", "\"n6\" [label=\"relu %r\""})
    EXPECT_TRUE(contains(cluster, op)) << op << "\n" << cluster;
  // The ATen op: orange, its reason in the tooltip; the view: dashed.
  std::string aten = statement(dot, "\"n7\" [");
  EXPECT_TRUE(contains(aten, "label=\"aten.cumsum\\n%s\"")) << aten;
  EXPECT_TRUE(contains(aten, "fillcolor=\"#fbd3ad\"")) << aten;
  EXPECT_TRUE(contains(aten, "opaque ATen op aten.cumsum.default")) << aten;
  std::string view = statement(dot, "\"n8\" [");
  EXPECT_TRUE(contains(view, "dashed")) << view;
  EXPECT_TRUE(contains(view, "view op permute runs as an ATen alias")) << view;
  // Inputs and outputs are plain nodes; the const is a literal inside the kernel, not drawn.
  EXPECT_TRUE(contains(statement(dot, "\"n0\" ["), "shape=ellipse"));
  EXPECT_TRUE(contains(dot, "\"out0\" [label=\"output 0\""));
  EXPECT_TRUE(contains(dot, "\"out1\" [label=\"output 1\""));
  EXPECT_FALSE(contains(dot, "\"n2\""));
  // Edges are values: typed where they enter another step, plain inside a kernel.
  EXPECT_TRUE(contains(statement(dot, "\"n0\" -> \"n3\""), "label=\"f32[4, 8]\""));
  EXPECT_FALSE(contains(statement(dot, "\"n3\" -> \"n5\""), "label="));
  EXPECT_TRUE(contains(statement(dot, "\"n6\" -> \"n7\""), "label=\"f32[4, 8]\""));
  EXPECT_TRUE(contains(dot, "\"n9\" -> \"out0\""));
  EXPECT_TRUE(contains(dot, "\"n6\" -> \"out1\""));
  EXPECT_TRUE(contains(dot, "0 rejected fusion(s)\\nkernels move 544 B (unfused 1.0 KiB)\""));
}

TEST(Dot, RejectedFusionsAreRedDashedEdges) {
  FusionOptions off;
  off.enabled = false;
  FusedGraph fg = fuse(lower(parse(R"(graph @off() {
  %x = input() {index = 0} : f32[64]
  %0 = exp(%x) : f32[64]
  %1 = neg(%0) : f32[64]
  return %1
})")),
                       off);
  ASSERT_EQ(fg.rejected.size(), 1u);
  std::string edge = statement(print_dot(fg), "\"n1\" -> \"n2\"");
  EXPECT_TRUE(contains(edge, "style=dashed")) << edge;
  EXPECT_FALSE(contains(edge, "label=\"f32[64]\"")) << edge;  // the reason is its label
  EXPECT_TRUE(contains(edge, "color=\"#d62728\"")) << edge;
  EXPECT_TRUE(contains(edge, "xlabel=\"rejected: fusion is disabled\"")) << edge;
  // A long reason wraps at spaces into at most three lines; the tooltip keeps it whole.
  fg.rejected[0].reason =
      "fusing %0 into %1 would create a cycle through %some_long_opaque_name and then "
      "many more words that do not fit";
  edge = statement(print_dot(fg), "\"n1\" -> \"n2\"");
  EXPECT_TRUE(contains(edge,
                       "xlabel=\"rejected: fusing %0 into %1\\nwould create a cycle "
                       "through\\n%some_long_opaque_name and ...\""))
      << edge;
  EXPECT_TRUE(contains(edge, "labeltooltip=\"" + fg.rejected[0].reason + "\"")) << edge;

  // Siblings (two readers of %w) are joined by an undirected dashed line.
  fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[2, 8]
  %w = input() {index = 1} : f32[8]
  %0 = broadcast(%w) : f32[2, 8]
  %1 = mul(%x, %0) : f32[2, 8]
  %2 = exp(%w) : f32[8]
  return %1, %2
})")));
  ASSERT_EQ(fg.rejected.size(), 1u);
  ASSERT_TRUE(fg.rejected[0].sibling);
  std::string dot = print_dot(fg);
  int p = fg.source.find(fg.rejected[0].producer.substr(1));
  int c = fg.source.find(fg.rejected[0].consumer.substr(1));
  std::string line =
      statement(dot, "\"n" + std::to_string(p) + "\" -> \"n" + std::to_string(c) + "\" [dir=none");
  EXPECT_TRUE(contains(line, "siblings rejected: ")) << dot;
  EXPECT_TRUE(contains(line, "tooltip=\"" + fg.rejected[0].reason + "\"")) << line;
}

TEST(Dot, FrontendFactsCountAtenOpsAndTypeTuples) {
  // explain's facts: its count of ATen ops in the title and kernel labels (not the steps and
  // IR ops), and the real type of a value the IR types as the placeholder i64[] (a tuple).
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[4, 8]
  %b = input() {index = 1} : f32[8]
  %bb = broadcast(%b) : f32[4, 8]
  %a = add(%x, %bb) : f32[4, 8]
  %sdpa = opaque(%a) {target = "aten.sdpa"} : i64[]
  %o = opaque(%sdpa) {target = "operator.getitem"} : f32[4, 8]
  %e = exp(%o) : f32[4, 8]
  return %e
})")));
  std::string plain = print_dot(fg);
  EXPECT_TRUE(contains(plain, "label=\"@t: 2 kernel(s), 2 ATen step(s), 0 rejected fusion(s)"))
      << plain;
  EXPECT_TRUE(contains(plain, "label=\"k0: 2 op(s)\\l")) << plain;
  EXPECT_TRUE(contains(statement(plain, "\"n4\" -> \"n5\""), "label=\"i64[]\"")) << plain;

  DotFacts facts;
  facts.aten_ops = 3;  // add, the attention and exp: the broadcast and getitem are not counted
  facts.aten_ops_in_kernels = 2;
  facts.kernel_aten_ops = {{"k0", 1}, {"k1", 1}};
  facts.value_types = {{"sdpa", "(f32[4, 8], f32[4])"}};
  for (DotDetail detail : {DotDetail::Full, DotDetail::Overview}) {
    std::string dot = print_dot(fg, detail, facts);
    EXPECT_TRUE(contains(dot,
                         "label=\"@t: 2 kernel(s) compute 2 of 3 ATen ops, 1 left to ATen, "
                         "0 rejected fusion(s)"))
        << dot;
    EXPECT_TRUE(contains(dot, "k0: 1 ATen op(s), 2 IR op(s)\\l")) << dot;
    EXPECT_FALSE(contains(dot, "i64[]\"")) << dot;  // no edge label or tooltip ends in it
    std::string edge = statement(dot, "\"n4\" -> \"n5\"");
    EXPECT_TRUE(contains(edge, "tooltip=\"%sdpa : (f32[4, 8], f32[4])\"")) << edge;
    EXPECT_TRUE(contains(edge, "label=\"(f32[4, 8], f32[4])\"")) << edge;
    EXPECT_TRUE(contains(statement(dot, "\"n4\" ["), "returns (f32[4, 8], f32[4])")) << dot;
  }
  EXPECT_TRUE(contains(print_kernel_dot(fg, "k1", facts), "kernel k1: 1 ATen op(s), 1 IR op(s)\""));
}

TEST(Dot, OverviewDrawsARejectionOnTheEdgeBetweenItsKernels) {
  // k0 -> k1 carries two values; the rejection names the second (%1 -> %3): the one edge the
  // overview draws between the two kernels is red with its reason.
  FusionOptions off;
  off.enabled = false;
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[8]
  %0 = exp(%x) : f32[8]
  %1 = neg(%x) : f32[8]
  %2 = add(%0, %1) : f32[8]
  return %2
})")),
                       off);
  fg.nodes[0].ops = {1, 2};  // one kernel computes %0 and %1
  fg.nodes[0].outputs = {1, 2};
  fg.nodes.erase(fg.nodes.begin() + 1);
  fg.rejected = {{"%1", "%2", "the reason", false}};
  std::string dot = print_dot(fg, DotDetail::Overview);
  std::string edge = statement(dot, "\"" + fg.nodes[0].name + "\" -> \"" + fg.nodes[1].name + "\"");
  EXPECT_TRUE(contains(edge, "xlabel=\"rejected: the reason\"")) << dot;
}

TEST(Dot, TilingCasesOfScheduledKernels) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[64]
  %0 = exp(%x) : f32[64]
  return %0
})")));
  EXPECT_TRUE(tiling_cases(fg.nodes[0].kernel).empty());  // not scheduled yet
  schedule::schedule_kernel(fg.nodes[0].kernel, target::Target::host_cpu());
  ascir::ScheduleInfo& s = *fg.nodes[0].kernel.schedule;
  s.tiling_cases.clear();
  const std::string family(ascir::name(s.family));
  EXPECT_EQ(tiling_cases(fg.nodes[0].kernel), std::vector<std::string>{family});
  EXPECT_TRUE(contains(print_dot(fg), "\\ltiling: " + family + "\\l\";")) << print_dot(fg);
  s.tiling_cases = {ascir::TilingCase::ReduceInnerAllLoad, ascir::TilingCase::ReduceInnerSplit};
  EXPECT_EQ(tiling_cases(fg.nodes[0].kernel),
            (std::vector<std::string>{"reduce_inner_all_load", "reduce_inner_split"}));
  EXPECT_TRUE(
      contains(print_dot(fg), "\\ltiling: reduce_inner_all_load, reduce_inner_split\\l\";"));
}

TEST(Dot, EscapesQuotesAndBackslashes) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[4]
  %0 = opaque(%x) {target = "my\"op\\x"} : f32[4]
  %1 = exp(%0) : f32[4]
  return %1
})")));
  std::string dot = print_dot(fg);
  EXPECT_TRUE(contains(dot, "label=\"my\\\"op\\\\x\\n%0\"")) << dot;
  EXPECT_FALSE(contains(dot, "my\"op")) << dot;  // never an unescaped quote inside a string
}

TEST(Dot, LongLabelsAreClipped) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[4]
  %0 = opaque(%x) {target = "aten.an_extremely_long_operator_name_that_goes_on.default"} : f32[4]
  return %0
})")));
  std::string dot = print_dot(fg);
  EXPECT_TRUE(contains(dot, "label=\"aten.an_extremely_long_oper...\\n%0\"")) << dot;
  EXPECT_TRUE(contains(dot, "aten.an_extremely_long_operator_name_that_goes_on.default"));
}

TEST(Dot, StepOutsideTheGraphIsAnError) {
  FusedGraph fg = fuse(lower(parse(R"(graph @t() {
  %x = input() {index = 0} : f32[4]
  %0 = exp(%x) : f32[4]
  return %0
})")));
  fg.nodes[0].ops.push_back(42);
  try {
    print_dot(fg);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_TRUE(contains(e.what(), "step k0 refers to node #42")) << e.what();
  }
  EXPECT_THROW(step_bytes(fg, fg.nodes[0]), CompileError);
}

}  // namespace
}  // namespace af::fusion
