// codegen::evaluate_tiling (autofuse-opt --tiling) agrees with the compiled tiling functions:
// the same TilingData for tiny, odd, large and long-row sizes on 1, 2 and 16 cores.
#include <gtest/gtest.h>

#include <cstring>

#include "asc_test_util.h"
#include "codegen/cpu/tiling.h"
#include "fusion/fuse.h"
#include "fusion/lower.h"
#include "graph/parser.h"
#include "pipeline/pipeline.h"

namespace af {
namespace {

constexpr const char* kGraphs = R"(graph @ew(s0 = 64, s1 = 1000) {
  %x = input() {index = 0} : f32[s0, s1]
  %0 = sigmoid(%x) : f32[s0, s1]
  return %0
}
graph @ln(s0 = 8, s1 = 4096) {
  %x = input() {index = 0} : f32[s0, s1]
  %m = reduce_mean(%x) {dims = [1], keepdim = 1} : f32[s0, 1]
  %mb = broadcast(%m) : f32[s0, s1]
  %d = sub(%x, %mb) : f32[s0, s1]
  return %d
}
graph @outer(s0 = 8, s1 = 64) {
  %x = input() {index = 0} : f32[s0, s1]
  %m = reduce_sum(%x) {dims = [0], keepdim = 0} : f32[s1]
  return %m
}
)";

TEST(TilingEval, MatchesTheCompiledTilingFunctions) {
  target::Target t = asc_test::test_target();
  for (const graph::Graph& g : graph::parse_graphs(kGraphs)) {
    fusion::FusedGraph fg = fusion::fuse(fusion::lower(g));
    schedule_kernels(fg, t);
    ASSERT_EQ(fg.num_kernels(), 1) << g.name;
    const ascir::AscGraph& k = fg.nodes.at(0).kernel;
    asc_test::KernelLib lib(codegen::emit_cpu_source({&k}, t), t);
    const codegen::EmittedKernel& ek = lib.source().kernels.at(0);
    auto tiling = reinterpret_cast<af_tiling_fn>(lib.symbol(ek.name + "_tiling"));
    ASSERT_NE(tiling, nullptr);
    ASSERT_EQ(ek.symbols, (std::vector<std::string>{"s0", "s1"}));
    for (auto [s0, s1] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {1, 7}, {3, 1000}, {4096, 4096}, {2, 50257}, {1000, 1000}, {0, 5}}) {
      for (int64_t cores : {1, 2, 16}) {
        alignas(64) unsigned char td[AF_MAX_TILING_DATA_BYTES];
        std::memset(td, 0xcd, sizeof td);
        std::vector<int64_t> symbols = {s0, s1};
        af_target target{cores, t.ub_bytes, t.align_bytes, t.vector_bytes};
        tiling(symbols.data(), &target, td);
        int64_t f[7];  // header (block_dim, key), s0, s1, tile, block, stream_stores
        std::memcpy(f, td, sizeof f);
        codegen::TilingChoice c =
            codegen::evaluate_tiling(k, {{"s0", s0}, {"s1", s1}}, cores, schedule::vector_lanes(t));
        std::string at = g.name + " s0=" + std::to_string(s0) + " s1=" + std::to_string(s1) +
                         " cores=" + std::to_string(cores);
        EXPECT_EQ(c.block_dim, f[0]) << at;
        EXPECT_EQ(c.tiling_key, f[1]) << at;
        EXPECT_EQ(c.tile, f[4]) << at;
        EXPECT_EQ(c.block, f[5]) << at;
        EXPECT_EQ(c.stream_stores, f[6]) << at;
      }
    }
  }
}

}  // namespace
}  // namespace af
