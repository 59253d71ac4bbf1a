// split_group: an Inductor fusion group that cannot be one kernel, as parts in an order that
// keeps every dependency (the Inductor frontend tries each run of nodes that trace alone as one
// kernel and leaves each other node to Inductor's C++).
#pragma once
#include <string>
#include <vector>

namespace af::inductor {

/// A scheduler node of a group, as the split sees it.
struct GroupNode {
  std::vector<std::string> reads;   // the buffers it reads
  std::vector<std::string> writes;  // the buffers it writes
  bool traceable = true;            // whether it can be a kernel alone
};

/// A part of a group: node indices in group order, and whether it may be one kernel.
struct GroupPart {
  std::vector<int> nodes;
  bool traceable = true;
};

/// The group's nodes as parts: first each node that cannot be a kernel and reads nothing another
/// node of the group writes and writes nothing an earlier node reads (it may run first), then
/// the rest in order, the runs of traceable nodes broken at the remaining untraceable ones.
std::vector<GroupPart> split_group(const std::vector<GroupNode>& nodes);

}  // namespace af::inductor
