// The CUDA target's op table: the device code every kernel source starts with (storage
// conversions and the ops with eager's semantics as scalar __device__ functions) and the CUDA
// expression of each registry kind a kernel computes, per lane kind.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/attr.h"
#include "support/dtype.h"

namespace af::codegen {

/// The register type a value of `t` computes in: float (f32, f16, bf16), long long (i64, i32)
/// or bool; nullopt for a dtype CUDA kernels do not compute.
std::optional<std::string> cuda_lane_type(DType t);

/// The element type a tensor of `t` is stored as (float, unsigned short for f16/bf16, long
/// long, int, bool); nullopt where cuda_lane_type is.
std::optional<std::string> cuda_storage_type(DType t);

/// The CUDA expression of a stored element `v` (storage_type(t)) as its lane value, and of lane
/// value `v` rounded to storage (f16/bf16: round to nearest even).
std::string cuda_load_expr(DType t, const std::string& v);
std::string cuda_store_expr(DType t, const std::string& v);

/// The CUDA expression of `v`, a lane value of `from`, converted to the lanes of `to` as torch
/// converts (float to integer truncates; to bool is != 0; to f16/bf16 rounds to their precision).
std::string cuda_cast_expr(DType from, DType to, const std::string& v);

/// The CUDA expression of registry kind `kind` over `args` (lane values of dtype `operand`),
/// with attributes `attrs`; nullopt where the CUDA target has no form for it (the reason is the
/// caller's: "no CUDA form of <kind> on <dtype>").
std::optional<std::string> cuda_op_expr(const std::string& kind, DType operand,
                                        const std::vector<std::string>& args, const AttrMap& attrs);

/// How a reduction kind accumulates (f32 lanes; i64/i32 results in long long lanes; reduce_any /
/// reduce_all: bool lanes): the identity, the step `step(acc, x)` and the join of the threads'
/// accumulators across a thread block `join(acc)` (every thread gets it).
struct CudaReduce {
  std::string identity, step, join;
};
/// The CUDA form of reduce kind `kind` with result dtype `t` (reduce_mean: the sum's; the caller
/// divides); nullopt for one it has no form for (f16/bf16 results: the graph reduces in f32).
std::optional<CudaReduce> cuda_reduce_form(const std::string& kind, DType t);

/// The device code every CUDA kernel source starts with (self-contained: NVRTC compiles it with
/// no header).
const char* cuda_device_prologue();

}  // namespace af::codegen
