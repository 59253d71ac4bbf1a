// The ascendc Backend: codegen/ascendc's emitter, package and flags behind the Backend interface.
#include "codegen/ascendc/backend.h"

#include "codegen/ascendc/ascend_device.h"
#include "codegen/ascendc/emitter.h"

namespace af::codegen {
namespace {

/// Ascend C for an Atlas A2 / A3 NPU.
class AscendcBackend final : public Backend {
 public:
  std::string_view name() const override { return "ascendc"; }
  std::string_view summary() const override {
    return "Ascend C for Huawei Ascend NPUs, run here under ascendc_emu";
  }
  std::vector<TargetOption> options() const override {
    return {{"soc", "the Ascend SoC whose vector cores the tiling divides work over",
             ascend_soc_names()},
            {"cann", "the CANN release whose Ascend C API spelling the kernels use", {"8", "9"}}};
  }
  target::Device configure(const std::map<std::string, std::string>& options) const override {
    auto get = [&](const char* key) {
      auto it = options.find(key);
      return it == options.end() ? std::string() : it->second;
    };
    return ascend_device(get("soc"), get("cann"));
  }
  std::string reason(const KernelUnit& u, const target::Target& t) const override {
    return ascendc_unit_reason(u, t);
  }
  EmittedSource emit(const std::vector<KernelUnit>& units, const target::Target& t) const override {
    return emit_ascendc_source(units, t);
  }
  Toolchain toolchain(const target::Target& t) const override {
    Toolchain tc;
    tc.flags = ascendc_compile_flags(t);
    tc.include_subdirs = {"ascendc_emu"};
    tc.violations_symbol = "af_ascendc_take_violations";
    return tc;
  }
  Package package(const std::vector<KernelUnit>& units, const target::Target& t,
                  const std::string& name) const override {
    return ascendc_package(units, t, name);
  }
};

}  // namespace

const Backend& ascendc_backend() {
  static const AscendcBackend backend;
  return backend;
}

}  // namespace af::codegen
