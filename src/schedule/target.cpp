// Target::host_cpu: the machine this process runs on, from cpuid.
#include "schedule/target.h"

#include <thread>

namespace af::schedule {

Target Target::host_cpu() {
  Target t;
  t.name = "cpu";
  __builtin_cpu_init();
  bool fma_f16c = __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (fma_f16c && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    t.isa = "avx512";
    t.vector_bytes = 64;
    t.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  } else if (fma_f16c && __builtin_cpu_supports("avx2")) {
    t.isa = "avx2";
    t.vector_bytes = 32;
  } else {
    t.isa = "scalar";
    t.vector_bytes = 4;
  }
  t.align_bytes = t.vector_bytes;
  t.ub_bytes = 256 * 1024;
  unsigned n = std::thread::hardware_concurrency();
  t.cores = n > 0 ? static_cast<int64_t>(n) : 1;
  return t;
}

}  // namespace af::schedule
