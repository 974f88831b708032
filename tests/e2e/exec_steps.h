#pragma once
// Steps of `paceline task exec` end to end that several suites share: on loopback and on the
// multi-host bed (exec_e2e_test.cc), and into a container (container_e2e_test.cc). Each runs the
// real CLI against a TestCluster and checks what a user would see: stdin piped through, stdout
// and stderr apart, the exit code; a terminal with its size, a resize and raw input.
//
// Thread-safety: test code, one thread.

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {

// `s` quoted for /bin/sh.
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

struct ExecCall {
  std::string input;               // the CLI's stdin ("" : /dev/null)
  std::vector<std::string> flags;  // e.g. {"-i"}
  std::string token;               // "" : the cluster's admin token
};

// `paceline --addr A --token T [--ca CA] task exec FLAGS TASK -- ARGV < INPUT` on `c`.
inline RunResult RunExec(TestCluster& c, const std::string& task,
                         const std::vector<std::string>& argv, const ExecCall& call = {}) {
  std::string cmd =
      absl::StrCat("exec ", ShellQuote(PacelineBinary()), " --addr ", c.master_address(0),
                   " --token ", ShellQuote(call.token.empty() ? c.token() : call.token));
  // A cluster with TLS has made its CA (a plain one has none).
  if (::access(c.ca_file().c_str(), R_OK) == 0) absl::StrAppend(&cmd, " --ca ", c.ca_file());
  absl::StrAppend(&cmd, " task exec");
  for (const std::string& f : call.flags) absl::StrAppend(&cmd, " ", f);
  absl::StrAppend(&cmd, " ", task, " --");
  for (const std::string& a : argv) absl::StrAppend(&cmd, " ", ShellQuote(a));
  std::string in = call.input.empty() ? "/dev/null" : c.WriteFile("exec-stdin.txt", call.input);
  absl::StrAppend(&cmd, " < ", in);
  return RunProgram({"-c", cmd}, {.cwd = c.dir(), .program = "/bin/sh"});
}

// Stdin piped through with -i, stdout and stderr apart, the exit code; without -i the command
// reads end of file at once; `big` bytes each way through the flow-control windows. Uses only
// the shell, cat and wc (a busybox image has them).
inline void ExpectPipes(TestCluster& c, const std::string& task, size_t big = 3 << 20) {
  RunResult r = RunExec(c, task,
                        {"sh", "-c",
                         "while read l; do echo \"got $l\"; done; echo to-stderr >&2; "
                         "exit 42"},
                        {.input = "piped through\nline two\n", .flags = {"-i"}});
  EXPECT_EQ(r.exit_code, 42) << r.err;
  EXPECT_EQ(r.out, "got piped through\ngot line two\n");
  EXPECT_EQ(r.err, "to-stderr\n");
  RunResult no_stdin = RunExec(c, task, {"wc", "-c"}, {.input = "ignored"});
  EXPECT_EQ(no_stdin.exit_code, 0) << no_stdin.err;
  EXPECT_EQ(absl::StripAsciiWhitespace(no_stdin.out), "0");
  if (big == 0) return;
  std::string data(big, 'x');
  for (size_t i = 0; i < data.size(); i += 4096) data[i] = '\n';
  RunResult large =
      RunExec(c, task, {"sh", "-c", "cat; cat >&2 < /dev/null"}, {.input = data, .flags = {"-i"}});
  EXPECT_EQ(large.exit_code, 0) << large.err;
  EXPECT_EQ(large.out.size(), data.size());
  EXPECT_TRUE(large.out == data);
}

// `task exec -it TASK -- sh -c SCRIPT` driven from a pseudo-terminal of the test, as a user's
// terminal would: 30x100 at the start, resized to 40x120 once `ready` was printed, "typed\r"
// written once `prompt` was printed. Returns what the terminal showed and, last,
// "STATUS <the CLI's exit code> OK <1 when every step was seen>".
inline RunResult DriveTerminal(TestCluster& c, const std::string& task, const std::string& script,
                               const std::string& ready, const std::string& prompt) {
  const std::string driver = c.WriteFile("exec-drive.py", R"PY(
import fcntl, os, pty, select, struct, sys, termios, time
SIZE = lambda r, c: struct.pack("HHHH", r, c, 0, 0)
ready, prompt = sys.argv[1].encode(), sys.argv[2].encode()
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, SIZE(30, 100))
    os.execv(sys.argv[3], sys.argv[3:])
out = b""
def wait_for(text, timeout=30):
    global out
    end = time.time() + timeout
    while text not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return text in out
ok = wait_for(ready)
fcntl.ioctl(fd, termios.TIOCSWINSZ, SIZE(40, 120))  # SIGWINCH to the CLI
ok = ok and wait_for(prompt)
os.write(fd, b"typed\r")
ok = ok and wait_for(b"got typed")
_, status = os.waitpid(pid, 0)
wait_for(b"\0", 0.5)
sys.stdout.write(out.decode(errors="replace"))
sys.stdout.write("\nSTATUS %d OK %d\n" % (os.waitstatus_to_exitcode(status), ok))
)PY");
  std::vector<std::string> argv = {
      driver, ready, prompt, PacelineBinary(), "--addr", c.master_address(0), "--token", c.token()};
  if (::access(c.ca_file().c_str(), R_OK) == 0) {
    argv.insert(argv.end(), {"--ca", c.ca_file()});
  }
  argv.insert(argv.end(), {"task", "exec", "-it", task, "--", "sh", "-c", script});
  return RunProgram(argv, {.cwd = c.dir(), .program = "python3"}, absl::Seconds(90));
}

// A terminal through `task exec -it`: the command's stdin is a terminal (`tty` names it), of
// the caller's size, which follows a resize; raw input (the caller's "\r" reaches the command's
// line discipline, which reads it as the end of a line); the exit code. `tools`: how the
// command calls tty and stty ("busybox " in a busybox image).
inline void ExpectTerminal(TestCluster& c, const std::string& task, const std::string& tools = "") {
  const std::string script =
      absl::StrCat(tools, "tty; ", tools, "stty size; echo size-shown; while [ \"$(", tools,
                   "stty size)\" != \"40 120\" ]; do sleep 0.05; done; echo resized; read x; "
                   "echo \"got $x\"; exit 7");
  RunResult r = DriveTerminal(c, task, script, "size-shown", "resized");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("/dev/pts/"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("30 100"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("resized"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("got typed"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("STATUS 7 OK 1"));
}

}  // namespace paceline::e2e
