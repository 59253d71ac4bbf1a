// The kernel function of a scheduled reduction kernel (TilingCases reduce_inner_* and
// reduce_outer; schedule/reduce_schedule.h): per row, the passes of its ReducePlan, vector
// accumulators summed per tile and then across tiles, the row values between the passes.
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "codegen/cpu/kernel.h"
#include "codegen/cpu/values.h"
#include "graph/op_registry.h"
#include "schedule/reduce_plan.h"
#include "schedule/reduce_schedule.h"

namespace af::codegen {
namespace {

using ascir::AscGraph;
using ascir::AscNode;

/// How one reduce kind accumulates: its identity as an f32 (or bool), an f64 and an int64 lane
/// value, the vector combine, the horizontal combine.
struct ReduceKind {
  const char* op;
  const char* identity;
  const char* identity_f64;
  const char* identity_i64;
  const char* combine;
  const char* horizontal;
};

/// Vectors of a reduce_inner step: their values join pairwise before the tile's accumulator
/// (with AF_REDUCE_TILE_VECTORS = 64, a lane's chain in a tile is 8 additions).
constexpr int kTreeVectors = 8;

/// The reduce kinds kernels support (the Graph IR reduce_* rows); any / all accumulate bool.
const ReduceKind kReduceKinds[] = {
    {"reduce_sum", "0.0f", "0.0", "0", "af_add", "af_hsum"},
    {"reduce_mean", "0.0f", "0.0", "", "af_add", "af_hsum"},
    {"reduce_prod", "1.0f", "1.0", "1", "af_mul", "af_hprod"},
    {"reduce_max", "-__builtin_inff()", "-__builtin_inf()", "(-9223372036854775807LL - 1)",
     "af_maximum", "af_hmax"},
    {"reduce_min", "__builtin_inff()", "__builtin_inf()", "9223372036854775807LL", "af_minimum",
     "af_hmin"},
    {"reduce_any", "false", "", "", "af_mask_or_", "af_hany"},
    {"reduce_all", "true", "", "", "af_mask_and_", "af_hall"},
};

/// Prints the kernel function of one reduction KernelContext.
class ReducePrinter {
 public:
  explicit ReducePrinter(const KernelContext& k)
      : k_(k),
        g_(*k.g),
        inner_(g_.schedule->family == ascir::ScheduleFamily::ReduceInner),
        plan_(k.plan) {}

  std::string print() {
    analyze();
    lines_ = kernel_prologue(k_);
    line(1, "const int64_t tiling_key = td->header.tiling_key;");
    line(1, "(void)tiling_key;");
    line(1, "(void)stream_stores;");
    if (slots_ > 0)
      line(1, "alignas(64) float rowbuf[" + std::to_string(g_.schedule->ub_bytes / 4) +
                  "];  // the all_load row buffer");
    IndexDeriver idx(g_, &lines_, "  ");
    line(1, "const int64_t i" + std::to_string(k_.block_outer) + " = block_idx;  // " +
                g_.axis(k_.block_outer).name);
    line(1, "if (block_idx >= " + size_var(k_.block_outer) + ") return;");
    idx.set(k_.block_outer, "i" + std::to_string(k_.block_outer));
    int block_inner = k_.nest.at(1);
    std::string bi = "i" + std::to_string(block_inner);
    line(1, "for (int64_t " + bi + " = 0; " + bi + " < " + extent(idx, block_inner) + "; ++" + bi +
                ") {  // " + g_.axis(block_inner).name);
    idx.set(block_inner, bi);
    idx.set_indent("    ");
    if (inner_) {
      emit_row_inner(idx);
    } else {
      idx.set(k_.vec, "0", true);
      line(2, "const int64_t n = " + extent(idx, k_.vec) + ";  // columns of this chunk");
      emit_bases(idx, 2);
      line(2, "if (n == AF_LANES * AF_OUTER_VECTORS) {");
      emit_row_outer(3, false);
      line(2, "} else {  // the last chunk: fewer columns");
      emit_row_outer(3, true);
      line(2, "}");
    }
    line(1, "}");
    bool any_stream = false;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      any_stream = any_stream || (g_.nodes[i].op == "store" && streams(static_cast<int>(i)));
    if (any_stream) line(1, "if (stream_stores) af_stream_fence();");
    line(0, "}");
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

 private:
  void line(int depth, const std::string& s) { lines_.push_back(std::string(2 * depth, ' ') + s); }
  /// The expression of value i: reduce_outer row values are arrays over the chunk's vectors.
  std::string v(int i) const { return row_array_[i] ? var_[i] + "[u]" : var_[i]; }
  std::string vec_type(int i) const { return vector_type(g_.nodes[i].out.dtype); }
  /// Opens the loop over the AF_OUTER_VECTORS vectors of a reduce_outer chunk (in the tail
  /// chunk, `rem` lanes of vector u are columns: 0 to AF_LANES).
  void open_u(int depth, bool tail) {
    line(depth, "for (int u = 0; u < AF_OUTER_VECTORS; ++u) {");
    if (tail) line(depth + 1, "const int64_t rem = af_max(0, af_min(AF_LANES, n - u * AF_LANES));");
  }
  /// Node index i as text (variable and pointer names: v3, p0, q9_0).
  std::string num(int i) const { return std::to_string(i); }

  /// The accumulator type and identity vector of reduce node i (its dtype's lanes).
  std::string acc_type(int i) const { return vector_type(g_.nodes[i].out.dtype); }
  std::string identity(int i) const {
    DType t = g_.nodes[i].out.dtype;
    const ReduceKind& k = kind(i);
    std::string id = t == DType::F64 ? k.identity_f64 : is_integer(t) ? k.identity_i64 : k.identity;
    if (id.empty())
      codegen_fail(g_, "%" + g_.nodes[i].name + ": no " + std::string(dtype_name(t)) + " " +
                           g_.nodes[i].op + " on CPU");
    return splat_expr(t, id);
  }

  /// Whether reduce node i sums floats: its partials (tiles, blocks of rows) join pairwise
  /// through an af_cascade (autofuse_cpu_cascade.h), so its rounding error grows like log n.
  /// Integer sums are exact (wrapping), max/min exact; products round like eager's (linearly).
  bool cascades(int i) const {
    return std::string(kind(i).combine) == "af_add" && is_floating(g_.nodes[i].out.dtype);
  }

  const ReduceKind& kind(int i) const {
    for (const auto& r : kReduceKinds)
      if (g_.nodes[i].op == r.op) return r;
    codegen_fail(g_, "%" + g_.nodes[i].name + ": no CPU reduction for op '" + g_.nodes[i].op + "'");
  }

  void analyze() {
    const size_t n = g_.nodes.size();
    users_.assign(n, {});
    var_.assign(n, "");
    slot_.assign(n, -1);
    lane_stride_.assign(n, 0);
    row_array_.assign(n, false);
    for (size_t i = 0; i < n; ++i) {
      const AscNode& node = g_.nodes[i];
      var_[i] = "v" + std::to_string(i);
      for (int in : node.inputs) users_[in].push_back(static_cast<int>(i));
      if (node.op == "broadcast") var_[i] = var_[node.inputs.at(0)];
      bool value =
          node.op != "data" && node.op != "store" && node.op != "output" && node.op != "scalar";
      row_array_[i] = !inner_ && value && !plan_.full[i];
      if (node.op == "broadcast") row_array_[i] = row_array_[node.inputs.at(0)];
      auto it = node.attrs.find("row_buffer");
      if (it != node.attrs.end() && std::holds_alternative<int64_t>(it->second)) {
        slot_[i] = static_cast<int>(std::get<int64_t>(it->second));
        slots_ = std::max(slots_, slot_[i] + 1);
      }
      if (node.op == "data" || node.op == "store") {
        if (node.out.axes.empty() || node.out.axes.back() != k_.vec_parent)
          codegen_fail(g_, "%" + node.name + " is not laid out over the vectorized dim " +
                               g_.axis(k_.vec_parent).name);
        lane_stride_[i] = node.out.strides.back();
      }
      if (graph::is_reduce_op(node.op)) {
        identity(static_cast<int>(i));
      }
    }
    reduced_loops_ = reduced_loops(k_);
  }

  std::string extent(IndexDeriver& idx, int a) { return loop_extent(k_, idx, a); }

  /// Element offset of a data/store tensor at the start of this row (reduced indices 0).
  void emit_bases(IndexDeriver& idx, int depth) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      if (n.op != "data" && n.op != "store") continue;
      std::string e = cpp_expr(k_, n.out.offset);
      for (size_t d = 0; d < n.out.axes.size(); ++d) {
        int a = n.out.axes[d];
        if (n.out.strides[d] == sym::Expr(0)) continue;
        if (std::count(reduced_loops_.begin(), reduced_loops_.end(), a)) continue;
        if (inner_ && a == k_.vec_parent) continue;
        auto ix = idx.get(a);
        if (!ix)
          codegen_fail(g_, "%" + n.name + ": cannot derive the index of axis " + g_.axis(a).name);
        if (*ix != "0") e += " + " + *ix + " * " + cpp_expr(k_, n.out.strides[d]);
      }
      std::string t = storage_type(n.out.dtype);
      if (n.op == "data") {
        line(depth, "const " + t + "* p" + num(i) + " = in" + index_attr(n) + " + (" + e + ");");
      } else {
        for (int u : users_[i]) {
          std::string q = "q" + num(i) + "_" + index_attr(g_.nodes[u]);
          line(depth, t + "* " + q + " = out" + index_attr(g_.nodes[u]) + " + (" + e + ");");
          if (streams(static_cast<int>(i)))
            line(depth, "const bool s" + q + " = stream_stores && af_is_aligned(" + q +
                            ", AF_LANES * sizeof(*" + q + "));");
        }
      }
      const sym::Expr& ls = lane_stride_[i];
      if (ls != sym::Expr(0) && ls != sym::Expr(1))
        line(depth, "const int64_t ls" + num(i) + " = " + cpp_expr(k_, ls) + ";");
    }
  }

  /// Offset along the reduced loops of data/store node i (reduce_outer), as "" or " + ...".
  std::string reduced_offset(int i) const {
    const AscNode& n = g_.nodes[i];
    std::string e;
    for (size_t d = 0; d < n.out.axes.size(); ++d)
      if (std::count(reduced_loops_.begin(), reduced_loops_.end(), n.out.axes[d]) &&
          n.out.strides[d] != sym::Expr(0))
        e += " + i" + std::to_string(n.out.axes[d]) + " * " + cpp_expr(k_, n.out.strides[d]);
    return e;
  }

  /// The pointer to the first lane of data/store node i at element `pos` of the vectorized dim.
  std::string lane_ptr(int i, const std::string& base, const std::string& pos) const {
    const sym::Expr& ls = lane_stride_[i];
    const std::string& off = pos;
    std::string p = base + reduced_offset(i);
    if (off == "0" || ls == sym::Expr(0)) return p;
    if (ls == sym::Expr(1)) return p + " + " + off;
    return p + " + (" + off + ") * ls" + num(i);
  }

  /// A reduce_inner gather whose index is a row value reads one row of its table per row: the
  /// index is the same in every lane.
  bool row_gather(int i) const {
    return is_gather(g_.nodes[i]) && inner_ && !plan_.full[g_.nodes[i].inputs[1]];
  }

  /// After row value x: the row pointers of the gathers it indexes (row_gather).
  void emit_row_pointers(int depth, int x) {
    for (int u : users_[x]) {
      const AscNode& n = g_.nodes[u];
      if (row_gather(u) && n.inputs[1] == x) line(depth, gather_row_pointer(g_, u, v(x) + ".v[0]"));
    }
  }

  std::string load_expr(int i, const std::string& pos, bool tail) const {
    const AscNode& n = g_.nodes[i];
    int d = n.inputs.at(0);
    const AscNode& data = g_.nodes[d];
    std::string sfx = mem_suffix(g_, data, data.out.dtype);
    std::string p = lane_ptr(d, (row_gather(i) ? "g" : "p") + num(row_gather(i) ? i : d), pos);
    const sym::Expr& ls = lane_stride_[d];
    std::string t = tail ? "_n" : "", r = tail ? ", rem" : "";
    if (is_gather(n) && !row_gather(i)) return take_expr(g_, i, p, ls, v(n.inputs[1]), tail);
    if (ls == sym::Expr(0)) return "af_load1_" + sfx + "(" + p + ")";
    if (ls == sym::Expr(1)) return "af_load_" + sfx + t + "(" + p + r + ")";
    return "af_gather_" + sfx + t + "(" + p + ", ls" + num(d) + r + ")";
  }

  /// Whether full store i streams its full vectors (reduce_inner, contiguous, a float dtype;
  /// not a row over several dims, whose segments need not start aligned where the row does).
  bool streams(int i) const {
    return inner_ && reduced_loops_.empty() && plan_.full[i] && lane_stride_[i] == sym::Expr(1) &&
           is_floating(g_.nodes[i].out.dtype);
  }

  void emit_store(int depth, int i, const std::string& pos, bool tail) {
    const AscNode& n = g_.nodes[i];
    std::string sfx = mem_suffix(g_, n, n.out.dtype);
    std::string t = tail ? "_n" : "", r = tail ? ", rem" : "";
    for (int u : users_[i]) {
      std::string q = "q" + num(i) + "_" + index_attr(g_.nodes[u]);
      std::string p = lane_ptr(i, q, pos);
      const sym::Expr& ls = lane_stride_[i];
      if (ls == sym::Expr(0) && inner_) {
        line(depth, "af_store_" + sfx + "_n(" + p + ", " + v(n.inputs[0]) + ", 1);");
      } else if (streams(i) && !tail) {
        // Large outputs bypass the caches (the tiling function decides; rows start aligned).
        line(depth, "if (s" + q + ") af_stream_" + sfx + "(" + p + ", " + v(n.inputs[0]) +
                        "); else af_store_" + sfx + "(" + p + ", " + v(n.inputs[0]) + ");");
      } else if (ls == sym::Expr(1)) {
        line(depth, "af_store_" + sfx + t + "(" + p + ", " + v(n.inputs[0]) + r + ");");
      } else if (ls == sym::Expr(0)) {
        codegen_fail(g_, "store %" + n.name + " has stride 0 on the vectorized axis");
      } else {
        line(depth, "af_scatter_" + sfx + t + "(" + p + ", ls" + num(i) + ", " + v(n.inputs[0]) +
                        r + ");");
      }
    }
  }

  /// The value of a non-full compute node (a row value): load, scalar, cast or elementwise op.
  void emit_row_value(int depth, int i, bool tail) {
    const AscNode& n = g_.nodes[i];
    if (n.op == "data" || n.op == "store" || n.op == "output" || n.op == "broadcast") return;
    if (graph::is_reduce_op(n.op)) return;
    std::string rhs;
    std::string pos = row_array_[i] ? "u * AF_LANES" : "0";
    if (n.op == "load") {
      rhs = load_expr(i, pos, tail);
    } else {
      std::vector<std::string> args;
      for (int in : n.inputs) args.push_back(v(in));
      rhs = compute_expr(g_, i, args, users_[i], tail);
    }
    if (!row_array_[i]) {
      line(depth, "const auto " + v(i) + " = " + rhs + ";  // %" + n.name + " " + n.op);
      return;
    }
    line(depth, vec_type(i) + " " + var_[i] + "[AF_OUTER_VECTORS];  // %" + n.name + " " + n.op);
    open_u(depth, tail);
    line(depth + 1, v(i) + " = " + rhs + ";");
    line(depth, "}");
  }

  /// The full nodes pass `p` computes, in topological order. With `buffered` (all_load), the
  /// row-buffer values of stage p are computed (and written), earlier ones read back.
  std::vector<int> pass_nodes(int p, bool buffered) const {
    const size_t n = g_.nodes.size();
    std::vector<char> need(n, 0);
    std::vector<int> stack;
    for (size_t i = 0; i < n; ++i) {
      const AscNode& node = g_.nodes[i];
      if (graph::is_reduce_op(node.op) && plan_.stage[node.inputs[0]] == p)
        stack.push_back(node.inputs[0]);
      if (node.op == "store" && plan_.full[i] && plan_.stage[i] == p)
        stack.push_back(node.inputs[0]);
      if (buffered && slot_[i] >= 0 && plan_.stage[i] == p) stack.push_back(static_cast<int>(i));
    }
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      if (need[x] || !plan_.full[x] || g_.nodes[x].op == "data") continue;
      need[x] = 1;
      if (buffered && slot_[x] >= 0 && plan_.stage[x] < p) continue;  // read from the buffer
      for (int in : g_.nodes[x].inputs) stack.push_back(in);
    }
    std::vector<int> out;
    for (size_t i = 0; i < n; ++i)
      if (need[i]) out.push_back(static_cast<int>(i));
    return out;
  }

  std::vector<int> pass_reduces(int p) const {
    std::vector<int> out;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (graph::is_reduce_op(g_.nodes[i].op) && plan_.stage[g_.nodes[i].inputs[0]] == p)
        out.push_back(static_cast<int>(i));
    return out;
  }

  /// One vector step of pass p at element `pos` of the row: the full values, the accumulator
  /// updates (into partial `acc`) and the full stores of stage p.
  /// The stride from one row to the next of data node d (reduce_inner, a contiguous row in a
  /// tensor with one kept dim), or nullopt: where the next row's input can be prefetched.
  std::optional<sym::Expr> next_row_stride(int d) const {
    const AscNode& n = g_.nodes[d];
    if (!inner_ || !reduced_loops_.empty() || lane_stride_[d] != sym::Expr(1)) return std::nullopt;
    std::optional<sym::Expr> stride;
    for (size_t k = 0; k + 1 < n.out.axes.size(); ++k) {
      if (n.out.strides[k] == sym::Expr(0)) continue;
      if (stride) return std::nullopt;
      stride = n.out.strides[k];
    }
    return stride;
  }

  /// How a step's reduce input joins its reduction: the line for reduce node i and value x.
  using Sink = std::function<std::string(int i, const std::string& x)>;

  /// The sink accumulating into partial `a<i><acc>` (acc: "", "[u]").
  Sink accumulate(const std::string& acc) const {
    return [this, acc](int i, const std::string& x) {
      std::string a = "a" + num(i) + acc;
      return a + " = " + kind(i).combine + "(" + a + ", " + x + ");";
    };
  }

  void emit_step(int depth, int p, bool buffered, const std::string& pos, bool tail,
                 const Sink& sink) {
    std::string t = tail ? "_n" : "", r = tail ? ", rem" : "";
    std::string R = size_var(k_.vec_parent);
    if (p == 1 && !tail) {
      // Pass 1 computes from the buffer or the caches: overlap it with the memory reads of
      // the next row's pass 0.
      for (size_t d = 0; d < g_.nodes.size(); ++d) {
        if (g_.nodes[d].op != "data") continue;
        if (auto s = next_row_stride(static_cast<int>(d)))
          line(depth, "af_prefetch(p" + num(static_cast<int>(d)) + " + " + cpp_expr(k_, *s) +
                          " + " + pos + ");");
      }
    }
    for (int i : pass_nodes(p, buffered)) {
      const AscNode& n = g_.nodes[i];
      if (n.op == "broadcast") continue;
      std::string buf = "rowbuf + " + std::to_string(slot_[i]) + " * " + R + " + " + pos;
      std::string rhs;
      if (buffered && slot_[i] >= 0 && plan_.stage[i] < p) {
        rhs = "af_load_f32" + t + "(" + buf + r + ")";
      } else if (n.op == "load") {
        rhs = load_expr(i, pos, tail);
      } else {
        std::vector<std::string> args;
        for (int in : n.inputs) args.push_back(v(in));
        rhs = compute_expr(g_, i, args, users_[i], tail);
      }
      line(depth, "const auto " + v(i) + " = " + rhs + ";  // %" + n.name + " " + n.op);
      if (buffered && slot_[i] >= 0 && plan_.stage[i] == p)
        line(depth, "af_store_f32" + t + "(" + buf + ", " + v(i) + r + ");");
    }
    for (int i : pass_reduces(p)) {
      std::string x = v(g_.nodes[i].inputs[0]);
      if (tail && inner_) x = "af_fill_tail(" + x + ", rem, " + identity(i) + ")";
      line(depth, sink(i, x));
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].op == "store" && plan_.full[i] && plan_.stage[i] == p)
        emit_store(depth, static_cast<int>(i), pos, tail);
  }

  /// The value of reduce node i after its pass: horizontal (inner) or per column (outer).
  void emit_finalize(int depth, int i) {
    const ReduceKind& rk = kind(i);
    const DType t = g_.nodes[i].out.dtype;
    std::string acc = "acc" + num(i);
    std::string count;
    if (g_.nodes[i].op == "reduce_mean") {
      sym::Expr c = inner_ ? g_.axis(k_.vec_parent).size : sym::Expr(1);
      for (int a : reduced_loops_) c = c * g_.axis(a).size;
      count = splat_expr(
          t, std::string(t == DType::F64 ? "static_cast<double>(" : "static_cast<float>(") +
                 cpp_expr(k_, c) + ")");
    }
    std::string value = inner_ ? acc : acc + "[u]";
    if (inner_) value = splat_expr(t, std::string(rk.horizontal) + "(" + acc + ")");
    if (!count.empty()) value = "af_div(" + value + ", " + count + ")";
    // A narrow integer total (a sum or product with dtype=) wraps to its width, as eager's.
    if (is_integer(t) && t != DType::I64)
      value = "af_to_" + mem_suffix(g_, g_.nodes[i], t) + "(" + value + ")";
    std::string note = "  // %" + g_.nodes[i].name + " " + g_.nodes[i].op;
    if (inner_) {
      line(depth, "const auto " + v(i) + " = " + value + ";" + note);
      return;
    }
    line(depth, acc_type(i) + " " + var_[i] + "[AF_OUTER_VECTORS];" + note);
    line(depth, "for (int u = 0; u < AF_OUTER_VECTORS; ++u) " + v(i) + " = " + value + ";");
  }

  /// The pairwise combination of step partials r<i>[lo, hi) of reduce node i.
  std::string tree(int i, int lo, int hi) const {
    if (hi - lo == 1) return "r" + num(i) + "[" + std::to_string(lo) + "]";
    int mid = (lo + hi) / 2;
    return std::string(kind(i).combine) + "(" + tree(i, lo, mid) + ", " + tree(i, mid, hi) + ")";
  }

  /// The sink writing a step's value into partial r<i>[k] of a group of steps.
  Sink partial(int k) const {
    return [this, k](int i, const std::string& x) {
      return "r" + num(i) + "[" + std::to_string(k) + "] = " + x + ";";
    };
  }

  /// A group's partials r<i>[0, n) of each reduce node of `reduces` declared, and (`join`)
  /// joined pairwise into accumulator a<i><acc>.
  void emit_group(int depth, const std::vector<int>& reduces, int n, bool join,
                  const std::string& acc) {
    for (int i : reduces) {
      const std::string a = "a" + num(i) + acc;
      line(depth, join ? a + " = " + kind(i).combine + "(" + a + ", " + tree(i, 0, n) + ");"
                       : acc_type(i) + " r" + num(i) + "[" + std::to_string(n) + "];");
    }
  }

  /// Declares the row accumulators of pass p.
  void emit_accumulators(int depth, int p) {
    for (int i : pass_reduces(p)) {
      if (inner_) {
        line(depth, acc_type(i) + " acc" + num(i) + " = " + identity(i) + ";");
      } else {
        line(depth, acc_type(i) + " acc" + num(i) + "[AF_OUTER_VECTORS];");
        line(depth, "for (int u = 0; u < AF_OUTER_VECTORS; ++u) acc" + num(i) +
                        "[u] = " + identity(i) + ";");
      }
      if (cascades(i))
        line(depth, "af_cascade<" + acc_type(i) + (inner_ ? "" : ", AF_OUTER_VECTORS") + "> cs" +
                        num(i) + ";  // the partials, summed pairwise");
    }
  }

  /// After a pass: the cascaded partials of its sums join their accumulators.
  void emit_cascade_totals(int depth, int p) {
    for (int i : pass_reduces(p))
      if (cascades(i))
        line(depth, "cs" + num(i) + ".add_to(" + (inner_ ? "&" : "") + "acc" + num(i) + ");");
  }

  /// Partial `part` of reduce node i joins its row: pairwise (cascades) or into the accumulator.
  void emit_join(int depth, int i, const std::string& part) {
    const std::string acc = "acc" + num(i) + (inner_ ? "" : "[u]");
    if (!cascades(i)) {
      std::string loop = inner_ ? "" : "for (int u = 0; u < AF_OUTER_VECTORS; ++u) ";
      line(depth, loop + acc + " = " + kind(i).combine + "(" + acc + ", " + part + ");");
    } else if (inner_) {
      line(depth,
           "{ const " + acc_type(i) + " part = " + part + "; cs" + num(i) + ".add(&part); }");
    } else {
      line(depth, "cs" + num(i) + ".add(" + part + ");");
    }
  }

  /// Row values of stage s (after the reductions of pass s - 1), in topological order.
  void emit_row_values(int depth, int s, bool tail) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      if (plan_.full[i] || plan_.stage[i] != s) continue;
      if (graph::is_reduce_op(n.op)) {
        emit_finalize(depth, static_cast<int>(i));
        continue;
      }
      emit_row_value(depth, static_cast<int>(i), tail);
      emit_row_pointers(depth, static_cast<int>(i));
    }
  }

  void emit_row_stores(int depth, bool tail) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (g_.nodes[i].op != "store" || plan_.full[i]) continue;
      if (inner_) {
        emit_store(depth, static_cast<int>(i), "0", tail);
        continue;
      }
      open_u(depth, tail);
      emit_store(depth + 1, static_cast<int>(i), "u * AF_LANES", tail);
      line(depth, "}");
    }
  }

  /// reduce_inner: one row; every pass tiles the row, steps of kTreeVectors vectors per tile.
  void emit_row_inner(IndexDeriver& idx) {
    emit_bases(idx, 2);
    std::string R = size_var(k_.vec_parent);
    std::string T = size_var(k_.vec);
    emit_row_values(2, 0, false);
    for (int p = 0; p < plan_.passes; ++p) {
      emit_accumulators(2, p);
      bool two = slots_ > 0;
      if (two) {
        line(2, "if (tiling_key == 0) {  // reduce_inner_all_load");
        emit_pass_inner(3, p, true, R, T);
        line(2, "} else {  // reduce_inner_split");
        emit_pass_inner(3, p, false, R, T);
        line(2, "}");
      } else {
        emit_pass_inner(2, p, false, R, T);
      }
      emit_row_values(2, p + 1, false);
    }
    emit_row_stores(2, false);
  }

  void emit_pass_inner(int outer_depth, int p, bool buffered, const std::string& R,
                       const std::string& T) {
    std::vector<int> reduces = pass_reduces(p);
    int depth = outer_depth;
    for (int a : reduced_loops_) {  // a row over several dims: the outer reduced dims
      std::string iv = "i" + std::to_string(a);
      line(depth++, "for (int64_t " + iv + " = 0; " + iv + " < " + size_var(a) + "; ++" + iv +
                        ") {  // " + g_.axis(a).name);
    }
    line(depth, "for (int64_t t = 0; t < " + R + "; t += " + T + ") {  // pass " +
                    std::to_string(p) + " over tiles of the row");
    line(depth + 1, "const int64_t n = af_min(" + T + ", " + R + " - t);");
    for (int i : reduces) line(depth + 1, acc_type(i) + " a" + num(i) + " = " + identity(i) + ";");
    // Steps of kTreeVectors vectors: their values join pairwise, then the tile's accumulator,
    // so a lane of a full tile (AF_REDUCE_TILE_VECTORS) adds only 64 / 8 = 8 values in sequence.
    const std::string step = std::to_string(kTreeVectors) + " * AF_LANES";
    line(depth + 1, "int64_t j = 0;");
    line(depth + 1, "for (; j + " + step + " <= n; j += " + step + ") {");
    emit_group(depth + 2, reduces, kTreeVectors, false, "");
    for (int k = 0; k < kTreeVectors; ++k) {
      line(depth + 2, "{");
      const std::string pos = k == 0 ? "t + j" : "t + j + " + std::to_string(k) + " * AF_LANES";
      emit_step(depth + 3, p, buffered, pos, false, partial(k));
      line(depth + 2, "}");
    }
    emit_group(depth + 2, reduces, kTreeVectors, true, "");
    line(depth + 1, "}");
    line(depth + 1, "for (; j + AF_LANES <= n; j += AF_LANES) {");
    emit_step(depth + 2, p, buffered, "t + j", false, accumulate(""));
    line(depth + 1, "}");
    line(depth + 1, "if (j < n) {  // the tail: fewer than AF_LANES elements");
    line(depth + 2, "const int64_t rem = n - j;");
    emit_step(depth + 2, p, buffered, "t + j", true, accumulate(""));
    line(depth + 1, "}");
    for (int i : reduces) emit_join(depth + 1, i, "a" + num(i));
    line(depth, "}");
    for (; depth > outer_depth; --depth) line(depth - 1, "}");
    emit_cascade_totals(outer_depth, p);
  }

  /// reduce_outer: one chunk of AF_OUTER_VECTORS x AF_LANES columns (`tail`: the last, n of
  /// them); the reduced dims are loops, the innermost summed in partials of AF_OUTER_CHAIN rows
  /// (sums: joined pairwise, af_cascade);
  /// each step loads one row segment of the chunk vector by vector.
  void emit_row_outer(int depth, bool tail) {
    emit_row_values(depth, 0, tail);
    for (int p = 0; p < plan_.passes; ++p) {
      std::vector<int> reduces = pass_reduces(p);
      emit_accumulators(depth, p);
      int d = depth;
      for (size_t l = 0; l < reduced_loops_.size(); ++l) {
        int a = reduced_loops_[l];
        std::string iv = "i" + std::to_string(a);
        bool innermost = l + 1 == reduced_loops_.size();
        if (!innermost) {
          line(d, "for (int64_t " + iv + " = 0; " + iv + " < " + size_var(a) + "; ++" + iv + ") {");
          ++d;
          continue;
        }
        line(d, "for (int64_t c0 = 0; c0 < " + size_var(a) + "; c0 += AF_OUTER_CHAIN) {");
        for (int i : reduces) {
          line(d + 1, acc_type(i) + " a" + num(i) + "[AF_OUTER_VECTORS];");
          line(d + 1, "for (int u = 0; u < AF_OUTER_VECTORS; ++u) a" + num(i) +
                          "[u] = " + identity(i) + ";");
        }
        line(d + 1, "const int64_t c1 = af_min(c0 + AF_OUTER_CHAIN, " + size_var(a) + ");");
        // Rows in pairs: a pair's values join before the accumulator, so a column's chain in a
        // block of AF_OUTER_CHAIN rows is AF_OUTER_CHAIN / 2 additions (of equal weight).
        line(d + 1, "int64_t " + iv + " = c0;");
        line(d + 1, "for (; " + iv + " + 1 < c1; " + iv + " += 2) {");
        open_u(d + 2, tail);
        emit_group(d + 3, reduces, 2, false, "[u]");
        for (int k = 0; k < 2; ++k) {
          line(d + 3, "{");
          if (k == 1) {  // the second row: the row index shadowed by the next one
            line(d + 4, "const int64_t next = " + iv + " + 1;");
            line(d + 4, "const int64_t " + iv + " = next;");
          }
          emit_step(d + 4, p, false, "u * AF_LANES", tail, partial(k));
          line(d + 3, "}");
        }
        emit_group(d + 3, reduces, 2, true, "[u]");
        line(d + 2, "}");
        line(d + 1, "}");
        line(d + 1, "if (" + iv + " < c1) {  // an odd row last");
        open_u(d + 2, tail);
        emit_step(d + 3, p, false, "u * AF_LANES", tail, accumulate("[u]"));
        line(d + 2, "}");
        line(d + 1, "}");
        for (int i : reduces)
          emit_join(d + 1, i, cascades(i) ? "a" + num(i) : "a" + num(i) + "[u]");
        line(d, "}");
      }
      for (; d > depth; --d) line(d - 1, "}");
      emit_cascade_totals(depth, p);
      emit_row_values(depth, p + 1, tail);
    }
    emit_row_stores(depth, tail);
  }

  const KernelContext& k_;
  const AscGraph& g_;
  const bool inner_;
  const schedule::ReducePlan& plan_;
  std::vector<std::string> lines_;
  std::vector<std::vector<int>> users_;
  std::vector<std::string> var_;
  std::vector<int> slot_;
  std::vector<sym::Expr> lane_stride_;
  std::vector<bool> row_array_;  // reduce_outer row values: one vector per chunk vector
  std::vector<int> reduced_loops_;
  int slots_ = 0;
};

}  // namespace

std::string emit_reduce_kernel_function(const KernelContext& k) {
  return ReducePrinter(k).print();
}

}  // namespace af::codegen
