#include "tests/e2e/process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace paceline::e2e {

std::string PacelineBinary() { return PACELINE_BINARY; }

std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* dir = mkdtemp(buf.data());
  if (dir == nullptr) std::abort();
  // Agents run tasks as an unprivileged user, which must reach sandboxes below this dir.
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all |
                                        std::filesystem::perms::group_exec |
                                        std::filesystem::perms::others_exec);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

Process Process::Start(const std::vector<std::string>& args, const Options& options) {
  Process p;
  std::string log_dir = !options.log_dir.empty() ? options.log_dir
                        : !options.cwd.empty()   ? options.cwd
                                                 : "/tmp";
  static int counter = 0;
  std::string stem = absl::StrCat(log_dir, "/proc-", ::getpid(), "-", counter++);
  p.out_path_ = stem + ".out";
  p.err_path_ = stem + ".err";
  std::vector<std::string> argv_s = {options.program.empty() ? PacelineBinary() : options.program};
  const std::string netns = options.netns.empty() ? "" : "/run/netns/" + options.netns;
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = options.env;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const absl::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(options.env.begin(), options.env.end(), [&](const auto& o) {
      return absl::StartsWith(o, absl::StrCat(name, "="));
    });
    if (!replaced) env_s.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // own process group: a signal to the test never hits it by accident
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(127);
    if (!netns.empty()) {
      int fd = open(netns.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) _exit(126);
    }
    int out = open(p.out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(p.err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  p.pid_ = pid;
  return p;
}

Process::Process(Process&& o) noexcept
    : pid_(o.pid_), out_path_(std::move(o.out_path_)), err_path_(std::move(o.err_path_)) {
  o.pid_ = -1;
}

Process::~Process() {
  if (pid_ > 0 && Running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void Process::Signal(int sig) const {
  if (pid_ > 0) kill(pid_, sig);
}

std::optional<int> Process::WaitExit(absl::Duration timeout) {
  if (pid_ <= 0) return std::nullopt;
  std::optional<int> code;
  WaitFor(
      [&] {
        int status = 0;
        pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
          code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          pid_ = -1;
          return true;
        }
        return false;
      },
      timeout);
  return code;
}

bool Process::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

std::string Process::Stdout() const { return ReadFile(out_path_); }
std::string Process::Stderr() const { return ReadFile(err_path_); }

RunResult RunPaceline(const std::vector<std::string>& args, const std::string& cwd,
                      absl::Duration timeout) {
  return RunProgram(args, {.cwd = cwd}, timeout);
}

RunResult RunProgram(const std::vector<std::string>& args, Process::Options options,
                     absl::Duration timeout) {
  std::string dir = MakeTempDir("pl-run");
  options.log_dir = dir;
  Process p = Process::Start(args, options);
  RunResult r;
  std::optional<int> code = p.WaitExit(timeout);
  r.exit_code = code.value_or(-1);
  r.out = p.Stdout();
  r.err = p.Stderr();
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace paceline::e2e
