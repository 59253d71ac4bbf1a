// The reduction tiling solver (af_tiling_reduce, autofuse_cpu_tiling.h): the TilingCase from the
// row buffer, and rows per block / block_dim from the cost model, for the shapes that decide it.
#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/include/autofuse_cpu_tiling.h"

namespace af {
namespace {

/// What af_tiling_reduce picks.
struct ReduceChoice {
  int64_t tile = 0, block = 0, block_dim = 0, key = 0;
};

/// A reduce_inner kernel of `passes` passes over rows x row_len f32, 8 row-buffer bytes per
/// element in a 64 KiB buffer; `work` is the per-element work (x1000) of both cases, except
/// that the split case reads its input once per pass.
ReduceChoice reduce(int64_t rows, int64_t row_len, int64_t cores, int64_t work = 1000,
                    int64_t passes = 2) {
  af_target t{cores, 0, 0, 32};
  ReduceChoice c;
  af_tiling_reduce(8, rows, row_len, 8, 64 << 10, 1, passes, work, work * passes, &t, &c.tile,
                   &c.block, &c.block_dim, &c.key);
  return c;
}

TEST(ReduceTiling, OneCoreOrOneRowRunsOneBlockOfAllRows) {
  for (auto [rows, len] : {std::pair<int64_t, int64_t>{4096, 4096}, {1, 50257}, {7, 3}}) {
    ReduceChoice c = reduce(rows, len, 1);
    EXPECT_EQ(c.block_dim, 1) << rows << "x" << len;
    EXPECT_EQ(c.block, rows) << rows << "x" << len;
  }
  EXPECT_EQ(reduce(1, 1 << 20, 16).block_dim, 1);  // one row: never split across blocks
  ReduceChoice empty = reduce(0, 512, 2);          // no rows: one empty block
  EXPECT_EQ(empty.block_dim, 1);
  EXPECT_EQ(empty.block, 1);
}

TEST(ReduceTiling, TheRowBufferDecidesTheCaseAndTheTileIsWholeVectors) {
  ReduceChoice fits = reduce(2, 8192, 2);  // 64 KiB of row buffer: all_load
  EXPECT_EQ(fits.key, 0);
  EXPECT_EQ(fits.tile, 512);                // at most AF_REDUCE_TILE_VECTORS (64) vectors
  ReduceChoice split = reduce(2, 8193, 2);  // one element more: split
  EXPECT_EQ(split.key, 1);
  EXPECT_EQ(reduce(3, 7, 2).tile, 8);  // an odd row: one masked vector
}

TEST(ReduceTiling, SmallWorkStaysOnOneThreadLargeWorkUsesEveryCore) {
  // 32 rows of 512 cost less than the launch of a second block; 64 rows cost more.
  EXPECT_EQ(reduce(32, 512, 2).block_dim, 1);
  ReduceChoice c = reduce(64, 512, 2);
  EXPECT_EQ(c.block_dim, 2);
  EXPECT_EQ(c.block, 32);
  c = reduce(1000, 1000, 16);
  EXPECT_EQ(c.block_dim, 16);
  EXPECT_EQ(c.block, 63);  // 16 blocks of 63 rows (the last one 55)
}

TEST(ReduceTiling, CostlierElementsGoParallelAtFewerRows) {
  // The same 24 rows of 512: a plain row sum stays on one thread; a row of exp/erf work (an
  // element costing 4 copies) is worth a second block.
  EXPECT_EQ(reduce(24, 512, 2, 1000).block_dim, 1);
  EXPECT_EQ(reduce(24, 512, 2, 4000).block_dim, 2);
  // A split reduction reads its row once per pass, so its rows cost more than all_load's.
  int64_t len = 8200;  // just past the row buffer
  EXPECT_EQ(reduce(2, 8192, 2, 1000, 1).block_dim, 1);
  EXPECT_EQ(reduce(2, len, 2, 1000, 4).block_dim, 2);
}

TEST(ReduceTiling, BlocksNeverOutnumberRowsOrCoresAndCoverEveryRow) {
  for (int64_t rows : {2, 3, 5, 17, 1000}) {
    for (int64_t cores : {2, 3, 16}) {
      ReduceChoice c = reduce(rows, 1 << 16, cores);
      EXPECT_LE(c.block_dim, rows) << rows << " rows, " << cores << " cores";
      EXPECT_LE(c.block_dim, cores) << rows << " rows, " << cores << " cores";
      EXPECT_GE(c.block * c.block_dim, rows) << rows << " rows, " << cores << " cores";
      EXPECT_LT(c.block * (c.block_dim - 1), rows) << rows << " rows, " << cores << " cores";
    }
  }
  // 3 long rows on 2 cores: blocks of 2 and 1 rows (the slowest block has 2 rows, not 3).
  ReduceChoice c = reduce(3, 1 << 16, 2);
  EXPECT_EQ(c.block, 2);
  EXPECT_EQ(c.block_dim, 2);
}

}  // namespace
}  // namespace af
