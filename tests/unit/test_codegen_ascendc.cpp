// Tests of the Ascend C emitter (codegen/ascendc/emitter.h): emitted kernels built with g++
// against ascendc_emu run every block with no device-rule violation and compute what the
// reference computes; kernels it cannot print say why; the tiling function keeps every tile
// inside the UB, 32-byte aligned, for random shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "asc_test_util.h"
#include "backends/registry.h"
#include "codegen/ascendc/emitter.h"
#include "runtime/include/autofuse_ascendc_tiling.h"

namespace af {
namespace {

using asc_test::AscBuilder;
using asc_test::KernelLib;

/// Atlas A2 as the tests use it: 184 KB of usable UB, 48 vector cores.
target::Target a2() {
  return backends::configure_target(target::Target::host_cpu(), "ascendc");
}

/// The emitted source of `g`, scheduled, built against ascendc_emu.
struct AscendLib {
  explicit AscendLib(AscBuilder& b) : lib(emit(b), flags(), {}) {}
  explicit AscendLib(const codegen::EmittedSource& src) : lib(src, flags(), {}) {}
  static codegen::EmittedSource emit(AscBuilder& b) {
    schedule::schedule_kernel(b.g, a2());
    return codegen::emit_ascendc_source({{b.g.name, {&b.g}, {}, {}, 0, 0}}, a2());
  }
  static std::vector<std::string> flags() {
    std::vector<std::string> f = codegen::ascendc_compile_flags(a2());
    f.push_back("-I" AUTOFUSE_SOURCE_INCLUDE_DIR "/ascendc_emu");
    return f;
  }
  /// Runs every block; returns the emulation's violations (with their report function).
  std::vector<std::string> run(const std::vector<int64_t>& symbols,
                               const std::vector<void*>& args) {
    using Take = int64_t (*)(char*, int64_t);
    lib.run(0, symbols, args, 48);
    auto take = reinterpret_cast<Take>(lib.symbol("af_ascendc_take_violations"));
    if (!take) return {"af_ascendc_take_violations missing"};
    std::vector<char> buf(1 << 16);
    if (take(buf.data(), static_cast<int64_t>(buf.size())) == 0) return {};
    return {std::string(buf.data())};
  }
  KernelLib lib;
};

float bf16_round(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  u &= 0xffff0000u;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(AscendcEmitter, SigmoidScaleBiasWithARowBroadcastAndTails) {
  // y = sigmoid(x) * gamma + 0.5 over [5, 200]: gamma [200] read with stride 0 across rows,
  // 200 floats per row (800 B: a DataCopy) and a [5, 37] case (148 B: DataCopyPad tails).
  for (int64_t cols : {200, 37}) {
    AscBuilder b("ssb", {5, cols});
    int x = b.contiguous_input();
    int gamma = b.input(DType::F32, {0, 1});
    int s = b.op("sigmoid", {x});
    b.output(b.op("add", {b.op("mul", {s, b.broadcast(gamma)}), b.scalar(0.5)}));
    AscendLib lib(b);
    EXPECT_NE(lib.lib.source().code.find("__global__ __aicore__ void ssb("), std::string::npos);
    std::vector<float> xs(5 * cols), gs(cols), y(5 * cols, -7.f);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37f * i) * 4;
    for (size_t i = 0; i < gs.size(); ++i) gs[i] = 0.01f * i - 1;
    auto v = lib.run({}, {xs.data(), gs.data(), y.data()});
    EXPECT_TRUE(v.empty()) << v.front();
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        float want = 1.f / (1.f + std::exp(-xs[r * cols + c])) * gs[c] + 0.5f;
        ASSERT_NEAR(y[r * cols + c], want, 1e-6f * (1 + std::fabs(want))) << r << "," << c;
      }
  }
}

TEST(AscendcEmitter, ColumnBroadcastAndSymbolicSizes) {
  // y[r, c] = x[r, c] * s[r] with s read with stride 0 along the vectorized axis (one scalar
  // per row, Duplicate), over symbolic [R, C].
  AscBuilder b("colb", {sym::Expr::symbol("R"), sym::Expr::symbol("C")});
  int x = b.contiguous_input();
  int s = b.input(DType::F32, {1, 0});
  b.output(b.op("mul", {x, b.broadcast(s)}));
  AscendLib lib(b);
  for (auto [R, C] : {std::pair<int64_t, int64_t>{3, 100}, {97, 5}, {1, 4100}}) {
    std::vector<float> xs(R * C), ss(R), y(R * C);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5f * i;
    for (size_t i = 0; i < ss.size(); ++i) ss[i] = 1.f + i;
    auto v = lib.run({C, R}, {xs.data(), ss.data(), y.data()});
    EXPECT_TRUE(v.empty()) << v.front();
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) ASSERT_EQ(y[r * C + c], xs[r * C + c] * ss[r]);
  }
}

TEST(AscendcEmitter, Bf16InAndOutComputesInF32) {
  AscBuilder b("bf", {4, 300});
  int x = b.cast(b.contiguous_input(DType::BF16), DType::F32);
  int e = b.op("exp", {b.op("neg", {x})});
  b.output(b.cast(b.op("mul", {e, x}), DType::BF16), DType::BF16);
  AscendLib lib(b);
  std::vector<uint16_t> xs(1200), y(1200);
  std::vector<float> xf(1200);
  for (size_t i = 0; i < xs.size(); ++i) {
    xf[i] = bf16_round(std::cos(0.1f * i) * 3);
    uint32_t u;
    std::memcpy(&u, &xf[i], 4);
    xs[i] = static_cast<uint16_t>(u >> 16);
  }
  auto v = lib.run({}, {xs.data(), y.data()});
  EXPECT_TRUE(v.empty()) << v.front();
  for (size_t i = 0; i < xs.size(); ++i) {
    uint32_t u = uint32_t{y[i]} << 16;
    float got;
    std::memcpy(&got, &u, 4);
    ASSERT_EQ(got, bf16_round(std::exp(-xf[i]) * xf[i])) << i;
  }
}

TEST(AscendcEmitter, GeluBothFormsAndSiluMatchTheMath) {
  // Composed from the basic vector API (the emulation computes each call in f32): within
  // fp32's assert_close tolerance of the double-precision formula over [-12, 12].
  for (std::string approximate : {"none", "tanh", "silu"}) {
    AscBuilder b("act", {3, 700});
    int x = b.contiguous_input();
    if (approximate == "silu")
      b.output(b.op("silu", {x}));
    else
      b.output(b.op("gelu", {x}, DType::F32, {{"approximate", approximate}}));
    AscendLib lib(b);
    std::vector<float> xs(2100), y(2100);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = -12.f + 24.f * i / 2099.f;
    auto v = lib.run({}, {xs.data(), y.data()});
    EXPECT_TRUE(v.empty()) << v.front();
    for (size_t i = 0; i < xs.size(); ++i) {
      double t = xs[i], want;
      if (approximate == "none")
        want = 0.5 * t * (1 + std::erf(t / std::sqrt(2.0)));
      else if (approximate == "tanh")
        want = 0.5 * t * (1 + std::tanh(std::sqrt(2 / M_PI) * (t + 0.044715 * t * t * t)));
      else
        want = t / (1 + std::exp(-t));
      ASSERT_NEAR(y[i], want, 1e-5 + 1.3e-6 * std::fabs(want)) << approximate << " x=" << t;
    }
  }
}

TEST(AscendcEmitter, TheAdvancedMathRoundingAndClampMatchLibm) {
  // Tanh/Erf/Sin/Cos/Power from the advanced API with their temporary buffers (the emulation
  // computes libm's value in f32), rounding by Cast f32 -> f32, clamp by Max/Min: each within
  // fp32's assert_close tolerance of the double-precision function, no device rule broken.
  struct Case {
    const char* op;
    std::function<double(double)> f;
  };
  const std::vector<Case> cases = {
      {"tanh", [](double t) { return std::tanh(t); }},
      {"erf", [](double t) { return std::erf(t); }},
      {"sin", [](double t) { return std::sin(t); }},
      {"cos", [](double t) { return std::cos(t); }},
      {"exp2", [](double t) { return std::exp2(t); }},
      {"floor", [](double t) { return std::floor(t); }},
      {"round", [](double t) { return std::nearbyint(t); }},
      {"trunc", [](double t) { return std::trunc(t); }},
  };
  for (size_t first = 0; first < cases.size(); first += 4) {  // 4 outputs a kernel
    AscBuilder b("m", {3, 700});
    int x = b.contiguous_input();
    for (size_t c = first; c < first + 4; ++c) b.output(b.op(cases[c].op, {x}));
    AscendLib lib(b);
    std::vector<float> xs(2100);
    std::vector<std::vector<float>> ys(4, std::vector<float>(2100));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = -12.f + 24.f * i / 2099.f;
    xs[1050] = 2.5f;  // a tie: round to even
    auto v = lib.run({}, {xs.data(), ys[0].data(), ys[1].data(), ys[2].data(), ys[3].data()});
    EXPECT_TRUE(v.empty()) << v.front();
    for (size_t c = first; c < first + 4; ++c)
      for (size_t i = 0; i < xs.size(); ++i) {
        double want = cases[c].f(xs[i]);
        ASSERT_NEAR(ys[c - first][i], want, 1e-5 + 1.3e-6 * std::fabs(want))
            << cases[c].op << " x=" << xs[i];
      }
  }
  AscBuilder b("clamp", {2, 300});
  int x = b.contiguous_input(), lo = b.contiguous_input(), hi = b.contiguous_input();
  b.output(b.op("clamp", {x, lo, hi}));
  AscendLib lib(b);
  std::vector<float> xs(600), los(600, -1.f), his(600, 2.f), y(600);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = -3.f + 6.f * i / 599.f;
  xs[7] = NAN;
  auto v = lib.run({}, {xs.data(), los.data(), his.data(), y.data()});
  EXPECT_TRUE(v.empty()) << v.front();
  for (size_t i = 0; i < xs.size(); ++i)
    if (i == 7)
      ASSERT_TRUE(std::isnan(y[i]));
    else
      ASSERT_EQ(y[i], std::min(std::max(xs[i], -1.f), 2.f)) << i;
}

TEST(AscendcEmitter, ABrokenRuleInTheSourceIsReported) {
  // The kernel with its copy-in turned into a plain DataCopy (the two contiguous rows merge
  // into one axis of 74 floats, tiled 64 + 10 so that both blocks work; the tail's 40 B): the
  // emulation reports it, naming the kernel, the block and the rule.
  AscBuilder b("tail", {2, 37});
  b.output(b.op("exp", {b.contiguous_input()}));
  codegen::EmittedSource src = AscendLib::emit(b);
  const std::string from = "af_copy_in(t, gm0[o0], n);";
  size_t at = src.code.find(from);
  ASSERT_NE(at, std::string::npos) << src.code;
  src.code.replace(at, from.size(), "AscendC::DataCopy(t, gm0[o0], static_cast<uint32_t>(n));");
  AscendLib lib(src);
  std::vector<float> xs(74, 1.f), y(74);
  auto v = lib.run({}, {xs.data(), y.data()});
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v[0].find("kernel tail block 1"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("40 B is not a multiple of 32 B"), std::string::npos) << v[0];
}

TEST(AscendcEmitter, WhatItCannotPrintIsAReason) {
  AscBuilder b("t", {4, 64});
  b.output(b.op("sign", {b.contiguous_input()}));
  schedule::schedule_kernel(b.g, a2());
  std::string why = codegen::ascendc_reason(b.g, a2());
  EXPECT_NE(why.find("no Ascend C mapping"), std::string::npos) << why;
  EXPECT_THROW(codegen::emit_ascendc_source({{b.g.name, {&b.g}, {}, {}, 0, 0}}, a2()),
               CompileError);
}

TEST(AscendcTiling, EveryTileFitsTheUbAndIsAligned) {
  std::mt19937_64 rng(7);
  const int64_t ub = 184 * 1024;
  for (int i = 0; i < 1000; ++i) {
    int64_t a = 1 + static_cast<int64_t>(rng() % 100000),
            b = 1 + static_cast<int64_t>(rng() % (i % 2 ? 5000 : 60));
    int64_t bpe = 4 + static_cast<int64_t>(rng() % 120) * 2;
    int64_t tile = 0, block = 0, block_dim = 0;
    af_ascendc_tiling_elementwise(a, b, bpe, ub, 48, &tile, &block, &block_dim);
    // Every core gets a tile while 64-element tiles would give it one.
    ASSERT_GE(b * ((a + tile - 1) / tile), std::min<int64_t>(48, b * ((a + 63) / 64)))
        << a << " " << b << " " << bpe;
    ASSERT_EQ(tile % AF_ASCENDC_REPEAT, 0);
    ASSERT_LE(tile * bpe, ub) << a << " " << b << " " << bpe;
    ASSERT_GE(block_dim, 1);
    ASSERT_LE(block_dim, 48);
    ASSERT_GE(block * block_dim, b * ((a + tile - 1) / tile));        // every tile has a block
    ASSERT_LT((block_dim - 1) * block, b * ((a + tile - 1) / tile));  // no idle block
  }
}

TEST(AscendcTiling, WholeRowsFitTheUbOrAreStreamed) {
  std::mt19937_64 rng(11);
  const int64_t ub = 184 * 1024 - 4 * 256;  // less four row values
  for (int i = 0; i < 1000; ++i) {
    int64_t a = 1 + static_cast<int64_t>(rng() % (i % 2 ? 8000 : 200000)),
            b = 1 + static_cast<int64_t>(rng() % 5000);
    int64_t bpe = 4 + static_cast<int64_t>(rng() % 60) * 2;
    int64_t tile = 0, block = 0, block_dim = 0, key = -1;
    af_ascendc_tiling_rows(a, b, bpe, ub, 48, &tile, &block, &block_dim, &key);
    int64_t row = (a + AF_ASCENDC_REPEAT - 1) / AF_ASCENDC_REPEAT * AF_ASCENDC_REPEAT;
    ASSERT_EQ(key, row * bpe > ub ? 1 : 0) << a << " " << bpe;  // streamed iff it cannot fit
    if (key == 0) {
      ASSERT_EQ(tile, row);
    } else {
      ASSERT_GT((tile + AF_ASCENDC_REPEAT) * bpe, ub);  // the largest that fits
    }
    ASSERT_EQ(tile % AF_ASCENDC_REPEAT, 0);
    ASSERT_GT(tile, 0);
    ASSERT_LE(tile * bpe, ub);
    ASSERT_GE(block_dim, 1);
    ASSERT_LE(block_dim, 48);
    ASSERT_GE(block * block_dim, b);        // every row has a block
    ASSERT_LT((block_dim - 1) * block, b);  // no idle block
  }
}

}  // namespace
}  // namespace af
