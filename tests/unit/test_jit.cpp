// Tests of the JIT: compile + load through the disk cache, cache hits, corruption detection,
// toolchain errors, cache directory policy, and the cache key.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "jit/cache.h"
#include "jit/compile.h"
#include "jit/hash.h"
#include "jit/module.h"
#include "runtime/launch.h"
#include "support/error.h"

namespace af::jit {
namespace {

namespace fs = std::filesystem;

// A hand-written module following autofuse_abi.h: adds 1 to a float buffer in blocks and counts
// how often each block ran.
const char* kAddOneSource = R"(
#include "autofuse_abi.h"
typedef struct AddOneTiling {
  af_tiling_header h;
  int64_t n;
  int64_t per_block;
} AddOneTiling;

extern "C" void addone_tiling(const int64_t* symbols, const af_target* target, void* data) {
  AddOneTiling* td = (AddOneTiling*)data;
  int64_t n = symbols[0];
  int64_t blocks = target->cores * 3;
  if (blocks > n) blocks = n;
  if (blocks < 1) blocks = 1;
  td->n = n;
  td->per_block = (n + blocks - 1) / blocks;
  td->h.block_dim = (n + td->per_block - 1) / td->per_block;
  td->h.tiling_key = 0;
}

extern "C" void addone_kernel(void* const* args, const void* data, int64_t block) {
  const AddOneTiling* td = (const AddOneTiling*)data;
  float* x = (float*)args[0];
  int64_t* runs = (int64_t*)args[1];
  int64_t lo = block * td->per_block;
  int64_t hi = lo + td->per_block < td->n ? lo + td->per_block : td->n;
  for (int64_t i = lo; i < hi; ++i) x[i] += 1.0f;
  runs[block] += 1;
}
)";

/// The message of the ToolchainError `f` throws ("" when it throws nothing).
template <typename F>
std::string toolchain_error(F&& f) {
  try {
    f();
  } catch (const ToolchainError& e) {
    return e.what();
  }
  return "";
}

class JitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/autofuse-jit-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    cache_ = root_ + "/cache";
  }
  void TearDown() override { fs::remove_all(root_); }

  CompileRequest request(const std::string& source = kAddOneSource) {
    CompileRequest req;
    req.source = source;
    req.flags = {"-O1", "-std=c++17"};
    req.include_dirs = {AUTOFUSE_SOURCE_INCLUDE_DIR};
    req.cache_dir = cache_;
    req.tag = "addone";
    req.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      logs_.push_back(line);
    };
    return req;
  }

  bool logged(const std::string& text) {
    std::lock_guard<std::mutex> lock(log_mu_);
    for (const auto& l : logs_)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }

  std::string so_path(const CompileRequest& req) { return cache_ + "/" + cache_key(req) + ".so"; }

  /// Runs addone on n floats with `threads` threads; expects every element +1 and every block
  /// run exactly once.
  void expect_adds_one(const jit::LoadedModule& mod, int64_t n, int threads) {
    auto tiling = reinterpret_cast<af_tiling_fn>(mod.symbol("addone_tiling"));
    auto kernel = reinterpret_cast<af_kernel_fn>(mod.symbol("addone_kernel"));
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
    std::vector<int64_t> runs(n, 0);
    void* args[] = {x.data(), runs.data()};
    int64_t symbols[] = {n};
    runtime::launch(tiling, kernel, args, symbols, threads, target::Target{});
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(x[i], static_cast<float>(i) + 1.0f) << "i=" << i;
    int64_t per_block =
        (n + std::min<int64_t>(n, threads * 3) - 1) / std::min<int64_t>(n, threads * 3);
    int64_t expected_blocks = (n + per_block - 1) / per_block;
    for (int64_t b = 0; b < n; ++b) ASSERT_EQ(runs[b], b < expected_blocks ? 1 : 0) << "b=" << b;
  }

  std::string root_, cache_;
  std::mutex log_mu_;
  std::vector<std::string> logs_;
};

TEST_F(JitTest, CompilesLoadsAndLaunches) {
  CompileRequest req = request();
  CompileStats stats;
  auto mod = compile_and_load(req, &stats);
  ASSERT_TRUE(mod);
  EXPECT_EQ(stats.cxx_compiles, 1);
  EXPECT_EQ(stats.cache_hits, 0);
  EXPECT_GT(stats.compile_seconds, 0.0);
  std::string key = cache_key(req);
  EXPECT_TRUE(logged("cache miss addone " + key + ": compiled in "));
  EXPECT_EQ(mod->key(), key);
  expect_adds_one(*mod, 1000, 1);
  expect_adds_one(*mod, 1000, 2);
  expect_adds_one(*mod, 1, 2);

  // The cache holds exactly the published pair, in a private directory.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(cache_)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"." + key + ".lock", key + ".meta", key + ".so"}));
  struct stat st;
  ASSERT_EQ(stat(cache_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(JitTest, SecondLoadIsACacheHit) {
  CompileRequest req = request();
  CompileStats first;
  auto mod = compile_and_load(req, &first);
  ASSERT_EQ(first.cxx_compiles, 1);

  // While the module is alive: the in-process memo returns the same object.
  CompileStats again;
  EXPECT_EQ(compile_and_load(req, &again).get(), mod.get());
  EXPECT_EQ(again.cxx_compiles, 0);
  EXPECT_EQ(again.cache_hits, 1);

  // After it is released: loaded from disk, the compiler does not run, the file is untouched.
  struct stat before, after;
  ASSERT_EQ(stat(so_path(req).c_str(), &before), 0);
  mod.reset();
  CompileStats second;
  mod = compile_and_load(req, &second);
  EXPECT_EQ(second.cxx_compiles, 0);
  EXPECT_EQ(second.cache_hits, 1);
  EXPECT_EQ(second.compile_seconds, 0.0);
  EXPECT_TRUE(logged("cache hit addone " + cache_key(req)));
  ASSERT_EQ(stat(so_path(req).c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_mtime, after.st_mtime);
  expect_adds_one(*mod, 257, 2);
}

TEST_F(JitTest, TruncatedObjectIsDetectedAndRebuilt) {
  CompileRequest req = request();
  compile_and_load(req, nullptr).reset();
  std::string so = so_path(req);
  fs::resize_file(so, fs::file_size(so) / 2);

  CompileStats stats;
  auto mod = compile_and_load(req, &stats);
  EXPECT_TRUE(logged("autofuse: cache entry " + cache_key(req) + " is corrupt (size "));
  EXPECT_TRUE(logged("; rebuilding"));
  EXPECT_EQ(stats.cxx_compiles, 1);
  EXPECT_EQ(stats.cache_hits, 0);
  expect_adds_one(*mod, 100, 2);
}

TEST_F(JitTest, OverwrittenBytesAreDetected) {
  CompileRequest req = request();
  compile_and_load(req, nullptr).reset();
  std::string so = so_path(req);
  auto size = fs::file_size(so);
  {
    std::fstream f(so, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const char junk[16] = {'a', 'u', 't', 'o', 'f', 'u', 's', 'e', 1, 2, 3, 4, 5, 6, 7, 8};
    f.write(junk, sizeof junk);
  }
  ASSERT_EQ(fs::file_size(so), size);

  CompileStats stats;
  auto mod = compile_and_load(req, &stats);
  EXPECT_TRUE(logged("is corrupt (content hash "));
  EXPECT_EQ(stats.cxx_compiles, 1);
  expect_adds_one(*mod, 100, 1);
}

TEST_F(JitTest, ObjectWithoutMetadataIsRebuilt) {
  CompileRequest req = request();
  compile_and_load(req, nullptr).reset();
  fs::remove(cache_ + "/" + cache_key(req) + ".meta");
  CompileStats stats;
  auto mod = compile_and_load(req, &stats);
  EXPECT_EQ(stats.cxx_compiles, 1);
  EXPECT_TRUE(fs::exists(cache_ + "/" + cache_key(req) + ".meta"));
}

TEST_F(JitTest, UnloadableEntryIsEvictedAndRebuiltOnce) {
  CompileRequest req = request();
  compile_and_load(req, nullptr).reset();
  // A forged entry whose metadata matches but which is no shared object.
  std::string key = cache_key(req);
  std::ofstream(so_path(req), std::ios::trunc) << "not an ELF file";
  CacheMeta meta;
  meta.key = key;
  meta.content = *hash_file(so_path(req), &meta.size);
  std::ofstream(cache_ + "/" + key + ".meta", std::ios::trunc) << meta.to_text();

  CompileStats stats;
  auto mod = compile_and_load(req, &stats);
  EXPECT_TRUE(logged("autofuse: cache entry " + key + " failed to load ("));
  EXPECT_EQ(stats.cxx_compiles, 1);
  expect_adds_one(*mod, 10, 2);
}

TEST_F(JitTest, FreshModuleThatDoesNotLoadIsNotRebuilt) {
  CompileRequest req = request(
      "extern \"C\" void af_test_undefined_fn();\n"
      "extern \"C\" void calls_it() { af_test_undefined_fn(); }\n");
  req.tag = "unresolved";
  CompileStats stats;
  std::string msg = toolchain_error([&] { compile_and_load(req, &stats); });
  EXPECT_NE(msg.find("af_test_undefined_fn"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(the module of unresolved)"), std::string::npos) << msg;
  EXPECT_EQ(stats.cxx_compiles, 1);
  EXPECT_FALSE(fs::exists(so_path(req)));
}

TEST_F(JitTest, StaleTempFilesOfAKeyAreRemovedOnRebuild) {
  CompileRequest req = request();
  std::string key = cache_key(req);
  ensure_private_dir(cache_);
  std::string stale = cache_ + "/." + key + ".999999.1.tmp.so";
  std::string other = cache_ + "/.0123456789abcdef0123456789abcdef.999999.1.tmp.so";
  std::ofstream(stale) << "half-written";
  std::ofstream(other) << "another key's build";
  compile_and_load(req, nullptr);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(cache_ + "/." + key + ".lock"));
}

TEST_F(JitTest, MissingCompilerIsAToolchainError) {
  CompileRequest req = request();
  req.cxx = root_ + "/no-such-g++";
  std::string msg = toolchain_error([&] { compile_and_load(req, nullptr); });
  EXPECT_EQ(msg, "autofuse: C++ compiler '" + req.cxx +
                     "' not found (set CXX or CompilerConfig(cxx=...))");
  req.cxx = "autofuse-no-such-compiler";  // PATH search
  EXPECT_NE(toolchain_error([&] { compile_and_load(req, nullptr); }).find("not found"),
            std::string::npos);
}

TEST_F(JitTest, CompileErrorNamesTheKeptSource) {
  const std::string source = "extern \"C\" int broken( { return 1; }\n";
  CompileRequest req = request(source);
  req.tag = "broken";
  std::string msg = toolchain_error([&] { compile_and_load(req, nullptr); });
  EXPECT_NE(msg.find("autofuse: C++ compile of broken failed (g++ exit 1):"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("error"), std::string::npos) << msg;
  size_t at = msg.find("source kept at ");
  ASSERT_NE(at, std::string::npos) << msg;
  std::string path = msg.substr(at + std::string("source kept at ").size());
  std::ifstream kept(path);
  ASSERT_TRUE(kept) << path;
  std::stringstream text;
  text << kept.rdbuf();
  EXPECT_EQ(text.str(), source);
  fs::remove_all(fs::path(path).parent_path());
  // Nothing was published (only the key's lock file is there).
  for (const auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().extension(), ".lock") << e.path();
}

TEST_F(JitTest, MissingSymbolIsNamed) {
  auto mod = compile_and_load(request(), nullptr);
  std::string msg = toolchain_error([&] { mod->symbol("addone_missing"); });
  EXPECT_NE(msg.find("symbol 'addone_missing' not found"), std::string::npos) << msg;
  EXPECT_EQ(mod->find_symbol("addone_missing"), nullptr);
}

TEST_F(JitTest, InsecureCacheDirsAreRefused) {
  ASSERT_EQ(mkdir(cache_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(cache_.c_str(), 0777), 0);
  std::string msg = toolchain_error([&] { compile_and_load(request(), nullptr); });
  EXPECT_NE(msg.find("refusing JIT cache directory '" + cache_ + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("group- or world-writable (mode 0777)"), std::string::npos) << msg;

  std::string real = root_ + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  std::string link = root_ + "/link";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  msg = toolchain_error([&] { ensure_private_dir(link); });
  EXPECT_NE(msg.find("'" + link + "': it is a symlink"), std::string::npos) << msg;

  std::string file = root_ + "/file";
  std::ofstream(file) << "x";
  msg = toolchain_error([&] { ensure_private_dir(file); });
  EXPECT_NE(msg.find("not a directory"), std::string::npos) << msg;
}

TEST_F(JitTest, NewCacheDirsArePrivate) {
  std::string nested = root_ + "/a/b/c/";
  EXPECT_EQ(ensure_private_dir(nested), root_ + "/a/b/c");
  for (const char* p : {"/a", "/a/b", "/a/b/c"}) {
    struct stat st;
    ASSERT_EQ(lstat((root_ + p).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << p;
  }
}

TEST_F(JitTest, ConcurrentRequestsCompileOnce) {
  CompileRequest req = request();
  CompileStats stats[2];
  std::shared_ptr<jit::LoadedModule> mods[2];
  std::thread t([&] { mods[1] = compile_and_load(req, &stats[1]); });
  mods[0] = compile_and_load(req, &stats[0]);
  t.join();
  EXPECT_EQ(mods[0].get(), mods[1].get());
  EXPECT_EQ(stats[0].cxx_compiles + stats[1].cxx_compiles, 1);
  EXPECT_EQ(stats[0].cache_hits + stats[1].cache_hits, 1);
}

TEST_F(JitTest, ProcessesMissingOnTheSameKeyCompileOnce) {
  CompileRequest req = request();
  req.log = nullptr;
  ensure_private_dir(cache_);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);
    CompileStats s;
    try {
      compile_and_load(req, &s);
    } catch (...) {
      _exit(100);
    }
    _exit(s.cxx_compiles);
  }
  CompileStats s;
  auto mod = compile_and_load(req, &s);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_NE(WEXITSTATUS(status), 100);
  EXPECT_EQ(s.cxx_compiles + WEXITSTATUS(status), 1);  // the key's file lock serialises them
  expect_adds_one(*mod, 64, 2);
}

// Processes SIGKILLed at random moments of their compiles (50 of them, each on its own key, into
// one cache) leave nothing a later process loads wrongly: afterwards every key compiles or loads
// cleanly and its module works. A kill can land anywhere: in the compiler, between writing the
// object and its metadata, or after publishing.
TEST_F(JitTest, KilledCompilesLeaveNothingThatLoadsWrongly) {
  constexpr int kKills = 50;
  auto source = [](int i) {
    return std::string(kAddOneSource) + "// variant " + std::to_string(i) + "\n";
  };
  ensure_private_dir(cache_);
  CompileRequest probe = request(source(-1));
  probe.log = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  compile_and_load(probe, nullptr);
  const auto compile_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int64_t> delay(0, compile_us * 6 / 5);
  int killed = 0;
  for (int i = 0; i < kKills; ++i) {
    CompileRequest req = request(source(i));
    req.log = nullptr;
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(60);
      try {
        compile_and_load(req, nullptr);
      } catch (...) {
        _exit(100);
      }
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
      ++killed;
    else
      ASSERT_EQ(WEXITSTATUS(status), 0) << "variant " << i;
  }
  EXPECT_GT(killed, kKills / 2);  // most kills landed before the compile finished
  for (int i = 0; i < kKills; ++i) {
    CompileRequest req = request(source(i));
    req.log = nullptr;
    auto mod = compile_and_load(req, nullptr);
    expect_adds_one(*mod, 64, 2);
  }
}

// 8 processes of 8 threads each ask for one key of an empty cache at once: the key's file lock
// (across processes) and the in-process table (across threads) let exactly one compile run, and
// every thread of every process gets a working module.
TEST_F(JitTest, EightProcessesOfEightThreadsCompileOnce) {
  constexpr int kProcs = 8, kThreads = 8;
  CompileRequest req = request();
  req.log = nullptr;
  ensure_private_dir(cache_);
  // Compiles in this process: its threads' stats summed (each thread its own CompileStats).
  auto compile_in_threads = [&req, this]() {
    std::vector<CompileStats> stats(kThreads);
    std::vector<std::thread> threads;
    std::atomic<int> broken{0};
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        try {
          auto mod = compile_and_load(req, &stats[t]);
          expect_adds_one(*mod, 64, 1);
        } catch (...) {
          broken.fetch_add(1);
        }
      });
    for (auto& t : threads) t.join();
    int compiles = 0;
    for (const auto& s : stats) compiles += s.cxx_compiles;
    return broken.load() != 0 ? 100 : compiles;
  };
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(120);
      int compiles = compile_in_threads();
      _exit(HasFailure() ? 100 : compiles);  // an expect_adds_one failure in this child
    }
    pids.push_back(pid);
  }
  int compiles = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 100) << "a thread's module failed";
    compiles += WEXITSTATUS(status);
  }
  EXPECT_EQ(compiles, 1);
}

TEST_F(JitTest, KeyCoversSourceFlagsLibsAndHeaders) {
  CompileRequest req = request();
  std::string key = cache_key(req);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(cache_key(req), key);  // deterministic

  CompileRequest other = req;
  other.source += "\n";
  EXPECT_NE(cache_key(other), key);
  other = req;
  other.flags.push_back("-DX=1");
  EXPECT_NE(cache_key(other), key);
  other = req;
  other.libs.push_back("m");
  EXPECT_NE(cache_key(other), key);
  other = req;
  other.sanitize = Sanitizers::parse("undefined");
  EXPECT_NE(cache_key(other), key);
  other = req;
  other.tag = "renamed";  // the tag is only for messages
  other.cache_dir = root_ + "/elsewhere";
  EXPECT_EQ(cache_key(other), key);

  // An edited runtime header in an include dir invalidates the key.
  std::string inc = root_ + "/include";
  fs::create_directory(inc);
  fs::copy_file(std::string(AUTOFUSE_SOURCE_INCLUDE_DIR) + "/autofuse_abi.h",
                inc + "/autofuse_abi.h");
  other = req;
  other.include_dirs = {inc};
  std::string with_copy = cache_key(other);
  std::ofstream(inc + "/autofuse_abi.h", std::ios::app) << "/* edited */\n";
  EXPECT_NE(cache_key(other), with_copy);
  std::string edited = cache_key(other);
  std::ofstream(inc + "/autofuse_cpu_math.h") << "/* new helper header */\n";
  std::string with_helper = cache_key(other);
  EXPECT_NE(with_helper, edited);
  std::ofstream(inc + "/unrelated.h") << "/* not keyed */\n";
  EXPECT_EQ(cache_key(other), with_helper);
}

TEST(JitSanitize, ParsesNamesAndGivesFlags) {
  EXPECT_TRUE(Sanitizers::parse("").empty());
  EXPECT_TRUE(Sanitizers().flags().empty());
  Sanitizers both = Sanitizers::parse("undefined,address");
  EXPECT_EQ(both.to_string(), "address,undefined");
  EXPECT_TRUE(both.has(Sanitizer::Address) && both.has(Sanitizer::Undefined));
  EXPECT_EQ(both.flags().front(), "-fsanitize=address,undefined");
  EXPECT_EQ(Sanitizers::parse("undefined").to_string(), "undefined");
  EXPECT_EQ(Sanitizers::parse("undefined").load_problem(), "");  // its runtime loads late
  try {
    Sanitizers::parse("address,thread");
    FAIL() << "no FlagError";
  } catch (const af::FlagError& e) {
    EXPECT_EQ(std::string(e.what()),
              "AUTOFUSE_SANITIZE: unknown sanitizer 'thread' (known: address, undefined)");
  }
}

TEST(JitHash, MatchesPublishedFnv1a128) {
  EXPECT_EQ(hash_bytes("", 0).hex(), "6c62272e07bb014262b821756295c58d");
  EXPECT_EQ(hash_bytes("a", 1).hex(), "d228cb696f1a8caf78912b704e4a8964");
  Hash128 h = hash_bytes("autofuse", 8);
  EXPECT_EQ(Hash128::from_hex(h.hex()), h);
  EXPECT_FALSE(Hash128::from_hex("xyz"));
  EXPECT_FALSE(Hash128::from_hex(std::string(31, '0') + "g"));
  // Fields are length-prefixed: ("ab","c") and ("a","bc") differ.
  EXPECT_NE(Hasher128().field("ab").field("c").digest(),
            Hasher128().field("a").field("bc").digest());
}

TEST(JitCache, MetaRoundTripsAndRejectsJunk) {
  CacheMeta m;
  m.key = hash_bytes("k", 1).hex();
  m.size = 12345;
  m.content = hash_bytes("so", 2);
  m.command = "g++ -O2\n-shared";
  auto back = CacheMeta::parse(m.to_text());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key, m.key);
  EXPECT_EQ(back->size, m.size);
  EXPECT_EQ(back->content, m.content);
  EXPECT_EQ(back->command, "g++ -O2 -shared");
  EXPECT_FALSE(CacheMeta::parse(""));
  EXPECT_FALSE(CacheMeta::parse("autofuse-cache-meta 1\nkey zz\nsize 1\nhash 00\n"));
  std::string no_size = m.to_text();
  no_size.erase(no_size.find("size"), no_size.find("hash") - no_size.find("size"));
  EXPECT_FALSE(CacheMeta::parse(no_size));
}

TEST(JitCache, DefaultDirFollowsTheEnvironment) {
  const char* names[] = {"AUTOFUSE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::pair<bool, std::string>> saved;
  for (const char* n : names) {
    const char* v = std::getenv(n);
    saved.emplace_back(v != nullptr, v ? v : "");
  }
  setenv("AUTOFUSE_CACHE_DIR", "/srv/af-cache", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_cache_dir(), "/srv/af-cache");
  unsetenv("AUTOFUSE_CACHE_DIR");
  EXPECT_EQ(default_cache_dir(), "/xdg/autofuse");
  setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/autofuse");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/autofuse");
  for (size_t i = 0; i < saved.size(); ++i) {
    if (saved[i].first)
      setenv(names[i], saved[i].second.c_str(), 1);
    else
      unsetenv(names[i]);
  }
}

}  // namespace
}  // namespace af::jit
