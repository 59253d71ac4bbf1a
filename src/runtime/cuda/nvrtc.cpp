#include "runtime/cuda/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>

#include "jit/runtime_headers.h"
#include "support/error.h"

namespace af::runtime::cuda {

/// nvrtc.h's entry points (nvrtcProgram is an opaque pointer, nvrtcResult an int).
struct Nvrtc::Api {
  using Program = void*;
  int (*nvrtcVersion)(int* major, int* minor) = nullptr;
  int (*nvrtcCreateProgram)(Program* prog, const char* src, const char* name, int num_headers,
                            const char* const* headers, const char* const* include_names) = nullptr;
  int (*nvrtcCompileProgram)(Program prog, int num_options, const char* const* options) = nullptr;
  int (*nvrtcGetCUBINSize)(Program prog, size_t* size) = nullptr;
  int (*nvrtcGetCUBIN)(Program prog, char* cubin) = nullptr;
  int (*nvrtcGetProgramLogSize)(Program prog, size_t* size) = nullptr;
  int (*nvrtcGetProgramLog)(Program prog, char* log) = nullptr;
  int (*nvrtcDestroyProgram)(Program* prog) = nullptr;
  const char* (*nvrtcGetErrorString)(int result) = nullptr;
};

namespace {

template <typename F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

/// The entry points of `lib`, or false when one is missing.
bool resolve_all(void* lib, Nvrtc::Api& a) {
  return resolve(lib, "nvrtcVersion", a.nvrtcVersion) &&
         resolve(lib, "nvrtcCreateProgram", a.nvrtcCreateProgram) &&
         resolve(lib, "nvrtcCompileProgram", a.nvrtcCompileProgram) &&
         resolve(lib, "nvrtcGetCUBINSize", a.nvrtcGetCUBINSize) &&
         resolve(lib, "nvrtcGetCUBIN", a.nvrtcGetCUBIN) &&
         resolve(lib, "nvrtcGetProgramLogSize", a.nvrtcGetProgramLogSize) &&
         resolve(lib, "nvrtcGetProgramLog", a.nvrtcGetProgramLog) &&
         resolve(lib, "nvrtcDestroyProgram", a.nvrtcDestroyProgram) &&
         resolve(lib, "nvrtcGetErrorString", a.nvrtcGetErrorString);
}

}  // namespace

std::vector<std::string> nvrtc_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("AUTOFUSE_NVRTC"); env && *env) out.push_back(env);
  std::string object = jit::containing_object();  // <site-packages>/autofuse/_C*.so
  for (int up = 0; up < 2 && !object.empty(); ++up) object = object.substr(0, object.rfind('/'));
  if (!object.empty()) {
    out.push_back(object + "/nvidia/cu13/lib/libnvrtc.so.13");
    out.push_back(object + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  }
  for (const char* name :
       {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"})
    out.push_back(name);
  return out;
}

const Nvrtc* Nvrtc::get(std::string* why) {
  struct Loaded {
    Api api;
    Nvrtc nvrtc;
    std::string why;
  };
  static const Loaded* loaded = [] {
    auto* l = new Loaded();  // lives as long as the process (the library stays loaded)
    std::string tried;
    for (const std::string& path : nvrtc_candidates()) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      if (!resolve_all(lib, l->api)) {
        tried += (tried.empty() ? "" : ", ") + path + " (an entry point is missing)";
        continue;
      }
      int major = 0, minor = 0;
      l->api.nvrtcVersion(&major, &minor);
      l->nvrtc.api_ = &l->api;
      l->nvrtc.version_ = std::to_string(major) + "." + std::to_string(minor);
      l->nvrtc.path_ = path;
      return static_cast<const Loaded*>(l);
    }
    l->why = "NVRTC is not installed (pip install nvidia-cuda-nvrtc; tried " + tried + ")";
    return static_cast<const Loaded*>(l);
  }();
  if (!loaded->why.empty()) {
    if (why) *why = loaded->why;
    return nullptr;
  }
  return &loaded->nvrtc;
}

Nvrtc::Result Nvrtc::compile(const std::string& source, const std::string& arch,
                             const std::map<std::string, std::string>& headers,
                             const std::string& name) const {
  const Api& a = *api_;
  auto check = [&](int rc, const char* what) {
    if (rc != 0)
      throw ToolchainError(std::string("NVRTC ") + what + ": " + a.nvrtcGetErrorString(rc));
  };
  std::vector<const char*> texts, names;
  for (const auto& [include, text] : headers) {
    names.push_back(include.c_str());
    texts.push_back(text.c_str());
  }
  Api::Program prog = nullptr;
  check(a.nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), static_cast<int>(texts.size()),
                             texts.data(), names.data()),
        "nvrtcCreateProgram");
  Result out;
  try {
    const std::string arch_opt = "--gpu-architecture=" + arch;
    const char* options[] = {arch_opt.c_str(), "--std=c++17"};
    int rc = a.nvrtcCompileProgram(prog, 2, options);
    size_t size = 0;
    check(a.nvrtcGetProgramLogSize(prog, &size), "nvrtcGetProgramLogSize");
    out.log.assign(size, '\0');
    check(a.nvrtcGetProgramLog(prog, out.log.data()), "nvrtcGetProgramLog");
    while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
    out.ok = rc == 0;
    if (out.ok) {
      check(a.nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
      out.binary.assign(size, '\0');
      check(a.nvrtcGetCUBIN(prog, out.binary.data()), "nvrtcGetCUBIN");
    }
  } catch (...) {
    a.nvrtcDestroyProgram(&prog);
    throw;
  }
  a.nvrtcDestroyProgram(&prog);
  return out;
}

}  // namespace af::runtime::cuda
