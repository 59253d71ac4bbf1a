#include "jit/toolchain_check.h"

#include <unistd.h>

#include <exception>
#include <stdexcept>

#include "jit/cache.h"
#include "jit/runtime_headers.h"
#include "jit/toolchain.h"

namespace af::jit {
namespace {

/// A finding from running `check`, which returns what it found or throws what went wrong.
template <typename F>
ToolchainFinding finding(const std::string& what, const std::string& fix, F check) {
  ToolchainFinding f;
  f.what = what;
  try {
    f.found = check();
    f.ok = true;
  } catch (const std::exception& e) {
    f.found = e.what();
    f.fix = fix;
  }
  return f;
}

/// The path `cxx -print-file-name=<lib>` resolves, or throws when the compiler does not find it.
std::string library_path(const std::string& cxx, const std::string& lib) {
  std::string out;
  ProcessExit e = run_process_capture({cxx, "-print-file-name=" + lib}, &out);
  std::string path = out.substr(0, out.find('\n'));
  if (!e.ok() || path.empty() || path[0] != '/' || access(path.c_str(), R_OK) != 0)
    throw std::runtime_error(cxx + " does not find " + lib);
  return path;
}

}  // namespace

std::vector<ToolchainFinding> check_toolchain(const std::string& cxx,
                                              const std::string& cache_dir) {
  std::vector<ToolchainFinding> out;
  out.push_back(finding("C++ compiler",
                        "install g++ (Debian/Ubuntu: apt install g++) or point CXX "
                        "(CompilerConfig(cxx=...)) at a C++17 compiler",
                        [&] { return cxx + ": " + compiler_identity(cxx); }));
  out.push_back(finding("runtime headers",
                        "reinstall autofuse: the package carries them in "
                        "autofuse/include",
                        [] { return runtime_include_dir(); }));
  if (out.front().ok)
    out.push_back(finding("SLEEF", "install SLEEF (Debian/Ubuntu: apt install libsleef-dev)",
                          [&] { return library_path(cxx, "libsleef.so"); }));
  out.push_back(finding(
      "cache dir",
      "set AUTOFUSE_CACHE_DIR (CompilerConfig(cache_dir=...)) to a "
      "directory of your own with mode 0700, or fix the one named",
      [&] {
        std::string dir = ensure_private_dir(cache_dir.empty() ? default_cache_dir() : cache_dir);
        if (access(dir.c_str(), W_OK | X_OK) != 0)
          throw std::runtime_error("autofuse: cache dir '" + dir + "' is not writable");
        return dir;
      }));
  return out;
}

}  // namespace af::jit
