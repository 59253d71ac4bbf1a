// The CPU emitter's translation unit: the prologue, and per kernel its TilingData struct, its
// tiling function and (kernel.cpp) its kernel function.
#include "codegen/cpu/emitter.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "ascir/printer.h"
#include "codegen/cpu/kernel.h"
#include "codegen/cpu/tiling.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace af::codegen {
namespace {

/// A C identifier for kernel name `name` ([A-Za-z0-9_.]+ in the IR).
std::string kernel_c_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

/// The scheduled AscIR as a comment block, so a dumped source says what it implements.
std::string ir_comment(const ascir::AscGraph& g) {
  std::string text = ascir::print(g), out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "// " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

/// The source of one scheduled loop nest: its TilingData, tiling and kernel functions.
EmittedKernel emit_nest(const ascir::AscGraph& g, const schedule::Target& t, std::string* code) {
  const int64_t lanes = schedule::vector_lanes(t);
  KernelContext k = analyze_kernel(g, kernel_c_name(g.name));
  for (const auto& p : g.schedule->params)
    if (p.role == ascir::ParamRole::Tile && p.align % lanes != 0)
      throw CompileError("codegen @" + g.name + ": tile parameter " + p.name + " aligned to " +
                         std::to_string(p.align) + ", not a multiple of the " +
                         std::to_string(lanes) + " lanes of isa " +
                         std::string(schedule::isa_name(t.isa)));
  *code += "\n// ---- kernel " + k.name + " ----\n" + ir_comment(g);
  *code += tiling_source(k) + "\n" + emit_kernel_function(k);
  return {k.name, k.size_symbols, k.num_inputs, k.num_outputs};
}

/// "{a[i0], a[i1], ...}": the entries of C array `a` at `idx` (+ `base`).
std::string pick(const std::string& a, const std::vector<int>& idx, int base = 0) {
  std::string s = "{";
  for (size_t i = 0; i < idx.size(); ++i)
    s += (i ? ", " : "") + a + "[" + std::to_string(base + idx[i]) + "]";
  return s + "}";
}

/// The TilingData, tiling and kernel functions of concat kernel `u` over its emitted segments.
EmittedKernel emit_concat_dispatch(const KernelUnit& u, const std::vector<EmittedKernel>& segs,
                                   std::string* code) {
  EmittedKernel out{kernel_c_name(u.name), {}, u.num_inputs, u.num_outputs};
  std::set<std::string> symbols;
  for (const EmittedKernel& s : segs) symbols.insert(s.symbols.begin(), s.symbols.end());
  out.symbols.assign(symbols.begin(), symbols.end());
  const std::string& K = out.name;
  std::string c =
      "\n// ---- concat kernel " + K + ": blocks of segment 0, then of segment 1, ...\n";
  c += "struct " + K + "_TilingData {\n  af_tiling_header header;\n";
  for (size_t i = 0; i < segs.size(); ++i)
    c += "  " + segs[i].name + "_TilingData s" + std::to_string(i) + ";\n";
  c += "};\nstatic_assert(sizeof(" + K + "_TilingData) <= AF_MAX_TILING_DATA_BYTES, \"" + K +
       ": tiling data too large\");\n\n";
  c += "AF_EXPORT void " + K +
       "_tiling(const int64_t* symbols, const af_target* target, void* tiling_data) {\n";
  c += "  " + K + "_TilingData* td = static_cast<" + K + "_TilingData*>(tiling_data);\n";
  c += "  td->header.block_dim = 0;\n  td->header.tiling_key = 0;\n";
  for (size_t i = 0; i < segs.size(); ++i) {
    std::vector<int> at;
    for (const auto& name : segs[i].symbols)
      at.push_back(static_cast<int>(std::find(out.symbols.begin(), out.symbols.end(), name) -
                                    out.symbols.begin()));
    const std::string si = "s" + std::to_string(i);
    c += "  {\n";
    c += at.empty() ? "    const int64_t* syms = symbols;\n"
                    : "    const int64_t syms[] = " + pick("symbols", at) + ";\n";
    c += "    " + segs[i].name + "_tiling(syms, target, &td->" + si + ");\n";
    c += "    td->header.block_dim += td->" + si + ".header.block_dim;\n  }\n";
  }
  c += "}\n\n";
  c += "AF_EXPORT void " + K +
       "_kernel(void* const* args, const void* tiling_data, int64_t block_idx) {\n";
  c +=
      "  const " + K + "_TilingData* td = static_cast<const " + K + "_TilingData*>(tiling_data);\n";
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string si = "td->s" + std::to_string(i);
    c += "  if (block_idx < " + si + ".header.block_dim) {\n";
    std::string a = pick("args", u.input_map[i]);
    std::string o = pick("args", u.output_map[i], u.num_inputs);
    a = a.substr(0, a.size() - 1) + (u.input_map[i].empty() ? "" : ", ") + o.substr(1);
    c += "    void* const a[] = " + a + ";\n";
    c += "    " + segs[i].name + "_kernel(a, &" + si + ", block_idx);\n    return;\n  }\n";
    c += "  block_idx -= " + si + ".header.block_dim;\n";
  }
  c += "}\n";
  *code += c;
  return out;
}

}  // namespace

EmittedSource emit_cpu_source(const std::vector<KernelUnit>& kernels, const schedule::Target& t) {
  int64_t lanes = schedule::vector_lanes(t);
  EmittedSource out;
  const std::string isa(schedule::isa_name(t.isa));
  out.code = "// Generated by autofuse: CPU kernels for isa " + isa + ".\n";
  out.code += "#include \"autofuse_cpu.h\"\n\n";
  out.code += "#if AF_LANES != " + std::to_string(lanes) + "\n";
  out.code += "#error \"autofuse: kernels scheduled for " + std::to_string(lanes) + " lanes (isa " +
              isa + ") but compiled for another ISA; check the -m flags\"\n";
  out.code += "#endif\n";
  std::set<std::string> names;
  auto unique = [&](const std::string& name) {
    if (!names.insert(name).second)
      throw CompileError("codegen: two kernels are named " + name + " in one source");
  };
  for (const KernelUnit& u : kernels) {
    std::vector<EmittedKernel> segs;
    for (const ascir::AscGraph* g : u.segments) {
      segs.push_back(emit_nest(*g, t, &out.code));
      unique(segs.back().name);
    }
    bool concat = !u.input_map.empty();
    if (!concat) {
      if (segs.size() != 1)
        throw CompileError("codegen: kernel " + u.name + " has " + std::to_string(segs.size()) +
                           " loop nests but no segment maps");
      out.kernels.push_back(segs[0]);
      continue;
    }
    if (u.input_map.size() != segs.size() || u.output_map.size() != segs.size())
      throw CompileError("codegen: concat kernel " + u.name + " maps " +
                         std::to_string(u.input_map.size()) + " segments, has " +
                         std::to_string(segs.size()));
    out.kernels.push_back(emit_concat_dispatch(u, segs, &out.code));
    unique(out.kernels.back().name);
  }
  return out;
}

EmittedSource emit_cpu_source(const std::vector<const ascir::AscGraph*>& kernels,
                              const schedule::Target& t) {
  std::vector<KernelUnit> units;
  for (const ascir::AscGraph* g : kernels) units.push_back({g->name, {g}, {}, {}, 0, 0});
  return emit_cpu_source(units, t);
}

std::vector<std::string> cpu_compile_flags(const schedule::Target& t) {
  std::vector<std::string> f = {"-O3",
                                "-fPIC",
                                "-shared",
                                "-std=c++17",
                                "-ffp-contract=off",
                                "-fno-fast-math",
                                "-fno-math-errno"};
  switch (t.isa) {
    case schedule::Isa::Avx512:
      for (const char* x :
           {"-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma", "-mf16c"})
        f.push_back(x);
      if (t.avx512_bf16) f.push_back("-mavx512bf16");  // autofuse_cpu_avx512.h: __AVX512BF16__
      break;
    case schedule::Isa::Avx2:
      for (const char* x : {"-mavx2", "-mfma", "-mf16c"}) f.push_back(x);
      break;
    case schedule::Isa::Scalar: break;
  }
  return f;
}

std::vector<std::string> cpu_link_libs(const schedule::Target&) {
  return {"sleef"};
}

}  // namespace af::codegen
