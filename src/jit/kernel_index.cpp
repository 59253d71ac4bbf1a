#include "jit/kernel_index.h"

#include <cstdio>
#include <sstream>

#include "jit/cache.h"
#include "jit/file_io.h"
#include "jit/hash.h"

namespace af::jit {
namespace {

constexpr const char* kIndexMagic = "autofuse-kernel-index 1";

bool is_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

}  // namespace

std::string kernel_key(const std::string& toolchain, const std::string& canonical) {
  return Hasher128()
      .field("autofuse-kernel-key-v1")
      .field(toolchain)
      .field(canonical)
      .digest()
      .hex();
}

std::optional<IndexedKernel> find_kernel(const CompileRequest& req, const std::string& key) {
  std::optional<std::string> text = read_small_file(DiskCache(cache_dir_of(req)).index_path(key));
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string magic, module_word, module_key, name_word, name;
  std::getline(in, magic);
  in >> module_word >> module_key >> name_word >> name;
  if (magic != kIndexMagic || module_word != "module" || !Hash128::from_hex(module_key) ||
      name_word != "name" || !is_identifier(name))
    return std::nullopt;
  std::shared_ptr<LoadedModule> mod = load_cached(req, module_key, nullptr);
  if (!mod || !mod->find_symbol(name + "_tiling") || !mod->find_symbol(name + "_kernel"))
    return std::nullopt;
  return IndexedKernel{std::move(mod), name};
}

void index_kernel(const CompileRequest& req, const std::string& key, const LoadedModule& module,
                  const std::string& name) {
  if (module.key().empty() || !is_identifier(name)) return;
  const DiskCache cache(cache_dir_of(req));
  const std::string path = cache.index_path(key);
  const std::string text =
      std::string(kIndexMagic) + "\nmodule " + module.key() + "\nname " + name + "\n";
  if (read_small_file(path) == text) return;
  const std::string tmp = cache.temp_path(key, "kernel");
  std::remove(tmp.c_str());
  if (!write_new_file(tmp, text) || std::rename(tmp.c_str(), path.c_str()) != 0)
    std::remove(tmp.c_str());
}

}  // namespace af::jit
