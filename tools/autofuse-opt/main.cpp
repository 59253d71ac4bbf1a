// autofuse-opt: reads textual Graph IR (or AscIR with --input=ascir), runs the named passes and
// prints the resulting IR — the tool every lit test drives, like mlir-opt.
//
//   autofuse-opt [--input=graph|ascir] [--passes=simplify,lower,fuse,schedule,codegen]
//   [--no-fusion]
//                [--flags=AUTOFUSE_FLAGS] [--isa=avx2|avx512|scalar] [--emit=text|dot] [FILE|-]
//
// With no passes it parses, verifies and prints (the round trip). `--emit=dot` prints the
// FusedGraph after the passes as Graphviz DOT (fusion/dot.h) instead of text. Graph IR passes run
// in the order given; `lower` is implied by any later pass; `simplify` alone prints the
// simplified Graph IR. `--flags` takes AUTOFUSE_FLAGS text (--max_fusion_size=2, ...). For AscIR
// input the passes are `schedule` and `codegen`.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "ascir/parser.h"
#include "ascir/printer.h"
#include "ascir/verifier.h"
#include "codegen/cpu_emitter.h"
#include "fusion/dot.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "fusion/printer.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/simplify.h"
#include "graph/verifier.h"
#include "pipeline/flags.h"
#include "pipeline/pipeline.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace {

struct Args {
  std::string input = "graph";
  std::vector<std::string> passes;
  bool fusion = true;
  std::string isa;
  std::string emit = "text";  // or "dot"
  std::string flags;          // AUTOFUSE_FLAGS text for lower / fuse
  std::string file = "-";
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

int usage(const std::string& why) {
  std::cerr
      << "autofuse-opt: " << why << "\n"
      << "usage: autofuse-opt [--input=graph|ascir] [--passes=simplify,lower,fuse,schedule,codegen]"
         " [--no-fusion] [--flags=AUTOFUSE_FLAGS] [--isa=avx2|avx512|scalar] [--emit=text|dot] "
         "[FILE|-]\n";
  return 2;
}

std::string read_input(const std::string& file) {
  if (file == "-") return {std::istreambuf_iterator<char>(std::cin), {}};
  std::ifstream in(file);
  if (!in) throw af::CompileError("cannot open '" + file + "'");
  return {std::istreambuf_iterator<char>(in), {}};
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  for (const auto& s : v)
    if (s == x) return true;
  return false;
}

/// Graph IR in: parse, verify, then lower / fuse / schedule / codegen as asked.
void run_graph(const Args& a, const std::string& text, const af::schedule::Target& target) {
  for (const af::graph::Graph& g : af::graph::parse_graphs(text)) {
    af::graph::verify(g);
    if (a.passes.empty() && a.emit != "dot") {
      std::cout << af::graph::print(g);
      continue;
    }
    af::graph::Graph source = g;
    if (has(a.passes, "simplify")) {
      af::graph::simplify(source);
      if (a.passes.size() == 1) {
        std::cout << af::graph::print(source);
        continue;
      }
    }
    af::fusion::FusionOptions opts = af::parse_flags(a.flags, {}, "--flags");
    if (!a.fusion) opts.enabled = false;
    af::fusion::FusedGraph fused = af::fusion::lower(source, opts);
    if (has(a.passes, "fuse")) fused = af::fusion::fuse(std::move(fused), opts);
    if (has(a.passes, "schedule") || has(a.passes, "codegen")) af::schedule_kernels(fused, target);
    if (a.emit == "dot")
      std::cout << af::fusion::print_dot(fused);
    else if (has(a.passes, "codegen"))
      std::cout << af::codegen::emit_cpu_source(af::kernel_units(fused), target).code;
    else
      std::cout << af::fusion::print(fused);
  }
}

/// AscIR in: parse, verify, optionally schedule, print (or, with codegen, the C++ source).
void run_ascir(const Args& a, const std::string& text, const af::schedule::Target& target) {
  std::vector<af::ascir::AscGraph> graphs = af::ascir::parse_asc_graphs(text);
  std::vector<const af::ascir::AscGraph*> kernels;
  for (af::ascir::AscGraph& g : graphs) {
    af::ascir::verify(g);
    if (has(a.passes, "schedule")) {
      af::schedule::schedule_kernel(g, target);
      af::ascir::verify(g);
    }
    kernels.push_back(&g);
    if (!has(a.passes, "codegen")) std::cout << af::ascir::print(g);
  }
  if (has(a.passes, "codegen")) std::cout << af::codegen::emit_cpu_source(kernels, target).code;
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
    } else if (s == "--no-fusion") {
      a.fusion = false;
    } else if (s.rfind("--isa=", 0) == 0) {
      a.isa = s.substr(6);
    } else if (s == "-h" || s == "--help") {
      return usage("help");
    } else if (s.rfind("--", 0) == 0) {
      return usage("unknown option '" + s + "'");
    } else {
      a.file = s;
    }
  }
  const std::vector<std::string> known = {"simplify", "lower", "fuse", "schedule", "codegen"};
  for (const auto& p : a.passes)
    if (!has(known, p))
      return usage("unknown pass '" + p + "' (known: simplify, lower, fuse, schedule, codegen)");
  if (a.input != "graph" && a.input != "ascir")
    return usage("--input must be graph or ascir, not '" + a.input + "'");
  if (a.emit != "text" && a.emit != "dot")
    return usage("--emit must be text or dot, not '" + a.emit + "'");
  if (a.emit == "dot" && (a.input != "graph" || has(a.passes, "codegen")))
    return usage("--emit=dot prints a FusedGraph: Graph IR input, passes up to schedule");

  // Golden tests must not depend on the host: default to the avx2 target unless told.
  af::schedule::Target target = af::schedule::Target::host_cpu();
  if (a.isa.empty()) a.isa = "avx2";
  target.isa = a.isa;
  target.vector_bytes = a.isa == "avx512" ? 64 : a.isa == "avx2" ? 32 : 4;
  try {
    std::string text = read_input(a.file);
    if (a.input == "ascir")
      run_ascir(a, text, target);
    else
      run_graph(a, text, target);
  } catch (const std::exception& e) {
    std::cerr << "autofuse-opt: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
