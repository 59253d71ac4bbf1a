// The compiler pipeline: Graph IR in, compiled program out. The pass list lives in pipeline.cpp
// and reads top to bottom (Halide's Lower.cpp): verify -> lower -> fuse -> schedule -> codegen
// -> jit. Each stage can be dumped (CompileOptions::dump_dir).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/emitter.h"  // KernelUnit
#include "fusion/can_fuse.h"  // FusionOptions
#include "fusion/fused_graph.h"
#include "graph/graph.h"
#include "jit/sanitize.h"
#include "jit/stats.h"  // CompileStats
#include "target/target.h"

namespace af::jit {
class LoadedModule;
}

namespace af {

/// Options for one compilation. Defaults come from the environment (AUTOFUSE_DUMP, ...) in the
/// frontend, never read here.
struct CompileOptions {
  std::string dump_dir;       // write every IR stage here when non-empty
  std::string cache_dir;      // JIT cache; empty = default private dir
  std::string cxx = "g++";    // system C++ compiler
  bool enable_fusion = true;  // false: every op its own kernel (forces fusion.enabled off)
  /// The fusion settings (AUTOFUSE_FLAGS, parsed by pipeline/flags.h); passed to lower and fuse.
  fusion::FusionOptions fusion;
  target::Target target = target::Target::host_cpu();
  jit::Sanitizers sanitize;  // instrument the kernels (AUTOFUSE_SANITIZE)
  /// Receives log lines ("cache hit k0 ...", "compiled in 0.31 s"); may be empty.
  std::function<void(const std::string&)> log;
};

/// One kernel ready to launch.
struct KernelHandle {
  std::string name;
  std::vector<std::string> symbols;  // size symbols passed at launch, in this order
  int num_inputs = 0;
  int num_outputs = 0;
  std::string key;            // hash of the program source and the kernel name (tuning key)
  void* tiling_fn = nullptr;  // af_tiling_fn
  void* kernel_fn = nullptr;  // af_kernel_fn; nullptr for a device kernel (Toolchain::host_kernels)
  std::string target = "cpu";                 // the registered target whose backend printed it
  std::shared_ptr<jit::LoadedModule> module;  // the module holding it
  std::string symbol;                         // its C name there (K of K_tiling)
  /// int64_t (*)(char*, int64_t): the log of the device rules the kernel's module broke since
  /// the last call (its backend's Toolchain::violations_symbol: ascendc_emu's); nullptr when
  /// its backend has none.
  void* violations_fn = nullptr;
  /// int64_t (*)(void): the first out-of-range gather index of the kernel's module since the
  /// last call, INT64_MIN for none (codegen::kTakeIndexFault); nullptr when no kernel of its
  /// module gathers.
  void* index_fault_fn = nullptr;
  /// int (*)(void): whether an integer division of the kernel's module met a zero divisor since
  /// the last call (codegen::kTakeZeroDivision); nullptr when no kernel of its module divides.
  void* zero_division_fn = nullptr;
};

/// The result of compile(): the fused program, the generated source and the loaded kernels.
struct CompiledProgram {
  fusion::FusedGraph fused;
  std::string source;                 // the generated C++ of all kernels
  std::vector<KernelHandle> kernels;  // one per Kernel node of `fused`, in order
  /// The shared objects its kernels live in, kept loaded: the one compiled for it, and those of
  /// other programs that held some of its kernels already (jit/kernel_index.h).
  std::vector<std::shared_ptr<jit::LoadedModule>> modules;
  CompileStats stats;
  /// A line per op or kernel the target could not print, where the host cannot run its kernels
  /// (Backend::host_fallback), given back to ATen ("%y runs as an ATen op: ...").
  std::vector<std::string> given_back;
};

/// The pipeline's stages, in pass-list order (pipeline.cpp): a driver stops after one
/// (autofuse-opt's --passes, the bindings' source queries).
enum class Stage { Verify, Simplify, Lower, Fuse, Schedule, Codegen, Jit };

/// Its name: "verify", "simplify", "lower", "fuse", "schedule", "codegen" or "jit".
std::string_view stage_name(Stage s);

/// The Stage called `name`; throws CompileError naming the stages for another name.
Stage parse_stage(std::string_view name);

/// Runs the pipeline up to and including `last` (Simplify: prog.fused.source is the simplified
/// graph, no kernels). Throws CompileError (bad graph) or
/// ToolchainError (compiler/cache failure); the frontend turns both into an eager fallback.
CompiledProgram compile(const graph::Graph& g, const CompileOptions& opts, Stage last = Stage::Jit);

/// The pipeline from Schedule on, for kernels whose fusion was decided elsewhere (the Inductor
/// frontend's fusion groups): parses `text` (one or more unscheduled `ascgraph`s), verifies,
/// schedules, prints and loads them as one program named `name`, a kernel per ascgraph in text
/// order. Throws CompileError or ToolchainError as compile() does.
CompiledProgram compile_ascir(const std::string& text, const CompileOptions& opts,
                              const std::string& name, Stage last = Stage::Jit);

/// The pipeline from Fuse on, for a FusedGraph read back from text (fusion/parser.h: a lowered
/// or fused dump, or a hand-written one): fuses it (again), then schedules on as compile()
/// does. The source and kernels must verify. Throws as compile() does.
CompiledProgram compile_fused(fusion::FusedGraph lowered, const CompileOptions& opts,
                              Stage last = Stage::Jit);

/// The pipeline from Codegen on, for kernels scheduled by schedule_kernels (the Inductor
/// frontend schedules each group once, when it checks the group): prints and loads `fused`'s
/// kernels as one program named `name`. Throws as compile() does.
CompiledProgram compile_scheduled(fusion::FusedGraph fused, const CompileOptions& opts,
                                  const std::string& name, Stage last = Stage::Jit);

/// The Schedule stage: verifies and schedules every loop nest of `fused` (each segment of a
/// concat kernel on its own) for target `t`.
void schedule_kernels(fusion::FusedGraph& fused, const target::Target& t);

/// What the emitter prints per kernel step of `fused`: its loop nest, or a concat kernel's
/// segments with the map from each segment's arguments to the kernel's.
std::vector<codegen::KernelUnit> kernel_units(const fusion::FusedGraph& fused);

/// The source of `units` for opts.target: each kernel printed by the first backend of
/// backends::backend_chain(opts.target) that can print it (a kernel passed on is logged, naming
/// graph `name`, with the reason), the fallback's part first. Its kernels are listed in the order
/// of `units`.
codegen::EmittedSource program_source(const std::vector<codegen::KernelUnit>& units,
                                      const CompileOptions& opts, const std::string& name);

/// Process-wide compile counters (all compile() calls).
CompileStats global_stats();

}  // namespace af
