// split_group: a failed Inductor fusion group as dependency-ordered parts.
#include "inductor/group_parts.h"

#include <map>
#include <set>

namespace af::inductor {

std::vector<GroupPart> split_group(const std::vector<GroupNode>& nodes) {
  std::map<std::string, int> writer;  // buffer -> the node writing it
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& b : nodes[i].writes) writer[b] = static_cast<int>(i);
  std::set<std::string> read_before;
  std::vector<bool> first(nodes.size(), false);
  std::vector<GroupPart> parts;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GroupNode& n = nodes[i];
    bool free = !n.traceable;
    for (const std::string& r : n.reads) {
      auto w = writer.find(r);
      free = free && (w == writer.end() || w->second == static_cast<int>(i));
    }
    for (const std::string& b : n.writes) free = free && !read_before.count(b);
    if (free) parts.push_back(GroupPart{{static_cast<int>(i)}, false}), first[i] = true;
    read_before.insert(n.reads.begin(), n.reads.end());
  }
  GroupPart run;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (first[i]) continue;
    if (nodes[i].traceable) {
      run.nodes.push_back(static_cast<int>(i));
      continue;
    }
    if (!run.nodes.empty()) parts.push_back(run), run.nodes.clear();
    parts.push_back(GroupPart{{static_cast<int>(i)}, false});
  }
  if (!run.nodes.empty()) parts.push_back(run);
  return parts;
}

}  // namespace af::inductor
