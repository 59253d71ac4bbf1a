// A stand-in for the CUDA driver (libcuda.so.1) for the launcher's unit tests on machines with
// no GPU: one device (sm_90, 132 SMs), the calls runtime/cuda/driver.h makes, each launch
// recorded for the test to read (fake_cuda_launches). It runs no kernel. Loaded by the tests
// through $AUTOFUSE_LIBCUDA.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// One cuLaunchKernel as the fake saw it.
struct Launch {
  std::string function;
  unsigned grid = 0, threads = 0;
  void* stream = nullptr;
  unsigned char tiling_data[64] = {};  // the first bytes of the TilingData argument
  void* pointers[4] = {};              // the first data pointer arguments
};

void* g_current = nullptr;
int g_module_loads = 0;
int g_pointer_args = 0;  // how many data pointers launches pass (the test says)
std::vector<Launch> g_launches;
constexpr int kInvalidValue = 1, kInvalidImage = 200, kInvalidContext = 201, kInvalidDevice = 101;

}  // namespace

extern "C" {

int cuInit(unsigned) {
  return 0;
}
int cuDeviceGet(int* device, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *device = 0;
  return 0;
}
int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (device != 0) return kInvalidDevice;
  switch (attribute) {
    case 16: *value = 132; return 0;  // SM count
    case 75: *value = 9; return 0;    // compute capability 9.0
    case 76: *value = 0; return 0;
    case 81: *value = 228 * 1024; return 0;  // shared memory per SM
    default: return kInvalidValue;
  }
}
int cuDevicePrimaryCtxRetain(void** ctx, int device) {
  if (device != 0) return kInvalidDevice;
  *ctx = reinterpret_cast<void*>(0x1000);
  return 0;
}
int cuCtxGetCurrent(void** ctx) {
  *ctx = g_current;
  return 0;
}
int cuCtxSetCurrent(void* ctx) {
  g_current = ctx;
  return 0;
}
int cuCtxGetDevice(int* device) {
  if (!g_current) return kInvalidContext;
  *device = 0;
  return 0;
}
int cuModuleLoadData(void** module, const void* image) {
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return kInvalidImage;  // a cubin is an ELF file
  *module = reinterpret_cast<void*>(0x2000 + ++g_module_loads);
  return 0;
}
int cuModuleGetFunction(void** f, void* module, const char* name) {
  if (!module) return kInvalidValue;
  *f = strdup(name);
  return 0;
}
int cuLaunchKernel(void* f, unsigned grid_x, unsigned, unsigned, unsigned block_x, unsigned,
                   unsigned, unsigned, void* stream, void** params, void**) {
  if (!g_current) return kInvalidContext;
  Launch l;
  l.function = static_cast<const char*>(f);
  l.grid = grid_x;
  l.threads = block_x;
  l.stream = stream;
  std::memcpy(l.tiling_data, params[0], sizeof l.tiling_data);
  for (int i = 0; i < 4 && i < g_pointer_args; ++i)
    l.pointers[i] = *static_cast<void**>(params[i + 1]);
  g_launches.push_back(l);
  return 0;
}
int cuGetErrorString(int error, const char** text) {
  *text = error == kInvalidImage ? "fake: invalid image" : "fake: error";
  return 0;
}

/// The number of data pointers the next launches pass (a real driver knows it from the kernel).
void fake_cuda_set_pointer_args(int n) {
  g_pointer_args = n;
}
/// What the tests read: the module loads and the launches so far.
int fake_cuda_module_loads() {
  return g_module_loads;
}
int fake_cuda_launch_count() {
  return static_cast<int>(g_launches.size());
}
/// Launch i's function name, grid, threads and stream; its first TilingData bytes (64) and
/// data pointers (4).
const char* fake_cuda_launch(int i, unsigned* grid, unsigned* threads, void** stream,
                             unsigned char* tiling_data, void** pointers) {
  const Launch& l = g_launches.at(static_cast<size_t>(i));
  *grid = l.grid;
  *threads = l.threads;
  *stream = l.stream;
  std::memcpy(tiling_data, l.tiling_data, sizeof l.tiling_data);
  std::memcpy(pointers, l.pointers, sizeof l.pointers);
  return l.function.c_str();
}

}  // extern "C"
