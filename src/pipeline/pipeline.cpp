// The pass pipeline, top to bottom: verify -> lower -> fuse -> schedule -> codegen -> jit.
// Each pass is a free function of the stage it belongs to; this file only orders them, dumps
// each IR (CompileOptions::dump_dir) and times the whole.
#include "pipeline/pipeline.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>

#include "ascir/parser.h"
#include "ascir/verifier.h"
#include "backends/registry.h"
#include "codegen/canonical_code.h"
#include "codegen/loop_nest.h"
#include "fusion/dot.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/printer.h"
#include "graph/printer.h"
#include "graph/simplify.h"
#include "graph/verifier.h"
#include "jit/compile.h"
#include "jit/hash.h"
#include "jit/kernel_index.h"
#include "jit/module.h"
#include "jit/runtime_headers.h"
#include "pipeline/flags.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace af {
namespace {

std::mutex g_stats_mutex;
CompileStats g_stats;

/// Writes one IR stage, `text()`, to `<dump_dir>/<graph>.<stage>` when dumping is on (printed
/// only then: a compile without dumps prints no IR).
template <typename Text>
void dump(const CompileOptions& opts, const std::string& graph, const std::string& stage,
          const Text& text) {
  if (opts.dump_dir.empty()) return;
  std::ofstream(opts.dump_dir + "/" + graph + "." + stage) << text();
}

void log(const CompileOptions& opts, const std::string& line) {
  if (opts.log) opts.log(line);
}

/// The loop nests of a fused graph's kernels (each segment of a concat kernel), in order.
std::vector<ascir::AscGraph*> kernels_of(fusion::FusedGraph& fused) {
  std::vector<ascir::AscGraph*> out;
  for (auto& n : fused.nodes)
    for (ascir::AscGraph* g : n.kernel_graphs()) out.push_back(g);
  return out;
}

/// Position of each of `values` in `all`.
std::vector<int> positions(const std::vector<int>& values, const std::vector<int>& all) {
  std::vector<int> out;
  for (int v : values)
    out.push_back(static_cast<int>(std::find(all.begin(), all.end(), v) - all.begin()));
  return out;
}

/// The toolchain that builds a program for `t`: those of its backend chain, the fallback's first
/// (a later flag such as -O1 wins), each flag, folder and library once.
codegen::Toolchain program_toolchain(const target::Target& t) {
  std::vector<const codegen::Backend*> chain = backends::backend_chain(t);
  codegen::Toolchain out;
  auto add = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
    for (const auto& x : from)
      if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
  };
  for (auto b = chain.rbegin(); b != chain.rend(); ++b) {
    codegen::Toolchain tc = (*b)->toolchain(t);
    add(out.flags, tc.flags);
    add(out.include_subdirs, tc.include_subdirs);
    add(out.libs, tc.libs);
    if (out.pch_header.empty()) out.pch_header = tc.pch_header;
  }
  return out;
}

/// The request that builds a program for opts.target (its source left empty).
jit::CompileRequest compile_request(const CompileOptions& opts, const std::string& name) {
  codegen::Toolchain tc = program_toolchain(opts.target);
  jit::CompileRequest req;
  req.cxx = opts.cxx;
  req.flags = tc.flags;
  req.sanitize = opts.sanitize;
  req.include_dirs = {jit::runtime_include_dir()};
  for (const auto& d : tc.include_subdirs)
    req.include_dirs.push_back(jit::runtime_include_dir() + "/" + d);
  req.libs = tc.libs;
  req.pch_header = tc.pch_header;
  req.cache_dir = opts.cache_dir;
  req.tag = name;
  req.log = opts.log;
  return req;
}

/// The backend of `chain` that prints `u`: the first that can (a chain ending in cpu prints every
/// kernel), or chain.size() when none can. `passed` (may be null) gets a line per backend passed
/// over, with its reason.
size_t backend_for(const codegen::KernelUnit& u, const std::vector<const codegen::Backend*>& chain,
                   const target::Target& t, std::vector<std::string>* passed) {
  for (size_t b = 0; b < chain.size(); ++b) {
    std::string why = chain[b]->reason(u, t);
    if (why.empty()) return b;
    if (passed)
      passed->push_back("kernel " + u.name +
                        (b + 1 < chain.size()
                             ? " keeps the " + std::string(chain[b + 1]->name()) + " target: "
                             : " runs as ATen ops: ") +
                        why);
  }
  return chain.size();
}

/// What the kernel index (jit/kernel_index.h) knows kernel `u` by: the backend that prints it
/// and its source printed alone with its names taken out (codegen/canonical_code.h).
std::string unit_code(const codegen::KernelUnit& u,
                      const std::vector<const codegen::Backend*>& chain, const target::Target& t) {
  const codegen::Backend* b = chain[backend_for(u, chain, t, nullptr)];
  std::vector<std::string> names;
  for (const ascir::AscGraph* g : u.segments) names.push_back(codegen::kernel_c_name(g->name));
  names.push_back(codegen::kernel_c_name(u.name));
  return std::string(b->name()) + "\n" + codegen::canonical_code(b->emit({u}, t).code, names);
}

/// The JIT stage: loads each kernel of `units` (printed as `src`) from the module that holds it
/// already where the kernel index knows one, compiles the others as one module (or fetches it
/// from the disk cache) and indexes them, and fills prog.modules and prog.kernels (one handle
/// per kernel, in order).
void load_kernels(CompiledProgram& prog, const std::vector<codegen::KernelUnit>& units,
                  const codegen::EmittedSource& src, const CompileOptions& opts,
                  const std::string& name) {
  jit::CompileRequest req = compile_request(opts, name);
  const std::string toolchain = jit::cache_key(req);  // the request's key without a source
  std::vector<std::string> keys;
  std::vector<std::optional<jit::IndexedKernel>> found;
  std::vector<codegen::KernelUnit> missing;
  const std::vector<const codegen::Backend*> chain = backends::backend_chain(opts.target);
  for (const codegen::KernelUnit& u : units) {
    keys.push_back(jit::kernel_key(toolchain, unit_code(u, chain, opts.target)));
    found.push_back(jit::find_kernel(req, keys.back()));
    if (!found.back()) missing.push_back(u);
  }
  for (const auto& f : found)
    if (f && std::find(prog.modules.begin(), prog.modules.end(), f->module) == prog.modules.end())
      prog.modules.push_back(f->module);
  prog.stats.cache_hits += static_cast<int64_t>(prog.modules.size());
  if (!missing.empty()) {
    CompileOptions quiet = opts;  // program_source logged each kernel's backend already
    quiet.log = nullptr;
    req.source =
        missing.size() == units.size() ? prog.source : program_source(missing, quiet, name).code;
    std::shared_ptr<jit::LoadedModule> mod = jit::compile_and_load(req, &prog.stats);
    prog.modules.push_back(mod);
    for (size_t i = 0; i < units.size(); ++i) {
      if (found[i]) continue;
      found[i] = jit::IndexedKernel{mod, src.kernels[i].name};
      jit::index_kernel(req, keys[i], *mod, src.kernels[i].name);
    }
  }
  if (missing.size() < units.size())
    log(opts, "graph " + name + ": " + std::to_string(units.size() - missing.size()) + " of " +
                  std::to_string(units.size()) + " kernel(s) from modules compiled before");
  for (size_t i = 0; i < units.size(); ++i) {
    const codegen::EmittedKernel& k = src.kernels[i];
    const jit::LoadedModule& mod = *found[i]->module;
    const std::string& symbol = found[i]->name;
    KernelHandle h;
    h.name = k.name;
    h.symbols = k.symbols;
    h.num_inputs = k.num_inputs;
    h.num_outputs = k.num_outputs;
    h.key = jit::Hasher128().field(prog.source).field(k.name).digest().hex();
    h.tiling_fn = mod.symbol(symbol + "_tiling");
    h.target = k.target;
    h.module = found[i]->module;
    h.symbol = symbol;
    const codegen::Toolchain tc = backends::find_backend(k.target).toolchain(opts.target);
    if (tc.host_kernels) h.kernel_fn = mod.symbol(symbol + "_kernel");
    if (!tc.violations_symbol.empty()) h.violations_fn = mod.symbol(tc.violations_symbol);
    h.index_fault_fn = mod.find_symbol(codegen::kTakeIndexFault);
    h.zero_division_fn = mod.find_symbol(codegen::kTakeZeroDivision);
    prog.kernels.push_back(std::move(h));
  }
}

/// Logs the compile of graph `name` begun at `start` and adds its counters to the process's.
void finish(const CompiledProgram& prog, const CompileOptions& opts, const std::string& name,
            std::chrono::steady_clock::time_point start) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log(opts, "compiled graph " + name + ": " + std::to_string(prog.kernels.size()) +
                " kernel(s) in " + std::to_string(seconds) + " s");
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  g_stats.cxx_compiles += prog.stats.cxx_compiles;
  g_stats.cache_hits += prog.stats.cache_hits;
  g_stats.compile_seconds += prog.stats.compile_seconds;
}

}  // namespace

namespace {

/// The KernelUnit of kernel step `n`.
codegen::KernelUnit kernel_unit(const fusion::FusedNode& n) {
  codegen::KernelUnit u{n.name, n.kernel_graphs(), {}, {}, 0, 0};
  if (n.is_concat()) {
    u.num_inputs = static_cast<int>(n.inputs.size());
    u.num_outputs = static_cast<int>(n.outputs.size());
    for (const auto& seg : n.segments) {
      u.input_map.push_back(positions(seg.inputs, n.inputs));
      u.output_map.push_back(positions(seg.outputs, n.outputs));
    }
  }
  return u;
}

/// The kernel steps of `fg` for which `why` gives a reason, given back to ATen: one opaque step
/// per op, in graph order, each with its `why` line, which given_back also gets.
template <typename Why>
void give_back_to_aten(fusion::FusedGraph& fg, Why why, std::vector<std::string>& given_back) {
  std::vector<fusion::FusedNode> nodes;
  for (fusion::FusedNode& n : fg.nodes) {
    std::string line = n.kind == fusion::FusedNode::Kind::Kernel ? why(n) : "";
    if (line.empty()) {
      nodes.push_back(std::move(n));
      continue;
    }
    given_back.push_back(line);
    std::vector<int> ops = n.ops;
    std::sort(ops.begin(), ops.end());
    for (int op : ops) nodes.push_back(fusion::opaque_step(fg.source, op, line));
  }
  fg.nodes = std::move(nodes);
}

/// Before fusion, on a chain that cannot fall back to the host: the one-op kernels whose node no
/// backend of the chain has a form for (Backend::node_reason) run as ATen ops.
void aten_where_no_node_form(CompiledProgram& prog, const CompileOptions& opts) {
  const std::vector<const codegen::Backend*> chain = backends::backend_chain(opts.target);
  if (chain.back()->host_fallback()) return;
  give_back_to_aten(
      prog.fused,
      [&](const fusion::FusedNode& n) -> std::string {
        for (const ascir::AscGraph* g : n.kernel_graphs()) {  // a concat: any segment's
          std::string why;
          for (const codegen::Backend* b : chain) {
            why = b->node_reason(*g, opts.target);
            if (why.empty()) break;
          }
          if (!why.empty()) {
            const graph::Node& op = prog.fused.source.nodes.at(static_cast<size_t>(n.ops.at(0)));
            return "%" + op.name + " runs as an ATen op: " + why;
          }
        }
        return "";
      },
      prog.given_back);
}

/// After scheduling: the kernels no backend of opts.target's chain prints (only a chain without
/// cpu refuses one) run as ATen ops.
void aten_where_refused(CompiledProgram& prog, const CompileOptions& opts) {
  const std::vector<const codegen::Backend*> chain = backends::backend_chain(opts.target);
  give_back_to_aten(
      prog.fused,
      [&](const fusion::FusedNode& n) -> std::string {
        std::vector<std::string> passed;
        return backend_for(kernel_unit(n), chain, opts.target, &passed) < chain.size()
                   ? ""
                   : passed.back();
      },
      prog.given_back);
}

}  // namespace

std::vector<codegen::KernelUnit> kernel_units(const fusion::FusedGraph& fused) {
  std::vector<codegen::KernelUnit> units;
  for (const auto& n : fused.nodes)
    if (n.kind == fusion::FusedNode::Kind::Kernel) units.push_back(kernel_unit(n));
  return units;
}

void schedule_kernels(fusion::FusedGraph& fused, const target::Target& t) {
  for (ascir::AscGraph* k : kernels_of(fused)) {
    ascir::verify(*k);
    schedule::schedule_kernel(*k, t);
    ascir::verify(*k);
  }
}

namespace {

/// The pipeline from Codegen on, for scheduled kernels: codegen, jit, stopping after `last`.
void from_codegen(CompiledProgram& prog, const CompileOptions& opts, const std::string& name,
                  Stage last, std::chrono::steady_clock::time_point start) {
  // Kernels the target's chain cannot print, where the host cannot run them, go back to ATen.
  aten_where_refused(prog, opts);
  std::string given_back;
  for (const std::string& line : prog.given_back) {
    log(opts, name + ": " + line);
    given_back += "// " + line + "\n";
  }
  // One translation unit for every kernel of the graph: C++ for the CPU, or Ascend C for each
  // kernel the Ascend C emitter can print and C++ for the rest.
  std::vector<codegen::KernelUnit> kernels = kernel_units(prog.fused);
  codegen::EmittedSource src = program_source(kernels, opts, name);
  prog.source = given_back + src.code;
  dump(opts, name, "cpp", [&] { return prog.source; });
  if (last == Stage::Codegen || kernels.empty()) return;

  // Compile (or fetch from the disk cache) and load.
  load_kernels(prog, kernels, src, opts, name);
  finish(prog, opts, name, start);
}

/// The pipeline from Schedule on, for both entries (compile, compile_ascir): schedule, codegen,
/// jit, stopping after `last`.
void from_schedule(CompiledProgram& prog, const CompileOptions& opts, const std::string& name,
                   Stage last, std::chrono::steady_clock::time_point start) {
  // Axis merging, tile and block split, vectorized axis: one TilingCase per kernel.
  schedule_kernels(prog.fused, opts.target);
  dump(opts, name, "scheduled.txt", [&] { return fusion::print(prog.fused); });
  if (!opts.dump_dir.empty() && !prog.fused.source.nodes.empty())
    dump(opts, name, "fused.dot", [&] { return fusion::print_dot(prog.fused); });
  if (last == Stage::Schedule) return;
  from_codegen(prog, opts, name, last, start);
}

/// The effective fusion settings (fusion off where opts say so), dumped and logged as
/// AUTOFUSE_FLAGS text.
fusion::FusionOptions effective_fusion(const CompileOptions& opts, const std::string& name) {
  fusion::FusionOptions fusion_opts = opts.fusion;
  if (!opts.enable_fusion) fusion_opts.enabled = false;
  std::string flags = to_flags_string(fusion_opts);
  dump(opts, name, "flags.txt", [&] { return flags + "\n"; });
  log(opts, "fusion flags: " + flags);
  return fusion_opts;
}

}  // namespace

CompiledProgram compile(const graph::Graph& g, const CompileOptions& opts, Stage last) {
  auto start = std::chrono::steady_clock::now();
  CompiledProgram prog;
  const std::string& name = g.name;

  dump(opts, name, "graph.ir", [&] { return graph::print(g); });
  graph::verify(g);
  if (last == Stage::Verify) return prog;

  const fusion::FusionOptions fusion_opts = effective_fusion(opts, name);

  // Strength reduction (pow(x, 2) -> x * x, ...), then every fusible op becomes a one-op
  // AscGraph; the rest stays ATen.
  graph::Graph simplified = g;
  if (int n = graph::simplify(simplified)) log(opts, "simplified " + std::to_string(n) + " ops");
  if (last == Stage::Simplify) {
    prog.fused.source = std::move(simplified);
    return prog;
  }
  prog.fused = fusion::lower(simplified, fusion_opts);
  aten_where_no_node_form(prog, opts);
  dump(opts, name, "lowered.txt", [&] { return fusion::print(prog.fused); });
  if (last == Stage::Lower) return prog;

  // Greedy merging under the CanFuse policy (fusion/can_fuse.h).
  prog.fused = fusion::fuse(std::move(prog.fused), fusion_opts);
  dump(opts, name, "fused.txt", [&] { return fusion::print(prog.fused); });
  if (last == Stage::Fuse) return prog;

  from_schedule(prog, opts, name, last, start);
  return prog;
}

CompiledProgram compile_fused(fusion::FusedGraph lowered, const CompileOptions& opts, Stage last) {
  auto start = std::chrono::steady_clock::now();
  CompiledProgram prog;
  const std::string name = lowered.source.name;
  graph::verify(lowered.source);
  for (fusion::FusedNode& step : lowered.nodes)
    for (const ascir::AscGraph* k : step.kernel_graphs()) ascir::verify(*k);
  prog.fused = std::move(lowered);
  if (last < Stage::Fuse) return prog;
  aten_where_no_node_form(prog, opts);
  prog.fused = fusion::fuse(std::move(prog.fused), effective_fusion(opts, name));
  dump(opts, name, "fused.txt", [&] { return fusion::print(prog.fused); });
  if (last == Stage::Fuse) return prog;
  from_schedule(prog, opts, name, last, start);
  return prog;
}

CompiledProgram compile_ascir(const std::string& text, const CompileOptions& opts,
                              const std::string& name, Stage last) {
  auto start = std::chrono::steady_clock::now();
  CompiledProgram prog;
  dump(opts, name, "ascir", [&] { return text; });
  for (ascir::AscGraph& g : ascir::parse_asc_graphs(text)) {
    ascir::verify(g);
    fusion::FusedNode n;
    n.kind = fusion::FusedNode::Kind::Kernel;
    n.name = g.name;
    n.kernel = std::move(g);
    prog.fused.nodes.push_back(std::move(n));
  }
  if (last < Stage::Schedule) return prog;
  from_schedule(prog, opts, name, last, start);
  return prog;
}

CompiledProgram compile_scheduled(fusion::FusedGraph fused, const CompileOptions& opts,
                                  const std::string& name, Stage last) {
  auto start = std::chrono::steady_clock::now();
  CompiledProgram prog;
  prog.fused = std::move(fused);
  dump(opts, name, "scheduled.txt", [&] { return fusion::print(prog.fused); });
  if (last > Stage::Schedule) from_codegen(prog, opts, name, last, start);
  return prog;
}

codegen::EmittedSource program_source(const std::vector<codegen::KernelUnit>& units,
                                      const CompileOptions& opts, const std::string& name) {
  std::vector<const codegen::Backend*> chain = backends::backend_chain(opts.target);
  if (units.empty()) return chain.front()->emit(units, opts.target);
  // Each kernel goes to the first backend of the chain that can print it (the last, cpu, takes
  // every one); a kernel passed on gets a comment line and a log line with the reason.
  std::vector<std::vector<codegen::KernelUnit>> parts(chain.size());
  std::string kept;
  for (const codegen::KernelUnit& u : units) {
    std::vector<std::string> passed;
    parts[backend_for(u, chain, opts.target, &passed)].push_back(u);
    for (const std::string& line : passed) {
      kept += "// " + line + "\n";
      log(opts, name + ": " + line);
    }
  }
  // One source: the reasons, then each backend's part, the fallback's first.
  codegen::EmittedSource out;
  out.code = kept;
  std::vector<codegen::EmittedKernel> all;
  bool first = true;
  for (size_t b = chain.size(); b-- > 0;) {
    if (parts[b].empty()) continue;
    codegen::EmittedSource part = chain[b]->emit(parts[b], opts.target);
    out.code += (first ? "" : "\n") + part.code;
    first = false;
    all.insert(all.end(), part.kernels.begin(), part.kernels.end());
  }
  for (const codegen::KernelUnit& u : units) {
    bool plain = u.input_map.empty() && u.segments.size() == 1;
    std::string c_name = codegen::kernel_c_name(plain ? u.segments[0]->name : u.name);
    for (const codegen::EmittedKernel& k : all)
      if (k.name == c_name) out.kernels.push_back(k);
  }
  if (out.kernels.size() != units.size())
    throw CompileError("codegen: " + name + ": emitted " + std::to_string(out.kernels.size()) +
                       " kernels for " + std::to_string(units.size()));
  return out;
}

namespace {

constexpr std::string_view kStageNames[] = {"verify",   "simplify", "lower", "fuse",
                                            "schedule", "codegen",  "jit"};

}  // namespace

std::string_view stage_name(Stage s) {
  return kStageNames[static_cast<int>(s)];
}

Stage parse_stage(std::string_view name) {
  std::string known;
  for (size_t i = 0; i < std::size(kStageNames); ++i) {
    if (kStageNames[i] == name) return static_cast<Stage>(i);
    known += (known.empty() ? "" : ", ") + std::string(kStageNames[i]);
  }
  throw CompileError("unknown stage '" + std::string(name) + "' (" + known + ")");
}

CompileStats global_stats() {
  std::lock_guard<std::mutex> lock(g_stats_mutex);
  return g_stats;
}

}  // namespace af
