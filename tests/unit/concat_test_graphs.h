// Shared by the concat fusion unit tests (test_fusion_concat*.cpp): parsing and fusing Graph IR
// text, lookups into kernels, and the hand-written concat graphs they all run.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "ascir/printer.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/printer.h"
#include "graph/parser.h"
#include "graph/verifier.h"

namespace af::fusion::concat_test {

using ascir::AscGraph;
using ascir::AscNode;

inline graph::Graph parse(const std::string& text) {
  graph::Graph g = graph::parse_graph(text);
  graph::verify(g);
  return g;
}

inline FusedGraph fused(const std::string& text, const FusionOptions& opts = {}) {
  return fuse(lower(parse(text), opts), opts);
}

inline std::vector<std::string> names(const graph::Graph& g, const std::vector<int>& nodes) {
  std::vector<std::string> out;
  for (int n : nodes) out.push_back(g.nodes[n].name);
  return out;
}

inline std::vector<std::string> strs(const std::vector<sym::Expr>& es) {
  std::vector<std::string> out;
  for (const sym::Expr& e : es) out.push_back(e.str());
  return out;
}

inline const AscNode& node(const AscGraph& k, const std::string& name) {
  for (const AscNode& n : k.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node %" + name + " in\n" + ascir::print(k));
}

/// "repeats [..] strides [..] offset E" of a node's tensor.
inline std::string layout(const AscGraph& k, const std::string& name) {
  const AscNode& n = node(k, name);
  return "repeats " + sym::str(n.out.repeats) + " strides " + sym::str(n.out.strides) + " offset " +
         n.out.offset.str();
}

/// The kernel steps of `fg`.
inline std::vector<const FusedNode*> kernels(const FusedGraph& fg) {
  std::vector<const FusedNode*> out;
  for (const FusedNode& n : fg.nodes)
    if (n.kind == FusedNode::Kind::Kernel) out.push_back(&n);
  return out;
}

/// The one kernel step of `fg`, which must be a concat kernel.
inline const FusedNode& one_concat_kernel(const FusedGraph& fg) {
  auto ks = kernels(fg);
  if (ks.size() != 1 || !ks[0]->is_concat())
    throw std::runtime_error("expected one concat kernel in\n" + print(fg));
  return *ks[0];
}

// Two elementwise branches, a concat along the last dim, a consumer.
inline constexpr const char* kBranches = R"(graph @g() {
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
inline constexpr const char* kMiddleTransposed = R"(graph @g() {
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
inline constexpr const char* kThreeSegments = R"(graph @g(s0 = 3) {
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
inline constexpr const char* kWholeSpaceProducer = R"(graph @g() {
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
inline constexpr const char* kRotary = R"(graph @rotary(s0 = 16) {
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
inline constexpr const char* kReduceProducer = R"(graph @g() {
  %x = input() {index = 0} : f32[8, 24, 5]
  %b = input() {index = 1} : f32[8, 40]
  %s = reduce_sum(%x) {dims = [2], keepdim = 0} : f32[8, 24]
  %cat = concat(%s, %b) {dim = 1} : f32[8, 64]
  return %cat
})";

}  // namespace af::fusion::concat_test
