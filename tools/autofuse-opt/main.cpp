// autofuse-opt: reads textual Graph IR, a FusedGraph (a lowered or fused dump, or a hand-written
// one; passes fuse, schedule, codegen) or AscIR (--input=ascir), runs the pipeline's passes up
// to a stage and prints the resulting IR — the tool every lit test drives, like mlir-opt.
//
//   autofuse-opt [--input=graph|ascir] [--passes=simplify|lower|fuse|schedule|codegen]
//                [--no-fusion] [--flags=AUTOFUSE_FLAGS] [--isa=avx512|avx2|scalar]
//                [--target=cpu|ascendc [--<target option>=V ...]]
//                [--emit=text|dot] [--tiling=SYM=V,... [--cores=N]] [FILE|-]
//
// With no passes it parses, verifies and prints (the round trip). A requested stage runs with
// every stage production runs before it (simplify, lower, fuse, schedule, codegen: the order of
// pipeline/pipeline.cpp), so `--passes=schedule` prints what AUTOFUSE_DUMP's
// gN.scheduled.txt holds for the same Graph IR; a list runs up to its last stage. `--no-fusion`
// makes fuse keep one op per kernel (AUTOFUSE_FUSION=0). `--isa` defaults to the host's widest,
// as the runtime does (golden tests name theirs). `--target=ascendc` prints codegen as
// AUTOFUSE_TARGET=ascendc builds it: Ascend C (TilingData, tiling function, kernel) for every
// kernel the Ascend C emitter prints, C++ for the rest. A target's options (backends/registry.h)
// are flags of their own name: ascendc's `--cann` picks the CANN release whose API spelling it
// uses where they differ (default: what 8.x and 9.x both accept), `--soc` the Atlas A2 chip
// whose vector cores the tiling uses (default Ascend910B1). `--emit=dot` prints
// the FusedGraph after the passes as Graphviz DOT (fusion/dot.h). `--flags` takes AUTOFUSE_FLAGS
// text
// (--max_fusion_size=2, ...). For AscIR input the passes are `schedule` and `codegen`; it also
// reads the kernels of a FusedGraph dump (gN.lowered.txt, gN.fused.txt, gN.scheduled.txt).
// `--tiling` schedules and prints, per loop nest, the TilingData its tiling function picks for
// the given values of the graph's size symbols (every one, each >= 0) on N cores (default 1):
// `tiling @k0 {s0 = 7}: tiling_key 0 (elementwise) tile 8 block 1 block_dim 1 stream_stores 0`.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ascir/parser.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"
#include "backends/registry.h"
#include "fusion/dot.h"
#include "fusion/parser.h"
#include "fusion/printer.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "pipeline/flags.h"
#include "pipeline/pipeline.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace {

/// The pipeline's stages in production's order (pipeline/pipeline.cpp).
using af::Stage;

struct Args {
  std::string input = "graph";
  std::vector<std::string> passes;
  std::optional<Stage> last;  // the latest stage in `passes` (pipeline.h's stage list)
  bool fusion = true;
  std::string isa;
  std::string target = "cpu";  // --target: a registered target (backends/registry.h)
  /// --<option>=value for an option a registered target declares (ascendc: --cann, --soc).
  std::map<std::string, std::string> target_options;
  std::string emit = "text";  // or "dot"
  std::string flags;          // AUTOFUSE_FLAGS text for lower / fuse
  std::string file = "-";
  bool tiling = false;       // print the tiling choices instead of IR
  af::sym::Bindings values;  // --tiling symbol values
  int64_t cores = 1;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

/// "[--target=cpu|ascendc] [--soc=...] ...": the registered targets and their options.
std::string target_usage() {
  std::string names, options;
  for (const af::codegen::Backend* b : af::backends::all_backends()) {
    names += (names.empty() ? "" : "|") + std::string(b->name());
    for (const af::codegen::TargetOption& o : b->options()) {
      std::string values;
      for (const auto& c : o.choices) values += (values.empty() ? "" : "|") + c;
      options += " [--" + o.name + "=" + (o.choices.size() > 3 ? "..." : values) + "]";
    }
  }
  return "[--target=" + names + "]" + options;
}

int usage(const std::string& why) {
  std::cerr << "autofuse-opt: " << why << "\n"
            << "usage: autofuse-opt [--input=graph|ascir] "
               "[--passes=simplify|lower|fuse|schedule|codegen] [--no-fusion] "
               "[--flags=AUTOFUSE_FLAGS] [--isa=avx512|avx2|scalar] "
            << target_usage() << " [--emit=text|dot] [--tiling=SYM=V,... [--cores=N]] [FILE|-]\n";
  return 2;
}

/// Is `arg` `--<name>=value` for an option some registered target declares?
bool is_target_option(const std::string& arg) {
  size_t eq = arg.find('=');
  if (arg.rfind("--", 0) != 0 || eq == std::string::npos) return false;
  for (const af::codegen::Backend* b : af::backends::all_backends())
    for (const af::codegen::TargetOption& o : b->options())
      if (o.name == arg.substr(2, eq - 2)) return true;
  return false;
}

std::string read_input(const std::string& file) {
  if (file == "-") return {std::istreambuf_iterator<char>(std::cin), {}};
  std::ifstream in(file);
  if (!in) throw af::CompileError("cannot open '" + file + "'");
  return {std::istreambuf_iterator<char>(in), {}};
}

/// Whether `text` is a FusedGraph (a line opening a `fusedgraph` after its source graph).
bool is_fused_graph(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("fusedgraph @", 0) == 0) return true;
  return false;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  for (const auto& s : v)
    if (s == x) return true;
  return false;
}

/// Refuses --tiling values for symbols no loop nest has (a typo, or a name from another dump).
void check_tiling_symbols(const std::vector<const af::ascir::AscGraph*>& nests,
                          const af::sym::Bindings& values) {
  std::set<std::string> known;
  for (const af::ascir::AscGraph* g : nests) {
    std::set<std::string> params;  // tile sizes the tiling function picks, not graph sizes
    if (g->schedule)
      for (const auto& p : g->schedule->params) params.insert(p.name);
    for (const std::string& name : g->size_symbols())
      if (!params.count(name)) known.insert(name);
  }
  for (const auto& [name, value] : values) {
    if (known.count(name)) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw af::CompileError("--tiling names size symbol " + name + ", which no loop nest has (" +
                           (list.empty() ? "they have none" : "they have " + list) + ")");
  }
}

/// "sym = value" of every size symbol of `g` found in `values`.
std::string bindings_str(const af::ascir::AscGraph& g, const af::sym::Bindings& values) {
  std::string out;
  std::set<std::string> params;
  if (g.schedule)
    for (const auto& p : g.schedule->params) params.insert(p.name);
  for (const std::string& name : g.size_symbols()) {
    if (params.count(name)) continue;
    if (!values.count(name))
      throw af::CompileError("--tiling gives no value for size symbol " + name + " of @" + g.name);
    out += (out.empty() ? "" : ", ") + name + " = " + std::to_string(values.at(name));
  }
  return "{" + out + "}";
}

/// One line per scheduled loop nest: the TilingData its tiling function picks (--tiling).
void print_tilings(const Args& a, const std::vector<const af::ascir::AscGraph*>& nests,
                   const af::target::Target& target) {
  check_tiling_symbols(nests, a.values);
  for (const af::ascir::AscGraph* g : nests) {
    std::string values = bindings_str(*g, a.values);
    std::cout << "tiling @" << g->name << " " << values << ": "
              << af::backends::backend_chain(target).front()->tiling_choice(*g, a.values, a.cores,
                                                                            target)
              << "\n";
  }
}

/// What the passes asked for print: the Graph IR after simplify, the FusedGraph (text or DOT),
/// its loop nests' tilings, or the program's source after codegen.
void print_result(const Args& a, const af::CompiledProgram& prog, Stage last,
                  const af::target::Target& target) {
  const af::fusion::FusedGraph& fused = prog.fused;
  if (last == Stage::Simplify)
    std::cout << af::graph::print(fused.source);
  else if (a.tiling) {
    std::vector<const af::ascir::AscGraph*> nests;
    for (const auto& n : fused.nodes)
      for (const af::ascir::AscGraph* k : n.kernel_graphs()) nests.push_back(k);
    print_tilings(a, nests, target);
  } else if (a.emit == "dot")
    std::cout << af::fusion::print_dot(fused);
  else if (last == Stage::Codegen)
    std::cout << prog.source;
  else
    std::cout << af::fusion::print(fused);
}

af::CompileOptions compile_options(const Args& a, const af::target::Target& target) {
  af::CompileOptions opts;
  opts.fusion = af::parse_flags(a.flags, {}, "--flags");
  opts.enable_fusion = a.fusion;
  opts.target = target;
  return opts;
}

/// A FusedGraph in (a lowered or fused dump, or a hand-written one): fuse / schedule / codegen
/// from it as production runs them after lowering.
void run_fused(const Args& a, const std::string& text, const af::target::Target& target) {
  if (a.last && *a.last < Stage::Fuse)
    throw af::CompileError(
        "a fusedgraph is lowered already: its passes are fuse, schedule and codegen");
  Stage last = a.last.value_or(Stage::Fuse);
  if (a.tiling) last = std::max(last, Stage::Schedule);
  for (af::fusion::FusedGraph& fg : af::fusion::parse_fused_graphs(text)) {
    for (const af::fusion::FusedNode& n : fg.nodes)
      for (const af::ascir::AscGraph* k : n.kernel_graphs())
        if (k->schedule)
          throw af::CompileError(
              "kernel @" + k->name +
              " is scheduled already: --input=ascir reads a scheduled dump's kernels");
    af::CompiledProgram prog = af::compile_fused(std::move(fg), compile_options(a, target), last);
    print_result(a, prog, last, target);
  }
}

/// Graph IR in: parse, verify, then lower / fuse / schedule / codegen as asked.
void run_graph(const Args& a, const std::string& text, const af::target::Target& target) {
  for (const af::graph::Graph& g : af::graph::parse_graphs(text)) {
    af::graph::verify(g);
    if (a.passes.empty() && a.emit != "dot" && !a.tiling) {
      std::cout << af::graph::print(g);
      continue;
    }
    // Production's pass list (pipeline/pipeline.cpp) up to the stage asked for.
    Stage last = a.last.value_or(Stage::Lower);  // --emit=dot alone: lowered
    if (a.tiling) last = std::max(last, Stage::Schedule);
    af::CompiledProgram prog = af::compile(g, compile_options(a, target), last);
    print_result(a, prog, last, target);
  }
}

/// The loop nests of `text`: AscIR, or every kernel's (concat segments' included) of a
/// FusedGraph dump (gN.lowered/fused/scheduled.txt), parsed by the FusedGraph parser.
std::vector<af::ascir::AscGraph> kernel_graphs_of(const std::string& text) {
  if (!is_fused_graph(text)) return af::ascir::parse_asc_graphs(text);
  std::vector<af::ascir::AscGraph> out;
  for (const af::fusion::FusedGraph& fg : af::fusion::parse_fused_graphs(text))
    for (const af::fusion::FusedNode& n : fg.nodes)
      for (const af::ascir::AscGraph* k : n.kernel_graphs()) out.push_back(*k);
  return out;
}

/// AscIR in (or the kernels of a FusedGraph dump): parse, verify, optionally schedule, print
/// (or, with codegen, the C++ source of each as its own kernel).
void run_ascir(const Args& a, const std::string& text, const af::target::Target& target) {
  std::vector<af::ascir::AscGraph> graphs = kernel_graphs_of(text);
  std::vector<const af::ascir::AscGraph*> kernels;
  for (af::ascir::AscGraph& g : graphs) {
    af::ascir::verify(g);
    if ((a.last >= Stage::Schedule || a.tiling) && !g.schedule) {
      af::schedule::schedule_kernel(g, target);
      af::ascir::verify(g);
    }
    kernels.push_back(&g);
    if (!has(a.passes, "codegen") && !a.tiling) std::cout << af::ascir::print(g);
  }
  if (a.tiling) print_tilings(a, kernels, target);
  if (has(a.passes, "codegen")) {
    std::vector<af::codegen::KernelUnit> units;
    for (const af::ascir::AscGraph* g : kernels) units.push_back({g->name, {g}, {}, {}, 0, 0});
    af::CompileOptions opts;
    opts.target = target;
    std::cout << af::program_source(units, opts, "ascir").code;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--input=", 0) == 0) {
      a.input = s.substr(8);
    } else if (s.rfind("--passes=", 0) == 0) {
      a.passes = split(s.substr(9), ',');
    } else if (s.rfind("--emit=", 0) == 0) {
      a.emit = s.substr(7);
    } else if (s.rfind("--flags=", 0) == 0) {
      a.flags = s.substr(8);
    } else if (s.rfind("--tiling=", 0) == 0) {
      a.tiling = true;
      for (const std::string& item : split(s.substr(9), ',')) {
        size_t eq = item.find('=');
        if (eq == std::string::npos)
          return usage("--tiling takes sym=value items, not '" + item + "'");
        size_t used = 0;
        int64_t v = -1;
        try {
          v = std::stoll(item.substr(eq + 1), &used);
        } catch (const std::exception&) {
        }
        if (used == 0 || used != item.size() - eq - 1 || v < 0)
          return usage("--tiling: the value of " + item.substr(0, eq) + " ('" +
                       item.substr(eq + 1) + "') is not a size (an integer >= 0)");
        a.values[item.substr(0, eq)] = v;
      }
    } else if (s.rfind("--cores=", 0) == 0) {
      try {
        a.cores = std::stoll(s.substr(8));
      } catch (const std::exception&) {
        return usage("--cores takes an integer");
      }
      if (a.cores < 1) return usage("--cores must be >= 1");
    } else if (s == "--no-fusion") {
      a.fusion = false;
    } else if (s.rfind("--isa=", 0) == 0) {
      a.isa = s.substr(6);
    } else if (s.rfind("--target=", 0) == 0) {
      a.target = s.substr(9);
    } else if (is_target_option(s)) {
      size_t eq = s.find('=');
      a.target_options[s.substr(2, eq - 2)] = s.substr(eq + 1);
    } else if (s == "-h" || s == "--help") {
      return usage("help");
    } else if (s.rfind("--", 0) == 0) {
      return usage("unknown option '" + s + "'");
    } else {
      a.file = s;
    }
  }
  for (const auto& p : a.passes) {
    std::optional<Stage> stage;
    try {
      stage = af::parse_stage(p);
    } catch (const af::CompileError&) {
    }
    if (!stage || stage == Stage::Verify || stage == Stage::Jit)
      return usage("unknown pass '" + p + "' (known: simplify, lower, fuse, schedule, codegen)");
    a.last = std::max(a.last.value_or(*stage), *stage);
  }
  if (a.input == "ascir")
    for (const auto& p : a.passes)
      if (p != "schedule" && p != "codegen")
        return usage("pass '" + p + "' reads Graph IR; AscIR input takes schedule and codegen");
  if (a.input != "graph" && a.input != "ascir")
    return usage("--input must be graph or ascir, not '" + a.input + "'");
  if (a.emit != "text" && a.emit != "dot")
    return usage("--emit must be text or dot, not '" + a.emit + "'");
  if (a.emit == "dot" && (a.input != "graph" || has(a.passes, "codegen")))
    return usage("--emit=dot prints a FusedGraph: Graph IR input, passes up to schedule");

  try {
    // The host's widest ISA unless told, as the runtime picks (golden tests name theirs).
    const af::target::Target host = af::target::Target::host_cpu();
    af::target::Target target = a.isa.empty() ? host : host.with_isa(af::target::parse_isa(a.isa));
    target = af::backends::configure_target(target, a.target, a.target_options);
    std::string text = read_input(a.file);
    if (a.input == "ascir")
      run_ascir(a, text, target);
    else if (is_fused_graph(text))
      run_fused(a, text, target);
    else
      run_graph(a, text, target);
  } catch (const std::exception& e) {
    std::cerr << "autofuse-opt: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
