// The CUDA kernel and tiling printer (kernel.h).
#include "codegen/cuda/kernel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

#include "codegen/cuda/ops.h"
#include "codegen/tiling_data.h"
#include "graph/op_registry.h"
#include "support/error.h"

namespace af::codegen {
namespace {

using ascir::AscGraph;
using ascir::AscNode;

/// The dtype an op's registry form is chosen by: its operand's (where: its value operands').
DType operand_dtype(const AscGraph& g, const AscNode& n) {
  return g.nodes.at(static_cast<size_t>(n.inputs.at(n.op == "where" ? 1 : 0))).out.dtype;
}

std::vector<std::string> placeholder_args(size_t n) {
  std::vector<std::string> args;
  for (size_t i = 0; i < n; ++i) args.push_back("x" + std::to_string(i));
  return args;
}

/// A constant as a CUDA literal of lane type `lane` (inf and NaN by their bits).
std::string literal(const AscNode& n) {
  const Attr& v = n.attrs.at("value");
  if (n.out.dtype == DType::Bool) return std::get<int64_t>(v) ? "true" : "false";
  if (!is_floating(n.out.dtype)) return std::to_string(std::get<int64_t>(v)) + "LL";
  const double* d = std::get_if<double>(&v);
  double x = d ? *d : static_cast<double>(std::get<int64_t>(v));
  if (std::isnan(x)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(x)) return x > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9gf", static_cast<double>(static_cast<float>(x)));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

}  // namespace

std::string cuda_node_reason(const AscGraph& g) {
  for (const AscNode& n : g.nodes) {
    if (!cuda_lane_type(n.out.dtype))
      return "%" + n.name + " is " + std::string(dtype_name(n.out.dtype)) +
             ", which CUDA kernels do not compute";
    const graph::OpDef* def = graph::find_op(n.op);
    if (graph::is_reduce_op(n.op) && !cuda_reduce_form(n.op, n.out.dtype))
      return "%" + n.name + ": no CUDA form of " + n.op + " on " +
             std::string(dtype_name(n.out.dtype));
    if (!def || def->cls != graph::OpClass::Elementwise) continue;
    const DType t = operand_dtype(g, n);
    if (!cuda_lane_type(t) || !cuda_op_expr(n.op, t, placeholder_args(n.inputs.size()), n.attrs))
      return "%" + n.name + ": no CUDA form of " + n.op + " on " + std::string(dtype_name(t));
  }
  return "";
}

std::string cuda_kernel_reason(const AscGraph& g) {
  if (!g.schedule) return "the kernel is not scheduled";
  const ascir::ScheduleFamily family = g.schedule->family;
  if (std::string why = cuda_node_reason(g); !why.empty()) return why;
  try {
    KernelContext k = analyze_kernel(g, kernel_c_name(g.name));
    if (family == ascir::ScheduleFamily::ReduceInner &&
        (k.nest.size() != 4 || !reduced_loops(k).empty()))
      return "a reduce_inner kernel over several reduced dims (the CUDA target reduces one)";
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

namespace {

/// Whether data or store node `n` of `k` moves the elements of a tile contiguously (lane stride
/// 1 on the full nest).
bool moves_contiguously(const KernelContext& k, const AscNode& n) {
  return (n.op == "data" || n.op == "store") && n.sched_axes == k.nest &&
         lane_stride(k, n) == sym::Expr(1);
}

/// The elements a thread of kernel `k` moves at a time where aligned: 16 bytes of the widest
/// element the tile reads or writes contiguously (f32: 4, bf16: 8); 1 when it moves none so.
int vector_lanes(const KernelContext& k) {
  if (k.g->schedule && k.g->schedule->family == ascir::ScheduleFamily::ReduceOuter)
    return 1;  // a thread per column: its loads stride over rows
  int64_t widest = 0;
  for (const AscNode& n : k.g->nodes)
    if (moves_contiguously(k, n)) widest = std::max<int64_t>(widest, dtype_size(n.out.dtype));
  return widest ? static_cast<int>(16 / widest) : 1;
}

/// Whether the tiles of an elementwise kernel `k`'s block run side by side, each on a group of
/// the block's threads (the block-inner loop, nest[1], spread over the groups); a reduction's
/// threads share one tile (its joins span the block).
bool tiles_side_by_side(const KernelContext& k) {
  return k.plan.full.empty() && k.nest.size() >= 3 &&
         k.g->axis(k.nest[1]).size.as_symbol() == k.block_param;
}

}  // namespace

std::string cuda_tiling_data(const KernelContext& k) {
  std::vector<TilingField> fields = nest_tiling_fields(k, "tile size (elements)");
  fields.push_back({"int64_t", "tile_threads", "threads per tile"});
  fields.push_back({"int64_t", "threads", "threads per thread block"});
  return tiling_data_struct(k.name, fields);
}

std::string cuda_tiling_function(const KernelContext& k) {
  const AscGraph& g = *k.g;
  std::vector<std::string> vars;
  for (const auto& name : k.size_symbols) vars.push_back(k.sym_var.at(name));
  std::string f = tiling_function_head(k.name, vars);
  int64_t align = 1;
  for (const auto& p : g.schedule->params)
    if (p.name == k.tile_param) align = p.align;
  const std::string tile = k.sym_var.at(k.tile_param), block = k.sym_var.at(k.block_param);
  const std::string a = std::to_string(align);
  const std::string lanes = std::to_string(vector_lanes(k));  // a thread's elements at a time
  f += "  const int64_t extent = " + cpp_expr(k, g.axis(k.vec_parent).size) + ";\n";
  f += "  const int64_t " + tile + " = af_min((extent + " + a + " - 1) / " + a + " * " + a +
       ", 1024 / " + a + " * " + a + ");\n";
  if (tiles_side_by_side(k)) {
    // A group of threads per tile, as many tiles side by side as fill 256 threads, but no fewer
    // blocks than two per SM while the tiles last.
    f += "  const int64_t tile_threads = af_min((" + tile + " + " + lanes + " - 1) / " + lanes +
         ", 256);\n";
    f += "  const int64_t tiles = " + cpp_expr(k, g.axis(k.block_parent).size) + ";\n";
    f += "  const int64_t " + block +
         " = af_max(1, af_min(256 / tile_threads, tiles / af_max(1, 2 * target->cores)));\n";
    f += "  td->tile_threads = tile_threads;\n";
    f += "  td->threads = af_min((tile_threads * " + block + " + 31) / 32 * 32, 256);\n";
  } else {
    f += "  (void)target;\n";
    f += "  const int64_t " + block + " = 1;\n";
    f += "  td->threads = af_min(((" + tile + " + " + lanes + " - 1) / " + lanes +
         " + 31) / 32 * 32, 256);\n";
    f += "  td->tile_threads = td->threads;\n";
  }
  f += "  td->" + tile + " = " + tile + ";\n";
  f += "  td->" + block + " = " + block + ";\n";
  f += "  td->header.block_dim = " + cpp_expr(k, g.axis(k.block_outer).size) + ";\n";
  f += "  td->header.tiling_key = " + std::to_string(g.schedule->tiling_key) + ";\n";
  f += "}\n";
  return f;
}

namespace {

/// Prints the __global__ function of one KernelContext: an elementwise nest, or a reduce_inner
/// nest whose rows the threads of a thread block share (one pass over the row per stage of the
/// kernel's ReducePlan, each pass's reductions joined across the block).
class KernelPrinter {
 public:
  explicit KernelPrinter(const KernelContext& k)
      : k_(k),
        g_(*k.g),
        idx_(*k.g, &lines_, ""),
        var_(k.g->nodes.size()),
        base_(k.g->nodes.size()) {
    for (size_t i = 0; i < var_.size(); ++i) var_[i] = "v" + std::to_string(i);
  }

  /// `<name>_block`: the work of block `i<block_outer>` of the kernel, a __device__ function
  /// every thread of a thread block calls with the same block.
  std::string print() {
    std::string params = "const " + k_.name + "_TilingData& td";
    const std::string bo = "i" + std::to_string(k_.block_outer);
    params += ", const int64_t " + bo;
    for (const CudaPointer& p : cuda_pointer_params(k_)) params += ", " + p.decl();
    line(0, "__device__ __forceinline__ void " + k_.name + "_block(" + params + ") {  // " +
                g_.axis(k_.block_outer).name);
    for (const auto& [name, var] : k_.sym_var)
      line(1, "const int64_t " + var + " = td." + var + ";");
    for (const auto& a : g_.axes)
      line(1, "const int64_t " + size_var(a.id) + " = " + cpp_expr(k_, a.size) + ";  // " + a.name);
    idx_.set(k_.block_outer, bo);
    depth_ = 1;
    if (side_by_side_) {
      // The block's threads in groups of td.tile_threads, a tile per group at a time (threads
      // past the last whole group have no tile: nothing here waits for them).
      line(1, "const int64_t tpt = td.tile_threads, lane = threadIdx.x % tpt;");
      line(1, "const int64_t group = threadIdx.x / tpt, groups = blockDim.x / tpt;");
      line(1, "if (group >= groups) return;");
    } else if (g_.schedule->family != ascir::ScheduleFamily::ReduceOuter) {
      line(1, "const int64_t tpt = blockDim.x, lane = threadIdx.x;  // the block shares a tile");
    }
    if (k_.plan.full.empty()) {
      tile_loops(1, [&] { nodes([](size_t) { return true; }); });
    } else {
      reductions();
    }
    for (; depth_ > 0; --depth_) line(depth_ - 1, "}");
    std::string out;
    for (const std::string& l : lines_) out += l + "\n";
    return out;
  }

 private:
  const AscNode& node(int i) const { return g_.nodes.at(static_cast<size_t>(i)); }
  void line(int depth, const std::string& s) {
    lines_.push_back(std::string(2 * static_cast<size_t>(depth), ' ') + s);
  }
  /// Opens the loop over axis `a`; `spread`: its iterations spread over the block's groups of
  /// threads (group g runs g, g + groups, ...).
  void open_loop(IndexDeriver& idx, int a, bool spread = false) {
    idx.set_indent(std::string(2 * static_cast<size_t>(depth_), ' '));
    const std::string var = "i" + std::to_string(a);
    line(depth_, "for (int64_t " + var + " = " + (spread ? "group" : "0") + "; " + var + " < " +
                     loop_extent(k_, idx, a) + "; " + (spread ? var + " += groups" : "++" + var) +
                     ") {  // " + g_.axis(a).name);
    idx.set(a, var);
    ++depth_;
  }
  void close() { line(--depth_, "}"); }

  /// The loops of the nest from level `from` to the tile, then `body` per element of the tile
  /// (its threads striding over it), the data and store bases of the tile before it. The indices
  /// derived inside are the loops' own: each call starts from what the enclosing scope knows.
  template <typename Body>
  void tile_loops(size_t from, Body body) {
    const int outer = depth_;
    IndexDeriver idx = idx_;
    for (size_t l = from; l + 1 < k_.nest.size(); ++l)
      open_loop(idx, k_.nest[l], side_by_side_ && l == 1);
    idx.set_indent(std::string(2 * static_cast<size_t>(depth_), ' '));
    idx.set(k_.vec, "0", true);
    line(depth_,
         "const int64_t n = " + loop_extent(k_, idx, k_.vec) + ";  // elements of this tile");
    full_bases(idx);
    const std::string done = vector_loop(body);
    line(depth_++, "for (int64_t j = " + done + "lane; j < n; j += tpt) {");
    body();
    while (depth_ > outer) close();
  }

  bool contiguous(const AscNode& n) const { return moves_contiguously(k_, n); }

  /// Integer attribute `name` of node `n` as a literal.
  static std::string attr_text(const AscNode& n, const char* name) {
    return std::to_string(std::get<int64_t>(n.attrs.at(name))) + "LL";
  }

  /// The tile's vector loop, where its contiguous data and stores sit at 16-byte-aligned
  /// addresses (checked per tile: the same for every thread of the block): each thread takes
  /// lanes_ consecutive elements at a time, reading each contiguous input as one af_vec access
  /// and writing each contiguous store as one, `body` run per element on registers. Returns
  /// "nv + " (the elements it covered, where the scalar loop starts), or "" when the kernel moves
  /// nothing contiguously.
  template <typename Body>
  std::string vector_loop(Body body) {
    if (lanes_ < 2) return "";
    const size_t mark = lines_.size();
    const int depth = depth_;
    depth_ = depth + 2;  // the body sits in: for (j0) { for (u) {
    vector_ = true;
    vector_data_.clear();
    vector_stores_.clear();
    body();
    vector_ = false;
    std::vector<std::string> inner(lines_.begin() + static_cast<std::ptrdiff_t>(mark),
                                   lines_.end());
    lines_.resize(mark);
    depth_ = depth;
    if (vector_data_.empty() && vector_stores_.empty()) return "";
    const std::string v = std::to_string(lanes_);
    auto vec_type = [&](size_t i) {
      return "af_vec<" + *cuda_storage_type(g_.nodes[i].out.dtype) + ", " + v + ">";
    };
    std::string aligned;
    for (const std::set<size_t>* nodes : {&vector_data_, &vector_stores_})
      for (size_t i : *nodes)
        aligned += std::string(aligned.empty() ? "" : " && ") + "af_aligned(" + pointer(i) + " + " +
                   base_[i] + ", " + std::to_string(lanes_ * dtype_size(g_.nodes[i].out.dtype)) +
                   ")";
    line(depth_, "const int64_t nv = " + aligned + " ? n / " + v + " * " + v +
                     " : 0;  // elements moved " + v + " at a time");
    line(depth_++, "for (int64_t j0 = lane * " + v + "; j0 < nv; j0 += tpt * " + v + ") {");
    for (size_t d : vector_data_)
      line(depth_, "const " + vec_type(d) + " q" + std::to_string(d) +
                       " = *reinterpret_cast<const " + vec_type(d) + "*>(" + pointer(d) + " + " +
                       base_[d] + " + j0);");
    for (size_t st : vector_stores_) line(depth_, vec_type(st) + " s" + std::to_string(st) + ";");
    line(depth_, "#pragma unroll");
    line(depth_++, "for (int u = 0; u < " + v + "; ++u) {");
    auto names_j = [](const std::string& l) {  // whether line `l` reads the element index j
      for (size_t p = l.find('j'); p != std::string::npos; p = l.find('j', p + 1)) {
        auto word = [&](size_t q) { return q < l.size() && (std::isalnum(l[q]) || l[q] == '_'); };
        if ((p == 0 || !word(p - 1)) && !word(p + 1)) return true;
      }
      return false;
    };
    if (std::any_of(inner.begin(), inner.end(), names_j)) line(depth_, "const int64_t j = j0 + u;");
    lines_.insert(lines_.end(), inner.begin(), inner.end());
    close();
    for (size_t st : vector_stores_)
      line(depth_, "*reinterpret_cast<" + vec_type(st) + "*>(" + pointer(st) + " + " + base_[st] +
                       " + j0) = s" + std::to_string(st) + ";");
    close();
    return "nv + ";
  }

  /// The kernel parameter data node or store node `i` addresses: in<k> or out<k>.
  std::string pointer(size_t i) const {
    const AscNode& n = g_.nodes[i];
    if (n.op == "data") return "in" + index_attr(n);
    for (const AscNode& user : g_.nodes)
      if (user.op == "output" && user.inputs.at(0) == static_cast<int>(i))
        return "out" + index_attr(user);
    codegen_fail(g_, "%" + n.name + " feeds no output");
  }

  /// The element a data or store node addresses: its tile base, plus j times its lane stride.
  std::string at(size_t i) const {
    const sym::Expr ls = lane_stride(k_, g_.nodes[i]);
    if (ls == sym::Expr(0)) return base_[i];
    return base_[i] + " + j" + (ls == sym::Expr(1) ? "" : " * " + cpp_expr(k_, ls));
  }

  /// The value lines of the nodes `pick` selects, in order.
  template <typename Pick>
  void nodes(Pick pick) {
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (pick(i)) value(i);
  }

  void value(size_t i) {
    const AscNode& n = g_.nodes[i];
    const std::string lane = *cuda_lane_type(n.out.dtype);
    auto in = [&](size_t j) { return var_.at(static_cast<size_t>(n.inputs.at(j))); };
    if (n.op == "data" || n.op == "output") return;
    if (n.op == "broadcast") {
      var_[i] = in(0);
    } else if (n.op == "load") {
      const size_t d = static_cast<size_t>(n.inputs.at(0));
      std::string element = pointer(d) + "[" + at(d) + "]";
      if (n.inputs.size() == 2)  // a gather: the row its index picks (never a vector access)
        element = pointer(d) + "[" + at(d) + " + af_gather_index(" + in(1) + ", " +
                  attr_text(n, "index_bound") + ") * " + attr_text(n, "index_stride") + "]";
      else if (vector_ && contiguous(g_.nodes[d])) {
        vector_data_.insert(d);
        element = "q" + std::to_string(d) + ".v[u]";
      }
      line(depth_,
           "const " + lane + " " + var_[i] + " = " + cuda_load_expr(n.out.dtype, element) + ";");
    } else if (n.op == "store") {
      std::string element = pointer(i) + "[" + at(i) + "]";
      if (vector_ && contiguous(n)) {
        vector_stores_.insert(i);
        element = "s" + std::to_string(i) + ".v[u]";
      }
      line(depth_, element + " = " + cuda_store_expr(n.out.dtype, in(0)) + ";");
    } else if (n.op == "scalar") {
      line(depth_, "const " + lane + " " + var_[i] + " = " + literal(n) + ";");
    } else if (n.op == "cast") {
      const DType from = node(n.inputs.at(0)).out.dtype;
      line(depth_, "const " + lane + " " + var_[i] + " = " +
                       cuda_cast_expr(from, n.out.dtype, in(0)) + ";");
    } else {
      std::vector<std::string> args;
      for (size_t j = 0; j < n.inputs.size(); ++j) args.push_back(in(j));
      std::optional<std::string> e = cuda_op_expr(n.op, operand_dtype(g_, n), args, n.attrs);
      if (!e) codegen_fail(g_, "%" + n.name + ": no CUDA form of " + n.op);
      line(depth_, "const " + lane + " " + var_[i] + " = " + *e + ";  // %" + n.name);
    }
  }

  /// A reduction kernel. reduce_inner: the threads of a thread block share a row (the
  /// block_inner loop); pass p over the row's tiles computes the full values of stage <= p,
  /// writes the full stores of stage p and accumulates the reductions of its stage, each joined
  /// across the block; then the row values of stage p + 1 (row stores by thread 0).
  /// reduce_outer: each thread owns columns of the tile (the vectorized axis); pass p loops over
  /// the reduced dims, accumulating in the thread itself; a row value is per column.
  void reductions() {
    const schedule::ReducePlan& plan = k_.plan;
    const bool columns = g_.schedule->family == ascir::ScheduleFamily::ReduceOuter;
    open_loop(idx_, k_.nest[1]);
    idx_.set_indent(std::string(2 * static_cast<size_t>(depth_), ' '));
    if (columns) {
      idx_.set(k_.vec, "0", true);
      line(depth_,
           "const int64_t n = " + loop_extent(k_, idx_, k_.vec) + ";  // columns of this tile");
    }
    auto row = [&](size_t i) { return !plan.full[i] && !graph::is_reduce_op(g_.nodes[i].op); };
    auto read_per_row = [&](size_t d) {  // a data node a row value loads
      for (size_t i = 0; i < g_.nodes.size(); ++i)
        if (row(i) && g_.nodes[i].op == "load" && g_.nodes[i].inputs.at(0) == static_cast<int>(d))
          return true;
      return false;
    };
    for (size_t i = 0; i < g_.nodes.size(); ++i) {  // row loads and stores: addressed per row
      const AscNode& n = g_.nodes[i];
      if ((n.op == "data" && read_per_row(i)) || (n.op == "store" && row(i))) {
        base_[i] = "b" + std::to_string(i);
        line(depth_, "const int64_t " + base_[i] + " = " + tile_base_offset(k_, idx_, n) +
                         ";  // %" + n.name);
      }
    }
    if (columns) line(depth_++, "for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {");
    auto row_values = [&](int stage) {
      nodes(
          [&](size_t i) { return row(i) && plan.stage[i] == stage && g_.nodes[i].op != "store"; });
      for (size_t i = 0; i < g_.nodes.size(); ++i)
        if (row(i) && plan.stage[i] == stage && g_.nodes[i].op == "store") {
          if (!columns) line(depth_++, "if (threadIdx.x == 0) {");
          value(i);
          if (!columns) close();
        }
    };
    auto full = [&](int p) {
      nodes([&](size_t i) {
        const AscNode& n = g_.nodes[i];
        return plan.full[i] && (n.op == "store" ? plan.stage[i] == p : plan.stage[i] <= p);
      });
    };
    std::string count;  // the elements a reduction covers
    for (int a : columns ? reduced_loops(k_) : std::vector<int>{k_.vec_parent})
      count += (count.empty() ? "" : " * ") + size_var(a);
    row_values(0);
    for (int p = 0; p < plan.passes; ++p) {
      std::vector<size_t> reduces;
      for (size_t i = 0; i < g_.nodes.size(); ++i)
        if (graph::is_reduce_op(g_.nodes[i].op) &&
            plan.stage[static_cast<size_t>(g_.nodes[i].inputs.at(0))] == p)
          reduces.push_back(i);
      for (size_t r : reduces)
        line(depth_, *cuda_lane_type(g_.nodes[r].out.dtype) + " a" + std::to_string(r) + " = " +
                         form(r).identity + ";  // %" + g_.nodes[r].name);
      auto accumulate = [&] {
        full(p);
        for (size_t r : reduces)
          line(depth_, "a" + std::to_string(r) + " = " + form(r).step + "(a" + std::to_string(r) +
                           ", " + var_.at(static_cast<size_t>(g_.nodes[r].inputs.at(0))) + ");");
      };
      if (columns) {
        reduced_columns(accumulate);
      } else {
        tile_loops(2, accumulate);
      }
      for (size_t r : reduces) {
        std::string v =
            columns ? "a" + std::to_string(r) : form(r).join + "(a" + std::to_string(r) + ")";
        if (g_.nodes[r].op == "reduce_mean") v = v + " / (float)(" + count + ")";
        line(depth_, "const " + *cuda_lane_type(g_.nodes[r].out.dtype) + " " + var_[r] + " = " + v +
                         ";  // %" + g_.nodes[r].name);
      }
      row_values(p + 1);
    }
  }

  /// The element bases of the data and store nodes on the full nest, at the indices `idx` knows.
  void full_bases(IndexDeriver& idx) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      if ((n.op != "data" && n.op != "store") || n.sched_axes != k_.nest) continue;
      base_[i] = "b" + std::to_string(i);
      line(depth_,
           "const int64_t " + base_[i] + " = " + tile_base_offset(k_, idx, n) + ";  // %" + n.name);
    }
  }

  /// reduce_outer: the loops over the reduced dims, then `body` for the thread's column j, the
  /// full data and store bases of the step before it.
  template <typename Body>
  void reduced_columns(Body body) {
    const int outer = depth_;
    IndexDeriver idx = idx_;
    for (int a : reduced_loops(k_)) open_loop(idx, a);
    idx.set_indent(std::string(2 * static_cast<size_t>(depth_), ' '));
    full_bases(idx);
    body();
    while (depth_ > outer) close();
  }

  CudaReduce form(size_t r) const {
    return *cuda_reduce_form(g_.nodes[r].op, g_.nodes[r].out.dtype);
  }

  const KernelContext& k_;
  const AscGraph& g_;
  std::vector<std::string> lines_;
  IndexDeriver idx_;
  std::vector<std::string> var_, base_;
  int depth_ = 0;
  const int lanes_ = vector_lanes(k_);  // elements a thread moves at a time in the vector loop
  const bool side_by_side_ = tiles_side_by_side(k_);  // groups of threads, a tile each
  bool vector_ = false;                               // printing the vector loop's body
  std::set<size_t> vector_data_, vector_stores_;      // what the vector loop reads and writes whole
};

}  // namespace

std::string cuda_block_function(const KernelContext& k) {
  return KernelPrinter(k).print();
}

std::vector<CudaPointer> cuda_pointer_params(const KernelContext& k) {
  const AscGraph& g = *k.g;
  std::vector<CudaPointer> out;
  for (bool input : {true, false})
    for (int i : input ? g.data_nodes() : g.output_nodes()) {
      const AscNode& n = g.nodes[static_cast<size_t>(i)];
      out.push_back({*cuda_storage_type(n.out.dtype), input,
                     static_cast<int>(std::get<int64_t>(n.attrs.at("index")))});
    }
  return out;
}

std::string cuda_global_function(const std::string& name, const std::vector<CudaPointer>& params,
                                 const std::string& body) {
  std::string p = "const " + name + "_TilingData td";
  for (const CudaPointer& x : params) p += ", " + x.decl();
  return "extern \"C\" __global__ void " + name + "_kernel(" + p + ") {\n" +
         "  for (int64_t b = blockIdx.x; b < td.header.block_dim; b += gridDim.x) {\n" + body +
         "  }\n}\n";
}

}  // namespace af::codegen
