// A picture of a FusedGraph: Graphviz DOT text (render with `dot -Tsvg`), for explain and the
// debug dump (`<graph>.fused.dot`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fusion/fused_graph.h"

namespace af::fusion {

/// The memory traffic of one step at the size hints, in bytes. `read` / `written`: what the
/// step moves (its distinct input and output values). `unfused`: what eager moves for the same
/// ops, each op reading its distinct operands and writing its result; broadcast and view ops
/// move nothing (eager expands and aliases), so an operand made by a broadcast is read at its
/// source's size. A value's size counts the elements its strides address (a stride-0 dim once);
/// consts are literals and count 0.
struct StepBytes {
  int64_t read = 0;
  int64_t written = 0;
  int64_t unfused = 0;
};

/// The traffic of `step`, a step of `fg`. Throws CompileError naming the step when it refers to
/// a node outside the graph or a size has no hint.
StepBytes step_bytes(const FusedGraph& fg, const FusedNode& step);

/// `b` bytes as the pictures and explain print them: "512 B", "1.5 KiB", "24.0 MiB".
std::string human_bytes(int64_t b);

/// The names of the TilingCases of a scheduled kernel (ScheduleInfo::cases(), index =
/// tiling_key); empty when the kernel is not scheduled.
std::vector<std::string> tiling_cases(const ascir::AscGraph& kernel);
/// The TilingCases of a kernel step: its kernel's, or per segment of a concat kernel
/// "s<i>: <case>" for each case of segment i.
std::vector<std::string> tiling_cases(const FusedNode& step);

/// How much of each kernel a picture shows.
enum class DotDetail {
  Full,      // every kernel a cluster of its Graph IR ops
  Overview,  // every kernel one node, its ops in the tooltip: readable for a whole model
};

/// The DOT text of `fg` (deterministic): kernels as clusters labelled with name, op count, bytes
/// and TilingCases, their Graph IR ops as nodes (Overview: one node per kernel, the same label,
/// its ops as tooltip, one edge per pair of steps); ATen steps (Opaque) as orange nodes with
/// their reason as tooltip (views as dashed ones); graph inputs and outputs as plain nodes;
/// edges are values, labelled with dtype[shape] where they leave a step; rejected fusions as
/// red dashed edges with their reason.
std::string print_dot(const FusedGraph& fg, DotDetail detail = DotDetail::Full);

/// The DOT text of one kernel step of `fg` named `kernel` ("k3"): its cluster as print_dot
/// draws it, its input values and its outputs. Throws CompileError when there is no such kernel.
std::string print_kernel_dot(const FusedGraph& fg, const std::string& kernel);

}  // namespace af::fusion
