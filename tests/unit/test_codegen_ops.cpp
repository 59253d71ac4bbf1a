// The vector library's op semantics through emitted kernels: every elementwise kind of the op
// registry against a double-precision reference with PyTorch's rules (NaN propagation, sign(0),
// half-to-even rounding, floor division, ...), f16/bf16/bool conversions bit for bit, and the
// scalar and AVX-512 layers.
#include <gtest/gtest.h>

#include <cfloat>
#include <functional>
#include <map>

#include "asc_test_util.h"
#include "graph/op_registry.h"

namespace af {
namespace {

using asc_test::AscBuilder;
using asc_test::close;
using asc_test::KernelLib;
using asc_test::schedule_and_emit;
using asc_test::test_target;

using Ref = std::function<double(double, double, double)>;

/// One op under test: operand count, reference, tolerance, and whether it yields bool.
struct OpCase {
  std::string kind;
  int arity;
  Ref ref;
  double rtol = 1e-5;
  bool bool_out = false;
  AttrMap attrs = {};
};

double nan_max(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
}
double nan_min(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
}

/// c10's div_floor_floating: floor division that agrees with Python's // (e.g. -88.5 // inf is
/// -1), IEEE division when b == 0.
double div_floor_ref(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  return div - fl > 0.5 ? fl + 1 : fl;
}

std::vector<OpCase> op_cases() {
  const double kSqrt1_2 = 0.70710678118654752440, kBeta = 0.7978845608028654;
  return {
      {"add", 2, [](double a, double b, double) { return a + b; }},
      {"sub", 2, [](double a, double b, double) { return a - b; }},
      {"mul", 2, [](double a, double b, double) { return a * b; }},
      {"div", 2, [](double a, double b, double) { return a / b; }},
      {"div_floor", 2, [](double a, double b, double) { return div_floor_ref(a, b); }},
      {"div_trunc", 2,  // torch truncates the f32 quotient
       [](double a, double b, double) { return std::trunc(static_cast<float>(a / b)); }},
      {"fmod", 2, [](double a, double b, double) { return std::fmod(a, b); }},
      {"remainder", 2,
       [](double a, double b, double) {
         double m = std::fmod(a, b);
         return m != 0 && (b < 0) != (m < 0) ? m + b : m;
       }},
      {"neg", 1, [](double a, double, double) { return -a; }},
      {"abs", 1, [](double a, double, double) { return std::fabs(a); }},
      {"reciprocal", 1, [](double a, double, double) { return 1.0 / a; }},
      {"pow", 2, [](double a, double b, double) { return std::pow(a, b); }, 2e-5},
      {"cube", 1, [](double a, double, double) { return a * a * a; }},
      {"pow4", 1, [](double a, double, double) { return a * a * a * a; }},
      {"rsquare", 1, [](double a, double, double) { return 1.0 / (a * a); }},
      {"maximum", 2, [](double a, double b, double) { return nan_max(a, b); }},
      {"minimum", 2, [](double a, double b, double) { return nan_min(a, b); }},
      {"clamp", 3, [](double a, double b, double c) { return nan_min(nan_max(a, b), c); }},
      {"clamp_min", 2, [](double a, double b, double) { return nan_max(a, b); }},
      {"clamp_max", 2, [](double a, double b, double) { return nan_min(a, b); }},
      {"exp", 1, [](double a, double, double) { return std::exp(a); }},
      {"exp2", 1, [](double a, double, double) { return std::exp2(a); }},
      {"log", 1, [](double a, double, double) { return std::log(a); }},
      {"log1p", 1, [](double a, double, double) { return std::log1p(a); }},
      {"expm1", 1, [](double a, double, double) { return std::expm1(a); }},
      {"sqrt", 1, [](double a, double, double) { return std::sqrt(a); }},
      {"rsqrt", 1, [](double a, double, double) { return 1.0 / std::sqrt(a); }},
      {"sigmoid", 1, [](double a, double, double) { return 1.0 / (1.0 + std::exp(-a)); }},
      {"tanh", 1, [](double a, double, double) { return std::tanh(a); }},
      {"erf", 1, [](double a, double, double) { return std::erf(a); }},
      {"sin", 1, [](double a, double, double) { return std::sin(a); }},
      {"cos", 1, [](double a, double, double) { return std::cos(a); }},
      {"relu", 1, [](double a, double, double) { return std::isnan(a) ? a : std::max(a, 0.0); }},
      {"gelu", 1,
       [=](double a, double, double) { return 0.5 * a * (1.0 + std::erf(a * kSqrt1_2)); }},
      {"gelu", 1,
       [=](double a, double, double) {
         return 0.5 * a * (1.0 + std::tanh(kBeta * (a + 0.044715 * a * a * a)));
       },
       1e-5, false, AttrMap{{"approximate", std::string("tanh")}}},
      {"silu", 1, [](double a, double, double) { return a / (1.0 + std::exp(-a)); }},
      {"sign", 1, [](double a, double, double) { return a > 0   ? 1.0
                                                        : a < 0 ? -1.0
                                                                : 0.0; }},
      {"floor", 1, [](double a, double, double) { return std::floor(a); }},
      {"ceil", 1, [](double a, double, double) { return std::ceil(a); }},
      {"round", 1, [](double a, double, double) { return std::nearbyint(a); }},
      {"trunc", 1, [](double a, double, double) { return std::trunc(a); }},
      {"eq", 2, [](double a, double b, double) -> double { return a == b; }, 0, true},
      {"ne", 2, [](double a, double b, double) -> double { return a != b; }, 0, true},
      {"lt", 2, [](double a, double b, double) -> double { return a < b; }, 0, true},
      {"le", 2, [](double a, double b, double) -> double { return a <= b; }, 0, true},
      {"gt", 2, [](double a, double b, double) -> double { return a > b; }, 0, true},
      {"ge", 2, [](double a, double b, double) -> double { return a >= b; }, 0, true},
      {"isnan", 1, [](double a, double, double) -> double { return std::isnan(a); }, 0, true},
      {"isinf", 1, [](double a, double, double) -> double { return std::isinf(a); }, 0, true},
  };
}

/// Operand values: specials (zeros, halves, infinities, NaN, denormals, huge) then random ones.
std::vector<float> operand(int which, size_t n) {
  const float sp[] = {0.0f,     -0.0f,   1.0f,  -1.0f,  0.5f,     -0.5f,      1.5f,  2.5f,
                      -2.5f,    3.0f,    0.1f,  -7.25f, 20.0f,    -20.0f,     88.5f, -88.5f,
                      100.0f,   -100.0f, 1e30f, -1e30f, INFINITY, -INFINITY,  NAN,   1e-40f,
                      65504.0f, 1e-3f,   4.0f,  -3.0f,  0.3f,     8388609.0f, -0.7f, 2.0f};
  std::vector<float> v(n);
  uint32_t s = 12345u + 977u * static_cast<uint32_t>(which);
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    float r = (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 16.0f;
    size_t k = (i + 5 * which) % (2 * (sizeof sp / sizeof sp[0]));
    v[i] = k < sizeof sp / sizeof sp[0] ? sp[k] : r;
  }
  return v;
}

TEST(CpuOps, EveryElementwiseKindMatchesTorchSemantics) {
  const size_t n = 133;  // several vectors plus a tail
  auto cases = op_cases();
  std::vector<AscBuilder> bs;
  for (size_t k = 0; k < cases.size(); ++k) {
    AscBuilder b("op" + std::to_string(k) + "_" + cases[k].kind, {static_cast<int64_t>(n)});
    std::vector<int> in;
    for (int a = 0; a < cases[k].arity; ++a) in.push_back(b.contiguous_input());
    DType out = cases[k].bool_out ? DType::Bool : DType::F32;
    b.output(b.op(cases[k].kind, in, out, cases[k].attrs), out);
    bs.push_back(std::move(b));
  }
  std::vector<ascir::AscGraph*> gs;
  for (auto& b : bs) gs.push_back(&b.g);
  auto t = test_target();
  KernelLib lib(schedule_and_emit(gs, t), t);
  std::vector<std::vector<float>> ops = {operand(0, n), operand(1, n), operand(2, n)};
  ops[2] = ops[1];  // clamp: hi from the same values, so lo > hi cases occur too
  for (auto& v : ops[2]) v = std::isnan(v) ? v : v + 1.0f;
  for (size_t k = 0; k < cases.size(); ++k) {
    const OpCase& c = cases[k];
    std::vector<void*> args;
    for (int a = 0; a < c.arity; ++a) args.push_back(ops[a].data());
    std::vector<float> out(n + 16, -1.0f);
    std::vector<uint8_t> bout(n + 16, 0xab);
    args.push_back(c.bool_out ? static_cast<void*>(bout.data()) : out.data());
    lib.run(k, {}, args);
    for (size_t i = 0; i < n; ++i) {
      double a = ops[0][i], b = ops[1][i], cc = ops[2][i];
      if (c.kind == "div_floor" && std::fabs(a / b) > 1e6) continue;  // beyond float's integers
      // SLEEF's fmodf (eager's too) gives NaN for a subnormal divisor.
      if ((c.kind == "fmod" || c.kind == "remainder") && b != 0 && std::fabs(b) < FLT_MIN) continue;
      double want = c.ref(a, b, cc);
      if (c.bool_out) {
        ASSERT_EQ(bout[i], want != 0 ? 1 : 0) << c.kind << "(" << a << ", " << b << ")";
        continue;
      }
      double wantf = static_cast<float>(want);  // the f32 result, overflow to inf included
      double tol = (c.kind == "sin" || c.kind == "cos") && std::fabs(a) > 1e4 ? 1e-4 : c.rtol;
      ASSERT_TRUE(close(out[i], wantf, tol, 1e-6))
          << c.kind << (c.attrs.empty() ? "" : "(tanh)") << "(" << a << ", " << b << ", " << cc
          << ") = " << out[i] << ", want " << wantf;
    }
    for (size_t i = n; i < n + 16; ++i)
      ASSERT_TRUE(c.bool_out ? bout[i] == 0xab : out[i] == -1.0f) << c.kind << " wrote past end";
  }
}

/// An integer op under test: operand count and reference on int64 values (wrapped to the
/// dtype after).
struct IntCase {
  std::string kind;
  int arity;
  std::function<int64_t(int64_t, int64_t, int64_t)> ref;
};

/// torch's integer semantics (c10), written on int64 values without overflow traps.
std::vector<IntCase> int_cases() {
  using u64 = uint64_t;
  auto wrap = [](u64 v) { return static_cast<int64_t>(v); };
  auto trunc_div = [](int64_t a, int64_t b) { return b == -1 ? int64_t(0 - u64(a)) : a / b; };
  auto fmod = [](int64_t a, int64_t b) { return b == -1 ? 0 : a % b; };
  return {
      {"add", 2, [=](int64_t a, int64_t b, int64_t) { return wrap(u64(a) + u64(b)); }},
      {"sub", 2, [=](int64_t a, int64_t b, int64_t) { return wrap(u64(a) - u64(b)); }},
      {"mul", 2, [=](int64_t a, int64_t b, int64_t) { return wrap(u64(a) * u64(b)); }},
      {"neg", 1, [=](int64_t a, int64_t, int64_t) { return wrap(0 - u64(a)); }},
      {"abs", 1, [=](int64_t a, int64_t, int64_t) { return a < 0 ? wrap(0 - u64(a)) : a; }},
      {"maximum", 2, [](int64_t a, int64_t b, int64_t) { return std::max(a, b); }},
      {"minimum", 2, [](int64_t a, int64_t b, int64_t) { return std::min(a, b); }},
      {"clamp", 3, [](int64_t a, int64_t b, int64_t c) { return std::min(std::max(a, b), c); }},
      {"clamp_min", 2, [](int64_t a, int64_t b, int64_t) { return std::max(a, b); }},
      {"clamp_max", 2, [](int64_t a, int64_t b, int64_t) { return std::min(a, b); }},
      {"relu", 1, [](int64_t a, int64_t, int64_t) { return std::max<int64_t>(a, 0); }},
      {"sign", 1, [](int64_t a, int64_t, int64_t) -> int64_t { return (a > 0) - (a < 0); }},
      {"div_trunc", 2, [=](int64_t a, int64_t b, int64_t) { return trunc_div(a, b); }},
      {"div_floor", 2,
       [=](int64_t a, int64_t b, int64_t) {
         return trunc_div(a, b) - (fmod(a, b) != 0 && (a < 0) != (b < 0));
       }},
      {"fmod", 2, [=](int64_t a, int64_t b, int64_t) { return fmod(a, b); }},
      {"remainder", 2,
       [=](int64_t a, int64_t b, int64_t) {
         int64_t r = fmod(a, b);
         return r != 0 && (r < 0) != (b < 0) ? r + b : r;
       }},
      {"bitwise_and", 2, [](int64_t a, int64_t b, int64_t) { return a & b; }},
      {"bitwise_or", 2, [](int64_t a, int64_t b, int64_t) { return a | b; }},
      {"bitwise_xor", 2, [](int64_t a, int64_t b, int64_t) { return a ^ b; }},
      {"bitwise_not", 1, [](int64_t a, int64_t, int64_t) { return ~a; }},
  };
}

/// torch's shifts at the width of dtype t (c10's lshift / rshift rules).
int64_t shift_ref(bool left, int64_t a, int64_t b, DType t) {
  const int64_t bits = 8 * dtype_size(t);
  const bool is_signed = t != DType::U8;
  if (left) return b < 0 || b >= bits ? 0 : wrap_to(static_cast<int64_t>(uint64_t(a) << b), t);
  const int64_t max_shift = bits - (is_signed ? 1 : 0);
  return a >> (b < 0 || b >= max_shift ? max_shift : b);
}

TEST(CpuOps, IntegerKindsMatchTorchSemantics) {
  // Every integer kind in i64, a narrow signed and an unsigned dtype (lanes are int64; each
  // narrow result wraps; i16 / i8 take i32's code with other widths: tests/python/test_int.py),
  // extremes included: one kernel per dtype with an output per kind. Divisors here are never 0
  // (ZeroDivisionIsReported).
  const int64_t n = 45;
  const std::vector<DType> dtypes = {DType::I64, DType::I32, DType::U8};
  auto cases = int_cases();
  cases.push_back({"bitwise_left_shift", 2, nullptr});
  cases.push_back({"bitwise_right_shift", 2, nullptr});
  std::vector<AscBuilder> bs;
  for (DType t : dtypes) {
    AscBuilder b("int_ops_" + std::string(dtype_name(t)), {n});
    std::vector<int> in;
    for (int a = 0; a < 3; ++a) in.push_back(b.contiguous_input(t));
    for (const auto& c : cases)
      b.output(b.op(c.kind, std::vector<int>(in.begin(), in.begin() + c.arity), t), t);
    bs.push_back(std::move(b));
  }
  std::vector<ascir::AscGraph*> gs;
  for (auto& b : bs) gs.push_back(&b.g);
  auto t = test_target();
  KernelLib lib(schedule_and_emit(gs, t), t);
  const int64_t sp[] = {0,   1,     -1,     2,         -2,        3,         -7,
                        7,   63,    64,     65,        127,       -128,      255,
                        256, 32767, -32768, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
                        100, -100,  31,     32,        8,         15,        16};
  for (size_t k = 0; k < dtypes.size(); ++k) {
    const DType dt = dtypes[k];
    const int sz = dtype_size(dt);
    // Operands stored in dtype dt (operand 1, the divisor, never 0), one buffer per output.
    std::vector<std::vector<int64_t>> v(3, std::vector<int64_t>(n));
    std::vector<std::vector<unsigned char>> mem(3 + cases.size(),
                                                std::vector<unsigned char>((n + 8) * sz, 0xab));
    for (int a = 0; a < 3; ++a)
      for (int64_t i = 0; i < n; ++i) {
        int64_t x = wrap_to(sp[(i * (a + 1) + 3 * a) % std::size(sp)] + i / 28, dt);
        v[a][i] = a == 1 && x == 0 ? 3 : x;
        std::memcpy(&mem[a][i * sz], &v[a][i], sz);  // little endian: the low bytes
      }
    std::vector<void*> args;
    for (auto& m : mem) args.push_back(m.data());
    lib.run(k, {}, args);
    for (size_t c = 0; c < cases.size(); ++c) {
      const IntCase& ic = cases[c];
      for (int64_t i = 0; i < n; ++i) {
        int64_t want = ic.ref ? wrap_to(ic.ref(v[0][i], v[1][i], v[2][i]), dt)
                              : shift_ref(ic.kind == "bitwise_left_shift", v[0][i], v[1][i], dt);
        int64_t got = 0;
        std::memcpy(&got, &mem[3 + c][i * sz], sz);
        ASSERT_EQ(wrap_to(got, dt), want) << ic.kind << " " << dtype_name(dt) << "(" << v[0][i]
                                          << ", " << v[1][i] << ", " << v[2][i] << ")";
      }
      ASSERT_EQ(mem[3 + c][n * sz], 0xab) << ic.kind << " wrote past end";
    }
  }
}

TEST(CpuOps, ZeroDivisionIsReported) {
  // An integer division by 0 gives 0 in its lane and sets the module's flag, which
  // af_take_zero_division returns once (the launcher raises ZeroDivisionError).
  AscBuilder b("zdiv", {int64_t{5}});
  int x = b.contiguous_input(DType::I32), y = b.contiguous_input(DType::I32);
  b.output(b.op("div_floor", {x, y}, DType::I32), DType::I32);
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  auto take = reinterpret_cast<int (*)()>(lib.symbol(codegen::kTakeZeroDivision));
  ASSERT_NE(take, nullptr);
  std::vector<int32_t> a = {7, -7, 7, 9, 1}, d = {2, 2, -2, 3, 1}, out(5);
  lib.run(0, {}, {a.data(), d.data(), out.data()});
  EXPECT_EQ(out, (std::vector<int32_t>{3, -4, -4, 3, 1}));
  EXPECT_EQ(take(), 0);
  d[3] = 0;
  lib.run(0, {}, {a.data(), d.data(), out.data()});
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(take(), 1);
  EXPECT_EQ(take(), 0);  // taken
}

TEST(CpuOps, RegistryKindsAllCovered) {
  // Every elementwise kind of the registry either has a case above or is boolean logic / where,
  // covered by BoolLogic; a new kind without a test fails here.
  std::set<std::string> tested;
  for (const auto& c : op_cases()) tested.insert(c.kind);
  for (const char* k : {"bitwise_left_shift", "bitwise_right_shift"}) tested.insert(k);
  for (const char* k : {"where", "logical_and", "logical_or", "logical_xor", "logical_not",
                        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"})
    tested.insert(k);
  for (const auto& op : graph::all_ops()) {
    if (op.cls != graph::OpClass::Elementwise) continue;
    EXPECT_TRUE(tested.count(std::string(op.name))) << op.name << " has no codegen test";
  }
}

TEST(CpuOps, BoolLogic) {
  const size_t n = 21;
  const std::vector<std::string> kinds = {"logical_and", "logical_or",  "logical_xor",
                                          "logical_not", "bitwise_and", "bitwise_or",
                                          "bitwise_xor", "bitwise_not", "where"};
  std::vector<AscBuilder> bs;
  for (const auto& kind : kinds) {
    AscBuilder b("bl_" + kind, {static_cast<int64_t>(n)});
    int p = b.contiguous_input(DType::Bool), q = b.contiguous_input(DType::Bool);
    int r = kind == "where" ? b.op(kind, {p, q, b.op("logical_not", {q}, DType::Bool)}, DType::Bool)
            : kind.find("not") != std::string::npos ? b.op(kind, {p}, DType::Bool)
                                                    : b.op(kind, {p, q}, DType::Bool);
    b.output(r, DType::Bool);
    // Also bool -> f32 -> bool casts: out1 = cast(cast(p, f32) + 1, bool) is always true.
    b.output(b.cast(b.op("add", {b.cast(p, DType::F32), b.scalar(1.0)}), DType::Bool), DType::Bool);
    bs.push_back(std::move(b));
  }
  std::vector<ascir::AscGraph*> gs;
  for (auto& b : bs) gs.push_back(&b.g);
  auto t = test_target();
  KernelLib lib(schedule_and_emit(gs, t), t);
  std::vector<uint8_t> p(n), q(n);
  for (size_t i = 0; i < n; ++i) {
    p[i] = (i % 3) == 0;
    q[i] = (i % 2) ? 7 : 0;  // any nonzero byte is true
  }
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::vector<uint8_t> out(n + 8, 0xab), out1(n + 8, 0xab);
    lib.run(k, {}, {p.data(), q.data(), out.data(), out1.data()});
    for (size_t i = 0; i < n; ++i) {
      bool a = p[i] != 0, b = q[i] != 0, want = false;
      const std::string& kd = kinds[k];
      if (kd.find("and") != std::string::npos)
        want = a && b;
      else if (kd.find("xor") != std::string::npos)
        want = a != b;
      else if (kd.find("or") != std::string::npos)
        want = a || b;
      else if (kd.find("not") != std::string::npos)
        want = !a;
      else
        want = a ? b : !b;
      ASSERT_EQ(out[i], want ? 1 : 0) << kd << " at " << i;
      ASSERT_EQ(out1[i], 1) << kd << " at " << i;
    }
    ASSERT_EQ(out[n], 0xab);
  }
}

TEST(CpuOps, InlineExpIsSleefBitForBit) {
  // af_exp transcribes SLEEF's expf u10 kernel; compare with SLEEF's own FMA build on bit
  // patterns spread over all of f32 (NaNs, infinities, subnormals, overflow and underflow).
  const int64_t n = 1 << 20;
  AscBuilder b("exp_bits", {n});
  b.output(b.op("exp", {b.contiguous_input()}));
  auto t = test_target();
  KernelLib lib(schedule_and_emit({&b.g}, t), t);
  using Fn = float (*)(float);
  void* libsleef = dlopen("libsleef.so.3", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libsleef, nullptr) << dlerror();
  auto sleef = reinterpret_cast<Fn>(dlsym(libsleef, "Sleef_expf1_u10purecfma"));
  ASSERT_NE(sleef, nullptr);
  if (!__builtin_cpu_supports("fma")) GTEST_SKIP() << "SLEEF's FMA build needs FMA";
  std::vector<float> x(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = static_cast<uint32_t>(i) * 4099u + 17u;
    std::memcpy(&x[i], &u, 4);
  }
  lib.run(0, {}, {x.data(), out.data()});
  for (int64_t i = 0; i < n; ++i) {
    float want = sleef(x[i]);
    ASSERT_TRUE(std::memcmp(&want, &out[i], 4) == 0 || (std::isnan(want) && std::isnan(out[i])))
        << "exp(" << x[i] << ") = " << out[i] << ", SLEEF " << want;
  }
  dlclose(libsleef);
}

/// |got - want| in units of the last place of want rounded to f32 (subnormal spacing below
/// FLT_MIN); 0 when both are NaN or the same infinity, huge when only one is.
double ulp_error(float got, double want) {
  float w = static_cast<float>(want);
  if (std::isnan(w) || std::isnan(got)) return std::isnan(w) && std::isnan(got) ? 0 : 1e30;
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0 : 1e30;
  int e = std::fabs(w) < FLT_MIN ? -126 : std::ilogb(w);
  return std::fabs(double(got) - want) / std::ldexp(1.0, e - 23);
}

TEST(CpuOps, TanhAndErfWithinTwoUlpOnEveryIsa) {
  // autofuse_cpu_math.h's tanh and erf (polynomials and the inline exp, one definition for all
  // layers) against double precision: bit patterns spread over all of f32, a dense sweep of
  // [-6, 6] (both branches and the thresholds 0.5625, 1 and 4), and the signs of zeros.
  const int64_t n = 1 << 20;
  std::vector<float> x(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = static_cast<uint32_t>(i) * 4099u + 17u;
    std::memcpy(&x[i], &u, 4);
    x[n + i] = -6.0f + 12.0f * static_cast<float>(i) / n;
  }
  const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-40f, 0.5625f, 1.0f, 4.0f};
  for (size_t i = 0; i < sizeof sp / sizeof sp[0]; ++i) x[i] = sp[i];
  target::Target host = target::Target::host_cpu();
  std::vector<target::Target> targets = {host};
  for (target::Isa isa : {target::Isa::Avx2, target::Isa::Scalar})
    if (isa < host.isa) targets.push_back(host.with_isa(isa));
  for (const target::Target& t : targets) {
    const std::string isa(target::isa_name(t.isa));
    AscBuilder b("tanh_erf_" + isa, {2 * n});
    int in = b.contiguous_input();
    b.output(b.op("tanh", {in}));
    b.output(b.op("erf", {in}));
    KernelLib lib(schedule_and_emit({&b.g}, t), t);
    std::vector<float> th(2 * n), er(2 * n);
    lib.run(0, {}, {x.data(), th.data(), er.data()});
    for (int64_t i = 0; i < 2 * n; ++i) {
      double xt = std::tanh(double(x[i])), xe = std::erf(double(x[i]));
      ASSERT_LE(ulp_error(th[i], xt), 2.0) << isa << " tanh(" << x[i] << ") = " << th[i];
      ASSERT_LE(ulp_error(er[i], xe), 2.0) << isa << " erf(" << x[i] << ") = " << er[i];
      if (x[i] == 0) {
        ASSERT_EQ(std::signbit(th[i]), std::signbit(x[i])) << isa << " tanh(-0)";
        ASSERT_EQ(std::signbit(er[i]), std::signbit(x[i])) << isa << " erf(-0)";
      }
    }
  }
}

// ---- f16 / bf16 ----

uint16_t f16_bits(float f) {
  _Float16 h = static_cast<_Float16>(f);  // IEEE round to nearest even
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float f16_value(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}
/// The value of bf16 bit pattern `b` as if the exponent were unbounded (0x7f80 -> 2^128).
double bf16_unbounded(uint32_t b) {
  double sign = (b & 0x8000u) ? -1.0 : 1.0;
  int e = static_cast<int>((b >> 7) & 0xffu), m = static_cast<int>(b & 0x7fu);
  if (e == 0) return sign * m * std::ldexp(1.0, -133);
  return sign * (1.0 + m / 128.0) * std::ldexp(1.0, e - 127);
}
/// Reference bf16 rounding from first principles: the nearer of the two neighbours, ties to the
/// even one (overflow past the largest finite value gives inf); NaN -> 0x7fc0 (c10::BFloat16).
uint16_t bf16_bits(float f) {
  if (std::isnan(f)) return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return static_cast<uint16_t>(u >> 16);  // inf
  uint32_t lo = u >> 16, hi = lo + 1;  // toward zero, away from zero
  double dlo = std::fabs(double(f) - bf16_unbounded(lo));
  double dhi = std::fabs(bf16_unbounded(hi) - double(f));
  return static_cast<uint16_t>((dlo < dhi || (dlo == dhi && (lo & 1) == 0)) ? lo : hi);
}
float bf16_value(uint16_t u) {
  uint32_t w = static_cast<uint32_t>(u) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

/// f32 <-> f16/bf16 conversions of target `t` against first principles, bit for bit.
void check_low_precision_conversions(const target::Target& t) {
  const int64_t n = 1000 + 3;
  // k0: f32 -> f16 and bf16 stores; and the round trip kept in registers (cast, then compute).
  AscBuilder a("lp_out", {n});
  int x = a.contiguous_input();
  a.output(a.cast(x, DType::F16), DType::F16);
  a.output(a.cast(x, DType::BF16), DType::BF16);
  a.output(a.op("mul", {a.cast(a.cast(x, DType::F16), DType::F32), a.scalar(1.0)}));
  a.output(a.op("mul", {a.cast(a.cast(x, DType::BF16), DType::F32), a.scalar(1.0)}));
  // k1: f16 and bf16 inputs computed in f32, stored in the other narrow type.
  AscBuilder c("lp_in", {n});
  int h = c.contiguous_input(DType::F16), bh = c.contiguous_input(DType::BF16);
  c.output(c.cast(c.op("add", {c.cast(h, DType::F32), c.cast(bh, DType::F32)}), DType::BF16),
           DType::BF16);
  c.output(c.cast(c.op("exp", {c.cast(bh, DType::F32)}), DType::F16), DType::F16);
  KernelLib lib(schedule_and_emit({&a.g, &c.g}, t), t);

  std::vector<float> xv(n);
  for (int64_t i = 0; i < n; ++i) {  // ties, subnormals, overflow, NaN, random bit patterns
    uint32_t u = static_cast<uint32_t>(i) * 2654435761u;
    std::memcpy(&xv[i], &u, 4);
    if (i % 5 == 0) xv[i] = static_cast<float>(i) * 0.25f + 1.0f / 4096;
  }
  const float sp[] = {65504.0f, 65520.0f,  65519.0f,    1e-8f,       -6e-8f, 5.96e-8f, 2.98e-8f,
                      NAN,      -INFINITY, 1.00390625f, 1.01171875f, -0.0f,  3.0e38f,  1e-40f};
  for (size_t i = 0; i < sizeof sp / sizeof sp[0]; ++i) xv[i * 3] = sp[i];
  std::vector<uint16_t> o16(n + 8, 0xabcd), ob16(n + 8, 0xabcd);
  std::vector<float> r16(n + 8, -1.0f), rb16(n + 8, -1.0f);
  lib.run(0, {}, {xv.data(), o16.data(), ob16.data(), r16.data(), rb16.data()});
  for (int64_t i = 0; i < n; ++i) {
    uint16_t want16 = f16_bits(xv[i]), wantb = bf16_bits(xv[i]);  // denormals kept on every ISA
    if (std::isnan(xv[i])) {
      ASSERT_TRUE(std::isnan(f16_value(o16[i])) && std::isnan(r16[i])) << i;
      ASSERT_TRUE(t.avx512_bf16 ? std::isnan(bf16_value(ob16[i])) : ob16[i] == 0x7fc0) << i;
      ASSERT_TRUE(std::isnan(rb16[i])) << i;
      continue;
    }
    ASSERT_EQ(o16[i], want16) << i << ": " << xv[i];
    ASSERT_EQ(ob16[i], wantb) << i << ": " << xv[i];
    ASSERT_EQ(r16[i], f16_value(want16)) << i;
    ASSERT_EQ(rb16[i], bf16_value(wantb)) << i;
  }
  ASSERT_EQ(o16[n], 0xabcd);
  ASSERT_EQ(ob16[n], 0xabcd);
  ASSERT_EQ(r16[n], -1.0f);

  std::vector<uint16_t> hv(n), bv(n), out_b(n + 8, 0xabcd), out_h(n + 8, 0xabcd);
  for (int64_t i = 0; i < n; ++i) {
    hv[i] = f16_bits(static_cast<float>(i % 97) * 0.37f - 17.0f);
    bv[i] = bf16_bits(static_cast<float>(i % 89) * -0.11f + 4.0f);
  }
  lib.run(1, {}, {hv.data(), bv.data(), out_b.data(), out_h.data()});
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out_b[i], bf16_bits(f16_value(hv[i]) + bf16_value(bv[i]))) << i;
    float e = f16_value(out_h[i]);
    double want = std::exp(double(bf16_value(bv[i])));
    ASSERT_TRUE(close(e, want, 1e-3, 1e-5)) << i << ": " << e << " vs " << want;
  }
  ASSERT_EQ(out_b[n], 0xabcd);
  ASSERT_EQ(out_h[n], 0xabcd);
}

TEST(CpuOps, LowPrecisionConversionsBitExact) {
  check_low_precision_conversions(test_target());
}

TEST(CpuOps, Avx512Bf16ConversionsWhereSupported) {
  target::Target t = target::Target::host_cpu();
  if (t.isa != target::Isa::Avx512) GTEST_SKIP() << "host has no AVX-512";
  check_low_precision_conversions(t);  // with AVX512_BF16 where the host has it
  t.avx512_bf16 = false;
  check_low_precision_conversions(t);
}

// ---- other ISAs ----

/// A small chain over several dtypes and ops, run on `t` and checked against the reference.
void run_isa_check(const target::Target& t, bool execute) {
  const int64_t n = 77;
  AscBuilder b("isa_" + std::string(target::isa_name(t.isa)), {n});
  int x = b.contiguous_input(), h = b.contiguous_input(DType::F16);
  int s = b.op("sigmoid", {b.op("add", {x, b.cast(h, DType::F32)})});
  b.output(b.op("round", {b.op("mul", {s, b.scalar(10.0)})}));
  b.output(b.op("gt", {x, b.scalar(0.0)}, DType::Bool), DType::Bool);
  b.output(b.cast(b.op("maximum", {x, b.op("tanh", {x})}), DType::BF16), DType::BF16);
  codegen::EmittedSource src = schedule_and_emit({&b.g}, t);
  KernelLib lib(src, t);  // compiles (and loads) even when the host cannot execute it
  if (!execute) return;
  std::vector<float> xv(n);
  std::vector<uint16_t> hv(n);
  for (int64_t i = 0; i < n; ++i) {
    xv[i] = static_cast<float>(i) * 0.173f - 6.0f;
    hv[i] = f16_bits(static_cast<float>(i % 7) * 0.5f);
  }
  xv[3] = NAN;
  std::vector<float> o0(n + 4, -1.0f);
  std::vector<uint8_t> o1(n + 4, 0xab);
  std::vector<uint16_t> o2(n + 4, 0xabcd);
  lib.run(0, {}, {xv.data(), hv.data(), o0.data(), o1.data(), o2.data()});
  for (int64_t i = 0; i < n; ++i) {
    double sg = 1.0 / (1.0 + std::exp(-(double(xv[i]) + f16_value(hv[i]))));
    double r = std::nearbyint(static_cast<float>(sg) * 10.0f);
    if (std::isnan(xv[i])) {
      ASSERT_TRUE(std::isnan(o0[i]));
      ASSERT_EQ(o2[i], 0x7fc0);
    } else {
      ASSERT_NEAR(o0[i], r, 1.0) << i;  // 1-ULP sigmoid error may flip a half
      float mx = std::max(xv[i], static_cast<float>(std::tanh(double(xv[i]))));
      ASSERT_TRUE(close(bf16_value(o2[i]), mx, 8e-3, 1e-6)) << i;
    }
    ASSERT_EQ(o1[i], xv[i] > 0 ? 1 : 0) << i;
  }
  ASSERT_EQ(o0[n], -1.0f);
  ASSERT_EQ(o1[n], 0xab);
  ASSERT_EQ(o2[n], 0xabcd);
}

TEST(CpuOps, ScalarIsaRuns) {
  run_isa_check(target::Target::host_cpu().with_isa(target::Isa::Scalar), true);
}

TEST(CpuOps, Avx2IsaRuns) {
  target::Target host = target::Target::host_cpu();
  if (!host.supports_isa(target::Isa::Avx2)) GTEST_SKIP() << "host has no AVX2";
  run_isa_check(host.with_isa(target::Isa::Avx2), true);
}

TEST(CpuOps, Avx512IsaCompilesAndRunsWhereSupported) {
  target::Target host = target::Target::host_cpu();
  run_isa_check(host.with_isa(target::Isa::Avx512), host.supports_isa(target::Isa::Avx512));
}

}  // namespace
}  // namespace af
