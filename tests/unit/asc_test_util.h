// Test helpers for the Schedule pass and the CPU emitter: build unscheduled AscGraphs by hand in
// the shape lowering produces (data -> load -> compute -> store -> output over z0..zn), and
// compile / load / run emitted kernel sources.
#pragma once
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "codegen/cpu/emitter.h"
#include "runtime/include/autofuse_abi.h"
#include "schedule/schedule.h"
#include "support/error.h"
#include "target/target.h"

namespace af::asc_test {

/// Builds an unscheduled AscGraph over original axes z0..z{n-1} with the given sizes.
class AscBuilder {
 public:
  AscBuilder(std::string name, std::vector<sym::Expr> sizes) : sizes_(std::move(sizes)) {
    g.name = std::move(name);
    for (size_t i = 0; i < sizes_.size(); ++i)
      axes_.push_back(g.add_axis("z" + std::to_string(i), sizes_[i]));
  }

  /// A kernel input (data + load) of dtype `t` whose global layout has `strides` (stride 0 =
  /// broadcast dim, repeat 1) and `offset`. Returns the load.
  int input(DType t, std::vector<sym::Expr> strides, sym::Expr offset = 0) {
    ascir::AscNode d = node("d" + std::to_string(num_inputs_), "data", t);
    d.attrs["index"] = int64_t{num_inputs_++};
    d.out.strides = strides;
    d.out.offset = offset;
    for (size_t i = 0; i < sizes_.size(); ++i)
      d.out.repeats.push_back(strides[i] == sym::Expr(0) ? sym::Expr(1) : sizes_[i]);
    int di = g.add_node(d);
    ascir::AscNode l = node("l" + std::to_string(di), "load", t);
    l.inputs = {di};
    l.out.repeats = d.out.repeats;
    l.out.strides = local_strides(l.out.repeats);
    return g.add_node(l);
  }
  /// A row-major input of the full shape.
  int contiguous_input(DType t = DType::F32) { return input(t, row_major()); }

  /// A compute node of the full shape (or the shape of its inputs when `keep_shape`).
  int op(const std::string& kind, std::vector<int> in, DType t = DType::F32, AttrMap attrs = {}) {
    ascir::AscNode n = node("n" + std::to_string(g.nodes.size()), kind, t);
    n.inputs = std::move(in);
    n.attrs = std::move(attrs);
    bool has_full = false;
    for (int i : n.inputs) has_full = has_full || g.nodes[i].out.repeats == sizes_;
    if (!n.inputs.empty() && !has_full && g.nodes[n.inputs[0]].op != "scalar")
      n.out.repeats = g.nodes[n.inputs[0]].out.repeats;
    else
      n.out.repeats = sizes_;
    n.out.strides = local_strides(n.out.repeats);
    return g.add_node(n);
  }
  int broadcast(int in) {
    ascir::AscNode n =
        node("b" + std::to_string(g.nodes.size()), "broadcast", g.nodes[in].out.dtype);
    n.inputs = {in};
    n.out.repeats = sizes_;
    n.out.strides = local_strides(sizes_);
    return g.add_node(n);
  }
  int scalar(double v, DType t = DType::F32) {
    ascir::AscNode n;
    n.name = "c" + std::to_string(g.nodes.size());
    n.op = "scalar";
    n.attrs["value"] = v;
    n.out.dtype = t;
    n.sched_axes = axes_;
    return g.add_node(n);
  }
  int cast(int in, DType t) { return op("cast", {in}, t); }
  /// store + output #k of `value` as dtype `t`; row-major when `strides` is empty.
  void output(int value, DType t = DType::F32, std::vector<sym::Expr> strides = {}) {
    if (strides.empty()) strides = row_major();
    ascir::AscNode s = node("s" + std::to_string(g.nodes.size()), "store", t);
    s.inputs = {value};
    s.out.repeats = sizes_;
    s.out.strides = strides;
    int si = g.add_node(s);
    ascir::AscNode o = s;
    o.name = "o" + std::to_string(num_outputs_);
    o.op = "output";
    o.inputs = {si};
    o.attrs["index"] = int64_t{num_outputs_++};
    g.add_node(o);
  }
  std::vector<sym::Expr> row_major() const {
    std::vector<sym::Expr> s(sizes_.size());
    sym::Expr acc = 1;
    for (size_t i = sizes_.size(); i-- > 0;) {
      s[i] = acc;
      acc = acc * sizes_[i];
    }
    return s;
  }

  ascir::AscGraph g;

 private:
  ascir::AscNode node(std::string name, std::string op, DType t) {
    ascir::AscNode n;
    n.name = std::move(name);
    n.op = std::move(op);
    n.sched_axes = axes_;
    n.out.dtype = t;
    n.out.axes = axes_;
    return n;
  }
  static std::vector<sym::Expr> local_strides(const std::vector<sym::Expr>& repeats) {
    std::vector<sym::Expr> s(repeats.size());
    sym::Expr acc = 1;
    for (size_t i = repeats.size(); i-- > 0;) {
      s[i] = repeats[i] == sym::Expr(1) ? sym::Expr(0) : acc;
      acc = acc * repeats[i];
    }
    return s;
  }
  std::vector<sym::Expr> sizes_;
  std::vector<int> axes_;
  int64_t num_inputs_ = 0, num_outputs_ = 0;
};

/// An emitted source compiled into a shared object and loaded: with cpu_compile_flags, or with
/// `flags` and `libs` (for another emitter; -I runtime/include is always given).
class KernelLib {
 public:
  KernelLib(const codegen::EmittedSource& src, const target::Target& t)
      : KernelLib(src, codegen::cpu_compile_flags(t), codegen::cpu_link_libs(t)) {}
  KernelLib(const codegen::EmittedSource& src, const std::vector<std::string>& flags,
            const std::vector<std::string>& libs)
      : src_(src) {
    char tmpl[] = "/tmp/af_codegen_test_XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/k.cpp") << src.code;
    std::string cmd = "g++";
    for (const auto& f : flags) cmd += " " + f;
    cmd += " -I" AUTOFUSE_SOURCE_INCLUDE_DIR " " + dir_ + "/k.cpp -o " + dir_ + "/k.so";
    for (const auto& l : libs) cmd += " -l" + l;
    cmd += " 2> " + dir_ + "/err.txt";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream err(dir_ + "/err.txt");
      std::stringstream ss;
      ss << err.rdbuf();
      throw ToolchainError("compiling the emitted source failed:\n" + ss.str().substr(0, 4000));
    }
    handle_ = dlopen((dir_ + "/k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw ToolchainError(std::string("dlopen: ") + dlerror());
  }
  ~KernelLib() {
    if (handle_) dlclose(handle_);
    std::system(("rm -rf " + dir_).c_str());
  }
  KernelLib(const KernelLib&) = delete;
  KernelLib& operator=(const KernelLib&) = delete;

  /// Runs kernel #k: the tiling function for `symbols` and `cores`, then every block (last block
  /// first, so no block relies on an earlier one). Returns block_dim.
  int64_t run(size_t k, const std::vector<int64_t>& symbols, const std::vector<void*>& args,
              int64_t cores = 1, int64_t ub_bytes = 256 * 1024) {
    const codegen::EmittedKernel& ek = src_.kernels.at(k);
    auto tiling = reinterpret_cast<af_tiling_fn>(dlsym(handle_, (ek.name + "_tiling").c_str()));
    auto kernel = reinterpret_cast<af_kernel_fn>(dlsym(handle_, (ek.name + "_kernel").c_str()));
    if (!tiling || !kernel) throw ToolchainError("missing symbols of kernel " + ek.name);
    EXPECT_EQ(args.size(), static_cast<size_t>(ek.num_inputs + ek.num_outputs));
    EXPECT_EQ(symbols.size(), ek.symbols.size());
    alignas(64) unsigned char td[AF_MAX_TILING_DATA_BYTES];
    std::memset(td, 0xcd, sizeof td);
    af_target target{cores, ub_bytes, 32, 32};
    tiling(symbols.data(), &target, td);
    af_tiling_header h;
    std::memcpy(&h, td, sizeof h);
    EXPECT_GE(h.block_dim, 1);
    EXPECT_LE(h.block_dim, std::max<int64_t>(cores, 1));
    for (int64_t b = h.block_dim; b-- > 0;) kernel(args.data(), td, b);
    return h.block_dim;
  }

  const codegen::EmittedSource& source() const { return src_; }
  /// A symbol of the loaded object (nullptr when missing).
  void* symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

 private:
  codegen::EmittedSource src_;
  std::string dir_;
  void* handle_ = nullptr;
};

/// Schedules every graph for `t`, emits one source and compiles it.
inline codegen::EmittedSource schedule_and_emit(std::vector<ascir::AscGraph*> graphs,
                                                const target::Target& t) {
  std::vector<const ascir::AscGraph*> cg;
  for (auto* g : graphs) {
    schedule::schedule_kernel(*g, t);
    cg.push_back(g);
  }
  return codegen::emit_cpu_source(cg, t);
}

/// The host target with a fixed ISA (avx2 when the host has it, else scalar).
inline target::Target test_target() {
  target::Target t = target::Target::host_cpu();
  // The avx2 path is the one the tests pin; avx512 has its own test.
  return t.isa == target::Isa::Avx512 ? t.with_isa(target::Isa::Avx2) : t;
}

/// |got - want| <= atol + rtol * |want|, with NaN == NaN and equal infinities.
inline bool close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

}  // namespace af::asc_test
