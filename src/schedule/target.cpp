// Target::host_cpu: the machine this process runs on, from cpuid.
#include "schedule/target.h"

#include <thread>

#include "support/error.h"

namespace af::schedule {

Target Target::host_cpu() {
  Target t;
  t.name = "cpu";
  __builtin_cpu_init();
  bool fma_f16c = __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  t.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  if (fma_f16c && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    t = t.with_isa("avx512");
  else if (fma_f16c && __builtin_cpu_supports("avx2"))
    t = t.with_isa("avx2");
  else
    t = t.with_isa("scalar");
  t.ub_bytes = 256 * 1024;
  unsigned n = std::thread::hardware_concurrency();
  t.cores = n > 0 ? static_cast<int64_t>(n) : 1;
  return t;
}

const std::vector<std::string>& Target::isas() {
  static const std::vector<std::string> names = {"scalar", "avx2",
                                                 "avx512"};  // each runs the ones before it
  return names;
}

namespace {

int isa_rank(const std::string& isa) {
  const auto& names = Target::isas();
  for (size_t i = 0; i < names.size(); ++i)
    if (isa == names[i]) return static_cast<int>(i);
  throw CompileError("cpu target: unknown isa '" + isa + "' (avx512, avx2 or scalar)");
}

}  // namespace

Target Target::with_isa(const std::string& isa) const {
  static constexpr int64_t kVectorBytes[] = {4, 32, 64};
  Target t = *this;
  int rank = isa_rank(isa);
  t.isa = isa;
  t.vector_bytes = kVectorBytes[rank];
  t.align_bytes = t.vector_bytes;
  t.avx512_bf16 = avx512_bf16 && isa == "avx512";
  return t;
}

bool Target::supports_isa(const std::string& other) const {
  return isa_rank(other) <= isa_rank(isa);
}

}  // namespace af::schedule
