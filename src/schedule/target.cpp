// Target::host_cpu: the machine this process runs on, from cpuid.
#include "schedule/target.h"

#include <thread>

#include "support/error.h"

namespace af::schedule {

Target Target::host_cpu() {
  Target t;
  __builtin_cpu_init();
  bool fma_f16c = __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  t.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  if (fma_f16c && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    t = t.with_isa(Isa::Avx512);
  else if (fma_f16c && __builtin_cpu_supports("avx2"))
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

std::string_view target_kind_name(TargetKind kind) {
  return kind == TargetKind::AscendC ? "ascendc" : "cpu";
}

TargetKind parse_target_kind(std::string_view name) {
  for (TargetKind k : {TargetKind::Cpu, TargetKind::AscendC})
    if (target_kind_name(k) == name) return k;
  throw CompileError("unknown target '" + std::string(name) + "' (cpu or ascendc)");
}

std::string_view cann_version_name(CannVersion v) {
  switch (v) {
    case CannVersion::V8: return "8";
    case CannVersion::V9: return "9";
    case CannVersion::Common: break;
  }
  return "common";
}

CannVersion parse_cann_version(std::string_view name) {
  if (name.empty()) return CannVersion::Common;
  for (CannVersion v : {CannVersion::Common, CannVersion::V8, CannVersion::V9})
    if (cann_version_name(v) == name) return v;
  throw CompileError("unknown CANN version '" + std::string(name) +
                     "' (8, 9, or common / \"\": what both accept)");
}

namespace {

/// Atlas A2 SoCs (CANN 8.1.RC1 data/platform_config/<soc>.ini: vector_core_cnt; ub_size 196608
/// for each, of which InitBuffer may hand out 184 KB).
struct AscendSocRow {
  std::string_view name;
  int64_t vector_cores;
};
constexpr AscendSocRow kAscendSocs[] = {
    {"Ascend910B1", 48},    {"Ascend910B2", 48},    {"Ascend910B3", 40},    {"Ascend910B4", 40},
    {"Ascend910_9381", 48}, {"Ascend910_9382", 48}, {"Ascend910_9391", 48}, {"Ascend910_9392", 48},
    {"Ascend910_9362", 40}, {"Ascend910_9372", 40},
};

}  // namespace

AscendCores ascend_soc(std::string_view soc, const AscendCores& base) {
  if (soc.empty()) soc = kAscendSocs[0].name;
  std::string known;
  for (const AscendSocRow& r : kAscendSocs) {
    if (r.name == soc) {
      AscendCores c = base;
      c.vector_cores = r.vector_cores;
      return c;
    }
    known += (known.empty() ? "" : ", ") + std::string(r.name);
  }
  throw CompileError("unknown Ascend SoC '" + std::string(soc) + "' (" + known + ")");
}

Target Target::with_isa(Isa isa) const {
  Target t = *this;
  t.isa = isa;
  t.vector_bytes = row(isa).vector_bytes;
  t.align_bytes = t.vector_bytes;
  t.avx512_bf16 = avx512_bf16 && isa == Isa::Avx512;
  return t;
}

}  // namespace af::schedule
