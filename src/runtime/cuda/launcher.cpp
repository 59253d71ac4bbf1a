#include "runtime/cuda/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <tuple>

#include "jit/cache.h"
#include "jit/file_io.h"
#include "jit/hash.h"
#include "jit/module.h"
#include "jit/runtime_headers.h"
#include "runtime/cuda/nvrtc.h"
#include "runtime/include/autofuse_abi.h"
#include "support/error.h"

namespace af::runtime::cuda {
namespace {

/// The most threads one SM keeps resident (every architecture from sm_80 on): a grid of
/// SMs * (this / threads) blocks fills the device; the grid-stride loop covers the rest.
constexpr int64_t kThreadsPerSm = 2048;
/// The kernel parameters a launch passes without a heap allocation.
constexpr size_t kStackParams = 64;

/// The cached cubin at `path` when its recorded content hash (the first line) matches.
std::optional<std::string> read_cubin(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string hash;
  std::getline(in, hash);
  std::ostringstream s;
  s << in.rdbuf();
  std::string binary = s.str();
  if (jit::Hasher128().update(binary).digest().hex() != hash) return std::nullopt;
  return binary;
}

/// Publishes `binary` at `path` (its content hash, a newline, the bytes): written beside it,
/// then renamed over it.
void write_cubin(const std::string& path, const std::string& binary) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << jit::Hasher128().update(binary).digest().hex() << '\n' << binary;
    if (!out) throw ToolchainError("autofuse: cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw ToolchainError("autofuse: cannot publish '" + path + "'");
  }
}

/// The driver modules loaded so far, by (host module file, context): one load of a module's
/// cubin per context, whichever of its kernels launches first.
std::mutex g_modules_mutex;
std::map<std::tuple<std::string, CuContext>, CuModule> g_modules;

CuModule load_module(const Driver& d, const jit::LoadedModule& host, CuContext ctx,
                     const DeviceInfo& device, const std::string& cache_dir) {
  std::lock_guard<std::mutex> lock(g_modules_mutex);
  auto key = std::make_tuple(host.path(), ctx);
  auto it = g_modules.find(key);
  if (it != g_modules.end()) return it->second;
  const std::string cubin = device_binary(host, device.arch, cache_dir);
  CuModule m = nullptr;
  d.check(d.cuModuleLoadData(&m, cubin.data()), "cuModuleLoadData (" + host.path() + ")");
  g_modules.emplace(key, m);
  return m;
}

}  // namespace

std::string unavailable() {
  std::string why;
  const Driver* d = Driver::get(&why);
  if (!d) return why;
  if (!Nvrtc::get(&why)) return why;
  int dev = 0;
  if (int rc = d->cuDeviceGet(&dev, 0)) {
    const char* text = nullptr;
    d->cuGetErrorString(rc, &text);
    return "no CUDA device (" + std::string(text ? text : "unknown error") + ")";
  }
  return "";
}

const std::map<std::string, std::string>& device_headers() {
  static const std::map<std::string, std::string> headers = [] {
    std::map<std::string, std::string> h;
    for (const char* name : {"autofuse_abi.h", "autofuse_cpu_int.h"}) {
      const std::string path = jit::runtime_include_dir() + "/" + name;
      std::optional<std::string> text = jit::read_small_file(path);
      if (!text) throw ToolchainError("autofuse: cannot read the runtime header '" + path + "'");
      h[name] = *text;
    }
    return h;
  }();
  return headers;
}

std::string device_binary(const jit::LoadedModule& module, const std::string& arch,
                          const std::string& cache_dir) {
  const char* source = static_cast<const char*>(module.symbol("af_cuda_source"));
  std::string why;
  const Nvrtc* nvrtc = Nvrtc::get(&why);
  if (!nvrtc) throw ToolchainError(why);
  jit::Hasher128 h;
  h.field("cuda cubin").field(source).field(arch).field(nvrtc->version());
  for (const auto& [name, text] : device_headers()) h.field(name).field(text);
  const std::string dir =
      jit::ensure_private_dir((cache_dir.empty() ? jit::default_cache_dir() : cache_dir) + "/cuda");
  const std::string path = dir + "/" + h.digest().hex() + ".cubin";
  if (std::optional<std::string> cached = read_cubin(path)) return *cached;
  Nvrtc::Result r = nvrtc->compile(source, arch, device_headers(), module.path() + ".cu");
  if (!r.ok)
    throw CompileError("NVRTC " + nvrtc->version() + " could not compile the device code of " +
                       module.path() + " for " + arch + ":\n" + r.log);
  write_cubin(path, r.binary);
  return r.binary;
}

CudaKernel::CudaKernel(std::shared_ptr<jit::LoadedModule> module, std::string symbol,
                       std::string cache_dir)
    : module_(std::move(module)),
      symbol_(std::move(symbol)),
      cache_dir_(std::move(cache_dir)),
      tiling_fn_(module_->symbol(symbol_ + "_tiling")),
      threads_fn_(module_->symbol(symbol_ + "_threads")) {}

CudaKernel::Geometry CudaKernel::geometry(const int64_t* symbols, const DeviceInfo& device,
                                          unsigned char* tiling_data) const {
  af_target t{device.sms, device.shared_bytes_per_sm, 16, 16};
  std::fill(tiling_data, tiling_data + AF_MAX_TILING_DATA_BYTES, 0);
  reinterpret_cast<af_tiling_fn>(tiling_fn_)(symbols, &t, tiling_data);
  Geometry g;
  g.block_dim = reinterpret_cast<const af_tiling_header*>(tiling_data)->block_dim;
  if (g.block_dim < 0)
    throw CompileError("kernel " + symbol_ + ": the tiling function gave block_dim " +
                       std::to_string(g.block_dim));
  g.threads = reinterpret_cast<int64_t (*)(const void*)>(threads_fn_)(tiling_data);
  if (g.threads < 32 || g.threads > 1024 || g.threads % 32 != 0)
    throw CompileError("kernel " + symbol_ + ": the tiling function gave " +
                       std::to_string(g.threads) + " threads per block");
  const int64_t resident = int64_t{device.sms} * std::max<int64_t>(1, kThreadsPerSm / g.threads);
  g.grid = std::min({g.block_dim, resident, int64_t{0x7fffffff}});
  return g;
}

void CudaKernel::launch(void* const* args, size_t nargs, const int64_t* symbols, int ordinal,
                        uintptr_t stream) const {
  std::string why;
  const Driver* d = Driver::get(&why);
  if (!d) throw ToolchainError(why);
  const DeviceInfo& device = device_info(*d, ordinal);
  alignas(64) unsigned char td[AF_MAX_TILING_DATA_BYTES];
  Geometry g = geometry(symbols, device, td);
  if (g.grid == 0) return;
  CuFunction f = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CuContext ctx = current_context(*d, ordinal);
    if (ctx != context_ || !function_) {
      CuModule m = load_module(*d, *module_, ctx, device, cache_dir_);
      CuFunction fn = nullptr;
      d->check(d->cuModuleGetFunction(&fn, m, (symbol_ + "_kernel").c_str()),
               "cuModuleGetFunction(" + symbol_ + "_kernel)");
      context_ = ctx;
      function_ = fn;
    }
    f = function_;
  }
  // kernelParams: a pointer to each argument's value: the TilingData, then each data pointer.
  void* stack_params[kStackParams];
  std::vector<void*> heap_params;
  void** params = stack_params;
  if (nargs + 1 > kStackParams) {
    heap_params.resize(nargs + 1);
    params = heap_params.data();
  }
  params[0] = td;
  for (size_t i = 0; i < nargs; ++i) params[i + 1] = const_cast<void**>(args + i);
  d->check(
      d->cuLaunchKernel(f, static_cast<unsigned>(g.grid), 1, 1, static_cast<unsigned>(g.threads), 1,
                        1, 0, reinterpret_cast<CuStream>(stream), params, nullptr),
      "cuLaunchKernel(" + symbol_ + "_kernel, grid " + std::to_string(g.grid) + ", " +
          std::to_string(g.threads) + " threads)");
}

}  // namespace af::runtime::cuda
