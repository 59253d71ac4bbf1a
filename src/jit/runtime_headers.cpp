#include "jit/runtime_headers.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "support/error.h"

namespace af::jit {

std::string containing_object() {
  Dl_info info{};
  const char* path = "/proc/self/exe";  // the main program: dladdr names it by argv[0] or ""
  if (dladdr(reinterpret_cast<void*>(&containing_object), &info) && info.dli_fname &&
      std::strchr(info.dli_fname, '/'))
    path = info.dli_fname;
  char buf[PATH_MAX];
  return realpath(path, buf) ? std::string(buf) : std::string();
}

namespace {

bool has_headers(const std::string& dir) {
  return access((dir + "/autofuse_cpu.h").c_str(), R_OK) == 0;
}

}  // namespace

std::vector<std::string> runtime_include_candidates() {
  std::vector<std::string> dirs;
  std::string object = containing_object();
  size_t slash = object.rfind('/');
  if (slash != std::string::npos) {
    std::string here = object.substr(0, slash);
    dirs.push_back(here + "/include");     // autofuse/_C*.so
    dirs.push_back(here + "/../include");  // autofuse/bin/autofuse-opt
  }
  dirs.push_back(AUTOFUSE_SOURCE_INCLUDE_DIR);
  return dirs;
}

const std::string& runtime_include_dir() {
  static const std::string dir = [] {
    std::vector<std::string> dirs = runtime_include_candidates();
    for (const std::string& d : dirs) {
      char buf[PATH_MAX];
      if (has_headers(d) && realpath(d.c_str(), buf)) return std::string(buf);
    }
    std::string looked;
    for (const std::string& d : dirs) looked += (looked.empty() ? "" : ", ") + d;
    throw ToolchainError("autofuse: the kernel runtime headers (autofuse_cpu.h) are in none of " +
                         looked +
                         "; reinstall autofuse (the wheel carries them in autofuse/include)");
  }();
  return dir;
}

}  // namespace af::jit
