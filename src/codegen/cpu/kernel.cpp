// The kernel function of one scheduled AscGraph: the loop nest of its schedule, per-tile base
// pointers from the data/store strides, and the op chain in registers per vector step.
#include "codegen/cpu/kernel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "codegen/cpu/values.h"
#include "support/error.h"

namespace af::codegen {
namespace {

using ascir::AscGraph;
using ascir::AscNode;
using ascir::AxisKind;

[[noreturn]] void fail(const AscGraph& g, const std::string& what) {
  codegen_fail(g, what);
}

/// Prints the kernel function of one KernelContext.
class KernelPrinter {
 public:
  explicit KernelPrinter(const KernelContext& k) : k_(k), g_(*k.g) {}

  std::string print() {
    analyze_values();
    lines_ = kernel_prologue(k_);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (level_[i] == 0) emit_value(1, static_cast<int>(i), false);
    emit_nest();
    if (!streamed_stores().empty()) line(1, "if (stream_stores) af_stream_fence();");
    line(0, "}");
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

 private:
  /// What a vector step writes: full vectors, full vectors with streaming stores, or the tail.
  enum class Step { Full, Stream, Tail };

  void line(int depth, const std::string& s) { lines_.push_back(std::string(2 * depth, ' ') + s); }

  /// Lane stride of every data/store node (coefficient of the vectorized index), users, levels:
  /// 0 = kernel-invariant, 1 = tile-invariant (hoisted out of the vector loop), 2 = per step.
  void analyze_values() {
    size_t n = g_.nodes.size();
    lane_stride_.assign(n, 0);
    level_.assign(n, -1);
    users_.assign(n, {});
    var_.assign(n, "");
    for (size_t i = 0; i < n; ++i)
      for (int in : g_.nodes[i].inputs) users_[in].push_back(static_cast<int>(i));
    for (size_t i = 0; i < n; ++i) {
      const AscNode& node = g_.nodes[i];
      if (node.op == "data" || node.op == "store") lane_stride_[i] = lane_stride(k_, node);
      var_[i] = "v" + std::to_string(i);
      if (node.op == "data" || node.op == "output") continue;
      if (node.op == "scalar") {
        level_[i] = 0;
      } else if (node.op == "load") {
        level_[i] = lane_stride_[node.inputs[0]] == sym::Expr(0) ? 1 : 2;
        if (is_gather(node)) level_[i] = std::max(level_[i], level_[node.inputs[1]]);
      } else if (node.op == "store") {
        level_[i] = 2;
      } else {
        level_[i] = 0;
        for (int in : node.inputs) level_[i] = std::max(level_[i], level_[in]);
        if (node.op == "broadcast") var_[i] = var_[node.inputs[0]];
      }
    }
  }

  std::string elem(DType t) { return storage_type(t); }

  /// The loops of the nest down to the tile, then the tile body.
  void emit_nest() {
    IndexDeriver idx(g_, &lines_, "  ");
    line(1, "const int64_t i" + std::to_string(k_.block_outer) + " = block_idx;  // " +
                g_.axis(k_.block_outer).name);
    line(1, "if (block_idx >= " + size_var(k_.block_outer) + ") return;");
    idx.set(k_.block_outer, "i" + std::to_string(k_.block_outer));
    int depth = 1;
    for (size_t l = 1; l + 1 < k_.nest.size(); ++l) {
      int a = k_.nest[l];
      idx.set_indent(std::string(2 * depth, ' '));
      std::string var = "i" + std::to_string(a);
      line(depth, "for (int64_t " + var + " = 0; " + var + " < " + extent(idx, a) + "; ++" + var +
                      ") {  // " + g_.axis(a).name);
      idx.set(a, var);
      ++depth;
    }
    idx.set_indent(std::string(2 * depth, ' '));
    idx.set(k_.vec, "0", true);
    line(depth, "const int64_t n = " + extent(idx, k_.vec) + ";  // elements of this tile");
    emit_bases(idx, depth);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (level_[i] != 1) continue;
      emit_row_pointer(depth, static_cast<int>(i));
      emit_value(depth, static_cast<int>(i), false);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (level_[i] == 2) emit_row_pointer(depth, static_cast<int>(i));
    line(depth, "int64_t j = 0;");
    std::vector<int> streamed = streamed_stores();
    if (!streamed.empty()) {
      // Large outputs (the tiling function decides): full vectors bypass the caches when every
      // streamed output of this tile starts on a vector boundary.
      std::string cond = "stream_stores";
      for (int i : streamed)
        for (int u : users_[i]) {
          std::string q = "q" + std::to_string(i) + "_" + index_attr(g_.nodes[u]);
          cond += " && af_is_aligned(" + q + ", AF_LANES * sizeof(*" + q + "))";
        }
      line(depth, "if (" + cond + ") {");
      emit_full_loops(depth + 1, Step::Stream);
      line(depth, "} else {");
      emit_full_loops(depth + 1, Step::Full);
      line(depth, "}");
    } else {
      emit_full_loops(depth, Step::Full);
    }
    line(depth, "if (j < n) {  // the tail: fewer than AF_LANES elements");
    line(depth + 1, "const int64_t rem = n - j;");
    emit_step(depth + 1, Step::Tail);
    line(depth, "}");
    for (; depth > 1; --depth) line(depth - 1, "}");
  }

  std::string extent(IndexDeriver& idx, int a) { return loop_extent(k_, idx, a); }

  void emit_bases(IndexDeriver& idx, int depth) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      bool loaded = n.op == "data" && std::any_of(users_[i].begin(), users_[i].end(),
                                                  [&](int u) { return g_.nodes[u].op == "load"; });
      if (!loaded && n.op != "store") continue;
      std::string base = tile_base_offset(k_, idx, n);
      std::string t = elem(n.out.dtype);
      if (n.op == "data") {
        line(depth, "const " + t + "* p" + std::to_string(i) + " = in" + index_attr(n) + " + (" +
                        base + ");");
      } else {
        for (int u : users_[i])
          line(depth, t + "* q" + std::to_string(i) + "_" + index_attr(g_.nodes[u]) + " = out" +
                          index_attr(g_.nodes[u]) + " + (" + base + ");");
        if (lane_stride_[i] == sym::Expr(0))
          fail(g_, "store %" + n.name + " has stride 0 on the vectorized axis");
      }
      if (lane_stride_[i] != sym::Expr(1) && lane_stride_[i] != sym::Expr(0))
        line(depth, "const int64_t ls" + std::to_string(i) + " = " + cpp_expr(k_, lane_stride_[i]) +
                        ";  // gather/scatter stride");
    }
  }

  /// The loops over the full vectors of a tile: two independent steps per iteration (more
  /// work in flight for the out-of-order core; the exp/div chains are long), then one.
  void emit_full_loops(int depth, Step step) {
    line(depth, "for (; j + 2 * AF_LANES <= n; j += 2 * AF_LANES) {");
    for (const char* j : {"j", "(j + AF_LANES)"}) {
      j_ = j;
      line(depth + 1, "{");
      emit_step(depth + 2, step);
      line(depth + 1, "}");
    }
    j_ = "j";
    line(depth, "}");
    line(depth, "if (j + AF_LANES <= n) {");
    emit_step(depth + 1, step);
    line(depth + 1, "j += AF_LANES;");
    line(depth, "}");
  }

  /// Stores that may use non-temporal stores: contiguous along the vectorized axis, floats.
  std::vector<int> streamed_stores() const {
    std::vector<int> out;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      if (n.op == "store" && lane_stride_[i] == sym::Expr(1) && is_floating(n.out.dtype))
        out.push_back(static_cast<int>(i));
    }
    return out;
  }

  /// One vector step: every per-step value, then every store. Tail: only `rem` lanes.
  void emit_step(int depth, Step step) {
    bool tail = step == Step::Tail;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (level_[i] == 2 && g_.nodes[i].op != "store") emit_value(depth, static_cast<int>(i), tail);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].op == "store") emit_store(depth, static_cast<int>(i), step);
  }

  void emit_store(int depth, int i, Step step) {
    bool tail = step == Step::Tail;
    const AscNode& n = g_.nodes[i];
    const AscNode& value = g_.nodes[n.inputs[0]];
    if (vector_type(n.out.dtype) != vector_type(value.out.dtype))
      fail(g_, "store %" + n.name + " writes " + std::string(dtype_name(n.out.dtype)) + " from a " +
                   std::string(dtype_name(value.out.dtype)) + " value");
    std::string sfx = mem_suffix(g_, n, n.out.dtype);
    std::string v = var_[n.inputs[0]];
    std::string n_arg = tail ? ", rem" : "";
    std::string fn_tail = tail ? "_n" : "";
    bool contiguous = lane_stride_[i] == sym::Expr(1);
    for (int u : users_[i]) {
      std::string q = "q" + std::to_string(i) + "_" + index_attr(g_.nodes[u]);
      bool stream = step == Step::Stream && is_floating(n.out.dtype);
      if (contiguous)
        line(depth, std::string(stream ? "af_stream_" : "af_store_") + sfx + fn_tail + "(" + q +
                        " + " + j_ + ", " + v + n_arg + ");");
      else
        line(depth, "af_scatter_" + sfx + fn_tail + "(" + q + " + " + j_ + " * ls" +
                        std::to_string(i) + ", ls" + std::to_string(i) + ", " + v + n_arg + ");");
    }
  }

  /// A gather whose index is the same for the whole tile reads one row: its pointer, at the
  /// checked index, is computed once per tile (then it loads like any load).
  void emit_row_pointer(int depth, int i) {
    const AscNode& n = g_.nodes[i];
    if (is_gather(n) && level_[n.inputs[1]] <= 1)
      line(depth, gather_row_pointer(g_, i, var_[n.inputs[1]] + ".v[0]"));
  }
  std::string row_ptr(int i) const { return "g" + std::to_string(i); }

  void emit_value(int depth, int i, bool tail) {
    const AscNode& n = g_.nodes[i];
    if (n.op == "broadcast") return;  // a vector already holds the value in every lane
    std::string rhs = value_expr(i, tail);
    if (rhs.empty()) return;
    line(depth, "const auto " + var_[i] + " = " + rhs + ";  // %" + n.name + " " + n.op);
  }

  std::string value_expr(int i, bool tail) {
    const AscNode& n = g_.nodes[i];
    std::vector<std::string> args;
    for (int in : n.inputs) args.push_back(var_[in]);
    if (n.op == "load") {
      int d = n.inputs[0];
      const AscNode& data = g_.nodes[d];
      std::string sfx = mem_suffix(g_, data, data.out.dtype);
      if (vector_type(n.out.dtype) != vector_type(data.out.dtype))
        fail(g_, "load %" + n.name + " reads " + std::string(dtype_name(data.out.dtype)) + " as " +
                     std::string(dtype_name(n.out.dtype)));
      std::string p = "p" + std::to_string(d);
      std::string n_arg = tail ? ", rem" : "";
      std::string fn_tail = tail ? "_n" : "";
      if (is_gather(n)) {
        if (level_[n.inputs[1]] <= 1) {
          p = row_ptr(i);
        } else {  // lane by lane
          const sym::Expr& ls = lane_stride_[d];
          std::string at = ls == sym::Expr(0)   ? p
                           : ls == sym::Expr(1) ? p + " + " + j_
                                                : p + " + " + j_ + " * ls" + std::to_string(d);
          return take_expr(g_, i, at, ls, var_[n.inputs[1]], tail);
        }
      }
      if (level_[i] == 1) return "af_load1_" + sfx + "(" + p + ")";
      if (lane_stride_[d] == sym::Expr(1))
        return "af_load_" + sfx + fn_tail + "(" + p + " + " + j_ + n_arg + ")";
      std::string ls = "ls" + std::to_string(d);
      return "af_gather_" + sfx + fn_tail + "(" + p + " + " + j_ + " * " + ls + ", " + ls + n_arg +
             ")";
    }
    return compute_expr(g_, i, args, users_[i], tail);
  }

  const KernelContext& k_;
  const AscGraph& g_;
  std::vector<std::string> lines_;
  std::vector<sym::Expr> lane_stride_;
  std::vector<int> level_;
  std::vector<std::vector<int>> users_;
  std::vector<std::string> var_;
  std::string j_ = "j";  // the element index of the vector step being printed
};

}  // namespace

std::vector<std::string> kernel_prologue(const KernelContext& k) {
  const AscGraph& g = *k.g;
  std::vector<std::string> out;
  auto line = [&](const std::string& text) { out.push_back("  " + text); };
  out.push_back("AF_EXPORT void " + k.name +
                "_kernel(void* const* args, const void* tiling_data, int64_t block_idx) {");
  line("const " + k.name + "_TilingData* td = static_cast<const " + k.name +
       "_TilingData*>(tiling_data);");
  for (const auto& [name, var] : k.sym_var) line("const int64_t " + var + " = td->" + var + ";");
  for (const auto& a : g.axes)
    line("const int64_t " + size_var(a.id) + " = " + cpp_expr(k, a.size) + ";  // " + a.name);
  line("const int64_t stream_stores = td->stream_stores;");
  for (const AscNode& n : g.nodes) {
    if (n.op == "data") {
      mem_suffix(g, n, n.out.dtype);
      std::string t = storage_type(n.out.dtype);
      line("const " + t + "* in" + index_attr(n) + " = static_cast<const " + t + "*>(args[" +
           index_attr(n) + "]);  // %" + n.name);
    } else if (n.op == "output") {
      const AscNode& store = g.nodes[n.inputs[0]];
      mem_suffix(g, store, store.out.dtype);
      std::string t = storage_type(store.out.dtype);
      line(t + "* out" + index_attr(n) + " = static_cast<" + t + "*>(args[" +
           std::to_string(k.num_inputs) + " + " + index_attr(n) + "]);  // %" + n.name);
    }
  }
  return out;
}

bool is_reduce_case(const KernelContext& k) {
  return ascir::is_reduce(k.g->schedule->family);
}

std::string emit_kernel_function(const KernelContext& k) {
  if (is_reduce_case(k)) return emit_reduce_kernel_function(k);
  return KernelPrinter(k).print();
}

}  // namespace af::codegen
