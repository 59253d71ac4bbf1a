// The target layer: the machine as the Schedule, the emitters and the tiling functions see it
// (design.md §4): the host CPU every program can fall back to, and the device a registered
// target (backends/registry.h) prints its kernels for. Data only: what a target can do and how
// its kernels are printed live in its Backend (codegen/backend.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace af::target {

/// The CPU vector instruction sets kernels are built for, from the narrowest; each runs the
/// code of the ones before it.
enum class Isa { Scalar, Avx2, Avx512 };

/// Its name: "scalar", "avx2" or "avx512".
std::string_view isa_name(Isa isa);

/// The Isa called `name`; throws CompileError naming the choices for another name.
Isa parse_isa(std::string_view name);

/// Every Isa, from the narrowest.
const std::vector<Isa>& all_isas();

/// The device a target's kernels are printed for, as its Backend configured it from the user's
/// options (Backend::configure): for the host CPU, "cpu" and nothing else.
struct Device {
  std::string target = "cpu";  // the registered target printing the kernels (backends/registry.h)
  int64_t cores = 0;           // units running blocks in parallel (Ascend vector cores); 0: cpu
  int64_t onchip_bytes = 0;    // on-chip buffer a kernel's tiles may use (Ascend UB); 0: cpu
  /// The target's own settings by name (ascendc: cann, soc), as the user gave them; its Backend
  /// validates them in configure and reads them into its own types.
  std::map<std::string, std::string> options;

  /// Option `name`'s value, "" when not given.
  std::string option(const std::string& name) const;
};

/// Cores, tile buffer ("UB") budget, alignment and vector width. For the CPU the UB is a per-core
/// cache budget and the vector width comes from the host ISA.
struct Target {
  Isa isa = Isa::Avx2;
  bool avx512_bf16 = false;       // avx512 with AVX512_BF16: one instruction rounds f32 to bf16
  int64_t cores = 1;              // default; the runtime passes the live thread count
  int64_t ub_bytes = 256 * 1024;  // per-core tile budget (L2-sized)
  /// Row buffer of a reduction's "all_load" TilingCase: the f32 values of one row that later
  /// passes re-read stay here (on the stack, in L1/L2); larger rows take the "split" case.
  int64_t reduce_buffer_bytes = 64 * 1024;
  int64_t align_bytes = 32;
  int64_t vector_bytes = 32;
  Device device;  // what the kernels are printed for; kernels its target cannot print stay cpu

  /// The host CPU: ISA from cpuid (AVX-512 if present, else AVX2, else scalar) and its
  /// AVX512_BF16 extension.
  static Target host_cpu();

  /// This target with its vector ISA replaced by `isa`: vector width and alignment follow;
  /// AVX512_BF16 stays only with avx512. Does not ask whether the host runs it (supports_isa).
  Target with_isa(Isa isa) const;

  /// Whether this target's ISA runs code built for `other` (scalar < avx2 < avx512).
  bool supports_isa(Isa other) const { return other <= isa; }
};

}  // namespace af::target
