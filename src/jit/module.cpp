#include "jit/module.h"

#include <dlfcn.h>

#include "support/error.h"

namespace af::jit {

LoadedModule::LoadedModule(void* handle, std::string path, std::string key)
    : handle_(handle), path_(std::move(path)), key_(std::move(key)) {}

std::shared_ptr<LoadedModule> LoadedModule::open(const std::string& path, const std::string& key) {
  dlerror();  // clear a stale error
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    throw ToolchainError("autofuse: cannot load '" + path + "': " + (err ? err : "unknown error"));
  }
  return std::shared_ptr<LoadedModule>(new LoadedModule(handle, path, key));
}

LoadedModule::~LoadedModule() {
  if (handle_) dlclose(handle_);
}

void* LoadedModule::find_symbol(const std::string& name) const noexcept {
  return dlsym(handle_, name.c_str());
}

void* LoadedModule::symbol(const std::string& name) const {
  dlerror();
  void* p = dlsym(handle_, name.c_str());
  if (!p) {
    const char* err = dlerror();
    throw ToolchainError("autofuse: symbol '" + name + "' not found in '" + path_ + "'" +
                         (err ? std::string(" (") + err + ")" : std::string()));
  }
  return p;
}

}  // namespace af::jit
