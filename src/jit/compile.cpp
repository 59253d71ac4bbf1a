#include "jit/compile.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "jit/cache.h"
#include "jit/hash.h"
#include "jit/module.h"
#include "jit/pch.h"
#include "jit/toolchain.h"
#include "runtime/include/autofuse_abi.h"
#include "support/error.h"
#include "target/host_cpu.h"

#ifndef AUTOFUSE_VERSION
#define AUTOFUSE_VERSION "0.0.0-dev"
#endif

namespace af::jit {
namespace {

constexpr int kMaxErrorLines = 20;

/// In-process memo: (cache dir, key) -> module, plus one mutex per entry so that concurrent
/// requests for one entry build it once while different entries build in parallel.
struct Memo {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<jit::LoadedModule>> modules;
  std::map<std::string, std::shared_ptr<std::mutex>> building;
};

Memo& memo() {
  static Memo* m = new Memo();  // never destroyed: modules may outlive static destructors
  return *m;
}

void log(const CompileRequest& req, const std::string& line) {
  if (req.log) req.log(line);
}

std::string tag_of(const CompileRequest& req) {
  return req.tag.empty() ? "module" : req.tag;
}

/// The tag reduced to characters safe in a file name.
std::string file_safe(const std::string& tag) {
  std::string out;
  for (char c : tag) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    out += ok ? c : '_';
    if (out.size() >= 40) break;
  }
  return out.empty() ? "module" : out;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

/// The first kMaxErrorLines lines of the compiler's output.
std::string first_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line, out;
  int n = 0, more = 0;
  while (std::getline(in, line)) {
    if (n < kMaxErrorLines) {
      out += line + "\n";
      ++n;
    } else {
      ++more;
    }
  }
  if (more) out += "... (" + std::to_string(more) + " more lines in " + path + ")\n";
  if (out.empty()) out = "(no compiler output)\n";
  return out;
}

/// Compiles `req` into the cache entry `key`. Returns seconds spent.
double build(const CompileRequest& req, const DiskCache& cache, const std::string& key) {
  auto t0 = std::chrono::steady_clock::now();
  const char* tmp_root = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp_root && *tmp_root ? tmp_root : "/tmp") + "/autofuse-" +
                     file_safe(tag_of(req)) + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw ToolchainError("autofuse: cannot create a temp dir '" + tmpl + "' for " + tag_of(req));
  std::string work = buf.data();
  std::string src_path = work + "/" + file_safe(tag_of(req)) + ".cpp";
  std::string out_path = work + "/compiler-output.txt";
  {
    std::ofstream out(src_path, std::ios::binary);
    out << req.source;
    if (!out.flush()) {
      std::error_code ec;
      std::filesystem::remove_all(work, ec);
      throw ToolchainError("autofuse: cannot write '" + src_path + "'");
    }
  }
  std::string tmp_so = cache.temp_path(key, "so");
  unlink(tmp_so.c_str());
  std::optional<std::string> pch = prepare_pch(req, cache.dir());
  std::vector<std::string> argv = compile_command(req, src_path, tmp_so, pch.value_or(""));
  ProcessExit e;
  auto compile = [&] {
    try {
      e = run_process(argv, out_path);
    } catch (...) {
      std::error_code ec;
      std::filesystem::remove_all(work, ec);
      throw;
    }
    struct stat st;
    return e.ok() && stat(tmp_so.c_str(), &st) == 0;
  };
  bool ok = compile();
  if (!ok && pch) {  // never fail a kernel because of the PCH: retry once without it
    std::string pch_output = first_lines(out_path);
    unlink(tmp_so.c_str());
    out_path = work + "/compiler-output-no-pch.txt";
    argv = compile_command(req, src_path, tmp_so);
    ok = compile();
    if (ok) {
      disable_pch(req, cache.dir());
      log(req, "autofuse: compile of " + tag_of(req) + " failed with the precompiled header " +
                   *pch + " but not without it; not using it in this process (" +
                   pch_output.substr(0, pch_output.find('\n')) + ")");
    }
  }
  if (!ok) {
    unlink(tmp_so.c_str());
    std::string what = e.ok() ? "exit 0 but no output file" : e.describe();
    throw ToolchainError("autofuse: C++ compile of " + tag_of(req) + " failed (" + req.cxx + " " +
                         what + "):\n" + first_lines(out_path) + "source kept at " + src_path);
  }
  try {
    cache.publish(key, tmp_so, join(argv));
  } catch (...) {
    unlink(tmp_so.c_str());
    throw;
  }
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

/// Verifies or (when `may_build`) builds the entry, then loads it; nullptr when it is not valid
/// on disk (or does not load) and `may_build` is false. Called with the entry's in-process mutex
/// held; builds happen under the key's cross-process lock, re-checking the disk once it is held.
std::shared_ptr<jit::LoadedModule> load_or_build(const CompileRequest& req, const DiskCache& cache,
                                                 const std::string& key, bool may_build,
                                                 CompileStats* stats) {
  bool reloaded = false;  // evicted once after a failed dlopen of a cached entry
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string why;
    bool built = false;
    if (!may_build && cache.verify(key, &why) != DiskCache::Lookup::Valid) return nullptr;
    if (cache.verify(key, &why) != DiskCache::Lookup::Valid) {
      auto held = cache.lock(key);
      DiskCache::Lookup state = cache.verify(key, &why);  // another process may have built it
      if (state == DiskCache::Lookup::Corrupt) {
        log(req, "autofuse: cache entry " + key + " is corrupt (" + why + "); rebuilding");
        cache.evict(key);
      }
      if (state != DiskCache::Lookup::Valid) {
        cache.remove_stale_temps(key);
        double secs = build(req, cache, key);
        built = true;
        if (stats) {
          stats->cxx_compiles += 1;
          stats->compile_seconds += secs;
        }
        log(req,
            "cache miss " + tag_of(req) + " " + key + ": compiled in " + seconds_text(secs) + " s");
      }
    }
    try {
      auto mod = jit::LoadedModule::open(cache.so_path(key), key);
      if (!built) {
        if (stats) stats->cache_hits += 1;
        log(req, "cache hit " + tag_of(req) + " " + key);
      }
      return mod;
    } catch (const ToolchainError& err) {
      if (!may_build) return nullptr;
      cache.evict(key);
      if (built || reloaded)  // a fresh build that does not load will not load when rebuilt
        throw ToolchainError(std::string(err.what()) + " (the module of " + tag_of(req) + ")");
      reloaded = true;
      log(req, "autofuse: cache entry " + key + " failed to load (" + err.what() + "); rebuilding");
    }
  }
  throw ToolchainError("autofuse: cache entry " + key + " for " + tag_of(req) + " in " +
                       cache.dir() + " could not be loaded");
}

}  // namespace

bool is_keyed_header(const std::string& name) {
  if (name.size() < 2 || name.compare(name.size() - 2, 2, ".h") != 0) return false;
  return name.rfind("autofuse_", 0) == 0 || name.rfind("emu_", 0) == 0 ||
         name == "kernel_operator.h";  // runtime/include and its ascendc_emu/
}

std::vector<std::string> keyed_headers_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (is_keyed_header(e->d_name)) names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void hash_keyed_headers(const std::vector<std::string>& dirs, Hasher128& h) {
  for (const auto& dir : dirs) {
    h.field("include-dir").field(dir);
    for (const auto& name : keyed_headers_in(dir)) {
      std::string text;
      if (!read_file(dir + "/" + name, &text)) text = "<unreadable>";
      h.field(name).field(text);
    }
  }
}

std::vector<std::string> build_flags(const CompileRequest& req) {
  std::vector<std::string> flags = req.flags;
  for (auto& f : req.sanitize.flags()) flags.push_back(std::move(f));
  return flags;
}

std::vector<std::string> compile_command(const CompileRequest& req, const std::string& source_path,
                                         const std::string& output_path,
                                         const std::string& pch_dir) {
  std::vector<std::string> argv{req.cxx};
  for (auto& f : build_flags(req)) argv.push_back(std::move(f));
  if (!pch_dir.empty()) argv.push_back("-I" + pch_dir);
  for (const auto& d : req.include_dirs) argv.push_back("-I" + d);
  argv.insert(argv.end(), {"-shared", "-fPIC", "-o", output_path, source_path});
  for (const auto& l : req.libs) argv.push_back("-l" + l);
  return argv;
}

std::string cache_key(const CompileRequest& req) {
  Hasher128 h;
  h.field("autofuse-jit-key-v1");
  h.field(AUTOFUSE_VERSION).field(std::to_string(AF_ABI_VERSION));
  h.field(req.source);
  h.field(compiler_identity(req.cxx));
  std::vector<std::string> argv = compile_command(req, "<source>", "<output>");
  h.field(std::to_string(argv.size()));
  bool native = false;
  for (const auto& a : argv) {
    h.field(a);
    native = native || a.find("=native") != std::string::npos;
  }
  if (native) h.field(target::HostCpu::probe().identity);
  hash_keyed_headers(req.include_dirs, h);
  return h.digest().hex();
}

namespace {

/// compile_and_load and load_cached: the module of entry `key`, from the memo, the disk or (when
/// `may_build`) built now; nullptr when it is not there and `may_build` is false.
std::shared_ptr<jit::LoadedModule> load(const CompileRequest& req, const std::string& key,
                                        bool may_build, CompileStats* stats) {
  if (std::string problem = req.sanitize.load_problem(); !problem.empty())
    throw ToolchainError("autofuse: " + problem);
  std::string dir = cache_dir_of(req);
  std::string id = dir + "/" + key;
  Memo& m = memo();
  std::shared_ptr<std::mutex> entry_mu;
  // Looks the entry up in the memo (m.mu held); logging happens after the lock is dropped.
  auto memo_lookup = [&]() -> std::shared_ptr<jit::LoadedModule> {
    auto it = m.modules.find(id);
    return it == m.modules.end() ? nullptr : it->second.lock();
  };
  auto memo_hit = [&](std::shared_ptr<jit::LoadedModule> mod) {
    if (stats) stats->cache_hits += 1;
    log(req, "cache hit " + tag_of(req) + " " + key + " (already loaded)");
    return mod;
  };
  std::shared_ptr<jit::LoadedModule> found;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    found = memo_lookup();
    if (!found) {
      auto& slot = m.building[id];
      if (!slot) slot = std::make_shared<std::mutex>();
      entry_mu = slot;
    }
  }
  if (found) return memo_hit(std::move(found));
  std::lock_guard<std::mutex> entry_lock(*entry_mu);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    found = memo_lookup();
  }
  if (found) return memo_hit(std::move(found));
  auto mod = load_or_build(req, DiskCache(dir), key, may_build, stats);
  if (!mod) return nullptr;
  std::lock_guard<std::mutex> lock(m.mu);
  for (auto it = m.modules.begin(); it != m.modules.end();)  // drop unloaded entries
    it = it->second.expired() ? m.modules.erase(it) : std::next(it);
  m.modules[id] = mod;
  return mod;
}

}  // namespace

std::string cache_dir_of(const CompileRequest& req) {
  return ensure_private_dir(req.cache_dir.empty() ? default_cache_dir() : req.cache_dir);
}

std::shared_ptr<jit::LoadedModule> compile_and_load(const CompileRequest& req,
                                                    CompileStats* stats) {
  return load(req, cache_key(req), /*may_build=*/true, stats);
}

std::shared_ptr<jit::LoadedModule> load_cached(const CompileRequest& req, const std::string& key,
                                               CompileStats* stats) {
  return load(req, key, /*may_build=*/false, stats);
}

}  // namespace af::jit
