// LoadedModule: one dlopen'ed shared object (a compiled kernel module) and its symbols.
#pragma once
#include <memory>
#include <string>

namespace af::jit {

/// Owns a dlopen handle; dlclose on destruction. Not copyable; share it via shared_ptr.
class LoadedModule {
 public:
  /// dlopen(path, RTLD_NOW | RTLD_LOCAL); throws ToolchainError with dlerror() on failure.
  static std::shared_ptr<LoadedModule> open(const std::string& path, const std::string& key = "");

  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  /// The address of `name`; throws ToolchainError naming the symbol and the file when absent.
  void* symbol(const std::string& name) const;
  /// The address of `name`, or nullptr when absent.
  void* find_symbol(const std::string& name) const noexcept;

  /// The file it was loaded from.
  const std::string& path() const { return path_; }
  /// The JIT cache key it was built under (empty when loaded directly).
  const std::string& key() const { return key_; }

 private:
  LoadedModule(void* handle, std::string path, std::string key);

  void* handle_;
  std::string path_;
  std::string key_;
};

}  // namespace af::jit
