#include "jit/pch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "jit/cache.h"
#include "jit/file_io.h"
#include "jit/hash.h"
#include "jit/toolchain.h"
#include "support/error.h"
#include "target/host_cpu.h"

#ifndef AUTOFUSE_VERSION
#define AUTOFUSE_VERSION "0.0.0-dev"
#endif

namespace af::jit {
namespace {

constexpr const char* kMetaMagic = "autofuse-pch-meta 1";
constexpr const char* kMetaName = "pch.meta";

/// What this process knows about one PCH directory.
struct PchMemo {
  bool failed = false;             // building or using it failed: compile without it
  std::vector<std::string> names;  // the files its meta lists
  std::string signature;           // stat_signature(names) when last verified
};

/// In-process memo: PCH dir -> state. Builds are serialised by the per-key flock, not by `mu`.
struct PchState {
  std::mutex mu;
  std::map<std::string, PchMemo> dirs;
};

PchState& state() {
  static PchState* s = new PchState();  // never destroyed (used from any thread until exit)
  return *s;
}

void log(const CompileRequest& req, const std::string& line) {
  if (req.log) req.log(line);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

/// Skips blanks, `//` and `/* */` comments from `i`; returns the index of the next other char.
size_t skip_blanks_and_comments(const std::string& s, size_t i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s.compare(i, 2, "//") == 0) {
      size_t nl = s.find('\n', i);
      i = nl == std::string::npos ? s.size() : nl + 1;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

/// Is the first preprocessing line of `source` `#include "<header>"`?
bool starts_with_pch_include(const std::string& source, const std::string& header) {
  size_t i = skip_blanks_and_comments(source, 0);
  if (i >= source.size() || source[i] != '#') return false;
  ++i;
  while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) ++i;
  if (source.compare(i, 7, "include") != 0) return false;
  i += 7;
  while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) ++i;
  std::string quoted = "\"" + header + "\"";
  return source.compare(i, quoted.size(), quoted) == 0;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The first include dir holding req.pch_header (what `#include "<pch_header>"` finds).
std::optional<std::string> header_dir(const CompileRequest& req) {
  for (const auto& d : req.include_dirs)
    if (is_regular_file(d + "/" + req.pch_header)) return d;
  return std::nullopt;
}

/// A file name the meta may list: plain, no '/', not hidden.
bool plain_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos;
}

/// lstat identity of the listed files (device, inode, size, mtime); "" when one is missing.
std::string stat_signature(const std::string& dir, const std::vector<std::string>& names) {
  std::string sig;
  for (const auto& n : names) {
    struct stat st;
    if (lstat((dir + "/" + n).c_str(), &st) != 0) return "";
    sig += n + ":" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
           std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + ";";
  }
  return sig;
}

/// What pch.meta records: the key and the size + FNV-1a-128 of every file of the directory.
struct PchMeta {
  std::string key;
  struct File {
    std::string name;
    uint64_t size = 0;
    Hash128 hash;
  };
  std::vector<File> files;
};

/// Parses pch.meta; nullopt when it is malformed.
std::optional<PchMeta> parse_meta(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMetaMagic) return std::nullopt;
  PchMeta m;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string what;
    fields >> what;
    if (what == "key") {
      fields >> m.key;
      if (!Hash128::from_hex(m.key)) return std::nullopt;
    } else if (what == "file") {
      PchMeta::File f;
      std::string size, hash;
      if (!(fields >> f.name >> size >> hash) || !plain_name(f.name) || size.empty() ||
          size.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
      auto h = Hash128::from_hex(hash);
      if (!h) return std::nullopt;
      f.size = std::strtoull(size.c_str(), nullptr, 10);
      f.hash = *h;
      m.files.push_back(f);
    }
  }
  if (m.key.empty()) return std::nullopt;
  return m;
}

/// The state of a PCH directory on disk.
enum class Lookup { Missing, Valid, Corrupt };

/// Checks `dir` against its pch.meta: every listed file (the .gch and the header copies) must
/// have the recorded size and FNV-1a-128. On Valid, *names receives the listed files.
Lookup verify(const std::string& dir, const std::string& key, const std::string& header,
              std::vector<std::string>* names, std::string* why) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return Lookup::Missing;
  if (!S_ISDIR(st.st_mode)) {
    *why = "not a directory";
    return Lookup::Corrupt;
  }
  std::optional<std::string> text = read_small_file(dir + "/" + kMetaName);
  if (!text) {
    *why = "no readable " + std::string(kMetaName);
    return Lookup::Corrupt;
  }
  std::optional<PchMeta> meta = parse_meta(*text);
  if (!meta) {
    *why = "metadata is malformed";
    return Lookup::Corrupt;
  }
  if (meta->key != key) {
    *why = "metadata names key " + meta->key;
    return Lookup::Corrupt;
  }
  std::string gch = header + ".gch";
  bool has_gch = false, has_header = false;
  names->clear();
  for (const auto& f : meta->files) {
    has_gch = has_gch || f.name == gch;
    has_header = has_header || f.name == header;
    uint64_t size = 0;
    std::optional<Hash128> content = hash_file(dir + "/" + f.name, &size);
    if (!content) {
      *why = f.name + " is not a readable regular file";
      return Lookup::Corrupt;
    }
    if (size != f.size) {
      *why = f.name + " has " + std::to_string(size) + " bytes, metadata says " +
             std::to_string(f.size);
      return Lookup::Corrupt;
    }
    if (*content != f.hash) {
      *why = f.name + " content hash " + content->hex() + ", metadata says " + f.hash.hex();
      return Lookup::Corrupt;
    }
    names->push_back(f.name);
  }
  if (!has_gch || !has_header) {
    *why = "metadata does not list " + (has_gch ? header : gch);
    return Lookup::Corrupt;
  }
  return Lookup::Valid;
}

/// Deletes `<root>/.<key>.*.tmp.*` left by builds that died (call with the key's lock held).
void remove_stale_temps(const std::string& root, const std::string& key) {
  std::vector<std::string> stale;
  if (DIR* d = opendir(root.c_str())) {
    std::string prefix = "." + key + ".";
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(prefix, 0) == 0 && name.find(".tmp.") != std::string::npos)
        stale.push_back(root + "/" + name);
    }
    closedir(d);
  }
  for (const auto& p : stale) {
    std::error_code ec;
    std::filesystem::remove_all(p, ec);
  }
}

/// The first line of `text` (for one-line log messages).
std::string first_line(const std::string& text) {
  size_t start = text.find_first_not_of("\n");
  if (start == std::string::npos) return "(no output)";
  return text.substr(start, text.find('\n', start) - start);
}

/// Builds the PCH of `req` into `dir` (which must not exist): headers copied and compiled in a
/// temp dir next to it, checked with a -H probe that the compiler really uses it, described by
/// pch.meta, then renamed into place. Throws ToolchainError saying what failed.
void build_pch(const CompileRequest& req, const std::string& root, const std::string& key,
               const std::string& dir, const std::string& hdr_dir) {
  std::string tmp = root + "/." + key + "." + std::to_string(getpid()) + "." +
                    std::to_string(static_cast<long>(syscall(SYS_gettid))) + ".tmp.d";
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  if (mkdir(tmp.c_str(), 0700) != 0)
    throw ToolchainError("cannot create '" + tmp + "': " + std::strerror(errno));
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
  } cleanup{tmp};

  std::vector<std::string> names = keyed_headers_in(hdr_dir);
  for (const auto& n : names) {
    std::optional<std::string> text = read_small_file(hdr_dir + "/" + n);
    if (!text || !write_new_file(tmp + "/" + n, *text))
      throw ToolchainError("cannot copy '" + hdr_dir + "/" + n + "' to '" + tmp + "'");
  }
  std::string gch = req.pch_header + ".gch";
  // The kernel command's flags and -I order (PCH dir first), the header instead of the source.
  std::vector<std::string> argv{req.cxx};
  for (auto& f : build_flags(req)) argv.push_back(std::move(f));
  argv.push_back("-I" + tmp);
  for (const auto& d : req.include_dirs) argv.push_back("-I" + d);
  argv.insert(argv.end(),
              {"-fPIC", "-x", "c++-header", tmp + "/" + req.pch_header, "-o", tmp + "/" + gch});
  std::string output;
  ProcessExit e = run_process_capture(argv, &output);
  if (!e.ok() || !is_regular_file(tmp + "/" + gch))
    throw ToolchainError("compiler " + e.describe() + ": " + first_line(output));

  // Probe: the kernel command on a one-line source must report the .gch with -H's '!' mark.
  std::string probe = tmp + "/probe.cpp";
  if (!write_new_file(probe, "#include \"" + req.pch_header + "\"\n"))
    throw ToolchainError("cannot write '" + probe + "'");
  argv = compile_command(req, probe, "/dev/null", tmp);
  argv.insert(argv.end(), {"-fsyntax-only", "-H", "-Winvalid-pch"});
  e = run_process_capture(argv, &output);
  unlink(probe.c_str());
  std::string used = "! " + tmp + "/" + gch;
  bool found = false;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) found = found || line == used;
  if (!e.ok() || !found)
    throw ToolchainError("the compiler does not use it (" + first_line(output) + ")");

  std::string meta = std::string(kMetaMagic) + "\nkey " + key + "\n";
  names.push_back(gch);
  for (const auto& n : names) {
    uint64_t size = 0;
    std::optional<Hash128> h = hash_file(tmp + "/" + n, &size);
    if (!h) throw ToolchainError("cannot read '" + tmp + "/" + n + "'");
    meta += "file " + n + " " + std::to_string(size) + " " + h->hex() + "\n";
  }
  if (!write_new_file(tmp + "/" + kMetaName, meta))
    throw ToolchainError("cannot write '" + tmp + "/" + kMetaName + "'");
  if (rename(tmp.c_str(), dir.c_str()) != 0)
    throw ToolchainError("cannot rename '" + tmp + "' to '" + dir + "': " + std::strerror(errno));
  cleanup.path.clear();
}

/// Records the result for `dir` in the in-process memo.
void remember(const std::string& dir, bool failed, const std::vector<std::string>& names) {
  std::string signature = failed ? "" : stat_signature(dir, names);
  std::lock_guard<std::mutex> lock(state().mu);
  PchMemo& m = state().dirs[dir];
  m.failed = failed;
  m.names = names;
  m.signature = signature;
}

}  // namespace

bool wants_pch(const CompileRequest& req) {
  if (req.pch_header.empty()) return false;
  const char* env = std::getenv("AUTOFUSE_JIT_PCH");
  if (env && std::string(env) == "0") return false;
  return starts_with_pch_include(req.source, req.pch_header) && header_dir(req).has_value();
}

std::string pch_key(const CompileRequest& req) {
  Hasher128 h;
  h.field("autofuse-pch-key-v1").field(AUTOFUSE_VERSION).field(req.pch_header);
  h.field(compiler_identity(req.cxx));
  std::vector<std::string> argv = compile_command(req, "<source>", "<output>");
  h.field(std::to_string(argv.size()));
  bool native = false;
  for (const auto& a : argv) {
    if (a.rfind("-l", 0) == 0) continue;  // libraries do not change a header's parse
    h.field(a);
    native = native || a.find("=native") != std::string::npos;
  }
  if (native) h.field(target::HostCpu::probe().identity);
  hash_keyed_headers(req.include_dirs, h);
  return h.digest().hex();
}

std::string pch_dir(const CompileRequest& req, const std::string& cache_dir) {
  return cache_dir + "/pch/" + pch_key(req);
}

std::optional<std::string> prepare_pch(const CompileRequest& req, const std::string& cache_dir) {
  if (!wants_pch(req)) return std::nullopt;
  std::string dir;
  try {
    std::string root = ensure_private_dir(cache_dir + "/pch");
    std::string key = pch_key(req);
    dir = root + "/" + key;
    {
      std::lock_guard<std::mutex> lock(state().mu);
      auto it = state().dirs.find(dir);
      if (it != state().dirs.end()) {
        if (it->second.failed) return std::nullopt;
        // Verified earlier in this process and its files are untouched since.
        const PchMemo& m = it->second;
        if (!m.signature.empty() && stat_signature(dir, m.names) == m.signature) return dir;
      }
    }
    std::vector<std::string> names;
    std::string why;
    if (verify(dir, key, req.pch_header, &names, &why) != Lookup::Valid) {
      auto held = DiskCache(root).lock(key);
      Lookup found =
          verify(dir, key, req.pch_header, &names, &why);  // another process may have built it
      if (found == Lookup::Corrupt) {
        log(req, "autofuse: precompiled header " + key + " is corrupt (" + why + "); rebuilding");
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
      if (found != Lookup::Valid) {
        remove_stale_temps(root, key);
        auto t0 = std::chrono::steady_clock::now();
        build_pch(req, root, key, dir, *header_dir(req));
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (verify(dir, key, req.pch_header, &names, &why) != Lookup::Valid)
          throw ToolchainError("it does not verify after the build (" + why + ")");
        log(req, "built precompiled header " + key + " in " + seconds_text(secs) + " s");
      }
    }
    remember(dir, false, names);
    return dir;
  } catch (const std::exception& e) {
    log(req, "autofuse: cannot build the precompiled header for " +
                 (req.tag.empty() ? std::string("module") : req.tag) + " (" + e.what() +
                 "); compiling without it");
    if (!dir.empty()) remember(dir, true, {});
    return std::nullopt;
  }
}

void disable_pch(const CompileRequest& req, const std::string& cache_dir) {
  try {
    remember(ensure_private_dir(cache_dir + "/pch") + "/" + pch_key(req), true, {});
  } catch (const std::exception&) {
    // Nothing to disable: prepare_pch could not have returned a dir for this request either.
  }
}

}  // namespace af::jit
