// Target::host_cpu: the machine this process runs on (host_cpu.h's probe); the ISA table.
#include "target/target.h"

#include <thread>

#include "support/error.h"
#include "target/host_cpu.h"

namespace af::target {

Target Target::host_cpu() {
  const HostCpu& cpu = HostCpu::probe();
  Target t;
  bool fma_f16c = cpu.has(CpuFeature::Fma) && cpu.has(CpuFeature::F16c);
  t.avx512_bf16 = cpu.has(CpuFeature::Avx512Bf16);
  if (fma_f16c && cpu.has(CpuFeature::Avx512F) && cpu.has(CpuFeature::Avx512Bw) &&
      cpu.has(CpuFeature::Avx512Vl) && cpu.has(CpuFeature::Avx512Dq))
    t = t.with_isa(Isa::Avx512);
  else if (fma_f16c && cpu.has(CpuFeature::Avx2))
    t = t.with_isa(Isa::Avx2);
  else
    t = t.with_isa(Isa::Scalar);
  t.ub_bytes = 256 * 1024;
  unsigned n = std::thread::hardware_concurrency();
  t.cores = n > 0 ? static_cast<int64_t>(n) : 1;
  return t;
}

namespace {

/// One row per Isa, in enum order: its name and vector width.
struct IsaRow {
  Isa isa;
  std::string_view name;
  int64_t vector_bytes;
};
constexpr IsaRow kIsas[] = {
    {Isa::Scalar, "scalar", 4},
    {Isa::Avx2, "avx2", 32},
    {Isa::Avx512, "avx512", 64},
};

const IsaRow& row(Isa isa) {
  return kIsas[static_cast<int>(isa)];
}

}  // namespace

std::string_view isa_name(Isa isa) {
  return row(isa).name;
}

Isa parse_isa(std::string_view name) {
  for (const IsaRow& r : kIsas)
    if (r.name == name) return r.isa;
  throw CompileError("cpu target: unknown isa '" + std::string(name) +
                     "' (avx512, avx2 or scalar)");
}

const std::vector<Isa>& all_isas() {
  static const std::vector<Isa> isas = {Isa::Scalar, Isa::Avx2, Isa::Avx512};
  return isas;
}

std::string Device::option(const std::string& name) const {
  auto it = options.find(name);
  return it == options.end() ? "" : it->second;
}

Target Target::with_isa(Isa isa) const {
  Target t = *this;
  t.isa = isa;
  t.vector_bytes = row(isa).vector_bytes;
  t.align_bytes = t.vector_bytes;
  t.avx512_bf16 = avx512_bf16 && isa == Isa::Avx512;
  return t;
}

}  // namespace af::target
