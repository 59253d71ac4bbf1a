// The greedy fusion driver (see fuse.h).
#include "fusion/fuse.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "fusion/merge.h"
#include "fusion/steps.h"
#include "support/error.h"

namespace af::fusion {
namespace {

/// A pair of kernels worth merging, a before b.
struct Candidate {
  int a = 0, b = 0;
  int64_t bytes = 0;  // memory traffic saved
  int edge = -1;      // the lowest value b reads from a; -1 for siblings
};

bool is_kernel(const FusedGraph& fg, int s) {
  return s >= 0 && fg.nodes[s].kind == FusedNode::Kind::Kernel;
}

/// The candidate pairs of `fg`, best first. `bytes[v]` is the size of Graph IR value v.
std::vector<Candidate> candidates(const FusedGraph& fg, const StepIndex& idx,
                                  const std::vector<int64_t>& bytes) {
  std::vector<Candidate> out;
  std::map<std::pair<int, int>, size_t> at;
  auto get = [&](int a, int b) -> Candidate& {
    auto [it, fresh] = at.emplace(std::make_pair(a, b), out.size());
    if (fresh) out.push_back(Candidate{a, b, 0, -1});
    return out[it->second];
  };
  // Producer -> consumer: b reads v from a; saves v's load, and its store when nothing else
  // needs it.
  for (int b = 0; b < static_cast<int>(fg.nodes.size()); ++b) {
    if (!is_kernel(fg, b)) continue;
    std::vector<int> in = fg.nodes[b].inputs;
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    for (int v : in) {
      int a = idx.step_of[v];
      if (!is_kernel(fg, a) || a >= b) continue;
      Candidate& c = get(a, b);
      c.bytes += bytes[v] + (idx.needed_outside(v, a, b) ? 0 : bytes[v]);
      if (c.edge < 0) c.edge = v;
    }
  }
  // Siblings: two kernels reading the same value load it once. Only kernels next to each other
  // among the value's readers pair up (a merge makes the next reader adjacent).
  for (int v = 0; v < static_cast<int>(fg.source.nodes.size()); ++v) {
    int prev = -1;
    for (int s : idx.readers[v]) {
      if (!is_kernel(fg, s)) continue;
      if (prev >= 0) get(prev, s).bytes += bytes[v];
      prev = s;
    }
  }
  std::sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) {
    return std::make_tuple(-x.bytes, x.b - x.a, x.a, x.b) <
           std::make_tuple(-y.bytes, y.b - y.a, y.a, y.b);
  });
  return out;
}

/// A topological order of the steps that keeps the current order where it can (among ready
/// steps, the earliest first), as old step indices. Throws CompileError on a cycle.
std::vector<int> topo_order(const FusedGraph& fg) {
  StepIndex idx(fg);
  const int n = static_cast<int>(fg.nodes.size());
  std::vector<int> indegree(n, 0);
  for (int s = 0; s < n; ++s)
    for (int t : idx.succ[s]) ++indegree[t];
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int s = 0; s < n; ++s)
    if (indegree[s] == 0) ready.push(s);
  std::vector<int> order;
  while (!ready.empty()) {
    int s = ready.top();
    ready.pop();
    order.push_back(s);
    for (int t : idx.succ[s])
      if (--indegree[t] == 0) ready.push(t);
  }
  if (static_cast<int>(order.size()) != n)
    throw CompileError("fusion of graph @" + fg.source.name + " created a cycle between steps");
  return order;
}

/// Replaces steps a < b by `merged` (given id `id`): at a's place when b reads nothing made
/// between them, else at b's place when nothing between them reads a, else at a's place
/// followed by a re-sort into a valid execution order. `idx` indexes `fg` before the merge.
void place_merged(FusedGraph& fg, std::vector<int>& ids, const StepIndex& idx, int a, int b,
                  FusedNode merged, int id) {
  bool b_needs_between = false;
  for (int v : fg.nodes[b].inputs) {
    int p = idx.step_of[v];
    if (p > a && p < b) b_needs_between = true;
  }
  bool a_feeds_between = false;
  for (int s : idx.succ[a])
    if (s > a && s < b) a_feeds_between = true;
  int at = b_needs_between && !a_feeds_between ? b : a;
  int gone = at == a ? b : a;
  fg.nodes[at] = std::move(merged);
  ids[at] = id;
  fg.nodes.erase(fg.nodes.begin() + gone);
  ids.erase(ids.begin() + gone);
  if (!b_needs_between || !a_feeds_between) return;
  std::vector<int> order = topo_order(fg);
  std::vector<FusedNode> nodes;
  std::vector<int> new_ids;
  for (int s : order) {
    nodes.push_back(std::move(fg.nodes[s]));
    new_ids.push_back(ids[s]);
  }
  fg.nodes = std::move(nodes);
  ids = std::move(new_ids);
}

/// The declined pairs keyed by their labels, each with the reason it was last declined for.
class RejectLog {
 public:
  void add(const FusedGraph& fg, const Candidate& c, std::string reason) {
    auto [pa, pb] = pair_labels(fg, c.a, c.b);  // c.edge is first_edge(fg, c.a, c.b)
    bool sibling = c.edge < 0;
    auto key = std::make_tuple(pa, pb, sibling);
    auto it = pos_.find(key);
    if (it == pos_.end()) {
      it = pos_.emplace(key, log_.size()).first;
      log_.push_back({RejectedFusion{pa, pb, {}, sibling}, 0});
    }
    log_[it->second].first.reason = std::move(reason);
    log_[it->second].second = ++clock_;
  }

  /// The records whose labelled ops are still in two different steps of `fg`; of several
  /// records for the same two final steps, the latest. Ordered by those steps.
  std::vector<RejectedFusion> still_apart(const FusedGraph& fg) const {
    StepIndex idx(fg);
    auto step = [&](const std::string& label) {
      int node = fg.source.find(label.substr(1));
      return node < 0 ? -1 : idx.step_of[node];
    };
    std::map<std::tuple<int, int, bool>, const std::pair<RejectedFusion, long>*> latest;
    for (const auto& entry : log_) {
      const RejectedFusion& r = entry.first;
      int a = step(r.producer), b = step(r.consumer);
      if (a == b || a < 0 || b < 0) continue;
      auto& slot = latest[{std::min(a, b), std::max(a, b), r.sibling}];
      if (!slot || slot->second < entry.second) slot = &entry;
    }
    std::vector<RejectedFusion> out;
    for (const auto& [key, entry] : latest) out.push_back(entry->first);
    return out;
  }

 private:
  std::vector<std::pair<RejectedFusion, long>> log_;  // record, time of its latest rejection
  std::map<std::tuple<std::string, std::string, bool>, size_t> pos_;
  long clock_ = 0;
};

}  // namespace

FusedGraph fuse(FusedGraph fg, const FusionOptions& opts) {
  std::vector<int64_t> bytes(fg.source.nodes.size());
  sym::Bindings hints = fg.source.hints();
  for (size_t v = 0; v < bytes.size(); ++v)
    bytes[v] = graph::value_bytes(fg.source, static_cast<int>(v), hints);
  // A declined pair stays declined while both steps are unchanged (merging other steps never
  // removes a path between them), so it is not asked again. Steps are tracked by id.
  std::vector<int> ids(fg.nodes.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  int next_id = static_cast<int>(ids.size());
  std::set<std::pair<int, int>> declined;
  RejectLog rejected;
  for (;;) {
    StepIndex idx(fg);
    bool merged = false;
    for (const Candidate& c : candidates(fg, idx, bytes)) {
      if (declined.count({ids[c.a], ids[c.b]})) continue;
      FusionDecision d = can_fuse(fg, idx, c.a, c.b, opts);
      if (!d.ok) {
        declined.insert({ids[c.a], ids[c.b]});
        // Siblings that depend on each other were never a real option; do not report them.
        if (c.edge >= 0 || idx.path_through(c.a, c.b) < 0) rejected.add(fg, c, std::move(d.reason));
        continue;
      }
      FusedNode m = d.merged ? std::move(*d.merged) : merge_kernels(fg, idx, c.a, c.b);
      place_merged(fg, ids, idx, c.a, c.b, std::move(m), next_id++);
      merged = true;
      break;
    }
    if (!merged) break;
  }
  renumber_kernels(fg);
  fg.rejected = rejected.still_apart(fg);
  return fg;
}

}  // namespace af::fusion
