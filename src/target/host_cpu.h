// The host CPU as cpuid reports it: the one probe the kernels' ISA (Target::host_cpu), the JIT's
// cache key for -march=native builds and the frontend's measured tables (python/autofuse/cpu.py,
// through _C.host_cpu) read.
#pragma once
#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace af::target {

/// The x86 features the kernels and the frontend's tables choose by (names as torch spells them:
/// torch.cpu.get_capabilities()).
enum class CpuFeature {
  Avx2,
  Fma,
  F16c,
  Avx512F,
  Avx512Bw,
  Avx512Vl,
  Avx512Dq,
  Avx512Bf16,    // VCVTNE2PS2BF16 and bf16 dot products
  AmxBf16,       // AMX tiles with bf16 (oneDNN's bf16 matmuls)
  AvxNeConvert,  // AVX-NE-CONVERT (bf16 conversions without AVX-512)
  kCount
};

/// Its name: "avx2", "avx512_f", "avx512_bf16", "amx_bf16", ...
std::string_view cpu_feature_name(CpuFeature f);

/// Every CpuFeature, in enum order.
const std::vector<CpuFeature>& all_cpu_features();

/// What this machine's CPU offers (probed once per process).
struct HostCpu {
  std::string vendor;    // cpuid's vendor id: "GenuineIntel", "AuthenticAMD", "" elsewhere
  std::string identity;  // /proc/cpuinfo's model name and flags lines ("" where absent)
  std::bitset<static_cast<size_t>(CpuFeature::kCount)> features;  // with the OS's support

  bool has(CpuFeature f) const { return features[static_cast<size_t>(f)]; }

  /// This machine's CPU (cpuid, checked against the OS's saved vector state).
  static const HostCpu& probe();
};

}  // namespace af::target
