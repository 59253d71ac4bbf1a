// The greedy fusion driver (see fuse.h).
#include "fusion/fuse.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "fusion/merge.h"
#include "fusion/steps.h"
#include "support/error.h"

namespace af::fusion {
namespace {

/// A pair of kernels worth merging, a before b.
struct Candidate {
  int a = 0, b = 0;
  int64_t bytes = 0;      // memory traffic saved
  bool vertical = false;  // b reads a value a computes
  std::string pa, pb;     // report labels
};

bool is_kernel(const FusedGraph& fg, int s) {
  return s >= 0 && fg.nodes[s].kind == FusedNode::Kind::Kernel;
}

std::string value_label(const FusedGraph& fg, int node) {
  return "%" + fg.source.nodes[node].name;
}

/// The first op of step s that reads value v.
int first_reader(const FusedGraph& fg, int s, int v) {
  for (int op : fg.nodes[s].ops) {
    const auto& ops = fg.source.nodes[op].operands;
    if (std::find(ops.begin(), ops.end(), v) != ops.end()) return op;
  }
  return fg.nodes[s].ops.front();
}

std::vector<Candidate> candidates(const FusedGraph& fg, const StepIndex& idx) {
  std::map<std::pair<int, int>, Candidate> by_pair;
  auto get = [&](int a, int b) -> Candidate& {
    Candidate& c = by_pair[{a, b}];
    c.a = a;
    c.b = b;
    return c;
  };
  // Producer -> consumer: b reads v from a; saves v's load, and its store when nothing else
  // needs it. Label by the first (lowest) such value.
  for (int b = 0; b < static_cast<int>(fg.nodes.size()); ++b) {
    if (!is_kernel(fg, b)) continue;
    std::vector<int> in = fg.nodes[b].inputs;
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    for (int v : in) {
      int a = idx.step_of[v];
      if (!is_kernel(fg, a) || a == b) continue;
      Candidate& c = get(std::min(a, b), std::max(a, b));
      int64_t size = value_bytes(fg.source, v);
      c.bytes += size + (idx.needed_outside(v, a, b) ? 0 : size);
      if (!c.vertical) {
        c.vertical = true;
        c.pa = value_label(fg, v);
        c.pb = value_label(fg, first_reader(fg, b, v));
      }
    }
  }
  // Siblings: two kernels reading the same value load it once.
  for (int v = 0; v < static_cast<int>(fg.source.nodes.size()); ++v) {
    std::vector<int> kernels;
    for (int s : idx.readers[v])
      if (is_kernel(fg, s)) kernels.push_back(s);
    for (size_t i = 0; i < kernels.size(); ++i)
      for (size_t j = i + 1; j < kernels.size(); ++j) {
        Candidate& c = get(kernels[i], kernels[j]);
        c.bytes += value_bytes(fg.source, v);
        if (!c.vertical && c.pa.empty()) {
          c.pa = step_label(fg, c.a);
          c.pb = step_label(fg, c.b);
        }
      }
  }
  std::vector<Candidate> out;
  for (auto& [key, c] : by_pair) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) {
    return std::make_tuple(-x.bytes, x.b - x.a, x.a, x.b) <
           std::make_tuple(-y.bytes, y.b - y.a, y.a, y.b);
  });
  return out;
}

/// Re-sorts the steps into a topological order that keeps the current order where it can
/// (among ready steps, the earliest first). Throws CompileError on a cycle.
void topo_sort(FusedGraph& fg) {
  StepIndex idx(fg);
  const int n = static_cast<int>(fg.nodes.size());
  std::vector<int> indegree(n, 0);
  for (int s = 0; s < n; ++s)
    for (int t : idx.succ[s]) ++indegree[t];
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int s = 0; s < n; ++s)
    if (indegree[s] == 0) ready.push(s);
  std::vector<FusedNode> order;
  while (!ready.empty()) {
    int s = ready.top();
    ready.pop();
    order.push_back(std::move(fg.nodes[s]));
    for (int t : idx.succ[s])
      if (--indegree[t] == 0) ready.push(t);
  }
  if (static_cast<int>(order.size()) != n)
    throw CompileError("fusion of graph @" + fg.source.name + " created a cycle between steps");
  fg.nodes = std::move(order);
}

/// The declined pairs keyed by their labels, each with the reason it was last declined for.
class RejectLog {
 public:
  void add(const Candidate& c, std::string reason) {
    auto key = std::make_tuple(c.pa, c.pb, !c.vertical);
    auto it = pos_.find(key);
    if (it == pos_.end()) {
      it = pos_.emplace(key, log_.size()).first;
      log_.push_back({RejectedFusion{c.pa, c.pb, {}, !c.vertical}, 0});
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
  RejectLog rejected;
  for (;;) {
    StepIndex idx(fg);
    bool merged = false;
    for (const Candidate& c : candidates(fg, idx)) {
      FusionDecision d = can_fuse(fg, idx, c.a, c.b, opts);
      if (!d.ok) {
        rejected.add(c, std::move(d.reason));
        continue;
      }
      FusedNode m = merge_kernels(fg, c.a, c.b);
      fg.nodes[c.a] = std::move(m);
      fg.nodes.erase(fg.nodes.begin() + c.b);
      topo_sort(fg);
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
