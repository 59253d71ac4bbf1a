// The Ascend C emitter (emitter.h): the sources around the printed kernels (kernel.h): the
// device prologue, the emulated translation unit, and a CANN-style package's files.
#include "codegen/ascendc/emitter.h"

#include <set>

#include "codegen/ascendc/kernel.h"
#include "codegen/ascendc/launcher.h"
#include "codegen/concat_tiling.h"
#include "codegen/loop_nest.h"
#include "support/error.h"

namespace af::codegen {
namespace {

/// What a host source (tiling functions) includes.
const char* kHostIncludes = R"(#include "autofuse_abi.h"
#include "autofuse_ascendc_tiling.h"
#include "autofuse_cpu_int.h"  // the index helpers sizes and indices are printed with
)";

/// What every device source starts with: the API, the index helpers as __aicore__ functions,
/// the copy helpers, and under the emulation its violation log (whose <cstring> and <string> a
/// device source must not include: only the emulation's block includes them).
const char* kDevicePrologue = R"(#include "kernel_operator.h"
#ifndef AF_DEVICE
#define AF_DEVICE __aicore__
#endif
#include "autofuse_abi.h"
#include "autofuse_cpu_int.h"
#include "autofuse_cpu_cascade.h"  // af_cascade: a streamed row's tile sums joined pairwise

// The TilingData at `src` (GM) into *dst, word by word through a GM pointer, as CANN's
// GET_TILING_DATA copies it: a cast of GM_ADDR to a struct pointer would drop GM's address space.
template <typename T>
__aicore__ inline void af_copy_tiling(T* dst, GM_ADDR src) {
  static_assert(sizeof(T) % sizeof(uint32_t) == 0, "TilingData: whole 32-bit words");
  const __gm__ uint32_t* words = reinterpret_cast<const __gm__ uint32_t*>(src);
  uint32_t* out = reinterpret_cast<uint32_t*>(dst);
  for (uint32_t i = 0; i < sizeof(T) / sizeof(uint32_t); ++i) out[i] = words[i];
}

// GM -> UB: DataCopy when the bytes are whole 32-byte blocks, else DataCopyPad.
template <typename T>
__aicore__ inline void af_copy_in(const AscendC::LocalTensor<T>& dst,
                                  const AscendC::GlobalTensor<T>& src, int64_t n) {
  if (n * static_cast<int64_t>(sizeof(T)) % 32 == 0) {
    AscendC::DataCopy(dst, src, static_cast<uint32_t>(n));
    return;
  }
  AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
  AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, T()};
  AscendC::DataCopyPad(dst, src, p, pad);
}

// GM -> UB of a strided view: element i (src[i * stride]) into the 32-byte block i, by
// DataCopyPad (one element a block, at most 4095 blocks a call); Gather then packs them.
template <typename T>
__aicore__ inline void af_copy_in_strided(const AscendC::LocalTensor<T>& dst,
                                          const AscendC::GlobalTensor<T>& src, int64_t n,
                                          int64_t stride) {
  constexpr int64_t per_block = 32 / sizeof(T);
  for (int64_t i = 0; i < n; i += 4095) {
    const int64_t c = n - i < 4095 ? n - i : 4095;
    AscendC::DataCopyExtParams p{static_cast<uint16_t>(c), static_cast<uint32_t>(sizeof(T)),
                                 static_cast<uint32_t>((stride - 1) * sizeof(T)), 0, 0};
    AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, T()};
    AscendC::DataCopyPad(dst[static_cast<uint32_t>(i * per_block)], src[i * stride], p, pad);
  }
}

// UB -> GM, likewise.
template <typename T>
__aicore__ inline void af_copy_out(const AscendC::GlobalTensor<T>& dst,
                                   const AscendC::LocalTensor<T>& src, int64_t n) {
  if (n * static_cast<int64_t>(sizeof(T)) % 32 == 0) {
    AscendC::DataCopy(dst, src, static_cast<uint32_t>(n));
    return;
  }
  AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
  AscendC::DataCopyPad(dst, src, p);
}

// UB -> GM of a strided view: element i of src (its 32-byte block i, spread by af_spread) to
// dst[i * stride], by DataCopyPad (at most 4095 blocks a call).
template <typename T>
__aicore__ inline void af_copy_out_strided(const AscendC::GlobalTensor<T>& dst,
                                           const AscendC::LocalTensor<T>& src, int64_t n,
                                           int64_t stride) {
  constexpr int64_t per_block = 32 / sizeof(T);
  for (int64_t i = 0; i < n; i += 4095) {
    const int64_t c = n - i < 4095 ? n - i : 4095;
    AscendC::DataCopyExtParams p{static_cast<uint16_t>(c), static_cast<uint32_t>(sizeof(T)), 0,
                                 static_cast<uint32_t>((stride - 1) * sizeof(T)), 0};
    AscendC::DataCopyPad(dst[i * stride], src[static_cast<uint32_t>(i * per_block)], p);
  }
}

// Element i of src (nr of them, a multiple of 8) to the 32-byte block i of dst: Brcb, at most 255
// repeats of 8 elements a call.
template <typename T, typename U>
__aicore__ inline void af_spread(const AscendC::LocalTensor<T>& dst,
                                 const AscendC::LocalTensor<T>& src, int32_t nr) {
  constexpr int32_t per_block = 32 / sizeof(T);
  for (int32_t i = 0; i < nr; i += 255 * 8) {
    const int32_t r = (nr - i) / 8 < 255 ? (nr - i) / 8 : 255;
    AscendC::Brcb(dst[static_cast<uint32_t>(i * per_block)].template ReinterpretCast<U>(),
                  src[static_cast<uint32_t>(i)].template ReinterpretCast<U>(),
                  static_cast<uint8_t>(r), AscendC::BrcbRepeatParams{1, 8});
  }
}

// dst[0] = the sum of the n floats of src, pairwise-blocked: WholeReduceSum sums each 64-element
// repeat by a binary tree (255 repeats a call, the last one masked to its elements) into
// work[0, p), then ReduceSum adds those p partials (a tree inside each repeat of them, the
// repeats in sequence). ReduceSum's count form over src itself would add src's n / 64 repeat
// sums one after another (Atlas A2's "method 2"): an error growing like n / 64, not log n.
// work: at least ceil(n / 64) rounded up to 8, plus 8 elements (ReduceSum's scratch).
__aicore__ inline void af_sum_tile(const AscendC::LocalTensor<float>& dst,
                                   const AscendC::LocalTensor<float>& src,
                                   const AscendC::LocalTensor<float>& work, int32_t n) {
  const int32_t full = n / 64, rem = n % 64;
  for (int32_t r = 0; r < full; r += 255)
    AscendC::WholeReduceSum(work[static_cast<uint32_t>(r)], src[static_cast<uint32_t>(r * 64)], 64,
                            full - r < 255 ? full - r : 255, 1, 1, 8);
  if (rem > 0)
    AscendC::WholeReduceSum(work[static_cast<uint32_t>(full)],
                            src[static_cast<uint32_t>(full * 64)], rem, 1, 1, 1, 8);
  const int32_t p = full + (rem > 0 ? 1 : 0);
  AscendC::ReduceSum(dst, work, work[static_cast<uint32_t>((p + 7) / 8 * 8)], p);
}

// Row tile x (nr elements) joins the pairwise cascade of a column sum: the `count`-th row (from
// 0), a binary counter of tiles as autofuse_cpu_cascade.h's af_cascade, level k at
// lv[k * ub_tile] holding the sum of 2^k rows, the carry at lv[levels * ub_tile]. Two sums of
// equal weight always meet, so the rounding error grows like log2(rows), not rows.
__aicore__ inline void af_cascade_add_tile(const AscendC::LocalTensor<float>& lv,
                                           const AscendC::LocalTensor<float>& x, int64_t count,
                                           int32_t levels, int32_t ub_tile, int32_t nr) {
  if ((count & 1) == 0) {
    AscendC::DataCopy(lv, x, static_cast<uint32_t>(nr));
    return;
  }
  const AscendC::LocalTensor<float> carry = lv[static_cast<uint32_t>(levels * ub_tile)];
  AscendC::Add(carry, lv, x, nr);
  int32_t k = 1;
  for (; (count >> k) & 1; ++k)
    AscendC::Add(carry, lv[static_cast<uint32_t>(k * ub_tile)], carry, nr);
  AscendC::DataCopy(lv[static_cast<uint32_t>(k * ub_tile)], carry, static_cast<uint32_t>(nr));
}

// acc += the sum of the `count` rows in cascade lv, the smallest levels first.
__aicore__ inline void af_cascade_total_tile(const AscendC::LocalTensor<float>& acc,
                                             const AscendC::LocalTensor<float>& lv, int64_t count,
                                             int32_t ub_tile, int32_t nr) {
  for (int32_t k = 0; (count >> k) != 0; ++k)
    if ((count >> k) & 1) AscendC::Add(acc, lv[static_cast<uint32_t>(k * ub_tile)], acc, nr);
}

#ifdef AF_ASCENDC_EMU
#include <cstring>
#include <string>

// The emulation's violation reports since the last call, one per line, as C text (at most cap
// bytes with the terminating 0); returns the full length. The runtime reads it after a launch.
AF_EXPORT int64_t af_ascendc_take_violations(char* buf, int64_t cap) {
  std::string all;
  for (const std::string& l : AscendC::emu::take_violations()) all += l + "\n";
  if (buf && cap > 0) {
    size_t k = all.size() < static_cast<size_t>(cap - 1) ? all.size() : static_cast<size_t>(cap - 1);
    std::memcpy(buf, all.data(), k);
    buf[k] = 0;
  }
  return static_cast<int64_t>(all.size());
}
#endif
)";

/// One printed kernel: a plain kernel, a concat kernel's segment, or the concat kernel that
/// runs its segments (`unit`: exported as one of the source's kernels).
struct Printed {
  EmittedKernel kernel;
  KernelParts parts;
  bool unit = true;
};

/// The entry kernel K of concat kernel `u` (its segments printed as `segs`): blocks of segment
/// 0 first, each segment's block run as `S_block` on its inputs and outputs; and its adaptor.
KernelParts concat_parts(const KernelUnit& u, const EmittedKernel& k,
                         const std::vector<EmittedKernel>& segs) {
  const std::string& K = k.name;
  KernelParts p;
  p.header = "\n// ---- concat kernel " + K + ": blocks of segment 0, then of segment 1, ...\n";
  p.tiling_data = concat_tiling_data(k, segs);
  p.tiling_function = concat_tiling_function(k, segs);
  std::string params;
  for (int i = 0; i < k.num_inputs; ++i) params += "GM_ADDR in" + std::to_string(i) + ", ";
  for (int i = 0; i < k.num_outputs; ++i) params += "GM_ADDR out" + std::to_string(i) + ", ";
  std::string c = "extern \"C\" __global__ __aicore__ void " + K + "(" + params +
                  "GM_ADDR workspace, GM_ADDR tiling) {\n  (void)workspace;\n";
  c += "  " + K + "_TilingData tiling_data;\n  af_copy_tiling(&tiling_data, tiling);\n";
  c += "  const " + K + "_TilingData* td = &tiling_data;\n";
  c += "  int64_t block_idx = AscendC::GetBlockIdx();\n";
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string si = "td->s" + std::to_string(i);
    std::string args;
    for (int in : u.input_map[i]) args += "in" + std::to_string(in) + ", ";
    for (int o : u.output_map[i]) args += "out" + std::to_string(o) + ", ";
    c += "  if (block_idx < " + si + ".header.block_dim) {\n";
    c += "    " + segs[i].name + "_block(" + args + "&" + si + ", block_idx);\n    return;\n  }\n";
    c += "  block_idx -= " + si + ".header.block_dim;\n";
  }
  p.kernel = c + "}\n";
  p.adaptor = emu_adaptor(K, k.num_inputs + k.num_outputs);
  return p;
}

/// Every kernel of `kernels` printed (a concat kernel's segments before it), after checking
/// each can be; each kernel's C name starts with `prefix`.
std::vector<Printed> print_all(const std::vector<KernelUnit>& kernels, const target::Target& t,
                               const std::string& prefix) {
  std::vector<Printed> out;
  std::set<std::string> names;
  for (const KernelUnit& u : kernels) {
    std::string why = ascendc_unit_reason(u, t);
    if (!why.empty()) throw CompileError("codegen: kernel " + u.name + ": Ascend C: " + why);
    std::vector<EmittedKernel> segs;
    for (const ascir::AscGraph* g : u.segments) {
      KernelContext k = analyze_kernel(*g, prefix + kernel_c_name(g->name));
      if (!names.insert(k.name).second)
        throw CompileError("codegen: two kernels are named " + k.name + " in one source");
      segs.push_back({k.name, k.size_symbols, k.num_inputs, k.num_outputs, "ascendc"});
      out.push_back({segs.back(), print_kernel(k, t), u.input_map.empty()});
    }
    if (u.input_map.empty()) continue;
    EmittedKernel k = concat_kernel(u, segs);
    k.name = prefix + k.name;
    k.target = "ascendc";
    if (!names.insert(k.name).second)
      throw CompileError("codegen: two kernels are named " + k.name + " in one source");
    out.push_back({k, concat_parts(u, k, segs), true});
  }
  return out;
}

std::string banner(const target::Target& t) {
  return "// Generated by autofuse: Ascend C kernels (UB " + std::to_string(t.device.onchip_bytes) +
         " B usable, " + std::to_string(t.device.cores) + " vector cores).\n";
}

}  // namespace

std::string ascendc_reason(const ascir::AscGraph& g, const target::Target& t) {
  return kernel_reason(g, t);
}

std::string ascendc_unit_reason(const KernelUnit& u, const target::Target& t) {
  bool concat = !u.input_map.empty();
  if (!concat && u.segments.size() != 1)
    return std::to_string(u.segments.size()) + " loop nests but no segment maps";
  for (const ascir::AscGraph* g : u.segments) {
    if (concat && g->schedule && g->schedule->family != ascir::ScheduleFamily::Elementwise)
      return "concat segment " + g->name + " is not elementwise";
    std::string why = kernel_reason(*g, t);
    if (!why.empty()) return (concat ? "segment " + g->name + ": " : "") + why;
  }
  return "";
}

EmittedSource emit_ascendc_source(const std::vector<KernelUnit>& kernels, const target::Target& t) {
  EmittedSource out;
  out.code = banner(t) + kDevicePrologue + "#include \"autofuse_ascendc_tiling.h\"\n";
  for (const Printed& k : print_all(kernels, t, "")) {
    const KernelParts& p = k.parts;
    out.code += p.header + p.tiling_data + "\n" + p.tiling_function + "\n" + p.kernel + p.adaptor;
    if (k.unit) out.kernels.push_back(k.kernel);
  }
  return out;
}

Package ascendc_package(const std::vector<KernelUnit>& kernels, const target::Target& t,
                        const std::string& name) {
  Package out;
  const std::string guard = "AUTOFUSE_" + c_ident(name) + "_TILING_H";
  std::string h = banner(t) + "// TilingData structs and host tiling functions.\n#ifndef " + guard +
                  "\n#define " + guard + "\n#include \"autofuse_abi.h\"\n\n";
  std::string host = banner(t) + kHostIncludes + "#include \"" + name + "_tiling.h\"\n";
  std::string device = banner(t) + kDevicePrologue + "#include \"" + name + "_tiling.h\"\n";
  // Kernels, TilingData structs and tiling functions are named after the graph too (g0_k0), so
  // the packages of one model's graphs link into one program.
  size_t unit = 0;  // print_all lists the units' own kernels in order, after their segments
  std::vector<EmittedKernel> launched;
  for (const Printed& k : print_all(kernels, t, c_ident(name) + "_")) {
    if (k.unit) out.kernel_names[kernels.at(unit++).name] = k.kernel.name;
    if (k.unit) launched.push_back(k.kernel);
    const KernelParts& p = k.parts;
    h += p.tiling_data + "extern \"C\" void " + k.kernel.name +
         "_tiling(const int64_t* symbols, const af_target* target, void* tiling_data);\n\n";
    host += p.header + p.tiling_function;
    device += p.header + p.kernel;
  }
  h += "#endif\n";
  out.files = {{name + "_tiling.h", h},
               {name + "_tiling.cpp", host},
               {name + "_kernels.cpp", device},
               {name + "_launch.h", launcher_header(c_ident(name), launched)},
               {name + "_launch.cpp", launcher_source(c_ident(name), launched)}};
  return out;
}

std::vector<std::string> ascendc_compile_flags(const target::Target&) {
  // -O1: emulated kernels are checked, not timed; it compiles them in 60% of -O2's time.
  return {"-O1",
          "-fPIC",
          "-shared",
          "-std=c++17",
          "-ffp-contract=off",
          "-fno-fast-math",
          "-DAF_ASCENDC_EMU"};
}

}  // namespace af::codegen
