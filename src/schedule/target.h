// Target: the machine as the Schedule and the tiling function see it (design.md §4).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace af::schedule {

/// The CPU vector instruction sets kernels are built for, from the narrowest; each runs the
/// code of the ones before it.
enum class Isa { Scalar, Avx2, Avx512 };

/// Its name: "scalar", "avx2" or "avx512".
std::string_view isa_name(Isa isa);

/// The Isa called `name`; throws CompileError naming the choices for another name.
Isa parse_isa(std::string_view name);

/// Every Isa, from the narrowest.
const std::vector<Isa>& all_isas();

/// What the kernels of a program become: C++ for the host CPU, or Ascend C (built and run here
/// against ascendc_emu), where a kernel Ascend C cannot express keeps the CPU's C++.
enum class TargetKind { Cpu, AscendC };

/// Its name: "cpu" or "ascendc".
std::string_view target_kind_name(TargetKind kind);

/// The TargetKind called `name`; throws CompileError naming the choices for another name.
TargetKind parse_target_kind(std::string_view name);

/// The CANN release whose Ascend C API the emitted kernels are written for, where the API's
/// spelling differs between releases (docs/ascendc.md "Conformance"). Common: the spellings
/// both 8.x and 9.x accept (9.x keeps some 8.x names as deprecated aliases).
enum class CannVersion { Common, V8, V9 };

/// Its name: "common", "8" or "9".
std::string_view cann_version_name(CannVersion v);

/// The CannVersion called `name` ("" is Common); throws CompileError naming the choices.
CannVersion parse_cann_version(std::string_view name);

/// An Ascend NPU's vector cores as the Ascend C tiling function sees them (defaults: Atlas A2,
/// Ascend910B1, docs/ascendc-facts.md), and the CANN release its kernels are written for.
struct AscendCores {
  int64_t ub_bytes = 184 * 1024;  // UB InitBuffer may hand out: 192 KB less the API's 8 KB
  int64_t vector_cores = 48;      // blocks run in parallel (block_dim's upper bound)
  CannVersion cann = CannVersion::Common;
};

/// The vector cores of Ascend SoC `soc` (CANN's name: Ascend910B1 .. B4, Ascend910_93xx; "" is
/// Ascend910B1), with `base`'s CANN version; throws CompileError naming the SoCs it knows.
AscendCores ascend_soc(std::string_view soc, const AscendCores& base = {});

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
  TargetKind kind = TargetKind::Cpu;
  AscendCores ascend;  // kind AscendC: the NPU its kernels are tiled for

  /// The host CPU: ISA from cpuid (AVX-512 if present, else AVX2, else scalar) and its
  /// AVX512_BF16 extension.
  static Target host_cpu();

  /// This target with its vector ISA replaced by `isa`: vector width and alignment follow;
  /// AVX512_BF16 stays only with avx512. Does not ask whether the host runs it (supports_isa).
  Target with_isa(Isa isa) const;

  /// Whether this target's ISA runs code built for `other` (scalar < avx2 < avx512).
  bool supports_isa(Isa other) const { return other <= isa; }
};

}  // namespace af::schedule
