#include "runtime/cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "support/error.h"

namespace af::runtime::cuda {
namespace {

/// Resolves `name` in `lib` into `fn`; false (and the reason in *why) when absent.
template <typename F>
bool resolve(void* lib, const char* name, F& fn, std::string* why) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) *why = std::string("the CUDA driver has no ") + name;
  return fn != nullptr;
}

/// The loaded driver, or the reason there is none (computed once per process).
struct Loaded {
  Driver driver;
  std::string why;
};

Loaded load() {
  Loaded out;
  const char* env = std::getenv("AUTOFUSE_LIBCUDA");
  const std::string path = env && *env ? env : "libcuda.so.1";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    out.why = "no CUDA driver (" + path + ": " + (err ? err : "not found") + ")";
    return out;
  }
  Driver& d = out.driver;
  std::string* why = &out.why;
  bool ok = resolve(lib, "cuInit", d.cuInit, why) &&
            resolve(lib, "cuDeviceGet", d.cuDeviceGet, why) &&
            resolve(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, why) &&
            resolve(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, why) &&
            resolve(lib, "cuCtxGetCurrent", d.cuCtxGetCurrent, why) &&
            resolve(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, why) &&
            resolve(lib, "cuCtxGetDevice", d.cuCtxGetDevice, why) &&
            resolve(lib, "cuModuleLoadData", d.cuModuleLoadData, why) &&
            resolve(lib, "cuModuleGetFunction", d.cuModuleGetFunction, why) &&
            resolve(lib, "cuLaunchKernel", d.cuLaunchKernel, why) &&
            resolve(lib, "cuGetErrorString", d.cuGetErrorString, why);
  if (!ok) return out;  // the library stays loaded: a process loads the driver once
  if (int rc = d.cuInit(0)) {
    const char* text = nullptr;
    d.cuGetErrorString(rc, &text);
    out.why = "the CUDA driver did not initialize (cuInit: " +
              std::string(text ? text : "unknown error") + ", " + std::to_string(rc) + ")";
  }
  return out;
}

}  // namespace

const Driver* Driver::get(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.why.empty()) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.driver;
}

void Driver::check(int rc, const std::string& what) const {
  if (rc == 0) return;
  const char* text = nullptr;
  cuGetErrorString(rc, &text);
  throw ToolchainError(what + ": " + (text ? text : "unknown CUDA error") + " (" +
                       std::to_string(rc) + ")");
}

const DeviceInfo& device_info(const Driver& d, int ordinal) {
  static std::mutex mutex;
  static std::map<int, DeviceInfo> seen;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = seen.find(ordinal);
  if (it != seen.end()) return it->second;
  int dev = 0;
  d.check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  auto attribute = [&](DeviceAttribute a) {
    int v = 0;
    d.check(d.cuDeviceGetAttribute(&v, static_cast<int>(a), dev), "cuDeviceGetAttribute");
    return v;
  };
  DeviceInfo info;
  info.ordinal = ordinal;
  info.arch = "sm_" + std::to_string(attribute(DeviceAttribute::kComputeMajor)) +
              std::to_string(attribute(DeviceAttribute::kComputeMinor));
  info.sms = attribute(DeviceAttribute::kSmCount);
  info.shared_bytes_per_sm = attribute(DeviceAttribute::kSharedBytesPerSm);
  return seen.emplace(ordinal, info).first->second;
}

CuContext current_context(const Driver& d, int ordinal) {
  int dev = 0;
  d.check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  CuContext ctx = nullptr;
  d.check(d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  int current = -1;
  if (ctx && d.cuCtxGetDevice(&current) == 0 && current == dev) return ctx;
  d.check(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  d.check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return ctx;
}

}  // namespace af::runtime::cuda
