// The cpu Backend: codegen/cpu's emitter and flags behind the Backend interface.
#include "codegen/cpu/backend.h"

#include "codegen/cpu/emitter.h"
#include "codegen/cpu/tiling.h"
#include "schedule/schedule.h"

namespace af::codegen {
namespace {

/// The host CPU's C++.
class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string_view summary() const override {
    return "C++ for the host CPU (AVX-512, AVX2 or scalar), run on a thread team";
  }
  target::Device configure(const std::map<std::string, std::string>&) const override {
    return target::Device{};
  }
  std::string reason(const KernelUnit&, const target::Target&) const override { return ""; }
  EmittedSource emit(const std::vector<KernelUnit>& units, const target::Target& t) const override {
    return emit_cpu_source(units, t);
  }
  std::string tiling_choice(const ascir::AscGraph& g, const sym::Bindings& values, int64_t cores,
                            const target::Target& t) const override {
    return tiling_choice_str(g, evaluate_tiling(g, values, cores, schedule::vector_lanes(t)));
  }
  Toolchain toolchain(const target::Target& t) const override {
    Toolchain tc;
    tc.flags = cpu_compile_flags(t);
    tc.libs = cpu_link_libs(t);
    tc.pch_header = "autofuse_cpu.h";
    return tc;
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace af::codegen
