#include "jit/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "jit/file_io.h"
#include "support/error.h"

namespace af::jit {
namespace {

constexpr const char* kMetaMagic = "autofuse-cache-meta 1";

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

/// Makes `path` absolute (against the working directory) and drops trailing slashes.
std::string absolute(std::string path) {
  if (path.empty()) throw ToolchainError("autofuse: empty cache directory path");
  if (path[0] != '/') {
    std::vector<char> buf(4096);
    if (!getcwd(buf.data(), buf.size()))
      throw ToolchainError("autofuse: cannot resolve cache directory '" + path +
                           "': getcwd failed: " + std::strerror(errno));
    path = std::string(buf.data()) + "/" + path;
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

[[noreturn]] void refuse(const std::string& dir, const std::string& why) {
  throw ToolchainError("autofuse: refusing JIT cache directory '" + dir + "': " + why +
                       " (it must be a private directory: yours, mode 0700, not a symlink)");
}

}  // namespace

std::string default_cache_dir() {
  std::string dir = env_or_empty("AUTOFUSE_CACHE_DIR");
  if (!dir.empty()) return absolute(dir);
  std::string xdg = env_or_empty("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return absolute(xdg + "/autofuse");  // XDG: relative = unset
  std::string home = env_or_empty("HOME");
  if (home.empty()) {
    struct passwd pw;
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found)
      home = found->pw_dir;
  }
  if (home.empty())
    throw ToolchainError(
        "autofuse: no JIT cache directory: set AUTOFUSE_CACHE_DIR (HOME is not set)");
  return absolute(home + "/.cache/autofuse");
}

std::string ensure_private_dir(const std::string& dir_in) {
  std::string dir = absolute(dir_in);
  // mkdir -p, each missing component private.
  bool created = false;
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0700) == 0) {
      created = pos == dir.size();
    } else if (errno != EEXIST) {
      refuse(dir, "cannot create '" + prefix + "': " + std::strerror(errno));
    }
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0)
    refuse(dir, std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISLNK(st.st_mode)) refuse(dir, "it is a symlink");
  if (!S_ISDIR(st.st_mode)) refuse(dir, "it is not a directory");
  if (created && (st.st_mode & 0777) != 0700) {
    if (chmod(dir.c_str(), 0700) != 0) refuse(dir, std::string("chmod: ") + std::strerror(errno));
    st.st_mode = (st.st_mode & ~0777u) | 0700;
  }
  if (st.st_uid != geteuid())
    refuse(dir, "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                    std::to_string(geteuid()) + ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    refuse(dir, std::string("it is group- or world-writable (mode ") + mode + ")");
  }
  return dir;
}

std::string CacheMeta::to_text() const {
  std::string cmd = command;
  for (char& c : cmd)
    if (c == '\n' || c == '\r') c = ' ';
  std::ostringstream out;
  out << kMetaMagic << "\n"
      << "key " << key << "\n"
      << "size " << size << "\n"
      << "hash " << content.hex() << "\n"
      << "command " << cmd << "\n";
  return out.str();
}

std::optional<CacheMeta> CacheMeta::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMetaMagic) return std::nullopt;
  CacheMeta m;
  bool has_key = false, has_size = false, has_hash = false;
  while (std::getline(in, line)) {
    size_t sp = line.find(' ');
    std::string name = line.substr(0, sp);
    std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (name == "key") {
      if (!Hash128::from_hex(value)) return std::nullopt;
      m.key = value;
      has_key = true;
    } else if (name == "size") {
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
      m.size = std::strtoull(value.c_str(), nullptr, 10);
      has_size = true;
    } else if (name == "hash") {
      auto h = Hash128::from_hex(value);
      if (!h) return std::nullopt;
      m.content = *h;
      has_hash = true;
    } else if (name == "command") {
      m.command = value;
    }
  }
  if (!has_key || !has_size || !has_hash) return std::nullopt;
  return m;
}

std::optional<Hash128> hash_file(const std::string& path, uint64_t* size) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return std::nullopt;
  }
  Hasher128 h;
  uint64_t total = 0;
  std::vector<char> buf(1 << 16);
  for (;;) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  close(fd);
  if (size) *size = total;
  return h.digest();
}

std::string DiskCache::temp_path(const std::string& key, const std::string& ext) const {
  return dir_ + "/." + key + "." + std::to_string(getpid()) + "." +
         std::to_string(static_cast<long>(syscall(SYS_gettid))) + ".tmp." + ext;
}

DiskCache::Lookup DiskCache::verify(const std::string& key, std::string* why) const {
  struct stat st;
  if (lstat(so_path(key).c_str(), &st) != 0) return Lookup::Missing;
  std::optional<std::string> text = read_small_file(meta_path(key));
  if (!text) return Lookup::Missing;  // a .so without meta was never published: rebuild over it
  std::optional<CacheMeta> meta = CacheMeta::parse(*text);
  if (!meta) {
    *why = "metadata is malformed";
    return Lookup::Corrupt;
  }
  if (meta->key != key) {
    *why = "metadata names key " + meta->key;
    return Lookup::Corrupt;
  }
  uint64_t size = 0;
  std::optional<Hash128> content = hash_file(so_path(key), &size);
  if (!content) {
    *why = "shared object is not a readable regular file";
    return Lookup::Corrupt;
  }
  if (size != meta->size) {
    *why = "size " + std::to_string(size) + " bytes, metadata says " + std::to_string(meta->size);
    return Lookup::Corrupt;
  }
  if (*content != meta->content) {
    *why = "content hash " + content->hex() + ", metadata says " + meta->content.hex();
    return Lookup::Corrupt;
  }
  return Lookup::Valid;
}

void DiskCache::publish(const std::string& key, const std::string& tmp_so,
                        const std::string& command) const {
  CacheMeta meta;
  meta.key = key;
  meta.command = command;
  std::optional<Hash128> content = hash_file(tmp_so, &meta.size);
  if (!content) throw ToolchainError("autofuse: cannot read the built object '" + tmp_so + "'");
  meta.content = *content;
  std::string tmp_meta = temp_path(key, "meta");
  unlink(tmp_meta.c_str());
  if (!write_new_file(tmp_meta, meta.to_text()))
    throw ToolchainError("autofuse: cannot write '" + tmp_meta + "': " + std::strerror(errno));
  // Meta first, then the object: a reader that finds the .so always finds its meta. Racing
  // writers of one key may interleave; verification then reports a mismatch and rebuilds.
  if (rename(tmp_meta.c_str(), meta_path(key).c_str()) != 0) {
    int err = errno;
    unlink(tmp_meta.c_str());
    throw ToolchainError("autofuse: cannot publish '" + meta_path(key) +
                         "': " + std::strerror(err));
  }
  if (rename(tmp_so.c_str(), so_path(key).c_str()) != 0) {
    int err = errno;
    unlink(tmp_so.c_str());
    throw ToolchainError("autofuse: cannot publish '" + so_path(key) + "': " + std::strerror(err));
  }
}

void DiskCache::evict(const std::string& key) const {
  unlink(so_path(key).c_str());
  unlink(meta_path(key).c_str());
}

DiskCache::KeyLock::~KeyLock() {
  close(fd_);
}  // closing the descriptor drops the flock

std::unique_ptr<DiskCache::KeyLock> DiskCache::lock(const std::string& key) const {
  std::string path = dir_ + "/." + key + ".lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw ToolchainError("autofuse: cannot open lock file '" + path + "': " + std::strerror(errno));
  while (flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    close(fd);
    throw ToolchainError("autofuse: cannot lock '" + path + "': " + std::strerror(err));
  }
  return std::make_unique<KeyLock>(fd);
}

void DiskCache::remove_stale_temps(const std::string& key) const {
  DIR* d = opendir(dir_.c_str());
  if (!d) return;
  std::string prefix = "." + key + ".";
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0 && name.find(".tmp.") != std::string::npos)
      unlinkat(dirfd(d), name.c_str(), 0);
  }
  closedir(d);
}

}  // namespace af::jit
