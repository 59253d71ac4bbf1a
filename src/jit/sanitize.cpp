#include "jit/sanitize.h"

#include <dlfcn.h>

#include <utility>

#include "support/error.h"

namespace af::jit {
namespace {

/// Each sanitizer with its -fsanitize= name, in canonical order.
constexpr std::pair<Sanitizer, const char*> kNames[] = {
    {Sanitizer::Address, "address"},
    {Sanitizer::Undefined, "undefined"},
};

}  // namespace

Sanitizers Sanitizers::with(Sanitizer s) const {
  Sanitizers out = *this;
  out.bits_ |= static_cast<unsigned>(s);
  return out;
}

Sanitizers Sanitizers::parse(const std::string& text) {
  Sanitizers out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    bool known = false;
    for (const auto& [s, n] : kNames)
      if (name == n) out = out.with(s), known = true;
    if (!known) {
      std::string list;
      for (const auto& kn : kNames) list += (list.empty() ? "" : ", ") + std::string(kn.second);
      throw FlagError("AUTOFUSE_SANITIZE: unknown sanitizer '" + name + "' (known: " + list + ")");
    }
  }
  return out;
}

std::string Sanitizers::to_string() const {
  std::string out;
  for (const auto& [s, n] : kNames)
    if (has(s)) out += (out.empty() ? "" : ",") + std::string(n);
  return out;
}

std::vector<std::string> Sanitizers::flags() const {
  if (empty()) return {};
  return {"-fsanitize=" + to_string(), "-fno-omit-frame-pointer", "-g"};
}

std::string Sanitizers::load_problem() const {
  if (has(Sanitizer::Address) && dlsym(RTLD_DEFAULT, "__asan_init") == nullptr)
    return "AUTOFUSE_SANITIZE=address: the AddressSanitizer runtime is not loaded in this process; "
           "run it with LD_PRELOAD=\"$(g++ -print-file-name=libasan.so) "
           "$(g++ -print-file-name=libstdc++.so)\" (and ASAN_OPTIONS=detect_leaks=0 for Python)";
  return "";
}

}  // namespace af::jit
