// The JIT's disk cache: a private directory of `<key>.so` + `<key>.meta` pairs. Entries are
// published by atomic rename and verified (size + content hash) before they are loaded.
// Layout, key and trust model: docs/cache.md.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "jit/hash.h"

namespace af::jit {

/// $AUTOFUSE_CACHE_DIR, else $XDG_CACHE_HOME/autofuse, else ~/.cache/autofuse (absolute).
std::string default_cache_dir();

/// Creates `dir` (and missing parents) with mode 0700 and checks it is private: a real directory
/// (not a symlink), owned by this uid, not group/world-writable. Throws ToolchainError naming the
/// directory and the reason otherwise. Returns the absolute path.
std::string ensure_private_dir(const std::string& dir);

/// What `<key>.meta` records about `<key>.so`.
struct CacheMeta {
  std::string key;      // 32 hex digits, must match the file name
  uint64_t size = 0;    // bytes of the .so
  Hash128 content;      // FNV-1a-128 of the .so
  std::string command;  // the compiler command line (informational)

  /// The text form (a few "name value" lines).
  std::string to_text() const;
  /// Parses to_text()'s output; nullopt when malformed.
  static std::optional<CacheMeta> parse(const std::string& text);
};

/// One cache directory (already checked by ensure_private_dir).
class DiskCache {
 public:
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  /// `<dir>/<key>.so`.
  std::string so_path(const std::string& key) const { return dir_ + "/" + key + ".so"; }
  /// `<dir>/<key>.meta`.
  std::string meta_path(const std::string& key) const { return dir_ + "/" + key + ".meta"; }
  /// `<dir>/<kernel key>.kernel`: a kernel index entry (jit/kernel_index.h).
  std::string index_path(const std::string& key) const { return dir_ + "/" + key + ".kernel"; }
  /// `<dir>/.<key>.<pid>.<tid>.tmp.<ext>`: where this thread builds before publishing.
  std::string temp_path(const std::string& key, const std::string& ext) const;

  /// The state of an entry on disk.
  enum class Lookup { Missing, Valid, Corrupt };
  /// Checks `<key>.so` against `<key>.meta`: Missing when either file is absent, Corrupt (with
  /// the reason in *why) when the meta is malformed or the size / content hash differ.
  Lookup verify(const std::string& key, std::string* why) const;

  /// Hashes the built object at `tmp_so`, writes `<key>.meta` (temp + rename), then renames
  /// `tmp_so` to `<key>.so`. Throws ToolchainError when a write or rename fails.
  void publish(const std::string& key, const std::string& tmp_so, const std::string& command) const;

  /// Deletes `<key>.so` and `<key>.meta` (missing files are fine).
  void evict(const std::string& key) const;

  /// An exclusive lock on one key across processes (flock on `<dir>/.<key>.lock`), so that
  /// processes that miss on the same key at once compile it once. Released on destruction.
  class KeyLock {
   public:
    explicit KeyLock(int fd) : fd_(fd) {}
    ~KeyLock();
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;

   private:
    int fd_;
  };
  /// Blocks until this process holds the key's lock. Throws ToolchainError when it cannot.
  std::unique_ptr<KeyLock> lock(const std::string& key) const;

  /// Deletes leftover `.<key>.*.tmp.*` files of builds that died; call with the key's lock held.
  void remove_stale_temps(const std::string& key) const;

 private:
  std::string dir_;
};

/// Size and FNV-1a-128 of a regular file (opened without following symlinks); nullopt when it
/// cannot be read. `*size` receives the byte count.
std::optional<Hash128> hash_file(const std::string& path, uint64_t* size);

}  // namespace af::jit
