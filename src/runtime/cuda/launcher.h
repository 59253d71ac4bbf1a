// The cuda target's launcher: a cuda program's host module (built by the JIT like any other:
// its kernels' tiling functions, `K_threads`, and the device code as `af_cuda_source`) has its
// device code compiled by NVRTC to a cubin for the device's architecture (kept in the JIT cache,
// keyed by the source, the architecture and NVRTC's version), loaded with the driver API and
// launched on the caller's stream (torch's current one). docs/cuda.md.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/cuda/driver.h"

namespace af::jit {
class LoadedModule;
}

namespace af::runtime::cuda {

/// Why cuda kernels cannot run in this process ("" when they can): no driver, no device or no
/// NVRTC.
std::string unavailable();

/// The headers device code includes (autofuse_abi.h, autofuse_cpu_int.h), by include name, as
/// NVRTC is given them.
const std::map<std::string, std::string>& device_headers();

/// The cubin of `module`'s device code (its `af_cuda_source`) for `arch`: read from
/// `<cache_dir>/cuda` when a verified copy is there, else compiled by NVRTC and stored. Throws
/// CompileError with NVRTC's log when the source does not compile, ToolchainError when NVRTC is
/// missing or the cache cannot be written.
std::string device_binary(const jit::LoadedModule& module, const std::string& arch,
                          const std::string& cache_dir);

/// One kernel of a cuda host module, ready to launch; loads its device code on first launch on
/// a device (per context) and keeps the function.
class CudaKernel {
 public:
  /// Kernel `symbol` of host module `module`; cubins are cached under `cache_dir` ("" = the JIT
  /// cache's default).
  CudaKernel(std::shared_ptr<jit::LoadedModule> module, std::string symbol, std::string cache_dir);

  /// The launch geometry launch() would use for `symbols` on `device` (no kernel runs).
  struct Geometry {
    int64_t block_dim = 0;  // the tiling function's blocks
    int64_t grid = 0;       // thread blocks launched (a grid-stride loop runs the rest)
    int64_t threads = 0;    // threads per thread block
  };
  Geometry geometry(const int64_t* symbols, const DeviceInfo& device,
                    unsigned char* tiling_data) const;

  /// Runs the kernel on device `ordinal`'s stream `stream` (a CUstream; 0: the legacy default
  /// stream): its tiling function for `symbols` with the device's SM count as cores, then its
  /// __global__ function with the TilingData by value and `args` (data pointers of inputs then
  /// outputs). Asynchronous, as any launch on a stream. Throws ToolchainError.
  void launch(void* const* args, size_t nargs, const int64_t* symbols, int ordinal,
              uintptr_t stream) const;

 private:
  std::shared_ptr<jit::LoadedModule> module_;
  std::string symbol_;
  std::string cache_dir_;
  void* tiling_fn_;                      // af_tiling_fn
  void* threads_fn_;                     // int64_t (*)(const void*)
  mutable std::mutex mutex_;             // guards the two below
  mutable CuContext context_ = nullptr;  // where function_ was loaded
  mutable CuFunction function_ = nullptr;
};

}  // namespace af::runtime::cuda
