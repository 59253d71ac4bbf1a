// The cuda Backend: codegen/cuda's printer behind the Backend interface, and the source around
// the printed kernels.
#include "codegen/cuda/backend.h"

#include "codegen/concat_tiling.h"
#include "codegen/cuda/kernel.h"
#include "codegen/cuda/ops.h"
#include "support/error.h"

namespace af::codegen {
namespace {

/// The GPU architectures kernels are compiled for, with the SM count and shared memory per SM
/// a tiling function may divide work over (the flagship part of each).
struct Arch {
  const char* name;
  int64_t sms;
  int64_t shared_bytes;
};
constexpr Arch kArchs[] = {
    {"sm_80", 108, 164 * 1024},  // A100
    {"sm_89", 128, 100 * 1024},  // L40S / RTX 4090 class
    {"sm_90", 132, 228 * 1024},  // H100 / H200
};
constexpr const char* kDefaultArch = "sm_90";

/// What every device source starts with: the ABI's types and the index helpers generated index
/// code uses (sym::Expr::cpp prints af_floordiv, af_mod, af_min, af_max; loop nests af_index_*)
/// as __device__ functions, from the runtime headers the NVRTC caller supplies by name.
const char* kDeviceIncludes = R"(#define AF_DEVICE __device__
#include "autofuse_cpu_int.h"
)";

/// CUDA C++ for NVIDIA GPUs.
class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string_view summary() const override {
    return "CUDA C++ for NVIDIA GPUs: tiling functions built for the host, device code compiled by "
           "NVRTC and launched with the CUDA driver (runtime/cuda)";
  }
  bool host_fallback() const override { return false; }  // the data is in device memory
  std::vector<TargetOption> options() const override {
    std::vector<std::string> choices;
    for (const Arch& a : kArchs) choices.push_back(a.name);
    return {{"arch", "the GPU architecture NVRTC compiles the kernels for", choices}};
  }
  target::Device configure(const std::map<std::string, std::string>& options) const override {
    auto it = options.find("arch");
    const std::string arch = it == options.end() || it->second.empty() ? kDefaultArch : it->second;
    std::string known;
    for (const Arch& a : kArchs) {
      if (arch == a.name) {
        target::Device d;
        d.cores = a.sms;
        d.onchip_bytes = a.shared_bytes;
        d.options["arch"] = arch;
        return d;
      }
      known += (known.empty() ? "" : ", ") + std::string(a.name);
    }
    throw CompileError("cuda: unknown arch '" + arch + "' (" + known + ")");
  }
  std::string node_reason(const ascir::AscGraph& g, const target::Target&) const override {
    return cuda_node_reason(g);
  }
  std::string reason(const KernelUnit& u, const target::Target&) const override {
    for (const ascir::AscGraph* g : u.segments) {
      std::string why = cuda_kernel_reason(*g);
      if (!why.empty()) return why;
    }
    return "";
  }
  EmittedSource emit(const std::vector<KernelUnit>& units, const target::Target& t) const override {
    return emit_cuda_source(units, t);
  }
  Toolchain toolchain(const target::Target&) const override {
    // The host module: the tiling functions, K_threads and the device code as a string.
    Toolchain tc;
    tc.flags = {"-O2"};
    tc.host_kernels = false;
    return tc;
  }
};

}  // namespace

const Backend& cuda_backend() {
  static const CudaBackend backend;
  return backend;
}

namespace {

/// `K_threads`: the threads per thread block of a launch of kernel `name` with TilingData `td`,
/// the largest any of `fields` (the TilingData's `threads` members) asks for.
std::string threads_function(const std::string& name, const std::vector<std::string>& fields) {
  std::string f = "AF_EXPORT int64_t " + name + "_threads(const void* tiling_data) {\n  const " +
                  name + "_TilingData* td = static_cast<const " + name +
                  "_TilingData*>(tiling_data);\n  int64_t t = 32;\n";
  for (const std::string& field : fields) f += "  t = af_max(t, td->" + field + ");\n";
  return f + "  return t;\n}\n";
}

/// The __global__ function of concat kernel `out` (unit `u`): block b runs on segment 0 while b
/// is below its block_dim, then on segment 1, ..., each given its own inputs and outputs.
std::string concat_global(const KernelUnit& u, const EmittedKernel& out,
                          const std::vector<KernelContext>& segs) {
  std::vector<CudaPointer> params(static_cast<size_t>(u.num_inputs + u.num_outputs));
  std::string body = "    int64_t r = b;\n";
  for (size_t s = 0; s < segs.size(); ++s) {
    std::string args;
    for (CudaPointer p : cuda_pointer_params(segs[s])) {  // the segment's own -> the kernel's
      p.index = p.input ? u.input_map[s][static_cast<size_t>(p.index)]
                        : u.output_map[s][static_cast<size_t>(p.index)];
      params.at(static_cast<size_t>(p.input ? p.index : u.num_inputs + p.index)) = p;
      args += ", " + p.name();
    }
    const std::string ts = "td.s" + std::to_string(s);
    body += "    if (r < " + ts + ".header.block_dim) {\n      " + segs[s].name + "_block(" + ts +
            ", r" + args + ");\n      continue;\n    }\n    r -= " + ts + ".header.block_dim;\n";
  }
  return cuda_global_function(out.name, params, body);
}

}  // namespace

EmittedSource emit_cuda_source(const std::vector<KernelUnit>& units, const target::Target& t) {
  const std::string arch = t.device.option("arch").empty() ? kDefaultArch : t.device.option("arch");
  EmittedSource out;
  std::string device = std::string(kDeviceIncludes) + cuda_device_prologue();
  std::string host;
  for (const KernelUnit& u : units) {
    std::vector<KernelContext> segs;
    std::vector<EmittedKernel> emitted;
    for (const ascir::AscGraph* g : u.segments) {
      segs.push_back(analyze_kernel(*g, kernel_c_name(g->name)));
      const KernelContext& k = segs.back();
      const std::string head = "\n// ---- kernel " + k.name + " ----\n";
      device += head + ir_comment(*g) + cuda_tiling_data(k) + cuda_block_function(k);
      host += head + cuda_tiling_data(k) + cuda_tiling_function(k);
      if (u.input_map.empty()) host += threads_function(k.name, {"threads"});
      emitted.push_back({k.name, k.size_symbols, k.num_inputs, k.num_outputs, "cuda"});
    }
    if (u.input_map.empty()) {
      if (segs.size() != 1)
        throw CompileError("codegen: kernel " + u.name + " has " + std::to_string(segs.size()) +
                           " loop nests but no segment maps");
      std::string args;
      for (const CudaPointer& p : cuda_pointer_params(segs[0])) args += ", " + p.name();
      device += cuda_global_function(segs[0].name, cuda_pointer_params(segs[0]),
                                     "    " + segs[0].name + "_block(td, b" + args + ");\n");
      out.kernels.push_back(emitted[0]);
      continue;
    }
    EmittedKernel k = concat_kernel(u, emitted);
    k.target = "cuda";
    const std::string head =
        "\n// ---- concat kernel " + k.name + ": blocks of segment 0, then of segment 1, ...\n";
    device += head + concat_tiling_data(k, emitted) + concat_global(u, k, segs);
    std::vector<std::string> threads;
    for (size_t s = 0; s < segs.size(); ++s)
      threads.push_back("s" + std::to_string(s) + ".threads");
    host += head + concat_tiling_data(k, emitted) + concat_tiling_function(k, emitted) +
            threads_function(k.name, threads);
    out.kernels.push_back(k);
  }
  out.code = "// Generated by autofuse: CUDA kernels for " + arch +
             ". The host part holds the tiling functions;\n// af_cuda_source is the device code "
             "NVRTC compiles.\n#include \"autofuse_cpu_int.h\"\n" +
             host + "\nAF_EXPORT const char af_cuda_source[] = R\"af_cuda(\n" + device +
             ")af_cuda\";\n";
  return out;
}

}  // namespace af::codegen
