// HostCpu::probe: cpuid (GCC's __builtin_cpu_supports where it knows the feature, which also
// asks the OS; leaf 7 directly for the newer bf16 ones) and /proc/cpuinfo for the identity.
#include "target/host_cpu.h"

#include <cpuid.h>

#include <cstring>
#include <fstream>

namespace af::target {
namespace {

constexpr std::string_view kNames[] = {"avx2",      "fma",           "f16c",      "avx512_f",
                                       "avx512_bw", "avx512_vl",     "avx512_dq", "avx512_bf16",
                                       "amx_bf16",  "avx_ne_convert"};
static_assert(std::size(kNames) == static_cast<size_t>(CpuFeature::kCount));

/// Bit `bit` of cpuid leaf 7, sub-leaf `sub`, register EDX (AMX-BF16: sub 0 bit 22;
/// AVX-NE-CONVERT: sub 1 bit 5), when the CPU has leaf 7.
bool leaf7_edx(unsigned sub, unsigned bit) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, sub, a, b, c, d);
  return (d >> bit) & 1u;
}

std::string vendor_id() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "";
  char id[13];
  std::memcpy(id, &b, 4);
  std::memcpy(id + 4, &d, 4);
  std::memcpy(id + 8, &c, 4);
  id[12] = 0;
  return id;
}

std::string cpuinfo_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
  }
  return model + "\n" + flags;
}

HostCpu probe_now() {
  HostCpu h;
  h.vendor = vendor_id();
  h.identity = cpuinfo_identity();
  __builtin_cpu_init();
  auto set = [&](CpuFeature f, bool on) { h.features[static_cast<size_t>(f)] = on; };
  set(CpuFeature::Avx2, __builtin_cpu_supports("avx2"));
  set(CpuFeature::Fma, __builtin_cpu_supports("fma"));
  set(CpuFeature::F16c, __builtin_cpu_supports("f16c"));
  set(CpuFeature::Avx512F, __builtin_cpu_supports("avx512f"));
  set(CpuFeature::Avx512Bw, __builtin_cpu_supports("avx512bw"));
  set(CpuFeature::Avx512Vl, __builtin_cpu_supports("avx512vl"));
  set(CpuFeature::Avx512Dq, __builtin_cpu_supports("avx512dq"));
  set(CpuFeature::Avx512Bf16, __builtin_cpu_supports("avx512bf16"));
  // AMX and AVX-NE-CONVERT: leaf 7 (AMX's tile state is the OS's to grant on first use).
  set(CpuFeature::AmxBf16, leaf7_edx(0, 22));
  set(CpuFeature::AvxNeConvert, leaf7_edx(1, 5) && h.has(CpuFeature::Avx2));
  return h;
}

}  // namespace

std::string_view cpu_feature_name(CpuFeature f) {
  return kNames[static_cast<size_t>(f)];
}

const std::vector<CpuFeature>& all_cpu_features() {
  static const std::vector<CpuFeature> all = [] {
    std::vector<CpuFeature> out;
    for (size_t i = 0; i < static_cast<size_t>(CpuFeature::kCount); ++i)
      out.push_back(static_cast<CpuFeature>(i));
    return out;
  }();
  return all;
}

const HostCpu& HostCpu::probe() {
  static const HostCpu host = probe_now();
  return host;
}

}  // namespace af::target
