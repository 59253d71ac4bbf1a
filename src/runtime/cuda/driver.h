// The CUDA driver API, loaded at run time (dlopen): the few calls the cuda target's launcher
// makes, with the driver's own types declared here, so the core builds and links with no CUDA
// anywhere. A process without a driver or a device gets the reason, not a crash.
#pragma once
#include <cstddef>
#include <string>

namespace af::runtime::cuda {

/// The driver's handles, opaque here (cuda.h: CUcontext, CUmodule, CUfunction, CUstream).
using CuContext = void*;
using CuModule = void*;
using CuFunction = void*;
using CuStream = void*;

/// The CUdevice_attribute values the launcher reads (cuda.h's numbering).
enum class DeviceAttribute : int {
  kSmCount = 16,           // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  kComputeMajor = 75,      // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  kComputeMinor = 76,      // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
  kSharedBytesPerSm = 81,  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
};

/// The driver library's entry points (each resolved by its cuda.h name), loaded once per
/// process from $AUTOFUSE_LIBCUDA, else libcuda.so.1.
struct Driver {
  int (*cuInit)(unsigned flags) = nullptr;
  int (*cuDeviceGet)(int* device, int ordinal) = nullptr;
  int (*cuDeviceGetAttribute)(int* value, int attribute, int device) = nullptr;
  int (*cuDevicePrimaryCtxRetain)(CuContext* ctx, int device) = nullptr;
  int (*cuCtxGetCurrent)(CuContext* ctx) = nullptr;
  int (*cuCtxSetCurrent)(CuContext ctx) = nullptr;
  int (*cuCtxGetDevice)(int* device) = nullptr;
  int (*cuModuleLoadData)(CuModule* module, const void* image) = nullptr;
  int (*cuModuleGetFunction)(CuFunction* f, CuModule module, const char* name) = nullptr;
  int (*cuLaunchKernel)(CuFunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                        unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                        CuStream stream, void** params, void** extra) = nullptr;
  int (*cuGetErrorString)(int error, const char** text) = nullptr;

  /// The driver, loaded and initialized (cuInit) on first use; nullptr when it cannot be, with
  /// the reason in *why (no library, a missing entry point, cuInit's error).
  static const Driver* get(std::string* why);

  /// Throws ToolchainError "<what>: <the driver's text for rc> (<rc>)" unless rc is success.
  void check(int rc, const std::string& what) const;
};

/// What the launcher needs of one device.
struct DeviceInfo {
  int ordinal = 0;
  std::string arch;  // "sm_90": NVRTC's --gpu-architecture for its compute capability
  int sms = 0;
  int shared_bytes_per_sm = 0;
};

/// Device `ordinal`'s DeviceInfo, read once per device. Throws ToolchainError on a driver error.
const DeviceInfo& device_info(const Driver& d, int ordinal);

/// Makes device `ordinal`'s primary context (the one torch uses) current on this thread unless
/// a context of that device already is, and returns it. Throws ToolchainError.
CuContext current_context(const Driver& d, int ordinal);

}  // namespace af::runtime::cuda
