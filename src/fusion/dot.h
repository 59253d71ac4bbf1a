// A picture of a FusedGraph: Graphviz DOT text (render with `dot -Tsvg`), for explain and the
// debug dump (`<graph>.fused.dot`).
#pragma once
#include <cstdint>
#include <map>
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

/// What the frontend knows of a graph that its Graph IR does not say, for the pictures explain
/// draws (python/autofuse/explain.py). Empty (the debug dump, autofuse-opt --emit=dot): the
/// pictures count steps and Graph IR ops, and type every value as the Graph IR does.
struct DotFacts {
  /// explain's one count of ATen ops (explain.op_counts): the graph's ATen ops that compute
  /// (views, aliases and nodes the frontend synthesized are not counted), -1 when not given;
  /// how many of them kernels compute; and per kernel name, its own.
  int aten_ops = -1;
  int aten_ops_in_kernels = 0;
  std::map<std::string, int> kernel_aten_ops;
  /// Per value name, its type as text where the Graph IR has only the placeholder i64[] (a value
  /// that is not one tensor of an IR dtype: the tuple an op with several outputs returns).
  std::map<std::string, std::string> value_types;
};

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
/// red dashed edges with their reason (Overview: the edge between their two kernels). The title
/// counts kernels, ATen steps and rejected fusions; with `facts.aten_ops` it counts the ATen ops
/// kernels compute of all and those left to ATen instead of steps, and each kernel's label its
/// ATen ops next to its Graph IR ops.
std::string print_dot(const FusedGraph& fg, DotDetail detail = DotDetail::Full,
                      const DotFacts& facts = {});

/// The DOT text of one kernel step of `fg` named `kernel` ("k3"): its cluster as print_dot
/// draws it, its input values and its outputs. Throws CompileError when there is no such kernel.
std::string print_kernel_dot(const FusedGraph& fg, const std::string& kernel,
                             const DotFacts& facts = {});

}  // namespace af::fusion
