// A target's Backend: everything the pipeline, the JIT and the export ask of a target, behind one
// interface (Halide's CodeGen, TVM's registered targets). Each target implements it in its own
// folder (codegen/cpu/, codegen/ascendc/) and is named once in backends/registry.cpp; nothing
// else names a target. The pipeline walks a chain of backends (backends/registry.h
// backend_chain: the preferred target, then cpu), giving each kernel to the first that can take
// it.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/emitter.h"
#include "sym/expr.h"
#include "target/target.h"

namespace af::codegen {

/// How the JIT builds and checks a backend's source on this machine (the target-given parts of a
/// jit::CompileRequest; docs/cache.md: all of them are part of the cache key).
struct Toolchain {
  std::vector<std::string> flags;  // compile flags, e.g. {"-O3", "-mavx2"}
  /// Folders under the runtime headers' own (jit::runtime_include_dir()) added as -I dirs.
  std::vector<std::string> include_subdirs;
  std::vector<std::string> libs;  // -l names, e.g. {"sleef"}
  /// The header the JIT precompiles when a source starts by including it ("": none).
  std::string pch_header;
  /// A module export `int64_t (*)(char* buf, int64_t cap)` returning the log of the device
  /// rules its kernels broke since the last call (ascendc_emu's), or "" when it has none.
  std::string violations_symbol;
  /// Whether the module exports each kernel's blocks as the host function `K_kernel` (cpu,
  /// ascendc_emu); false: the module holds device code its target's launcher loads (cuda).
  bool host_kernels = true;
};

/// One option a target takes (autofuse-opt --<name>=, the bindings' `options`).
struct TargetOption {
  std::string name;
  std::string help;
  std::vector<std::string> choices;  // the values it takes ("" always: the default)
};

/// A package of sources for a target's own toolchain (Ascend C: CANN's kernel-launch project),
/// by file name, and each kernel unit's C name in them.
struct Package {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> kernel_names;  // KernelUnit name -> its kernel's C name
};

/// A target: a registered description (name, options, device) and the printer of its kernels.
class Backend {
 public:
  virtual ~Backend() = default;

  /// The registered name: Device::target, --target=, AUTOFUSE_TARGET.
  virtual std::string_view name() const = 0;
  /// One line: what its kernels become.
  virtual std::string_view summary() const = 0;
  /// Whether a kernel it cannot print may run on the host instead (the cpu target's C++): true
  /// where the host reads its data (cpu; ascendc, run by ascendc_emu here); false where the
  /// data lives in device memory (cuda): such a kernel's ops run as ATen ops.
  virtual bool host_fallback() const { return true; }
  /// The options it takes; configure sees only these.
  virtual std::vector<TargetOption> options() const { return {}; }
  /// The device its kernels are printed for under `options` (each one of options()); throws
  /// CompileError naming the choices for a value it does not know.
  virtual target::Device configure(const std::map<std::string, std::string>& options) const = 0;

  /// Why none of its kernels can hold the nodes of unscheduled kernel `g` (a dtype or an op it
  /// has no form for), "" when one can: asked of the one-op kernels before fusion where the
  /// target has no host fallback, so that such ops run as ATen ops and fuse with nothing.
  virtual std::string node_reason(const ascir::AscGraph& g, const target::Target& t) const {
    return "";
  }
  /// Why it cannot print kernel unit `u` for `t` ("" when it can): an op, dtype, layout or
  /// schedule it has no mapping for, a tile that does not fit its on-chip budget.
  virtual std::string reason(const KernelUnit& u, const target::Target& t) const = 0;
  /// One source text for `units` (each with an empty reason), exporting per kernel K the ABI's
  /// `K_tiling` and `K_kernel` (runtime/include/autofuse_abi.h); its kernels carry name().
  virtual EmittedSource emit(const std::vector<KernelUnit>& units,
                             const target::Target& t) const = 0;
  /// How the JIT builds that source here.
  virtual Toolchain toolchain(const target::Target& t) const = 0;
  /// What kernel `g`'s tiling function picks for size symbols `values` on `cores` cores, as one
  /// line ("tiling_key 0 (elementwise) tile 64 block 3 block_dim 2 ..."; autofuse-opt --tiling);
  /// throws CompileError when the target cannot evaluate its tiling here (the default).
  virtual std::string tiling_choice(const ascir::AscGraph& g, const sym::Bindings& values,
                                    int64_t cores, const target::Target& t) const;
  /// The sources of `units` for the target's own toolchain, kernels named `<name>_<kernel>`;
  /// throws CompileError when the target has no package format (the default).
  virtual Package package(const std::vector<KernelUnit>& units, const target::Target& t,
                          const std::string& name) const;
};

}  // namespace af::codegen
