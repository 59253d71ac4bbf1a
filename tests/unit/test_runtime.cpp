// Tests of the runtime: the thread pool, kernel launch and loaded modules.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "jit/module.h"
#include "runtime/launch.h"
#include "runtime/openmp_team.h"
#include "runtime/thread_pool.h"
#include "runtime/tuning.h"
#include "support/error.h"

namespace af::runtime {
namespace {

/// Waits (bounded) until `count` reaches `target`; false on timeout.
bool wait_for(const std::atomic<int>& count, int target) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (count.load() < target)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

TEST(ThreadPool, RunsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      ThreadPool::global().parallel_for(n, threads, [&](int64_t i) { hits[i].fetch_add(1); });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[i].load(), 1) << "threads=" << threads << " n=" << n << " i=" << i;
    }
  }
}

TEST(ThreadPool, SerialCallsRunInlineOnTheCaller) {
  auto me = std::this_thread::get_id();
  std::vector<std::thread::id> seen;  // no lock needed: inline calls only
  ThreadPool::global().parallel_for(1, 8,
                                    [&](int64_t) { seen.push_back(std::this_thread::get_id()); });
  ThreadPool::global().parallel_for(5, 1,
                                    [&](int64_t) { seen.push_back(std::this_thread::get_id()); });
  ASSERT_EQ(seen.size(), 6u);
  for (auto id : seen) EXPECT_EQ(id, me);
}

TEST(ThreadPool, RunsOnDistinctThreadsIncludingTheCaller) {
  // Every index waits until all four are running at once: only four threads can finish this.
  std::atomic<int> arrived{0};
  std::atomic<bool> timed_out{false};
  std::mutex mu;
  std::set<std::thread::id> ids;
  ThreadPool::global().parallel_for(4, 4, [&](int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    if (!wait_for(arrived, 4)) timed_out = true;
  });
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_TRUE(ids.count(std::this_thread::get_id()));
  EXPECT_GE(ThreadPool::global().num_workers(), 3);
}

TEST(ThreadPool, NestedCallsRunInline) {
  std::atomic<int64_t> sum{0};
  ThreadPool::global().parallel_for(4, 4, [&](int64_t i) {
    ThreadPool::global().parallel_for(10, 4, [&](int64_t j) { sum.fetch_add(i * 10 + j); });
  });
  EXPECT_EQ(sum.load(), 780);  // sum of 0..39
}

TEST(ThreadPool, ConcurrentCallersEachGetTheirWork) {
  auto body = [](int64_t seed, int64_t* out) {
    for (int rep = 0; rep < 200; ++rep) {
      std::atomic<int64_t> sum{0};
      ThreadPool::global().parallel_for(64, 3, [&](int64_t i) { sum.fetch_add(i + seed); });
      if (sum.load() != 2016 + 64 * seed) {
        *out = sum.load();
        return;
      }
    }
    *out = -1;
  };
  int64_t a = 0, b = 0;
  std::thread t(body, 1000, &b);
  body(0, &a);
  t.join();
  EXPECT_EQ(a, -1);
  EXPECT_EQ(b, -1);
}

TEST(ThreadPool, ExceptionsPropagateAndThePoolSurvives) {
  std::atomic<int> ran{0};
  EXPECT_THROW(ThreadPool::global().parallel_for(100, 3,
                                                 [&](int64_t i) {
                                                   ran.fetch_add(1);
                                                   if (i == 5) throw std::runtime_error("block 5");
                                                 }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
  std::atomic<int> hits{0};
  ThreadPool::global().parallel_for(100, 3, [&](int64_t) { hits.fetch_add(1); });
  EXPECT_EQ(hits.load(), 100);
}

TEST(ThreadPool, LocalPoolStartsWorkersLazilyAndJoinsThem) {
  std::atomic<int> hits{0};
  {
    ThreadPool pool;
    EXPECT_EQ(pool.num_workers(), 0);
    pool.parallel_for(10, 1, [&](int64_t) { hits.fetch_add(1); });
    EXPECT_EQ(pool.num_workers(), 0);
    pool.parallel_for(10, 3, [&](int64_t) { hits.fetch_add(1); });
    EXPECT_EQ(pool.num_workers(), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the workers sleep
    pool.parallel_for(10, 3, [&](int64_t) { hits.fetch_add(1); });
  }
  EXPECT_EQ(hits.load(), 30);
}

TEST(ThreadPool, WorksInAForkedChild) {
  ThreadPool::global().parallel_for(8, 2, [](int64_t) {});  // parent has workers
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a hang fails the test instead of blocking it
    std::atomic<int> hits{0};
    ThreadPool::global().parallel_for(100, 3, [&](int64_t) { hits.fetch_add(1); });
    _exit(hits.load() == 100 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---- launch: a hand-written kernel in this binary ----

struct TestTiling {
  af_tiling_header h;
  af_target seen;  // what the tiling function was given
  int64_t n;
};

std::atomic<int> g_block_runs[64];
bool g_aligned = true;

extern "C" void test_tiling(const int64_t* symbols, const af_target* target, void* data) {
  auto* td = static_cast<TestTiling*>(data);
  td->seen = *target;
  td->n = symbols[0];
  td->h.block_dim = symbols[1];
  td->h.tiling_key = 7;
}

extern "C" void test_kernel(void* const* args, const void* data, int64_t block) {
  auto* td = static_cast<const TestTiling*>(data);
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0) g_aligned = false;
  auto* out = static_cast<TestTiling*>(args[0]);
  if (block == 0) *out = *td;
  g_block_runs[block].fetch_add(1);
}

extern "C" void unset_tiling(const int64_t*, const af_target*, void*) {}

TEST(Launch, RunsEveryBlockOnceWithTheTargetItWasGiven) {
  target::Target t;
  t.ub_bytes = 12345;
  t.align_bytes = 64;
  t.vector_bytes = 64;
  for (int threads : {1, 2, 5}) {
    for (int64_t blocks : {0, 1, 3, 64}) {
      for (auto& r : g_block_runs) r = 0;
      TestTiling out{};
      void* args[] = {&out};
      int64_t symbols[] = {99, blocks};
      launch(test_tiling, test_kernel, args, symbols, threads, t);
      for (int64_t b = 0; b < 64; ++b)
        ASSERT_EQ(g_block_runs[b].load(), b < blocks ? 1 : 0)
            << "threads=" << threads << " blocks=" << blocks << " b=" << b;
      if (blocks == 0) continue;
      EXPECT_EQ(out.seen.cores, threads);
      EXPECT_EQ(out.seen.ub_bytes, 12345);
      EXPECT_EQ(out.seen.align_bytes, 64);
      EXPECT_EQ(out.seen.vector_bytes, 64);
      EXPECT_EQ(out.n, 99);
      EXPECT_EQ(out.h.tiling_key, 7);
    }
  }
  EXPECT_TRUE(g_aligned);
}

TEST(Launch, RejectsAMissingOrNegativeBlockDim) {
  TestTiling out{};
  void* args[] = {&out};
  int64_t symbols[] = {1, -2};
  EXPECT_THROW(launch(test_tiling, test_kernel, args, symbols, 2, target::Target{}), CompileError);
  try {
    launch(unset_tiling, test_kernel, args, symbols, 2, target::Target{});
    ADD_FAILURE() << "no throw";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("block_dim -1"), std::string::npos) << e.what();
  }
}

TEST(Launch, ATunedBudgetReplacesTheTargetsAndPlanTilingRunsNoKernel) {
  target::Target t;
  t.ub_bytes = 12345;
  TestTiling out{};
  void* args[] = {&out};
  int64_t symbols[] = {5, 1};
  launch(test_tiling, test_kernel, args, symbols, 1, t, 4096);
  EXPECT_EQ(out.seen.ub_bytes, 4096);
  for (auto& r : g_block_runs) r = 0;
  int64_t three[] = {5, 3};
  af_tiling_header h = plan_tiling(test_tiling, three, 0, t);
  EXPECT_EQ(h.block_dim, 3);
  EXPECT_EQ(h.tiling_key, 7);
  EXPECT_EQ(g_block_runs[0].load(), 0);
  int64_t bad[] = {5, -1};
  EXPECT_THROW(plan_tiling(test_tiling, bad, 2, t), CompileError);
}

// ---- Tuning: shape buckets and the per-kernel cache of choices ----

TEST(Tuning, BucketsAreBitLengths) {
  EXPECT_EQ(bucket_of(0), 0);
  EXPECT_EQ(bucket_of(-3), 0);
  EXPECT_EQ(bucket_of(1), 1);
  EXPECT_EQ(bucket_of(5), 3);
  EXPECT_EQ(bucket_of(7), 3);
  EXPECT_EQ(bucket_of(8), 4);
  EXPECT_EQ(bucket_of(int64_t{1} << 40), 41);
  int64_t a[] = {7, 300}, b[] = {5, 300};
  target::Target t;
  EXPECT_EQ(tuning_key("k", t, 2, a, 2), tuning_key("k", t, 2, b, 2));
  EXPECT_NE(tuning_key("k", t, 2, a, 2), tuning_key("k", t, 1, a, 2));
}

TEST(Tuning, KernelCacheFindsByThreadsAndBucketUpToItsCapacity) {
  KernelTuningCache cache;
  int64_t seven[] = {7, 64}, five[] = {5, 64}, nine[] = {9, 64};
  EXPECT_FALSE(cache.find(2, seven, 2));
  cache.put(2, seven, 2, TuneChoice{1, 8192, 10});
  ASSERT_TRUE(cache.find(2, five, 2));  // same bucket
  EXPECT_EQ(cache.find(2, five, 2)->cores, 1);
  EXPECT_EQ(cache.find(2, five, 2)->ub_bytes, 8192);
  EXPECT_FALSE(cache.find(2, nine, 2));   // another bucket
  EXPECT_FALSE(cache.find(1, seven, 2));  // another thread count
  for (int64_t i = 0; i < 2 * KernelTuningCache::kCapacity; ++i) {
    int64_t s[] = {int64_t{1} << (i % 60), i};
    cache.put(1, s, 2, TuneChoice{2, 4096, 1});  // past the capacity: dropped, never a crash
  }
  EXPECT_TRUE(cache.find(2, seven, 2));
  int64_t many[KernelTuningCache::kMaxSymbols + 1] = {};
  cache.put(2, many, KernelTuningCache::kMaxSymbols + 1, TuneChoice{1, 4096, 1});
  EXPECT_FALSE(cache.find(2, many, KernelTuningCache::kMaxSymbols + 1));  // the table's job
}

/// A tiling function that ignores the target: every candidate gets the same TilingData.
extern "C" void target_blind_tiling(const int64_t* symbols, const af_target*, void* data) {
  auto* td = static_cast<TestTiling*>(data);
  td->n = symbols[0];
  td->h.block_dim = symbols[1];
  td->h.tiling_key = 7;
}

TEST(Tuning, OnlyDistinctTilingsAreTimed) {
  target::Target t;
  t.ub_bytes = 65536;
  TestTiling out{};
  void* args[] = {&out};
  int64_t symbols[] = {5, 2};
  // Every candidate target gives the same TilingData: nothing to measure, the untuned choice.
  for (auto& r : g_block_runs) r = 0;
  TuneChoice c = measure_tilings(target_blind_tiling, test_kernel, args, symbols, 2, t);
  EXPECT_EQ(c.cores, 2);
  EXPECT_EQ(c.ub_bytes, 65536);
  EXPECT_EQ(c.ns, 0);
  EXPECT_EQ(g_block_runs[0].load(), 0) << "a kernel ran although no tiling differed";
  // test_tiling copies the target into its TilingData: every candidate differs and is timed.
  c = measure_tilings(test_tiling, test_kernel, args, symbols, 2, t, 3);
  EXPECT_GT(g_block_runs[0].load(), 10 * 3);  // 10 candidates x 3 rounds, at least
  EXPECT_GT(c.ns, 0);
}

// ---- LoadedModule on a system library ----

TEST(LoadedModule, FindsSymbolsAndNamesMissingOnes) {
  auto m = jit::LoadedModule::open("libm.so.6");
  auto cos_fn = reinterpret_cast<double (*)(double)>(m->symbol("cos"));
  EXPECT_DOUBLE_EQ(cos_fn(0.0), 1.0);
  EXPECT_EQ(m->path(), "libm.so.6");
  try {
    m->symbol("autofuse_no_such_symbol");
    ADD_FAILURE() << "no throw";
  } catch (const ToolchainError& e) {
    EXPECT_NE(
        std::string(e.what()).find("symbol 'autofuse_no_such_symbol' not found in 'libm.so.6'"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(jit::LoadedModule::open("/nonexistent/autofuse.so"), ToolchainError);
}

// ---- the host's OpenMP team ----

TEST(OpenMpTeam, RunsEveryIndexOnATeamOfTheLoadedRuntime) {
  // This binary links no OpenMP; load the system's GNU runtime as torch would have.
  void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (gomp == nullptr) GTEST_SKIP() << "no libgomp.so.1 on this machine: " << dlerror();
  GompParallel parallel = find_loaded_openmp();
  ASSERT_NE(parallel, nullptr);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  bool timed_out = false;
  openmp_parallel_for(parallel, 3, 3, [&](int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    if (!wait_for(arrived, 3)) timed_out = true;  // all three run at once: a team of three
  });
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(ids.size(), 3u);
  std::vector<std::atomic<int>> hits(1000);
  openmp_parallel_for(parallel, 1000, 2, [&](int64_t i) { hits[i].fetch_add(1); });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  std::atomic<int> ran{0};
  EXPECT_THROW(openmp_parallel_for(parallel, 100, 2,
                                   [&](int64_t i) {
                                     ran.fetch_add(1);
                                     if (i == 5) throw std::runtime_error("block 5");
                                   }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
}

}  // namespace
}  // namespace af::runtime
