// The cuda target's launcher with no GPU: a graph compiled for cuda through the pipeline (the
// host module: tiling functions, K_threads, the device code), its launch geometry, its cubin
// from NVRTC and the JIT cache, and its launches through a stand-in driver
// (tests/fake_cuda/fake_libcuda.cpp) that records what a real one would be asked to run.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "backends/registry.h"
#include "graph/parser.h"
#include "jit/module.h"
#include "pipeline/pipeline.h"
#include "runtime/cuda/launcher.h"
#include "runtime/cuda/nvrtc.h"
#include "runtime/include/autofuse_abi.h"
#include "support/error.h"

namespace af {
namespace {

using runtime::cuda::CudaKernel;
using runtime::cuda::DeviceInfo;

/// x * g into sigmoid over [s0, s1]: one elementwise kernel taking both size symbols.
const char* kGraph = R"(graph @cl(s0 = 4, s1 = 300) {
  %x = input() {index = 0} : f32[s0, s1]
  %g = input() {index = 1} : f32[s1]
  %0 = broadcast(%g) : f32[s0, s1]
  %1 = mul(%x, %0) : f32[s0, s1]
  %2 = sigmoid(%1) : f32[s0, s1]
  return %2
}
)";

/// A fresh JIT cache directory, removed with its contents at the end of the test.
class TempCache {
 public:
  TempCache() {
    char tmpl[] = "/tmp/af_cuda_launcher_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempCache() { std::system(("rm -rf " + dir_).c_str()); }
  operator const std::string&() const { return dir_; }

 private:
  std::string dir_;
};

/// kGraph compiled for the cuda target into `cache`.
CompiledProgram compile_for_cuda(const std::string& cache) {
  CompileOptions opts;
  opts.cache_dir = cache;
  opts.target = backends::configure_target(target::Target::host_cpu(), "cuda");
  return compile(graph::parse_graph(kGraph), opts);
}

TEST(CudaLauncher, AGraphCompiledForCudaHasDeviceKernelsWithHostTilingAndThreads) {
  TempCache cache;
  CompiledProgram p = compile_for_cuda(cache);
  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelHandle& h = p.kernels[0];
  EXPECT_EQ(h.target, "cuda");
  EXPECT_EQ(h.kernel_fn, nullptr);  // device code: no host K_kernel
  ASSERT_NE(h.tiling_fn, nullptr);
  ASSERT_NE(h.module->find_symbol("af_cuda_source"), nullptr);
  ASSERT_EQ(h.symbols, (std::vector<std::string>{"s0", "s1"}));

  CudaKernel k(h.module, h.symbol, "");
  DeviceInfo h100{0, "sm_90", 132, 228 * 1024};
  alignas(64) unsigned char td[AF_MAX_TILING_DATA_BYTES];
  const int64_t small[] = {4, 300};
  CudaKernel::Geometry g = k.geometry(small, h100, td);
  EXPECT_EQ(g.threads, 96);   // 300 elements a tile, 4 a thread: 75, rounded up to warps
  EXPECT_GE(g.block_dim, 4);  // a row is at least one block
  EXPECT_EQ(g.grid, g.block_dim);
  const int64_t big[] = {100000, 300};  // 3 rows side by side in a block of 256 threads
  g = k.geometry(big, h100, td);
  EXPECT_EQ(g.threads, 256);
  EXPECT_EQ(g.block_dim, (100000 + 2) / 3);
  EXPECT_EQ(g.grid, 132 * (2048 / 256));  // what the SMs keep resident; the grid strides
  const int64_t narrow[] = {2000, 16};    // 4 threads a row: 64 rows a block, >= 2 blocks an SM
  g = k.geometry(narrow, h100, td);
  EXPECT_EQ(g.threads, 32);  // 2000 rows / 264 -> 7 rows a block: 28 threads, a warp
  EXPECT_EQ(g.block_dim, (2000 + 6) / 7);
  const int64_t none[] = {0, 300};
  EXPECT_EQ(k.geometry(none, h100, td).grid, 0);
}

TEST(CudaLauncher, TheCubinComesFromNvrtcThenFromTheCacheAndACorruptCopyIsRebuilt) {
  std::string why;
  const runtime::cuda::Nvrtc* nvrtc = runtime::cuda::Nvrtc::get(&why);
  if (!nvrtc) GTEST_SKIP() << why;
  const TempCache cache;
  CompiledProgram p = compile_for_cuda(cache);
  const jit::LoadedModule& m = *p.kernels.at(0).module;
  std::string cubin = runtime::cuda::device_binary(m, "sm_90", cache);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.compare(0, 4,
                          "\x7f"
                          "ELF"),
            0);
  // One file in <cache>/cuda: its hash line, then the cubin.
  const std::string& dir = cache;
  FILE* ls = popen(("ls " + dir + "/cuda").c_str(), "r");
  char line[256] = {};
  ASSERT_NE(fgets(line, sizeof line, ls), nullptr);
  pclose(ls);
  std::string file = dir + "/cuda/" + std::string(line).substr(0, std::strlen(line) - 1);
  EXPECT_EQ(runtime::cuda::device_binary(m, "sm_90", cache), cubin);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "0\ngarbage";
  EXPECT_EQ(runtime::cuda::device_binary(m, "sm_90", cache), cubin);  // rebuilt, not loaded
  EXPECT_NE(runtime::cuda::device_binary(m, "sm_80", cache), cubin);  // keyed by the arch
}

/// The fake driver's record of launch i.
struct SeenLaunch {
  std::string function;
  unsigned grid = 0, threads = 0;
  void* stream = nullptr;
  af_tiling_header header{};
  void* pointers[4] = {};
};

TEST(CudaLauncher, LaunchesGoThroughTheDriverOnTheCallersStreamWithOneModuleLoad) {
  std::string why;
  if (!runtime::cuda::Nvrtc::get(&why)) GTEST_SKIP() << why;
  setenv("AUTOFUSE_LIBCUDA", AF_FAKE_LIBCUDA, 1);  // before the process's first Driver::get
  ASSERT_EQ(runtime::cuda::unavailable(), "");
  void* fake = dlopen(AF_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(fake, nullptr);
  auto loads = reinterpret_cast<int (*)()>(dlsym(fake, "fake_cuda_module_loads"));
  auto count = reinterpret_cast<int (*)()>(dlsym(fake, "fake_cuda_launch_count"));
  auto set_pointers = reinterpret_cast<void (*)(int)>(dlsym(fake, "fake_cuda_set_pointer_args"));
  auto launch_at =
      reinterpret_cast<const char* (*)(int, unsigned*, unsigned*, void**, unsigned char*, void**)>(
          dlsym(fake, "fake_cuda_launch"));
  auto seen = [&](int i) {
    SeenLaunch s;
    unsigned char td[64];
    s.function = launch_at(i, &s.grid, &s.threads, &s.stream, td, s.pointers);
    std::memcpy(&s.header, td, sizeof s.header);
    return s;
  };
  set_pointers(3);

  const TempCache cache;
  CompiledProgram p = compile_for_cuda(cache);
  const KernelHandle& h = p.kernels.at(0);
  CudaKernel k(h.module, h.symbol, cache);
  void* args[] = {reinterpret_cast<void*>(0x100), reinterpret_cast<void*>(0x200),
                  reinterpret_cast<void*>(0x300)};
  const int64_t syms[] = {4, 300};
  const int before = count(), loads_before = loads();
  k.launch(args, 3, syms, 0, 0x77);
  k.launch(args, 3, syms, 0, 0x78);
  CudaKernel again(h.module, h.symbol, cache);  // another program holding the same module
  again.launch(args, 3, syms, 0, 0x79);
  const int64_t none[] = {0, 300};
  k.launch(args, 3, none, 0, 0x7a);  // nothing to do: no launch
  ASSERT_EQ(count() - before, 3);
  EXPECT_EQ(loads() - loads_before, 1);  // the module's cubin loaded once for the context
  SeenLaunch s = seen(before);
  EXPECT_EQ(s.function, h.symbol + "_kernel");
  EXPECT_EQ(s.threads, 96u);
  EXPECT_EQ(static_cast<int64_t>(s.grid), s.header.block_dim);
  EXPECT_EQ(s.stream, reinterpret_cast<void*>(0x77));
  EXPECT_EQ(s.pointers[0], args[0]);
  EXPECT_EQ(s.pointers[2], args[2]);
  EXPECT_EQ(seen(before + 2).stream, reinterpret_cast<void*>(0x79));
  EXPECT_THROW(k.launch(args, 3, syms, 1, 0), ToolchainError);  // no device 1
}

}  // namespace
}  // namespace af
