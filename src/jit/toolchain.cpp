#include "jit/toolchain.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "support/error.h"

extern char** environ;

namespace af::jit {
namespace {

/// posix_spawn file actions that free themselves.
struct FileActions {
  posix_spawn_file_actions_t fa;
  FileActions() { posix_spawn_file_actions_init(&fa); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa); }
};

/// Spawns argv with the given file actions; throws "not found" when exec fails.
pid_t spawn(const std::vector<std::string>& argv, FileActions& actions) {
  if (argv.empty()) throw ToolchainError("autofuse: internal error: empty command line");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  // glibc's posix_spawn reports exec failures (ENOENT, EACCES) as its return value.
  int err = posix_spawnp(&pid, cargv[0], &actions.fa, nullptr, cargv.data(), environ);
  if (err == ENOENT || err == EACCES || err == ENOEXEC || err == ENOTDIR)
    throw ToolchainError(compiler_not_found_message(argv[0]));
  if (err != 0)
    throw ToolchainError("autofuse: cannot run '" + argv[0] + "': " + std::strerror(err));
  return pid;
}

/// Waits for a child and decodes its status.
ProcessExit wait_child(pid_t pid, const std::string& what) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    throw ToolchainError("autofuse: cannot wait for '" + what + "': " + std::strerror(errno));
  }
  ProcessExit e;
  if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.code = -1;
    e.signal = WTERMSIG(status);
  }
  return e;
}

}  // namespace

std::string ProcessExit::describe() const {
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit " + std::to_string(code);
}

std::string compiler_not_found_message(const std::string& cxx) {
  return "autofuse: C++ compiler '" + cxx + "' not found (set CXX or CompilerConfig(cxx=...))";
}

ProcessExit run_process(const std::vector<std::string>& argv, const std::string& output_path) {
  FileActions actions;
  posix_spawn_file_actions_addopen(&actions.fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions.fa, 1, output_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions.fa, 1, 2);
  pid_t pid = spawn(argv, actions);
  ProcessExit e = wait_child(pid, argv[0]);
  // A shell-less exec failure that slipped past posix_spawn shows up as 127 with no output.
  if (e.code == 127) {
    std::ifstream in(output_path);
    if (in.peek() == std::ifstream::traits_type::eof())
      throw ToolchainError(compiler_not_found_message(argv[0]));
  }
  return e;
}

ProcessExit run_process_capture(const std::vector<std::string>& argv, std::string* output,
                                size_t max_bytes) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw ToolchainError(std::string("autofuse: pipe failed: ") + std::strerror(errno));
  FileActions actions;
  posix_spawn_file_actions_addopen(&actions.fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions.fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions.fa, fds[1], 2);
  pid_t pid;
  try {
    pid = spawn(argv, actions);
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    throw;
  }
  close(fds[1]);
  output->clear();
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (output->size() < max_bytes)
      output->append(buf, std::min(static_cast<size_t>(n), max_bytes - output->size()));
  }
  close(fds[0]);
  ProcessExit e = wait_child(pid, argv[0]);
  if (e.code == 127 && output->empty()) throw ToolchainError(compiler_not_found_message(argv[0]));
  return e;
}

std::string compiler_identity(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(cxx);
    if (it != memo.end()) return it->second;
  }
  std::string out;
  ProcessExit e = run_process_capture({cxx, "--version"}, &out);
  std::string first = out.substr(0, out.find('\n'));
  if (!e.ok() || first.empty())
    throw ToolchainError("autofuse: C++ compiler '" + cxx + "' failed to report its version (" +
                         e.describe() + "): " + first);
  std::lock_guard<std::mutex> lock(mu);
  memo.emplace(cxx, first);
  return first;
}

}  // namespace af::jit
