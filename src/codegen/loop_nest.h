// What every emitter reads off one scheduled AscGraph: the loop nest of its schedule (block,
// tile and vectorized axes), its tiling parameters, the C names of its symbols, and how any
// axis's index follows from the loop indices. Target-independent; each target's printer
// (codegen/cpu/, ...) prints its own loops and memory accesses from it.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "schedule/reduce_plan.h"

namespace af::codegen {

/// Throws CompileError "codegen @<kernel>: <what>".
[[noreturn]] void codegen_fail(const ascir::AscGraph& g, const std::string& what);

/// `s` with every character outside [A-Za-z0-9_] replaced by '_'.
std::string c_ident(const std::string& s);

/// A C identifier for kernel name `name` ([A-Za-z0-9_.]+ in the IR): '_' for other
/// characters, "k_" in front of a leading digit.
std::string kernel_c_name(const std::string& name);

/// The printed AscIR of `g` as a block of `// ` comment lines, so a source says what it
/// implements.
std::string ir_comment(const ascir::AscGraph& g);

/// The `index` attribute of a data/output node as text ("?" when absent).
std::string index_attr(const ascir::AscNode& n);

/// One scheduled kernel as the emitter sees it. Built (and validated) by analyze_kernel.
struct KernelContext {
  const ascir::AscGraph* g = nullptr;
  std::string name;                            // C identifier; exports <name>_tiling/_kernel
  std::vector<std::string> size_symbols;       // sorted, without the tiling parameters
  std::map<std::string, std::string> sym_var;  // every symbol -> C variable name
  std::vector<int> nest;                       // sched axes, outer -> inner
  int vec = -1;                         // the vectorized axis (tile_inner), innermost in `nest`
  int vec_parent = -1;                  // the axis it splits
  int tile_outer = -1;                  // its tile_outer sibling
  int block_outer = -1;                 // the launch block axis, outermost in `nest`
  int block_parent = -1;                // the axis block_outer x block_inner splits
  std::string tile_param, block_param;  // symbol names
  int num_inputs = 0, num_outputs = 0;
  schedule::ReducePlan plan;  // a reduction family's passes (empty for elementwise)
};

/// Reads the schedule of `g` (any ScheduleFamily; a reduction's plan once, for the tiling
/// function and the kernel alike) and checks the emitter can print it. Throws CompileError
/// naming the kernel otherwise.
KernelContext analyze_kernel(const ascir::AscGraph& g, const std::string& c_name);

/// The loops over reduced dims of a reduction kernel's full nest, outer -> inner: reduce_outer's
/// reduced dims (between the block axes and the vectorized axis), reduce_inner's reduced dims
/// outside a kept one (between the block axes and the row's tile axes); empty for elementwise.
std::vector<int> reduced_loops(const KernelContext& k);

/// C/C++ text of `e` with symbols replaced by their C variables.
std::string cpp_expr(const KernelContext& k, const sym::Expr& e);
/// C variable holding the size of axis `id` (defined at the top of the kernel function).
std::string size_var(int axis_id);

/// Derives the index of any axis from the loop indices known so far, writing `const int64_t`
/// definitions into `lines` as needed (memoized). Rules: an axis split into outer x inner is
/// outer * size(inner) + inner; a part of a merged axis is (merged / size of later parts) mod
/// its size.
class IndexDeriver {
 public:
  IndexDeriver(const ascir::AscGraph& g, std::vector<std::string>* lines, std::string indent)
      : g_(g), lines_(lines), indent_(std::move(indent)) {}
  /// Declares the index of a loop axis (a C expression); `uses_vec` for the vectorized axis.
  void set(int axis, std::string expr, bool uses_vec = false);
  /// The C variable (or expression) holding axis `a`'s index; nullopt when it cannot be derived.
  std::optional<std::string> get(int a);
  /// Whether `a`'s index depends on the vectorized axis (after get(a) succeeded).
  bool uses_vec(int a) const { return uses_vec_.count(a) && uses_vec_.at(a); }
  /// Whether `a` is split into outer x `inner` (so its index is linear in inner's).
  bool split_with_inner(int a, int inner) const;
  /// Indentation of the definitions written from now on (one per loop level).
  void set_indent(std::string indent) { indent_ = std::move(indent); }

 private:
  const ascir::AscGraph& g_;
  std::vector<std::string>* lines_;
  std::string indent_;
  std::map<int, std::string> known_;
  std::map<int, bool> uses_vec_;
  std::set<int> visiting_;
};

/// Loop extent of axis `a` as C: its size, or for the inner part of a block or tile split what
/// is left of the parent after the outer part's index, `af_min(size, parent - outer * size)`
/// (every emitted source defines af_min).
std::string loop_extent(const KernelContext& k, IndexDeriver& idx, int a);

/// The coefficient of the vectorized index in data/store node `n`'s element offset.
sym::Expr lane_stride(const KernelContext& k, const ascir::AscNode& n);

/// Element offset (C) of data/store node `n` where the vectorized index is 0 and the other
/// axes are at the indices `idx` knows. Fails naming `n` when an axis index cannot be derived
/// or depends on the vectorized index other than linearly.
std::string tile_base_offset(const KernelContext& k, IndexDeriver& idx, const ascir::AscNode& n);

}  // namespace af::codegen
