// The Ascend C emitter's kernel printer (kernel.h): per scheduled kernel its TilingData, host
// tiling function, `__aicore__` kernel (CopyIn -> Compute -> CopyOut per UB tile; reduce_inner:
// a whole row in UB or a long row streamed in passes; reduce_outer: tiles of columns
// accumulated in passes) and the emulation's ABI adaptor; and why a kernel cannot be printed.
#include "codegen/ascendc/kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>

#include "codegen/ascendc/kernel_facts.h"
#include "codegen/ascendc/op_rules.h"
#include "codegen/ascendc/tiling.h"
#include "codegen/loop_nest.h"
#include "graph/op_registry.h"
#include "support/error.h"

namespace af::codegen {
namespace {

using ascir::AscGraph;
using ascir::AscNode;

/// Prints the kernel, its TilingData and tiling function, and the ABI adaptor of one kernel.
class KernelPrinter {
 public:
  KernelPrinter(const KernelContext& k, const target::Target& t) : k_(k), g_(*k.g), t_(t) {}

  KernelParts print() {
    plan();
    KernelParts p;
    // The scheduled AscIR with the NPU's UB budget, which this tiling uses (not the CPU's).
    AscGraph shown = g_;
    shown.schedule->ub_bytes = ub_for_tiles();
    p.header = "\n// ---- kernel " + k_.name + " ----\n" + ir_comment(shown);
    p.tiling_data = ascendc_tiling_data(k_);
    // A column sum's cascade takes a tile per bit of the reduced row count, and a carry.
    std::string bytes = std::to_string(bytes_per_element_);
    if (!column_sums_.empty())
      bytes += " + " + std::to_string(4 * column_sums_.size()) + " * (af_bit_length(" +
               reduced_rows(true) + ") + 1)";
    p.tiling_function = tiling_function(k_, t_, bytes, ub_for_tiles());
    lines_.clear();
    kernel();
    for (const auto& l : lines_) p.kernel += l + "\n";
    p.adaptor = emu_adaptor(k_.name, k_.num_inputs + k_.num_outputs);
    return p;
  }

 private:
  void line(int depth, const std::string& s) { lines_.push_back(std::string(2 * depth, ' ') + s); }
  std::string num(size_t i) const { return std::to_string(i); }

  /// Per node: users, the buffer holding its f32 value (own scratch slot, or an alias), and
  /// the UB bytes per tile element every buffer costs.
  void plan() {
    size_t n = g_.nodes.size();
    users_.assign(n, {});
    var_.assign(n, "");
    invariant_.assign(n, false);
    for (size_t i = 0; i < n; ++i)
      for (int in : g_.nodes[i].inputs) users_[in].push_back(static_cast<int>(i));
    for (size_t i = 0; i < n; ++i) {
      const AscNode& node = g_.nodes[i];
      if (node.op == "data") {
        bool loaded = std::any_of(users_[i].begin(), users_[i].end(),
                                  [&](int u) { return g_.nodes[u].op == "load"; });
        if (!loaded) continue;
        const sym::Expr stride = lane_stride(k_, node);
        if (stride == sym::Expr(0)) {
          broadcast_.push_back(static_cast<int>(i));
        } else {
          queued_.push_back(static_cast<int>(i));
          // A gather lands one element per 32-byte block (DataCopyPad), then Gather packs it.
          bool gather = stride != sym::Expr(1);
          if (gather) gathered_.insert(static_cast<int>(i));
          bytes_per_element_ += (gather ? 32 : dtype_size(node.out.dtype)) * in_slots();
        }
      } else if (node.op == "store") {
        stores_.push_back(static_cast<int>(i));
        // A scatter: each element spread to a 32-byte block (Brcb), then DataCopyPad out.
        const sym::Expr stride = lane_stride(k_, node);
        bool scatter = stride != sym::Expr(1) && stride != sym::Expr(0);
        if (scatter) scattered_.insert(static_cast<int>(i));
        bytes_per_element_ += (scatter ? 32 : dtype_size(node.out.dtype)) * out_slots();
      } else if (users_[i].empty() && node.op != "output") {
        continue;  // read by nothing (a rewrite left it): not computed
      } else if (node.op == "broadcast" && expands(static_cast<int>(i))) {
        var_[i] = "v" + num(scratch_++);  // a row value spread over the row
      } else if (node.op == "broadcast" || (node.op == "cast" && !rounds(static_cast<int>(i)) &&
                                            !to_bool(static_cast<int>(i)))) {
        var_[i] = var_[node.inputs[0]];
        invariant_[i] = invariant_[node.inputs[0]];
      } else if (node.op == "load" && g_.nodes[node.inputs[0]].out.dtype == DType::F32 &&
                 lane_stride(k_, g_.nodes[node.inputs[0]]) == sym::Expr(1) &&
                 full(k_, static_cast<int>(i))) {
        var_[i] = "x" + num(node.inputs[0]);  // the dequeued tile itself
      } else if (node.op != "output") {
        invariant_[i] =
            node.op == "scalar" || (node.op != "load" && !node.inputs.empty() &&
                                    std::all_of(node.inputs.begin(), node.inputs.end(),
                                                [&](int in) { return invariant_[in]; }));
        // reduce_inner's row values take one repeat each; reduce_outer's are tiles of columns.
        bool per_row = rows_in_ub(k_) && !invariant_[i] && !full(k_, static_cast<int>(i));
        var_[i] = per_row ? "r" + num(row_values_++) : "v" + num(scratch_++);
        if (per_row) row_nodes_.insert(static_cast<int>(i));
        if (node.op == "cast" && !to_bool(static_cast<int>(i)))
          rounding_.push_back(static_cast<int>(i));
        const OpRule* rule = find_rule(node);
        masks_ = masks_ || to_bool(static_cast<int>(i)) ||
                 (rule && std::any_of(rule->calls.begin(), rule->calls.end(), [](auto c) {
                    return c.find("{mask}") != std::string_view::npos;
                  }));
        if (graph::is_reduce_op(node.op)) reduces_ = true;
        if (const ReduceCall* r = find_reduce(node.op); r && r->cascade && columns(k_))
          column_sums_.push_back(static_cast<int>(i));
        if (const OpRule* r = find_rule(node)) {
          if (uses_ones(*r) && per_row && ones_row_ < 0) ones_row_ = row_values_++;
          if (uses_ones(*r) && !per_row && ones_tile_ < 0) ones_tile_ = scratch_++;
          if (uses_tmp_buffer(*r))
            tmp_tiles_ = std::max(tmp_tiles_, r->temps);  // shared: advtmp (declarations)
          else
            for (int t = 0; t < r->temps; ++t) temps_[static_cast<int>(i)].push_back(scratch_++);
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      bool queued = std::find(queued_.begin(), queued_.end(), i) != queued_.end();
      half_tile_ =
          half_tile_ ||
          (g_.nodes[i].out.dtype == DType::Bool && (g_.nodes[i].op == "store" || queued)) ||
          ((gathered_.count(static_cast<int>(i)) || scattered_.count(static_cast<int>(i))) &&
           dtype_size(g_.nodes[i].out.dtype) == 2);
    }
    bytes_per_element_ += 4 * (scratch_ + tmp_tiles_) + 2 * static_cast<int64_t>(rounding_.size());
    if (half_tile_) bytes_per_element_ += 2;  // bool and 16-bit gathers pass through a half tile
    if (!gathered_.empty()) bytes_per_element_ += 4;  // the gathers' byte offsets
    if (masks_) bytes_per_element_ += 1;  // the Compare mask: a bit per element, rounded up
    if (reduces_ && rows_in_ub(k_)) bytes_per_element_ += 4;  // the reductions' work tile
    for (size_t i = 0; i < n; ++i) {
      const AscNode& node = g_.nodes[i];
      if (!full(k_, static_cast<int>(i)) || invariant_[i] || node.op == "broadcast" ||
          node.op == "store")
        continue;
      for (int in : node.inputs)
        if (!full(k_, in) && !invariant_[in] && g_.nodes[in].op != "data")
          reason_ = "%" + node.name + " reads the row value %" + g_.nodes[in].name +
                    " without a broadcast";
    }
  }

  /// The UB bytes left for tiles: the target's, less the row values' fixed repeats.
  int64_t ub_for_tiles() const { return t_.device.onchip_bytes - row_values_ * kRepeat * 4; }

  /// Whether broadcast node i spreads a row value (one per row) over the row (reduce_outer's
  /// row values are already tiles of columns: their broadcast over the rows is the same tile).
  bool expands(int i) const {
    int in = g_.nodes[i].inputs.at(0);
    return rows_in_ub(k_) && full(k_, i) && !full(k_, in) && !invariant_[in];
  }

  /// The elements node i's value is computed over: a tile (nr), a row value's one repeat, or a
  /// kernel-invariant value's whole buffer (ub_tile).
  std::string count_of(int i) const {
    if (invariant_[i]) return "ub_tile";
    return full(k_, i) || !rows_in_ub(k_) ? "nr" : std::to_string(kRepeat);
  }

  /// Queue slots per input: two (double buffering) while the 8 VECIN buffers allow.
  int in_slots() const { return queued_inputs(k_) <= 4 ? 2 : 1; }
  /// Queue slots per output: likewise for the 8 VECOUT buffers.
  int out_slots() const { return stored_outputs(*k_.g) <= 4 ? 2 : 1; }

  /// Whether cast node i rounds (to f16/bf16 inside the kernel: not only feeding its stores).
  bool rounds(int i) const {
    const AscNode& n = g_.nodes[i];
    if (n.out.dtype == DType::F32 || n.out.dtype == DType::Bool ||
        g_.nodes[n.inputs.at(0)].out.dtype == DType::Bool)
      return false;  // bool (0 / 1) is exact in every float type
    for (int u : users_[i])
      if (g_.nodes[u].op != "store" || g_.nodes[u].out.dtype != n.out.dtype) return true;
    return users_[i].empty();
  }

  /// Whether cast node i makes a bool of a float (x != 0, NaN included).
  bool to_bool(int i) const {
    const AscNode& n = g_.nodes[i];
    return n.op == "cast" && n.out.dtype == DType::Bool &&
           g_.nodes[n.inputs.at(0)].out.dtype != DType::Bool;
  }

  std::string type_of(int i) const { return std::string(device_type(g_.nodes[i].out.dtype)); }

  std::string args_signature() const {
    std::string s;
    for (int i = 0; i < k_.num_inputs; ++i) s += "GM_ADDR in" + num(i) + ", ";
    for (int i = 0; i < k_.num_outputs; ++i) s += "GM_ADDR out" + num(i) + ", ";
    return s + "GM_ADDR workspace, GM_ADDR tiling";
  }

  /// Elements of data/store node n's GM view: 1 + offset + sum of (size - 1) * stride.
  std::string span(const AscNode& n) const {
    std::string e = "1 + " + cpp_expr(k_, n.out.offset);
    for (size_t d = 0; d < n.out.axes.size(); ++d)
      if (n.out.strides[d] != sym::Expr(0))
        e += " + (" + size_var(n.out.axes[d]) + " - 1) * " + cpp_expr(k_, n.out.strides[d]);
    return e;
  }

  /// `K_block`, one block of the kernel (what a concat kernel's segments are called as), then
  /// the entry `K` running block GetBlockIdx().
  void kernel() {
    std::string gm_args, gm_params;
    for (int i = 0; i < k_.num_inputs; ++i) {
      gm_params += "GM_ADDR in" + num(static_cast<size_t>(i)) + ", ";
      gm_args += "in" + num(static_cast<size_t>(i)) + ", ";
    }
    for (int i = 0; i < k_.num_outputs; ++i) {
      gm_params += "GM_ADDR out" + num(static_cast<size_t>(i)) + ", ";
      gm_args += "out" + num(static_cast<size_t>(i)) + ", ";
    }
    line(0, "__aicore__ inline void " + k_.name + "_block(" + gm_params + "const " + k_.name +
                "_TilingData* td, int64_t block_idx) {");
    for (const auto& [name, var] : k_.sym_var)
      line(1, "const int64_t " + var + " = td->" + var + ";");
    for (const auto& a : g_.axes)
      line(1, "const int64_t " + size_var(a.id) + " = " + cpp_expr(k_, a.size) + ";  // " + a.name);
    const std::string tile = k_.sym_var.at(k_.tile_param);
    line(1, "const int32_t ub_tile = static_cast<int32_t>(" + tile + ");");
    line(1, "AscendC::TPipe pipe;");
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      std::string T = type_of(static_cast<int>(i));
      if (n.op == "data" && !var_used_data(static_cast<int>(i))) continue;
      if (n.op == "data") {
        line(1, "AscendC::GlobalTensor<" + T + "> gm" + num(i) + ";");
        line(1, "gm" + num(i) + ".SetGlobalBuffer(reinterpret_cast<__gm__ " + T + "*>(in" +
                    index_attr(n) + "), " + span(n) + ");  // %" + n.name);
      } else if (n.op == "store") {
        for (int u : users_[i]) {
          line(1, "AscendC::GlobalTensor<" + T + "> gm" + num(i) + ";");
          line(1, "gm" + num(i) + ".SetGlobalBuffer(reinterpret_cast<__gm__ " + T + "*>(out" +
                      index_attr(g_.nodes[u]) + "), " + span(n) + ");  // %" + n.name);
        }
      }
    }
    // A queue's depth (TQue's second argument) is how many tensors may be enqueued at once: a
    // tile's tensor is dequeued before the next is enqueued, so 1, as the docs recommend; the
    // double buffering is InitBuffer's buffer count.
    for (int d : queued_) {
      line(1, "AscendC::TQue<AscendC::TPosition::VECIN, 1> que" + num(d) + ";");
      line(1, "pipe.InitBuffer(que" + num(d) + ", " + num(static_cast<size_t>(in_slots())) +
                  ", ub_tile * " + (gathered_.count(d) ? "32" : "sizeof(" + type_of(d) + ")") +
                  ");");
    }
    for (int s : stores_) {
      const std::string slots = num(static_cast<size_t>(out_slots()));
      line(1, "AscendC::TQue<AscendC::TPosition::VECOUT, 1> que" + num(s) + ";");
      line(1, "pipe.InitBuffer(que" + num(s) + ", " + slots + ", ub_tile * " +
                  (scattered_.count(s) ? "32" : "sizeof(" + type_of(s) + ")") + ");");
    }
    if (scratch_ > 0) {
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> calc;  // f32 values, one tile each");
      line(1, "pipe.InitBuffer(calc, " + num(static_cast<size_t>(scratch_)) +
                  " * ub_tile * sizeof(float));");
      for (int v = 0; v < scratch_; ++v)
        line(1, "const AscendC::LocalTensor<float> v" + num(static_cast<size_t>(v)) +
                    " = calc.Get<float>()[" + num(static_cast<size_t>(v)) + " * ub_tile];");
      if (ones_tile_ >= 0)
        line(1, "AscendC::Duplicate(v" + num(static_cast<size_t>(ones_tile_)) +
                    ", 1.0f, ub_tile);  // ones: 1 / x is Div (Reciprocal is approximate)");
    }
    if (tmp_tiles_ > 0) {
      // The advanced math calls split all of their temporary buffer's GetSize() between their
      // intermediates: a buffer of its own, so that nothing else lies in what they write.
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> advtmp;  // the advanced API's scratch");
      line(1, "pipe.InitBuffer(advtmp, " + num(static_cast<size_t>(tmp_tiles_)) +
                  " * ub_tile * sizeof(float));");
      line(1, "const AscendC::LocalTensor<uint8_t> tmpbuf = advtmp.Get<uint8_t>();");
    }
    if (!column_sums_.empty())
      line(1, "const int32_t cs_levels = static_cast<int32_t>(af_bit_length(" +
                  reduced_rows(false) + "));  // each column sum's cascade levels");
    for (int i : column_sums_) {
      const std::string c = "cs" + num(static_cast<size_t>(i));
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> " + c + "_buf;  // %" + g_.nodes[i].name +
                  "'s cascade: level tiles and a carry");
      line(1, "pipe.InitBuffer(" + c + "_buf, (cs_levels + 1) * ub_tile * sizeof(float));");
      line(1, "const AscendC::LocalTensor<float> " + c + " = " + c + "_buf.Get<float>();");
    }
    if (row_values_ > 0) {
      line(1,
           "AscendC::TBuf<AscendC::TPosition::VECCALC> rowbuf;  // per-row values, a repeat each");
      line(1, "pipe.InitBuffer(rowbuf, " + num(static_cast<size_t>(row_values_ * kRepeat)) +
                  " * sizeof(float));");
      for (int r = 0; r < row_values_; ++r)
        line(1, "const AscendC::LocalTensor<float> r" + num(static_cast<size_t>(r)) +
                    " = rowbuf.Get<float>()[" + num(static_cast<size_t>(r * kRepeat)) + "];");
      if (ones_row_ >= 0)
        line(1, "AscendC::Duplicate(r" + num(static_cast<size_t>(ones_row_)) + ", 1.0f, " +
                    num(static_cast<size_t>(kRepeat)) +
                    ");  // ones: 1 / x is Div (Reciprocal is approximate)");
    }
    if (reduces_ && rows_in_ub(k_)) {
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> work_buf;  // ReduceSum/ReduceMax work");
      line(1, "pipe.InitBuffer(work_buf, ub_tile * sizeof(float));");
      line(1, "const AscendC::LocalTensor<float> work = work_buf.Get<float>();");
    }
    if (half_tile_) {
      line(1,
           "AscendC::TBuf<AscendC::TPosition::VECCALC> halfbuf;  // bool <-> f32, 16-bit gathers");
      line(1, "pipe.InitBuffer(halfbuf, ub_tile * sizeof(half));");
      line(1, "const AscendC::LocalTensor<half> b16 = halfbuf.Get<half>();");
    }
    if (!gathered_.empty()) {
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> offsbuf;  // Gather: 32 B per element");
      line(1, "pipe.InitBuffer(offsbuf, ub_tile * sizeof(int32_t));");
      line(1, "const AscendC::LocalTensor<int32_t> offs = offsbuf.Get<int32_t>();");
      line(1, "AscendC::CreateVecIndex(offs, 0, ub_tile);");
      line(1, "AscendC::Muls(offs, offs, 32, ub_tile);");
    }
    if (masks_) {
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> maskbuf;  // Compare's bit mask");
      line(1, "pipe.InitBuffer(maskbuf, (ub_tile / 8 + 31) / 32 * 32);");
      line(1, "const AscendC::LocalTensor<uint8_t> mask = maskbuf.Get<uint8_t>();");
    }
    if (!rounding_.empty()) {
      line(1, "AscendC::TBuf<AscendC::TPosition::VECCALC> calc16;  // casts that round");
      line(1, "pipe.InitBuffer(calc16, " + num(rounding_.size()) + " * ub_tile * 2);");
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (invariant_[i]) compute(1, static_cast<int>(i), "ub_tile");
    line(1, "if (block_idx >= " + size_var(k_.block_outer) + ") return;");
    IndexDeriver idx(g_, &lines_, "  ");
    line(1, "const int64_t i" + num(static_cast<size_t>(k_.block_outer)) + " = block_idx;  // " +
                g_.axis(k_.block_outer).name);
    idx.set(k_.block_outer, "i" + num(static_cast<size_t>(k_.block_outer)));
    int depth = 1;
    // Reductions open the loops of the block's rows only: the rest is passes (reduce_outer, a
    // streamed reduce_inner row) or one tile (a whole reduce_inner row).
    const size_t loops = columns(k_) || rows_in_ub(k_) ? 2 : k_.nest.size() - 1;
    for (size_t l = 1; l < loops; ++l) {
      int a = k_.nest[l];
      idx.set_indent(std::string(2 * depth, ' '));
      std::string var = "i" + num(static_cast<size_t>(a));
      line(depth, "for (int64_t " + var + " = 0; " + var + " < " + loop_extent(k_, idx, a) +
                      "; ++" + var + ") {  // " + g_.axis(a).name);
      idx.set(a, var);
      ++depth;
    }
    idx.set_indent(std::string(2 * depth, ' '));
    idx.set(k_.vec, "0", true);
    for (size_t l = loops; l + 1 < k_.nest.size(); ++l) idx.set(k_.nest[l], "0");
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const AscNode& n = g_.nodes[i];
      if ((n.op == "data" && var_used_data(static_cast<int>(i))) || n.op == "store")
        line(depth, "const int64_t o" + num(i) + " = " + tile_base_offset(k_, idx, n) + ";");
    }
    const std::vector<bool> all(g_.nodes.size(), true);
    if (rows_in_ub(k_)) {
      line(depth, "if (td->header.tiling_key == 0) {  // the whole row in UB");
      tile_extent(depth + 1, loop_extent(k_, idx, k_.vec));
      body(depth + 1, all);
      line(depth, "} else {  // a row longer than the UB: streamed in tiles, a pass per stage");
      passes(depth + 1);
      line(depth, "}");
    } else {
      tile_extent(depth, loop_extent(k_, idx, k_.vec));
      if (columns(k_))
        passes(depth);
      else
        body(depth, all);
    }
    for (; depth > 1; --depth) line(depth - 1, "}");
    line(0, "}");
    line(0, "");
    line(0, "extern \"C\" __global__ __aicore__ void " + k_.name + "(" + args_signature() + ") {");
    line(1, "(void)workspace;");
    line(1, k_.name + "_TilingData td;");
    line(1, "af_copy_tiling(&td, tiling);");
    line(1, k_.name + "_block(" + gm_args + "&td, AscendC::GetBlockIdx());");
    line(0, "}");
  }

  bool var_used_data(int i) const {
    return std::find(queued_.begin(), queued_.end(), i) != queued_.end() ||
           std::find(broadcast_.begin(), broadcast_.end(), i) != broadcast_.end();
  }

  /// A block taking tensor `t` of node i's queue (`take`: "AllocTensor" or "DeQue"), running
  /// `body` on it and handing it on (`give`: "EnQue" or "FreeTensor").
  void staged(int depth, int i, const std::string& take, const std::vector<std::string>& body,
              const std::string& give) {
    std::string T = type_of(i), q = "que" + num(static_cast<size_t>(i));
    line(depth, "{");
    line(depth + 1, "AscendC::LocalTensor<" + T + "> t = " + q + "." + take + "<" + T + ">();");
    for (const std::string& b : body) line(depth + 1, b);
    line(depth + 1, q + "." + give + "(t);");
    line(depth, "}");
  }

  /// n and nr: the tile's elements, and rounded up to whole repeats.
  void tile_extent(int depth, const std::string& n) {
    line(depth, "const int64_t n = " + n + ";  // elements of this tile");
    line(depth, "const int32_t nr = static_cast<int32_t>((n + " + num(kRepeat - 1) + ") / " +
                    num(kRepeat) + " * " + num(kRepeat) + ");  // whole repeats");
  }

  /// GM element `i`'s tile starts at: its tensor at its offset variable.
  std::string at(int i) const {
    return "gm" + num(static_cast<size_t>(i)) + "[" + off_ + num(static_cast<size_t>(i)) + "]";
  }

  /// The call copying data node d's tile (n elements) into queue tensor t.
  std::string copy_in(int d) const {
    if (!gathered_.count(d)) return "af_copy_in(t, " + at(d) + ", n);";
    return "af_copy_in_strided(t, " + at(d) + ", n, " +
           cpp_expr(k_, lane_stride(k_, g_.nodes[static_cast<size_t>(d)])) + ");";
  }

  /// One tile: CopyIn, Compute, CopyOut of the nodes `on` (every node but the invariant ones
  /// for elementwise and reduce_inner; one pass's for reduce_outer).
  void body(int depth, const std::vector<bool>& on) {
    std::vector<int> ins, outs;
    for (int d : queued_)
      if (on[d]) ins.push_back(d);
    for (int s : stores_)
      if (on[s]) outs.push_back(s);
    line(depth, "// CopyIn");
    for (int d : ins) staged(depth, d, "AllocTensor", {copy_in(d)}, "EnQue");
    line(depth, "// Compute");
    for (int d : ins) {
      std::string T = type_of(d);
      line(depth, "AscendC::LocalTensor<" + T + "> x" + num(static_cast<size_t>(d)) + " = que" +
                      num(static_cast<size_t>(d)) + ".DeQue<" + T + ">();");
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (on[i] && !invariant_[i] && g_.nodes[i].op != "store")
        compute(depth, static_cast<int>(i), count_of(static_cast<int>(i)));
    store_tiles(depth, outs);
    for (int d : ins)
      line(depth, "que" + num(static_cast<size_t>(d)) + ".FreeTensor(x" +
                      num(static_cast<size_t>(d)) + ");");
    copy_out(depth, outs);
  }

  /// Each store's value into a VECOUT tile of its dtype.
  void store_tiles(int depth, const std::vector<int>& outs) {
    for (int s : outs) {
      const std::string& v = var_[g_.nodes[s].inputs[0]];
      const std::string count = count_of(s);
      DType dt = g_.nodes[s].out.dtype;
      std::vector<std::string> fill;
      if (scattered_.count(s) && dt == DType::F32)
        fill = {"af_spread<float, uint32_t>(t, " + v + ", " + count + ");"};
      else if (dt == DType::F32)
        fill = {"AscendC::DataCopy(t, " + v + ", static_cast<uint32_t>(" + count + "));"};
      else if (scattered_.count(s))  // 16-bit: rounded into the half tile, then spread
        fill = {"AscendC::Cast(b16.ReinterpretCast<" + type_of(s) + ">(), " + v +
                    ", AscendC::RoundMode::CAST_RINT, " + count + ");",
                "af_spread<" + type_of(s) + ", uint16_t>(t, b16.ReinterpretCast<" + type_of(s) +
                    ">(), " + count + ");"};
      else if (dt == DType::Bool)
        fill = {"AscendC::Cast(b16, " + v + ", AscendC::RoundMode::CAST_NONE, " + count + ");",
                "AscendC::Cast(t, b16, AscendC::RoundMode::CAST_NONE, " + count + ");"};
      else
        fill = {"AscendC::Cast(t, " + v + ", AscendC::RoundMode::CAST_RINT, " + count + ");"};
      staged(depth, s, "AllocTensor", fill, "EnQue");
    }
  }

  /// The stores' VECOUT tiles to GM: n elements, one for reduce_inner's per-row values.
  void copy_out(int depth, const std::vector<int>& outs) {
    if (!outs.empty()) line(depth, "// CopyOut");
    for (int s : outs)
      staged(depth, s, "DeQue",
             {scattered_.count(s)
                  ? "af_copy_out_strided(" + at(s) + ", t, n, " +
                        cpp_expr(k_, lane_stride(k_, g_.nodes[static_cast<size_t>(s)])) + ");"
                  : "af_copy_out(" + at(s) + ", t, " + (count_of(s) == "nr" ? "n" : "1") + ");"},
             "FreeTensor");
  }

  /// Per pass of the plan: the row values of its stage (and their stores), then a loop computing
  /// what the pass needs and accumulating its reductions. reduce_outer (one tile of columns):
  /// the loops run over the reduced rows, each reduction accumulates into its tile (Add / Max /
  /// Min), a mean divided after its loop. A streamed reduce_inner row: the loop runs over the
  /// row's tiles, each reduction reduces its tile (ReduceSum / ReduceMax / ReduceMin) into a
  /// scalar accumulator, its row value spread from it after the loop.
  void passes(int depth) {
    const bool stream = rows_in_ub(k_);
    const std::vector<int> rows = stream ? std::vector<int>{k_.tile_outer}
                                         : std::vector<int>(k_.nest.begin() + 2, k_.nest.end() - 1);
    std::string count;  // the elements a mean divides by
    for (int r : rows) count += (count.empty() ? "" : " * ") + size_var(r);
    if (stream) count = size_var(k_.vec_parent);
    const std::string row_count = stream ? std::to_string(kRepeat) : "nr";
    const size_t n = g_.nodes.size();
    for (int p = 0; p <= k_.plan.passes; ++p) {
      std::vector<int> row_stores;
      for (size_t i = 0; i < n; ++i) {
        const AscNode& node = g_.nodes[i];
        if (full(k_, static_cast<int>(i)) || k_.plan.stage[i] != p || invariant_[i]) continue;
        if (node.op == "store") {
          row_stores.push_back(static_cast<int>(i));
        } else if (const ReduceCall* r = find_reduce(node.op); r && stream) {
          std::string v = "acc" + num(i) + (r->mean ? " / static_cast<float>(" + count + ")" : "");
          line(depth, "AscendC::Duplicate(" + var_[i] + ", " + v + ", " + row_count + ");  // %" +
                          node.name + " " + node.op);
        } else if (r && r->mean) {
          line(depth, "AscendC::Muls(" + var_[i] + ", " + var_[i] + ", 1.0f / static_cast<float>(" +
                          count + "), nr);  // %" + node.name + " mean");
        } else if (node.op == "load" && lane_stride(k_, g_.nodes[node.inputs[0]]) != sym::Expr(0)) {
          int d = node.inputs[0];  // read once per tile of columns into the load's own tile
          line(depth, "{");
          staged(depth + 1, d, "AllocTensor", {copy_in(d)}, "EnQue");
          std::string T = type_of(d), x = "x" + num(static_cast<size_t>(d));
          line(depth + 1, "AscendC::LocalTensor<" + T + "> " + x + " = que" +
                              num(static_cast<size_t>(d)) + ".DeQue<" + T + ">();");
          compute(depth + 1, static_cast<int>(i), "nr");
          line(depth + 1, "que" + num(static_cast<size_t>(d)) + ".FreeTensor(" + x + ");");
          line(depth, "}");
        } else if (!graph::is_reduce_op(node.op)) {
          compute(depth, static_cast<int>(i), row_count);
        }
      }
      store_tiles(depth, row_stores);
      copy_out(depth, row_stores);
      if (p == k_.plan.passes) break;
      // What pass p reads and computes: its reductions and full stores, and their operands.
      std::vector<bool> on(n, false);
      for (size_t i = n; i-- > 0;) {
        const AscNode& node = g_.nodes[i];
        bool root =
            graph::is_reduce_op(node.op)
                ? k_.plan.stage[node.inputs.at(0)] == p
                : node.op == "store" && full(k_, static_cast<int>(i)) && k_.plan.stage[i] == p;
        if (!root && !on[i]) continue;
        on[i] = true;
        for (int in : node.inputs)
          if (full(k_, in) && !invariant_[in]) on[in] = true;
      }
      line(depth, "// pass " + std::to_string(p));
      for (size_t i = 0; i < n; ++i) {
        if (!on[i] || !graph::is_reduce_op(g_.nodes[i].op)) continue;
        const ReduceCall* r = find_reduce(g_.nodes[i].op);
        const std::string init(r->init);
        line(depth, stream ? "float acc" + num(i) + " = " + init + ";"
                           : "AscendC::Duplicate(" + var_[i] + ", " + init + ", nr);");
        if (!r->cascade) continue;
        if (stream) {
          line(depth, "af_cascade<float, 1, af_fold_sum> cs" + num(i) +
                          ";  // the tiles' sums, joined pairwise");
          continue;
        }
        line(depth, "int64_t ck" + num(i) + " = 0;  // rows in the cascade");
      }
      int d = depth;
      for (int r : rows) {
        std::string var = "i" + num(static_cast<size_t>(r));
        line(d, "for (int64_t " + var + " = 0; " + var + " < " + size_var(r) + "; ++" + var +
                    ") {  // " + g_.axis(r).name);
        ++d;
      }
      const std::string tile_index = "i" + num(static_cast<size_t>(k_.tile_outer));
      if (stream)
        tile_extent(d, "af_min(" + size_var(k_.vec) + ", " + size_var(k_.vec_parent) + " - " +
                           tile_index + " * " + size_var(k_.vec) + ")");
      for (size_t i = 0; i < n; ++i) {
        const AscNode& node = g_.nodes[i];
        if (!on[i] || (node.op != "store" && node.op != "data")) continue;
        std::string e = "o" + num(i);
        if (stream && lane_stride(k_, node) != sym::Expr(0))
          e +=
              " + " + tile_index + " * ub_tile" +
              (lane_stride(k_, node) == sym::Expr(1) ? ""
                                                     : " * " + cpp_expr(k_, lane_stride(k_, node)));
        for (size_t a = 0; a < node.out.axes.size() && !stream; ++a)
          if (std::find(rows.begin(), rows.end(), node.out.axes[a]) != rows.end() &&
              node.out.strides[a] != sym::Expr(0))
            e += " + i" + num(static_cast<size_t>(node.out.axes[a])) + " * " +
                 cpp_expr(k_, node.out.strides[a]);
        line(d, "const int64_t p" + num(i) + " = " + e + ";");
      }
      off_ = "p";
      streaming_ = stream;
      body(d, on);
      streaming_ = false;
      off_ = "o";
      for (; d > depth; --d) line(d - 1, "}");
      for (size_t i = 0; i < n; ++i) {  // the cascades join their totals, smallest level first
        if (!on[i] || !graph::is_reduce_op(g_.nodes[i].op) || !find_reduce(g_.nodes[i].op)->cascade)
          continue;
        if (stream) {
          line(depth, "cs" + num(i) + ".add_to(&acc" + num(i) + ");");
          continue;
        }
        line(depth, "af_cascade_total_tile(" + var_[i] + ", cs" + num(i) + ", ck" + num(i) +
                        ", ub_tile, nr);");
      }
    }
  }

  /// The rows a reduce_outer kernel's column sums add: the product of its reduced extents, as
  /// the kernel's size variables or (`host`) the tiling function's expressions.
  std::string reduced_rows(bool host) const {
    std::string e;
    for (size_t l = 2; l + 1 < k_.nest.size(); ++l)
      e += (e.empty() ? "" : " * ") +
           (host ? "(" + cpp_expr(k_, g_.axis(k_.nest[l]).size) + ")" : size_var(k_.nest[l]));
    return e.empty() ? "1" : e;
  }

  /// A scalar read of UB a vector instruction wrote waits for the vector pipe, on an event ID
  /// the pipe hands out (FetchEventID: with TPipe/TQue the IDs are the pipe's, never literals).
  void sync_vector_to_scalar(int depth) {
    line(depth, "{  // the scalar reads wait for the vector writes");
    line(depth + 1, "const AscendC::TEventID ev = pipe.FetchEventID<AscendC::HardEvent::V_S>();");
    line(depth + 1, "AscendC::SetFlag<AscendC::HardEvent::V_S>(ev);");
    line(depth + 1, "AscendC::WaitFlag<AscendC::HardEvent::V_S>(ev);");
    line(depth, "}");
  }

  /// The calls computing node i's f32 value over `count` elements (nothing for aliases).
  void compute(int depth, int i, const std::string& count) {
    const AscNode& n = g_.nodes[i];
    const std::string& d = var_[i];
    const std::string c = "%" + n.name + " " + n.op;
    if (n.op == "data" || n.op == "output" || n.op == "store" || d.empty()) return;
    if (n.op == "broadcast" && expands(i)) {
      sync_vector_to_scalar(depth);
      line(depth, "AscendC::Duplicate(" + d + ", " + var_[n.inputs[0]] + ".GetValue(0), " + count +
                      ");  // " + c);
      return;
    }
    if (n.op == "broadcast" || (n.op == "cast" && !rounds(i) && !to_bool(i))) return;
    if (const ReduceCall* r = find_reduce(n.op); r && columns(k_)) {
      if (r->cascade) {  // a sum: the row joins the column sum's cascade
        const std::string ci = num(static_cast<size_t>(i));
        line(depth, "af_cascade_add_tile(cs" + ci + ", " + var_[n.inputs[0]] + ", ck" + ci +
                        "++, cs_levels, ub_tile, " + count + ");  // " + c);
        return;
      }
      line(depth, "AscendC::" + std::string(r->accumulate) + "(" + d + ", " + d + ", " +
                      var_[n.inputs[0]] + ", " + count + ");  // " + c);
      return;
    }
    if (const ReduceCall* r = find_reduce(n.op); r && streaming_) {  // a tile of a long row
      line(depth, std::string(r->call) + "(" + d + ", " + var_[n.inputs[0]] +
                      ", work, static_cast<int32_t>(n));  // " + c);
      sync_vector_to_scalar(depth);
      const std::string acc = "acc" + num(static_cast<size_t>(i));
      if (r->cascade)  // a sum: the tile's sum joins the row's cascade
        line(depth, "{ const float part = " + d + ".GetValue(0); cs" + num(static_cast<size_t>(i)) +
                        ".add(&part); }");
      else
        line(depth, acc + " = " + std::string(r->fold) + "(" + acc + ", " + d + ".GetValue(0));");
      return;
    }
    if (const ReduceCall* r = find_reduce(n.op)) {
      line(depth, std::string(r->call) + "(" + d + ", " + var_[n.inputs[0]] +
                      ", work, static_cast<int32_t>(n));  // " + c);
      sync_vector_to_scalar(depth);
      std::string value = d + ".GetValue(0)";
      if (r->mean) value += " / static_cast<float>(n)";
      line(depth, "AscendC::Duplicate(" + d + ", " + value + ", " + count + ");");
      return;
    }
    if (n.op == "load") {
      int data = n.inputs[0];
      std::string x = "x" + num(static_cast<size_t>(data));
      if (lane_stride(k_, g_.nodes[data]) == sym::Expr(0)) {
        // A bf16 scalar becomes float through the API's ToFloat (8.x and 9.x), not a cast.
        const std::string value = "gm" + num(static_cast<size_t>(data)) + ".GetValue(" + off_ +
                                  num(static_cast<size_t>(data)) + ")";
        const bool bf16 = g_.nodes[data].out.dtype == DType::BF16;
        line(depth,
             "AscendC::Duplicate(" + d + ", " +
                 (bf16 ? "AscendC::ToFloat(" + value + ")" : "static_cast<float>(" + value + ")") +
                 ", " + count + ");  // " + c);
      } else if (gathered_.count(data) && dtype_size(g_.nodes[data].out.dtype) == 4) {
        line(depth, "AscendC::Gather(" + d + ".ReinterpretCast<uint32_t>(), " + x +
                        ".ReinterpretCast<uint32_t>(), offs.ReinterpretCast<uint32_t>(), 0, " +
                        count + ");  // " + c);
      } else if (gathered_.count(data)) {  // 16-bit: gathered as such, then widened
        line(depth, "AscendC::Gather(b16.ReinterpretCast<uint16_t>(), " + x +
                        ".ReinterpretCast<uint16_t>(), offs.ReinterpretCast<uint32_t>(), 0, " +
                        count + ");  // " + c);
        line(depth, "AscendC::Cast(" + d + ", b16.ReinterpretCast<" + type_of(data) +
                        ">(), AscendC::RoundMode::CAST_NONE, " + count + ");");
      } else if (g_.nodes[data].out.dtype == DType::Bool) {
        line(depth, "AscendC::Cast(b16, " + x + ", AscendC::RoundMode::CAST_NONE, " + count +
                        ");  // " + c);
        line(depth, "AscendC::Cast(" + d + ", b16, AscendC::RoundMode::CAST_NONE, " + count + ");");
      } else if (g_.nodes[data].out.dtype == DType::F32 && d != x) {  // a row load, kept
        line(depth, "AscendC::DataCopy(" + d + ", " + x + ", static_cast<uint32_t>(" + count +
                        "));  // " + c);
      } else if (d != x) {
        line(depth, "AscendC::Cast(" + d + ", " + x + ", AscendC::RoundMode::CAST_NONE, " + count +
                        ");  // " + c);
      }
      return;
    }
    if (n.op == "scalar") {
      line(depth, "AscendC::Duplicate(" + d + ", " + float_literal(scalar_value(n)) + ", " + count +
                      ");  // " + c);
      return;
    }
    if (to_bool(i)) {
      const std::string& in = var_[n.inputs[0]];
      line(depth, "AscendC::" + std::string(compare_scalar_name(cann_version(t_))) + "(mask, " +
                      in + ", 0.0f, AscendC::CMPMODE::NE, " + count + ");  // " + c);
      line(depth, "AscendC::Duplicate(" + d + ", 1.0f, " + count + ");");
      line(depth, "AscendC::Select(" + d + ", mask, " + d +
                      ", 0.0f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, " + count + ");");
      return;
    }
    if (n.op == "cast") {  // rounds to f16/bf16 and widens again
      size_t slot =
          static_cast<size_t>(std::find(rounding_.begin(), rounding_.end(), i) - rounding_.begin());
      std::string T = type_of(i);
      std::string tmp = "calc16.Get<" + T + ">()[" + num(slot) + " * ub_tile]";
      line(depth, "AscendC::Cast(" + tmp + ", " + var_[n.inputs[0]] +
                      ", AscendC::RoundMode::CAST_RINT, " + count + ");  // " + c);
      line(depth,
           "AscendC::Cast(" + d + ", " + tmp + ", AscendC::RoundMode::CAST_NONE, " + count + ");");
      return;
    }
    const OpRule* rule = find_rule(n);
    if (!rule) codegen_fail(g_, "%" + n.name + ": no Ascend C mapping for op '" + n.op + "'");
    RuleOperands ops;
    ops.dst = d, ops.count = count, ops.cann = cann_version(t_);
    for (int in : n.inputs) ops.inputs.push_back(var_[in]);
    if (auto temps = temps_.find(i); temps != temps_.end())
      for (int t : temps->second) ops.temps.push_back("v" + num(static_cast<size_t>(t)));
    const bool row_value = row_nodes_.count(i) > 0;
    const int one = row_value ? ones_row_ : ones_tile_;
    if (one >= 0) ops.one = (row_value ? "r" : "v") + num(static_cast<size_t>(one));
    bool first = true;
    for (const std::string& call : expand_rule(*rule, ops)) {
      line(depth, call + ";" + (first ? "  // " + c : ""));
      first = false;
    }
  }

  const KernelContext& k_;
  const AscGraph& g_;
  const target::Target& t_;
  std::vector<std::string> lines_;
  std::vector<std::vector<int>> users_;
  std::vector<std::string> var_;
  std::vector<bool> invariant_;
  std::vector<int> queued_, broadcast_, stores_, rounding_;
  std::map<int, std::vector<int>> temps_;  // node -> its rule's scratch tiles
  std::vector<int> column_sums_;           // reduce_outer sums: each a cascade of level tiles
  bool reduces_ = false;                   // has reductions: a work tile
  bool half_tile_ = false;                 // bool loads/stores, 16-bit gathers: the tile b16
  std::set<int> gathered_;                 // data nodes read with a stride along the lanes
  std::set<int> scattered_;                // store nodes written with a stride along the lanes
  bool masks_ = false;                     // compares: the bit mask
  int row_values_ = 0;                     // values computed once per row: one repeat each (rowbuf)
  std::string reason_;                     // why it cannot be printed after all ("" when it can)
  std::string off_ = "o";                  // prefix of the variables holding tile offsets
  bool streaming_ = false;                 // printing a streamed row's tile loop
  int scratch_ = 0;
  int ones_tile_ = -1;       // the calc tile of 1.0f for tile values' {one}, -1: none
  int ones_row_ = -1;        // the row value (a repeat) of 1.0f for row values' {one}, -1: none
  std::set<int> row_nodes_;  // nodes computed once per row (a repeat in rowbuf)
  int tmp_tiles_ = 0;        // tiles of the advanced math calls' shared temporary buffer (advtmp)
  int64_t bytes_per_element_ = 0;

 public:
  /// UB bytes per tile element at most: a column sum's cascade at its deepest (2^40 rows).
  int64_t bytes_per_element() {
    if (users_.empty()) plan();
    return bytes_per_element_ + 4 * 41 * static_cast<int64_t>(column_sums_.size());
  }
  /// After planning: why the kernel cannot be printed after all ("" when it can): a full value
  /// read without its broadcast.
  const std::string& reason() {
    if (users_.empty()) plan();
    return reason_;
  }
};

}  // namespace

KernelParts print_kernel(const KernelContext& k, const target::Target& t) {
  return KernelPrinter(k, t).print();
}

KernelPlan plan_kernel(const KernelContext& k, const target::Target& t) {
  KernelPrinter printer(k, t);
  return {printer.reason(), printer.bytes_per_element()};
}

}  // namespace af::codegen
