// Concat fusion mechanics: plans how a kernel joins a concat kernel, then merges it segment by
// segment with the ordinary mechanics (see concat_merge.h).
#include "fusion/concat_merge.h"

#include <algorithm>
#include <set>

#include "fusion/merge.h"
#include "fusion/reduce_check.h"
#include "fusion/steps.h"
#include "support/error.h"

namespace af::fusion {
namespace {

using ascir::AscNode;

ConcatJoin no(int cs, int ks, std::string why) {
  return ConcatJoin{cs, ks, std::move(why), -1, false};
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string value_name(const FusedGraph& fg, int v) {
  return "%" + fg.source.nodes[v].name;
}

/// Segment `s` of `concat` as a step of its own, keeping all of the concat's ops (so every
/// value the concat kernel computes stays with it in a FusedGraph holding the segment).
FusedNode segment_step(const FusedNode& concat, size_t s) {
  FusedNode seg = concat.segments.at(s);
  seg.ops = concat.ops;
  return seg;
}

/// Kernel `k` cut to the slice [start, start + size) of its axis at position `dim`: every tensor
/// spanning that axis gets the slice's size there, and every memory tensor (data, store, output)
/// is offset by start * its stride there; tensors constant along it are unchanged.
FusedNode slice_kernel(const FusedNode& k, int dim, const sym::Expr& start, const sym::Expr& size) {
  FusedNode q = k;
  ascir::Axis& axis = q.kernel.axes.at(static_cast<size_t>(dim));
  const sym::Expr full = axis.size;
  axis.size = size;
  for (AscNode& n : q.kernel.nodes) {
    auto it = std::find(n.out.axes.begin(), n.out.axes.end(), axis.id);
    if (it == n.out.axes.end()) continue;
    size_t at = static_cast<size_t>(it - n.out.axes.begin());
    if (n.out.repeats[at] != full) continue;  // constant along the axis
    n.out.repeats[at] = size;
    if (n.op == "data" || n.op == "store" || n.op == "output") {
      n.out.offset = n.out.offset + start * n.out.strides[at];
      continue;
    }
    n.out.strides = graph::contiguous_strides(n.out.repeats);
    for (size_t d = 0; d < n.out.repeats.size(); ++d)
      if (n.out.repeats[d] == sym::Expr(1)) n.out.strides[d] = 0;
  }
  return q;
}

/// Why kernel `k` is not over the concat's whole iteration space (so it cannot be sliced along
/// the concat dim), or "" when it is: its loop axes are the concat's shape, it has no reduce,
/// and every tensor either spans the concat dim or is constant along it.
std::string not_whole_space(const FusedNode& concat, const FusedNode& k) {
  const auto& shape = concat.concat_shape;
  std::vector<sym::Expr> sizes;
  for (const ascir::Axis& x : k.kernel.axes) sizes.push_back(x.size);
  if (sizes != shape)
    return "loop axes " + loop_axes_str(k.kernel) + " are not the concat's " + sym::str(shape);
  if (has_reduce(k.kernel)) return "it reduces (only elementwise kernels are sliced)";
  const ascir::Axis& axis = k.kernel.axes.at(static_cast<size_t>(concat.concat_dim));
  for (const AscNode& n : k.kernel.nodes) {
    auto it = std::find(n.out.axes.begin(), n.out.axes.end(), axis.id);
    bool spans = it != n.out.axes.end() &&
                 n.out.repeats[static_cast<size_t>(it - n.out.axes.begin())] == axis.size;
    bool constant = it == n.out.axes.end() ||
                    n.out.repeats[static_cast<size_t>(it - n.out.axes.begin())] == sym::Expr(1);
    if (n.op == "store" && !spans)
      return "it stores a value that does not span the concat dim (%" + n.name + ")";
    if (!spans && !constant) return "%" + n.name + " covers part of the concat dim";
  }
  return "";
}

/// Segment `s`'s extent along the concat dim: the size of concat operand s.
sym::Expr segment_extent(const FusedNode& concat, size_t s) {
  const sym::Expr end = s + 1 < concat.segment_starts.size()
                            ? concat.segment_starts[s + 1]
                            : concat.concat_shape[static_cast<size_t>(concat.concat_dim)];
  return end - concat.segment_starts[s];
}

/// Why segment `s` of `concat` does not iterate over its slice of the concat's space (a merge
/// embedded it into another loop nest), or "".
std::string segment_not_slice(const FusedNode& concat, size_t s) {
  const FusedNode& seg = concat.segments[s];
  std::vector<sym::Expr> want = concat.concat_shape;
  want[static_cast<size_t>(concat.concat_dim)] = segment_extent(concat, s);
  std::vector<sym::Expr> sizes;
  for (const ascir::Axis& x : seg.kernel.axes) sizes.push_back(x.size);
  if (sizes != want)
    return "segment " + std::to_string(s) + " runs over " + loop_axes_str(seg.kernel) +
           ", not a slice of " + sym::str(concat.concat_shape);
  return "";
}

/// How plain kernel `k` (step `ks`) joins concat kernel `concat` (step `cs`).
ConcatJoin plan_join(const FusedGraph& fg, int cs, int ks) {
  const FusedNode& concat = fg.nodes[cs];
  const FusedNode& k = fg.nodes[ks];
  const bool k_first = ks < cs;
  // The values flowing between them and the segments that read (write) each.
  std::set<int> segs_reading;
  bool flows = false;
  for (int v : k_first ? k.outputs : concat.outputs) {
    if (!contains(k_first ? concat.inputs : k.inputs, v)) continue;
    flows = true;
    for (size_t s = 0; s < concat.segments.size(); ++s) {
      const FusedNode& seg = concat.segments[s];
      if (k_first && contains(seg.inputs, v)) segs_reading.insert(static_cast<int>(s));
      if (!k_first && !contains(seg.outputs, v))
        return no(cs, ks, value_name(fg, v) + " is written by some segments of the concat only");
    }
  }
  // A producer of one segment's values merges into that segment.
  if (k_first && segs_reading.size() == 1 && concat.segments.size() > 1)
    return ConcatJoin{cs, ks, "", *segs_reading.begin(), false};
  if (std::string why = not_whole_space(concat, k); !why.empty())
    return no(cs, ks, std::string(flows ? "" : "siblings: ") + why);
  for (size_t s = 0; s < concat.segments.size(); ++s)
    if (std::string why = segment_not_slice(concat, s); !why.empty()) return no(cs, ks, why);
  // A sliced producer's values must be read by each segment at that segment's own positions.
  if (k_first) {
    for (size_t s = 0; s < concat.segments.size(); ++s) {
      const FusedNode& seg = concat.segments[s];
      for (int d : seg.kernel.data_nodes()) {
        int64_t i = std::get<int64_t>(seg.kernel.nodes[d].attrs.at("index"));
        int v = seg.inputs.at(static_cast<size_t>(i));
        if (!contains(k.outputs, v)) continue;
        const graph::TensorType& t = fg.source.nodes[v].type;
        sym::Expr want =
            concat.segment_starts[s] * t.strides.at(static_cast<size_t>(concat.concat_dim));
        if (seg.kernel.nodes[d].out.offset != want)
          return no(cs, ks,
                    "segment " + std::to_string(s) + " reads " + value_name(fg, v) +
                        " at another position than its own slice");
      }
    }
  }
  return ConcatJoin{cs, ks, "", -1, true};
}

/// `fg` with step `at` replaced by `step`.
FusedGraph with_step(FusedGraph fg, int at, FusedNode step) {
  fg.nodes[static_cast<size_t>(at)] = std::move(step);
  return fg;
}

}  // namespace

void set_concat_io(FusedNode& step) {
  std::set<int> in, out, ops(step.ops.begin(), step.ops.end());
  for (const FusedNode& seg : step.segments) {
    in.insert(seg.inputs.begin(), seg.inputs.end());
    out.insert(seg.outputs.begin(), seg.outputs.end());
    ops.insert(seg.ops.begin(), seg.ops.end());
  }
  step.inputs.assign(in.begin(), in.end());
  step.outputs.assign(out.begin(), out.end());
  step.ops.assign(ops.begin(), ops.end());
  step.input_axes.clear();
}

ConcatJoin plan_concat_join(const FusedGraph& fg, int a, int b) {
  const int cs = fg.nodes[a].is_concat() ? a : b;
  return plan_join(fg, cs, cs == a ? b : a);
}

std::vector<std::optional<FusedGraph>> segment_graphs(const FusedGraph& fg, const ConcatJoin& j) {
  const int cs = j.concat, ks = j.kernel;
  const FusedNode& concat = fg.nodes[cs];
  std::vector<std::optional<FusedGraph>> out(concat.segments.size());
  for (size_t s = 0; s < concat.segments.size(); ++s) {
    if (!j.sliced && static_cast<int>(s) != j.segment) continue;
    FusedGraph g = with_step(fg, cs, segment_step(concat, s));
    if (j.sliced)
      g.nodes[static_cast<size_t>(ks)] = slice_kernel(
          fg.nodes[ks], concat.concat_dim, concat.segment_starts[s], segment_extent(concat, s));
    out[s] = std::move(g);
  }
  return out;
}

FusedNode assemble_concat(const FusedGraph& fg, const ConcatJoin& j, int a,
                          std::vector<std::optional<FusedNode>> merged) {
  FusedNode out = fg.nodes[j.concat];
  for (size_t s = 0; s < merged.size() && s < out.segments.size(); ++s) {
    if (!merged[s]) continue;
    merged[s]->name = out.segments[s].name;
    out.segments[s] = std::move(*merged[s]);
  }
  const FusedNode& k = fg.nodes[j.kernel];
  out.ops.insert(out.ops.end(), k.ops.begin(), k.ops.end());
  set_concat_io(out);
  out.name = fg.nodes[a].name;
  return out;
}

FusedNode merge_concat(const FusedGraph& fg, int a, int b) {
  ConcatJoin j = plan_concat_join(fg, a, b);
  if (!j.ok())
    throw CompileError("merge_concat: " + step_label(fg, j.kernel) + " cannot join concat kernel " +
                       step_label(fg, j.concat) + ": " + j.reason);
  const auto graphs = segment_graphs(fg, j);
  std::vector<std::optional<FusedNode>> merged(graphs.size());
  for (size_t s = 0; s < graphs.size(); ++s)
    if (graphs[s]) merged[s] = merge_kernels(*graphs[s], a, b);
  return assemble_concat(fg, j, a, std::move(merged));
}

}  // namespace af::fusion
