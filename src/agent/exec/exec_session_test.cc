// ExecSession and ExecProcess on real processes: the exec-mode wrapper runs each command, with
// pipes or a terminal; ExecCommandFor's command lines and a container's process.

#include "agent/exec/exec_session.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "agent/exec/exec_command.h"
#include "agent/file_util.h"
#include "agent/testing/agent_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

using testing::TempDir;

// What a session handed on, collected from its pump thread.
struct Collected {
  absl::Mutex mu;
  std::string out, err;
  bool started = false;
  uint64_t stdin_credit = 0;
  std::optional<ExecExit> exit;
  size_t events = 0;
  void Add(ExecEvent e) {
    absl::MutexLock lock(&mu);
    started = started || e.started;
    out += e.out;
    err += e.err;
    stdin_credit += e.stdin_credit;
    if (e.exit) exit = e.exit;
    ++events;
  }
  bool WaitFor(const std::function<bool(Collected&)>& pred, absl::Duration timeout) {
    auto holds = [&] { return pred(*this); };
    absl::MutexLock lock(&mu);
    return mu.AwaitWithTimeout(absl::Condition(&holds), timeout);
  }
};

RunContext Context(const TempDir& dir) {
  RunContext ctx;
  ctx.key = "7_1_1";
  ctx.sandbox = dir.path();
  ctx.run_state = dir.Sub("run");
  ctx.final_env = {"PATH=/usr/local/bin:/usr/bin:/bin", "PACELINE_JOB_ID=7",
                   "PACELINE_INSTANCE_ID=1"};
  return ctx;
}

class Runner {
 public:
  Runner(const RunContext& ctx, std::vector<std::string> argv, bool tty = false,
         uint32_t window = 256 * 1024, TerminalSize size = {}) {
    absl::StatusOr<ExecCommand> cmd =
        ExecCommandFor(ctx, testing::WrapperPath(), nullptr, argv, tty, "");
    EXPECT_TRUE(cmd.ok()) << cmd.status();
    absl::StatusOr<std::unique_ptr<ExecProcess>> p = ExecProcess::Start(*cmd, tty, size);
    EXPECT_TRUE(p.ok()) << p.status();
    pid_ = (*p)->pid();
    session_ = std::make_unique<ExecSession>(*std::move(p), window,
                                             [this](ExecEvent e) { got_.Add(std::move(e)); });
    thread_ = std::thread([this] { session_->Run(); });
  }
  ~Runner() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  ExecSession& session() { return *session_; }
  Collected& got() { return got_; }
  int pid() const { return pid_; }

 private:
  Collected got_;
  std::unique_ptr<ExecSession> session_;
  std::thread thread_;
  int pid_ = 0;
};

TEST(ExecSessionTest, PipesCarryStdinStdoutStderrAndTheExitCode) {
  TempDir dir;
  Runner r(Context(dir), {"sh", "-c", "cat; echo oops >&2; exit 3"});
  r.session().Post(ExecInputs{.stdin = "hello\nworld\n"});
  r.session().Post(ExecInputs{.close_stdin = true});
  r.Join();
  EXPECT_TRUE(r.got().started);
  EXPECT_EQ(r.got().out, "hello\nworld\n");
  EXPECT_EQ(r.got().err, "oops\n");
  EXPECT_EQ(r.got().stdin_credit, 12u);
  ASSERT_TRUE(r.got().exit.has_value());
  EXPECT_EQ(r.got().exit->exit_code, 3);
  EXPECT_EQ(r.got().exit->signal, 0);
}

TEST(ExecSessionTest, ArgumentsAreNotParsedByAShellAndRunInTheSandboxWithTheTaskEnvironment) {
  TempDir dir;
  Runner r(Context(dir), {"printf", "%s|%s|%s\\n", "a b", "$PACELINE_JOB_ID", "*"});
  r.session().Post(ExecInputs{.close_stdin = true});
  r.Join();
  EXPECT_EQ(r.got().out, "a b|$PACELINE_JOB_ID|*\n");
  Runner env(Context(dir), {"sh", "-c", "pwd; echo $PACELINE_JOB_ID/$PACELINE_INSTANCE_ID"});
  env.session().Post(ExecInputs{.close_stdin = true});
  env.Join();
  EXPECT_EQ(env.got().out, dir.path() + "\n7/1\n");
}

TEST(ExecSessionTest, AnUnknownCommandFailsWithTheShellsCode) {
  TempDir dir;
  Runner r(Context(dir), {"no-such-command-here"});
  r.Join();
  ASSERT_TRUE(r.got().exit.has_value());
  EXPECT_EQ(r.got().exit->exit_code, 127);
  EXPECT_TRUE(absl::StrContains(r.got().err, "no-such-command-here")) << r.got().err;
}

TEST(ExecSessionTest, AKillingSignalIsReportedAsShellsDo) {
  TempDir dir;
  Runner r(Context(dir), {"sh", "-c", "kill -9 $$"});
  r.Join();
  ASSERT_TRUE(r.got().exit.has_value());
  EXPECT_EQ(r.got().exit->signal, SIGKILL);
  EXPECT_EQ(r.got().exit->exit_code, 128 + SIGKILL);
}

TEST(ExecSessionTest, ATerminalIsTheControllingTtyWithTheCallersSizeAndFollowsResizes) {
  TempDir dir;
  Runner r(Context(dir), {"sh", "-c", "tty; stty size; read line; stty size; echo \"[$TERM]\""},
           /*tty=*/true, 256 * 1024, TerminalSize{.rows = 30, .cols = 100});
  ASSERT_TRUE(r.got().WaitFor([](Collected& c) { return absl::StrContains(c.out, "30 100"); },
                              absl::Seconds(10)))
      << r.got().out;
  r.session().Post(ExecInputs{.resize = TerminalSize{.rows = 40, .cols = 120}});
  r.session().Post(ExecInputs{.stdin = "go\n"});
  r.Join();
  const std::string& out = r.got().out;
  EXPECT_TRUE(absl::StartsWith(out, "/dev/pts/")) << out;
  EXPECT_TRUE(absl::StrContains(out, "40 120")) << out;
  EXPECT_TRUE(absl::StrContains(out, "[xterm]")) << out;
  EXPECT_TRUE(r.got().err.empty());
  ASSERT_TRUE(r.got().exit.has_value());
  EXPECT_EQ(r.got().exit->exit_code, 0);
}

TEST(ExecSessionTest, ClosingATerminalsInputIsItsEndOfFile) {
  TempDir dir;
  Runner r(Context(dir), {"sh", "-c", "wc -c; echo done"}, /*tty=*/true);
  r.session().Post(ExecInputs{.stdin = "abc\n"});
  r.session().Post(ExecInputs{.close_stdin = true});
  r.Join();
  EXPECT_TRUE(absl::StrContains(r.got().out, "done")) << r.got().out;
  EXPECT_EQ(r.got().exit->exit_code, 0);
}

TEST(ExecSessionTest, OutputStopsAtTheWindowUntilCredited) {
  TempDir dir;
  constexpr uint32_t kWindow = 64 * 1024;
  Runner r(Context(dir), {"head", "-c", "1000000", "/dev/zero"}, false, kWindow);
  ASSERT_TRUE(
      r.got().WaitFor([](Collected& c) { return c.out.size() >= kWindow; }, absl::Seconds(10)));
  // Nothing more comes without credit: the command is blocked in its write.
  absl::SleepFor(absl::Milliseconds(300));
  {
    absl::MutexLock lock(&r.got().mu);
    EXPECT_EQ(r.got().out.size(), kWindow);
    EXPECT_FALSE(r.got().exit.has_value());
  }
  // Credit what was "passed on", a window at a time, until the end: never more than a window
  // beyond the credit.
  uint64_t credited = 0;
  for (;;) {
    size_t size = 0;
    bool exited = false;
    ASSERT_TRUE(r.got().WaitFor(
        [&](Collected& c) { return c.exit.has_value() || c.out.size() == credited + kWindow; },
        absl::Seconds(10)));
    {
      absl::MutexLock lock(&r.got().mu);
      size = r.got().out.size();
      exited = r.got().exit.has_value();
    }
    ASSERT_LE(size, credited + kWindow);
    if (exited) break;
    r.session().Post(ExecInputs{.output_credit = static_cast<uint32_t>(size - credited)});
    credited = size;
  }
  r.Join();
  EXPECT_EQ(r.got().out.size(), 1000000u);
  EXPECT_EQ(r.got().exit->exit_code, 0);
}

TEST(ExecSessionTest, CancelKillsTheCommand) {
  TempDir dir;
  Runner r(Context(dir), {"sleep", "100"});
  ASSERT_TRUE(r.got().WaitFor([](Collected& c) { return c.started; }, absl::Seconds(10)));
  const int pid = r.pid();
  const absl::Time t0 = absl::Now();
  r.session().Cancel();
  r.Join();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(5));
  EXPECT_FALSE(r.got().exit.has_value());  // a cancelled session hands nothing more on
  EXPECT_FALSE(testing::PidAlive(pid));
}

TEST(ExecCommandTest, ACommandForAContainerRunIsCrunExecOfTheContainersOwnProcess) {
  TempDir tmp;
  const std::string dir = tmp.path();
  RunContext ctx;
  ctx.key = "7_1_1";
  ctx.sandbox = "/sb";
  ctx.container_id = "paceline-7_1_1";
  ctx.user.uid = 1000;
  ctx.user.gid = 1001;
  ctx.final_env = {"PACELINE_JOB_ID=7"};
  ctx.oci_config = dir + "/config.json";
  // The container's process as the container hook wrote it (oci_config.h).
  ASSERT_TRUE(WriteFile(ctx.oci_config, R"({"ociVersion": "1.0.2", "process": {
      "terminal": false, "user": {"uid": 1000, "gid": 1001, "additionalGids": [5]},
      "args": ["/.paceline-init", "--mode=init", "--", "sleep", "9"],
      "env": ["PATH=/bin", "PACELINE_JOB_ID=7"], "cwd": "/sb", "noNewPrivileges": true}})")
                  .ok());
  OciRuntime oci{.path = "/usr/bin/crun", .root = "/var/run/pl"};
  const std::string prefix = dir + "/run.exec-3";
  absl::StatusOr<ExecCommand> c =
      ExecCommandFor(ctx, "/w", &oci, {"ls", "-l"}, false, prefix + ".pid");
  ASSERT_TRUE(c.ok()) << c.status();
  const std::vector<std::string> want = {"/usr/bin/crun",
                                         "--root=/var/run/pl",
                                         "--cgroup-manager=disabled",
                                         "exec",
                                         "--process=" + prefix + ".process.json",
                                         "--pid-file=" + prefix + ".pid",
                                         "paceline-7_1_1"};
  EXPECT_EQ(c->wrapper.argv, want);
  EXPECT_EQ(c->wrapper.user.uid, -1);  // crun switches inside the container
  EXPECT_EQ(c->pid_file, prefix + ".pid");
  EXPECT_EQ(c->process_file, prefix + ".process.json");
  EXPECT_TRUE(c->console_socket.empty());
  // The container's own user, groups, variables and directory; the command through its PATH.
  nlohmann::json p = nlohmann::json::parse(c->process_json);
  EXPECT_EQ(p["user"]["uid"], 1000);
  EXPECT_EQ(p["user"]["additionalGids"][0], 5);
  EXPECT_EQ(p["env"], nlohmann::json({"PATH=/bin", "PACELINE_JOB_ID=7"}));
  EXPECT_EQ(p["cwd"], "/sb");
  EXPECT_EQ(p["noNewPrivileges"], true);
  EXPECT_EQ(p["terminal"], false);
  EXPECT_EQ(p["args"], nlohmann::json({"/bin/sh", "-c", "exec \"$0\" \"$@\"", "ls", "-l"}));

  // With a terminal: crun makes it and hands it over the console socket; TERM is set.
  absl::StatusOr<ExecCommand> t = ExecCommandFor(ctx, "/w", &oci, {"sh"}, true, prefix + ".pid");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->console_socket, prefix + ".console");
  EXPECT_THAT(t->wrapper.argv, ::testing::Contains("--tty"));
  EXPECT_THAT(t->wrapper.argv, ::testing::Contains("--console-socket=" + prefix + ".console"));
  nlohmann::json tp = nlohmann::json::parse(t->process_json);
  EXPECT_EQ(tp["terminal"], true);
  EXPECT_EQ(tp["env"].back(), "TERM=xterm");

  // Secret variables: the process file lives in the secrets tmpfs.
  ctx.secret_env = {"S=2"};
  ctx.secrets_dir = dir + "/secrets";
  ctx.secrets_tmpfs = true;
  absl::StatusOr<ExecCommand> s = ExecCommandFor(ctx, "/w", &oci, {"id"}, false, prefix + ".pid");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->process_file, dir + "/secrets/.run.exec-3.process.json");

  EXPECT_EQ(ExecCommandFor(ctx, "/w", nullptr, {"ls"}, false, "/p").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ExecCommandFor(ctx, "/w", &oci, {}, false, "/p").status().code(),
            absl::StatusCode::kInvalidArgument);
  ctx.oci_config = dir + "/missing.json";
  absl::Status missing = ExecCommandFor(ctx, "/w", &oci, {"ls"}, false, "/p.pid").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(missing.message(), "missing.json")) << missing;
}

TEST(ExecCommandTest, AHostRunsCommandFoundInTheTasksPathIsExecdWithoutAShell) {
  TempDir tmp;
  // bin/a: executable by its owner alone (not the task's user); bin2/a and bin2/b by anyone.
  for (const char* d : {"/bin", "/bin2"}) ASSERT_EQ(::mkdir(tmp.Sub(d).c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(tmp.Sub("bin/a"), "#!/bin/sh\n", 0700).ok());
  ASSERT_EQ(::chown(tmp.Sub("bin/a").c_str(), 0, 0), 0);
  ASSERT_TRUE(WriteFile(tmp.Sub("bin2/a"), "#!/bin/sh\n", 0755).ok());
  ASSERT_TRUE(WriteFile(tmp.Sub("bin2/b"), "#!/bin/sh\n", 0644).ok());
  RunContext ctx;
  ctx.sandbox = tmp.path();
  ctx.user.uid = 4242;
  ctx.user.gid = 4242;
  ctx.final_env = {"PATH=" + tmp.Sub("bin") + ":" + tmp.Sub("bin2")};
  absl::StatusOr<ExecCommand> a = ExecCommandFor(ctx, "/w", nullptr, {"a", "x y"}, false, "");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->wrapper.argv, (std::vector<std::string>{tmp.Sub("bin2/a"), "x y"}));
  absl::StatusOr<ExecCommand> abs = ExecCommandFor(ctx, "/w", nullptr, {"/bin/sh"}, false, "");
  ASSERT_TRUE(abs.ok()) << abs.status();
  EXPECT_EQ(abs->wrapper.argv, (std::vector<std::string>{"/bin/sh"}));
  // Not executable, not there, or a relative path: the shell looks it up and says why.
  for (const std::string& name :
       std::vector<std::string>{"b", "nowhere", "./a", "bin2/a", tmp.Sub("bin2/b")}) {
    absl::StatusOr<ExecCommand> c = ExecCommandFor(ctx, "/w", nullptr, {name}, false, "");
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->wrapper.argv,
              (std::vector<std::string>{"/bin/sh", "-c", "exec \"$0\" \"$@\"", name}));
  }
}

TEST(ExecCommandTest, AHostRunsCommandJoinsItsCgroupAsItsUserInItsSandbox) {
  RunContext ctx;
  ctx.sandbox = "/sb";
  ctx.user.uid = 1000;
  ctx.user.gid = 1000;
  ctx.cgroup_procs = {"/sys/fs/cgroup/x/cgroup.procs"};
  ctx.final_env = {"A=1"};
  ctx.secret_env = {"S=2"};
  absl::StatusOr<ExecCommand> c = ExecCommandFor(ctx, "/w", nullptr, {"id"}, true, "");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->wrapper.exec_mode);
  EXPECT_EQ(c->wrapper.cwd, "/sb");
  EXPECT_EQ(c->wrapper.user.uid, 1000);
  EXPECT_EQ(c->wrapper.cgroup_procs, ctx.cgroup_procs);
  EXPECT_EQ(c->env, (std::vector<std::string>{"A=1", "S=2", "TERM=xterm"}));
  EXPECT_TRUE(c->pid_file.empty());
}

}  // namespace
}  // namespace paceline::agent
