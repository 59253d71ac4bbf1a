// The target registry: the one list of targets.
#include "backends/registry.h"

#include "codegen/ascendc/backend.h"
#include "codegen/cpu/backend.h"
#include "codegen/cuda/backend.h"
#include "support/error.h"

namespace af::backends {

const std::vector<const codegen::Backend*>& all_backends() {
  // One line per target; cpu first (the fallback of every chain).
  static const std::vector<const codegen::Backend*> backends = {
      &codegen::cpu_backend(),
      &codegen::ascendc_backend(),
      &codegen::cuda_backend(),
  };
  return backends;
}

const codegen::Backend& find_backend(std::string_view name) {
  std::string known;
  for (const codegen::Backend* b : all_backends()) {
    if (b->name() == name) return *b;
    known += (known.empty() ? "" : ", ") + std::string(b->name());
  }
  throw CompileError("unknown target '" + std::string(name) + "' (" + known + ")");
}

target::Target configure_target(target::Target host, std::string_view name,
                                const std::map<std::string, std::string>& options) {
  const codegen::Backend& b = find_backend(name.empty() ? "cpu" : name);
  std::map<std::string, std::string> own;
  for (const codegen::TargetOption& o : b.options()) {
    auto it = options.find(o.name);
    if (it != options.end() && !it->second.empty()) own[o.name] = it->second;
  }
  host.device = b.configure(own);
  host.device.target = std::string(b.name());
  return host;
}

std::vector<const codegen::Backend*> backend_chain(const target::Target& t) {
  const codegen::Backend& preferred = find_backend(t.device.target);
  std::vector<const codegen::Backend*> chain = {&preferred};
  if (preferred.name() != "cpu" && preferred.host_fallback()) chain.push_back(&find_backend("cpu"));
  return chain;
}

}  // namespace af::backends
