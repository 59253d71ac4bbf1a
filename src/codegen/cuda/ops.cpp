// The CUDA target's op table (ops.h): device helpers and registry kinds as CUDA expressions.
#include "codegen/cuda/ops.h"

#include <map>

namespace af::codegen {
namespace {

/// What a value computes in on the device.
enum class Lane { Float, Int, Bool };

std::optional<Lane> lane_of(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return Lane::Float;
    case DType::I64:
    case DType::I32: return Lane::Int;
    case DType::Bool: return Lane::Bool;
    default: return std::nullopt;
  }
}

/// A kind's CUDA template per lane kind ({0}, {1}, {2}: the operands; "": no form).
struct OpForm {
  const char* f;  // float lanes
  const char* i;  // integer lanes
  const char* b;  // bool lanes
};

const std::map<std::string, OpForm, std::less<>>& op_forms() {
  static const std::map<std::string, OpForm, std::less<>> forms = {
      {"add", {"({0} + {1})", "({0} + {1})", ""}},
      {"sub", {"({0} - {1})", "({0} - {1})", ""}},
      {"mul", {"({0} * {1})", "({0} * {1})", ""}},
      {"div", {"({0} / {1})", "", ""}},
      {"div_floor", {"af_div_floor({0}, {1})", "", ""}},
      {"div_trunc", {"truncf({0} / {1})", "", ""}},
      {"remainder", {"af_remainder({0}, {1})", "", ""}},
      {"fmod", {"fmodf({0}, {1})", "", ""}},
      {"neg", {"(-{0})", "(-{0})", ""}},
      {"abs", {"fabsf({0})", "({0} < 0 ? -{0} : {0})", ""}},
      {"reciprocal", {"(1.0f / {0})", "", ""}},
      {"pow", {"powf({0}, {1})", "", ""}},
      {"cube", {"({0} * {0} * {0})", "", ""}},
      {"pow4", {"af_pow4({0})", "", ""}},
      {"rsquare", {"(1.0f / ({0} * {0}))", "", ""}},
      {"maximum", {"af_maximum({0}, {1})", "max({0}, {1})", ""}},
      {"minimum", {"af_minimum({0}, {1})", "min({0}, {1})", ""}},
      {"clamp", {"af_minimum(af_maximum({0}, {1}), {2})", "min(max({0}, {1}), {2})", ""}},
      {"clamp_min", {"af_maximum({0}, {1})", "max({0}, {1})", ""}},
      {"clamp_max", {"af_minimum({0}, {1})", "min({0}, {1})", ""}},
      {"exp", {"expf({0})", "", ""}},
      {"exp2", {"exp2f({0})", "", ""}},
      {"log", {"logf({0})", "", ""}},
      {"log1p", {"log1pf({0})", "", ""}},
      {"expm1", {"expm1f({0})", "", ""}},
      {"sqrt", {"sqrtf({0})", "", ""}},
      {"rsqrt", {"rsqrtf({0})", "", ""}},
      {"sigmoid", {"af_sigmoid({0})", "", ""}},
      {"tanh", {"tanhf({0})", "", ""}},
      {"erf", {"erff({0})", "", ""}},
      {"sin", {"sinf({0})", "", ""}},
      {"cos", {"cosf({0})", "", ""}},
      {"relu", {"af_relu({0})", "({0} > 0 ? {0} : 0LL)", ""}},
      {"gelu", {"af_gelu({0})", "", ""}},
      {"silu", {"af_silu({0})", "", ""}},
      {"sign", {"af_sign({0})", "(long long)((0 < {0}) - ({0} < 0))", ""}},
      {"floor", {"floorf({0})", "", ""}},
      {"ceil", {"ceilf({0})", "", ""}},
      {"round", {"rintf({0})", "", ""}},
      {"trunc", {"truncf({0})", "", ""}},
      {"where", {"({0} ? {1} : {2})", "({0} ? {1} : {2})", ""}},
      {"eq", {"({0} == {1})", "({0} == {1})", "({0} == {1})"}},
      {"ne", {"({0} != {1})", "({0} != {1})", "({0} != {1})"}},
      {"lt", {"({0} < {1})", "({0} < {1})", ""}},
      {"le", {"({0} <= {1})", "({0} <= {1})", ""}},
      {"gt", {"({0} > {1})", "({0} > {1})", ""}},
      {"ge", {"({0} >= {1})", "({0} >= {1})", ""}},
      {"isnan", {"isnan({0})", "", ""}},
      {"isinf", {"isinf({0})", "", ""}},
      {"logical_and", {"", "", "({0} && {1})"}},
      {"logical_or", {"", "", "({0} || {1})"}},
      {"logical_xor", {"", "", "({0} != {1})"}},
      {"logical_not", {"", "", "(!{0})"}},
      {"bitwise_and", {"", "({0} & {1})", "({0} && {1})"}},
      {"bitwise_or", {"", "({0} | {1})", "({0} || {1})"}},
      {"bitwise_xor", {"", "({0} ^ {1})", "({0} != {1})"}},
      {"bitwise_not", {"", "(~{0})", "(!{0})"}},
  };
  return forms;
}

std::string substitute(const std::string& tpl, const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < tpl.size(); ++i) {
    if (tpl[i] == '{' && i + 2 < tpl.size() && tpl[i + 2] == '}') {
      out += args.at(static_cast<size_t>(tpl[i + 1] - '0'));
      i += 2;
    } else {
      out += tpl[i];
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> cuda_lane_type(DType t) {
  std::optional<Lane> l = lane_of(t);
  if (!l) return std::nullopt;
  return *l == Lane::Float ? "float" : *l == Lane::Int ? "long long" : "bool";
}

std::optional<std::string> cuda_storage_type(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F16:
    case DType::BF16: return "unsigned short";
    case DType::I64: return "long long";
    case DType::I32: return "int";
    case DType::Bool: return "bool";
    default: return std::nullopt;
  }
}

std::string cuda_load_expr(DType t, const std::string& v) {
  if (t == DType::BF16) return "af_bf16_load(" + v + ")";
  if (t == DType::F16) return "af_f16_load(" + v + ")";
  if (t == DType::I32) return "(long long)" + v;
  return v;
}

std::string cuda_store_expr(DType t, const std::string& v) {
  if (t == DType::BF16) return "af_bf16_store(" + v + ")";
  if (t == DType::F16) return "af_f16_store(" + v + ")";
  if (t == DType::I32) return "(int)" + v;
  return v;
}

std::string cuda_cast_expr(DType from, DType to, const std::string& v) {
  std::optional<Lane> a = lane_of(from), b = lane_of(to);
  if (to == DType::Bool) return "(" + v + " != 0)";
  if (to == DType::BF16 || to == DType::F16)  // rounded to the narrow float, kept in f32 lanes
    return cuda_load_expr(to, cuda_store_expr(to, "(float)" + v));
  if (*b == Lane::Float) return "(float)" + v;
  if (to == DType::I32 && a != Lane::Bool) return "(long long)(int)" + v;  // wraps to 32 bits
  return "(long long)" + v;
}

std::optional<std::string> cuda_op_expr(const std::string& kind, DType operand,
                                        const std::vector<std::string>& args,
                                        const AttrMap& attrs) {
  std::optional<Lane> lane = lane_of(operand);
  auto it = op_forms().find(kind);
  if (!lane || it == op_forms().end()) return std::nullopt;
  for (const auto& [name, value] : attrs) {  // the schedule's own (row_buffer) change nothing
    const std::string* mode = std::get_if<std::string>(&value);
    if (name == "round") return std::nullopt;  // eager's per-step rounding: no CUDA form yet
    if (name != "approximate") continue;
    if (kind != "gelu" || !mode || (*mode != "none" && *mode != "tanh")) return std::nullopt;
    if (*mode == "tanh") return "af_gelu_tanh(" + args.at(0) + ")";
  }
  const char* tpl = *lane == Lane::Float ? it->second.f
                    : *lane == Lane::Int ? it->second.i
                                         : it->second.b;
  if (!*tpl) return std::nullopt;
  return substitute(tpl, args);
}

std::optional<CudaReduce> cuda_reduce_form(const std::string& kind, DType t) {
  const std::optional<Lane> lane = lane_of(t);
  if (lane == Lane::Float && t == DType::F32) {
    if (kind == "reduce_sum" || kind == "reduce_mean")
      return CudaReduce{"0.0f", "af_add", "af_block_sum"};
    if (kind == "reduce_prod") return CudaReduce{"1.0f", "af_mul", "af_block_prod"};
    if (kind == "reduce_max")
      return CudaReduce{"__int_as_float(0xff800000)", "af_maximum", "af_block_max"};
    if (kind == "reduce_min")
      return CudaReduce{"__int_as_float(0x7f800000)", "af_minimum", "af_block_min"};
  }
  if (lane == Lane::Int) {  // in long long lanes, wrapping as eager's int64 accumulators do
    if (kind == "reduce_sum") return CudaReduce{"0LL", "af_add_ll", "af_block_sum_ll"};
    if (kind == "reduce_prod") return CudaReduce{"1LL", "af_mul_ll", "af_block_prod_ll"};
    if (kind == "reduce_max")
      return CudaReduce{"(-9223372036854775807LL - 1)", "af_max_ll", "af_block_max_ll"};
    if (kind == "reduce_min")
      return CudaReduce{"9223372036854775807LL", "af_min_ll", "af_block_min_ll"};
  }
  // bool lanes: the block's join is CUDA's own barrier with a predicate
  if (lane == Lane::Bool && kind == "reduce_any")
    return CudaReduce{"false", "af_or", "(bool)__syncthreads_or"};
  if (lane == Lane::Bool && kind == "reduce_all")
    return CudaReduce{"true", "af_and", "(bool)__syncthreads_and"};
  return std::nullopt;
}

const char* cuda_device_prologue() {
  return R"(// Storage conversions and eager's op semantics on float lanes (c10's formulas).
__device__ __forceinline__ float af_bf16_load(unsigned short h) {
  return __uint_as_float(((unsigned int)h) << 16);
}
__device__ __forceinline__ unsigned short af_bf16_store(float f) {  // round to nearest even
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
__device__ __forceinline__ float af_f16_load(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short af_f16_store(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float af_maximum(float a, float b) {  // NaN propagates
  return a != a ? a : (b != b ? b : fmaxf(a, b));
}
__device__ __forceinline__ float af_minimum(float a, float b) {
  return a != a ? a : (b != b ? b : fminf(a, b));
}
__device__ __forceinline__ float af_relu(float x) { return x != x ? x : fmaxf(x, 0.0f); }
__device__ __forceinline__ float af_sign(float x) { return (float)((0.0f < x) - (x < 0.0f)); }
__device__ __forceinline__ float af_pow4(float x) { float y = x * x; return y * y; }
__device__ __forceinline__ float af_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float af_silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float af_gelu(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}
__device__ __forceinline__ float af_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float af_remainder(float a, float b) {
  float m = fmodf(a, b);
  return (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) ? m + b : m;
}
__device__ __forceinline__ float af_add(float a, float b) { return a + b; }
__device__ __forceinline__ float af_mul(float a, float b) { return a * b; }
__device__ __forceinline__ bool af_or(bool a, bool b) { return a || b; }
__device__ __forceinline__ bool af_and(bool a, bool b) { return a && b; }
// A gather's index, checked against its dim: out of range, the kernel traps, as eager's CUDA
// kernels fail a device-side assert (the launch's error reaches the caller at its next sync).
__device__ __forceinline__ long long af_gather_index(long long i, long long bound) {
  if ((unsigned long long)i >= (unsigned long long)bound) __trap();
  return i;
}
// V elements of T moved as one access (16 bytes at most: ld/st.global.v4 and narrower), and
// whether an address allows it.
template <typename T, int V> struct alignas(sizeof(T) * V) af_vec { T v[V]; };
__device__ __forceinline__ bool af_aligned(const void* p, int bytes) {
  return ((unsigned long long)p & (unsigned long long)(bytes - 1)) == 0;
}
// A thread block's accumulators joined (a warp by shuffles, then the warps' results through
// shared memory); every thread gets the result. blockDim.x is a multiple of 32 (the tiling
// function's threads), and every thread of the block calls it.
#define AF_BLOCK_REDUCE(NAME, T, OP, IDENTITY)                                \
  __device__ __forceinline__ T NAME(T v) {                                    \
    __shared__ T part[32];                                                    \
    for (int o = 16; o > 0; o >>= 1) v = OP(v, __shfl_xor_sync(0xffffffffu, v, o)); \
    __syncthreads();                                                          \
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;                  \
    __syncthreads();                                                          \
    if (threadIdx.x < 32) {                                                   \
      v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : (IDENTITY);   \
      for (int o = 16; o > 0; o >>= 1) v = OP(v, __shfl_xor_sync(0xffffffffu, v, o)); \
      if (threadIdx.x == 0) part[0] = v;                                      \
    }                                                                         \
    __syncthreads();                                                          \
    return part[0];                                                           \
  }
AF_BLOCK_REDUCE(af_block_sum, float, af_add, 0.0f)
AF_BLOCK_REDUCE(af_block_prod, float, af_mul, 1.0f)
AF_BLOCK_REDUCE(af_block_max, float, af_maximum, __int_as_float(0xff800000))
AF_BLOCK_REDUCE(af_block_min, float, af_minimum, __int_as_float(0x7f800000))
// Integer accumulators (long long lanes): unsigned arithmetic wraps as eager's int64 does.
__device__ __forceinline__ long long af_add_ll(long long a, long long b) {
  return (long long)((unsigned long long)a + (unsigned long long)b);
}
__device__ __forceinline__ long long af_mul_ll(long long a, long long b) {
  return (long long)((unsigned long long)a * (unsigned long long)b);
}
__device__ __forceinline__ long long af_max_ll(long long a, long long b) { return a < b ? b : a; }
__device__ __forceinline__ long long af_min_ll(long long a, long long b) { return b < a ? b : a; }
AF_BLOCK_REDUCE(af_block_sum_ll, long long, af_add_ll, 0LL)
AF_BLOCK_REDUCE(af_block_prod_ll, long long, af_mul_ll, 1LL)
AF_BLOCK_REDUCE(af_block_max_ll, long long, af_max_ll, (-9223372036854775807LL - 1))
AF_BLOCK_REDUCE(af_block_min_ll, long long, af_min_ll, 9223372036854775807LL)
__device__ __forceinline__ float af_div_floor(float a, float b) {
  if (b == 0.0f) return a / b;
  float m = fmodf(a, b);
  float d = (a - m) / b;
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) d -= 1.0f;
  if (d == 0.0f) return copysignf(0.0f, a / b);
  float f = floorf(d);
  return d - f > 0.5f ? f + 1.0f : f;
}
)";
}

}  // namespace af::codegen
