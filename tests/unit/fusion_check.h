// Test helper shared by the fusion unit tests: checks a FusedGraph structurally (every kernel,
// and every segment of a concat kernel, verifies and round-trips through the AscIR text) and
// numerically (the interpreter of fusion_interp.h against the eager reference, every graph
// output).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "ascir/parser.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"
#include "fusion/fused_graph.h"
#include "fusion_interp.h"

namespace af::fusion::testing {

/// One loop nest (a kernel, or a segment of a concat kernel) verifies, its text parses back to
/// the same text and its data/output nodes match its inputs/outputs.
inline void check_nest(const FusedNode& n) {
  SCOPED_TRACE(ascir::print(n.kernel));
  ascir::verify(n.kernel);
  std::string text = ascir::print(n.kernel);
  EXPECT_EQ(ascir::print(ascir::parse_asc_graph(text)), text);
  EXPECT_EQ(n.kernel.data_nodes().size(), n.inputs.size());
  EXPECT_EQ(n.kernel.output_nodes().size(), n.outputs.size());
  if (!n.input_axes.empty()) {
    EXPECT_EQ(n.input_axes.size(), n.inputs.size());
  }
}

/// Every kernel (every segment of a concat kernel) verifies and its text parses back to the
/// same text; a concat kernel has a start per segment and no loop nest of its own; every step
/// reads only values computed earlier; every graph output matches the eager reference.
inline void check_program(const FusedGraph& fg, unsigned seed = 1) {
  for (const FusedNode& n : fg.nodes) {
    if (n.kind != FusedNode::Kind::Kernel) continue;
    if (!n.is_concat()) {
      check_nest(n);
      continue;
    }
    EXPECT_EQ(n.segment_starts.size(), n.segments.size()) << n.name;
    EXPECT_TRUE(n.kernel.nodes.empty()) << n.name;
    for (const FusedNode& seg : n.segments) check_nest(seg);
  }
  auto want = run_reference(fg.source, seed);
  auto got = run_fused(fg, seed);
  for (int o : fg.source.outputs)
    EXPECT_LE(max_diff(want[o], got[o]), 1e-12) << "output %" << fg.source.nodes[o].name;
}

}  // namespace af::fusion::testing
