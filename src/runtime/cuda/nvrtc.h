// NVRTC, loaded at run time (dlopen): compiles the cuda target's device code to a cubin for one
// GPU architecture, with no CUDA toolkit at build time and no GPU needed.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace af::runtime::cuda {

/// The NVRTC library's entry points, loaded once per process from the first of
/// nvrtc_candidates() that loads.
class Nvrtc {
 public:
  /// NVRTC, or nullptr when none loads, with the places tried in *why.
  static const Nvrtc* get(std::string* why);

  /// "13.5": the version, part of every cubin's cache key.
  const std::string& version() const { return version_; }
  /// The file it was loaded from.
  const std::string& path() const { return path_; }

  /// What compiling `source` for `arch` ("sm_90") gave: a cubin, or the log of why not.
  struct Result {
    bool ok = false;
    std::string binary;  // the cubin (ok)
    std::string log;     // NVRTC's log (errors when !ok, warnings otherwise)
  };
  /// Compiles `source` (named `name` in messages); `headers` maps include names to their text.
  /// Never throws for a source that does not compile (ok = false); throws ToolchainError when
  /// NVRTC itself fails.
  Result compile(const std::string& source, const std::string& arch,
                 const std::map<std::string, std::string>& headers,
                 const std::string& name = "autofuse.cu") const;

  /// NVRTC's entry points (nvrtc.cpp).
  struct Api;

 private:
  Nvrtc() = default;
  const Api* api_ = nullptr;
  std::string version_;
  std::string path_;
};

/// Where NVRTC is looked for, in order: $AUTOFUSE_NVRTC, the `nvidia-cuda-nvrtc` wheel in a
/// site-packages folder above the core's own file (autofuse/_C*.so's), then the system's
/// libnvrtc.so.13, .12 and libnvrtc.so (ld.so's search path, /usr/local/cuda/lib64).
std::vector<std::string> nvrtc_candidates();

}  // namespace af::runtime::cuda
