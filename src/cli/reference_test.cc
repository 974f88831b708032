#include "cli/reference.h"

#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A small command line shaped like paceline's: a global option, a group with subcommands, a
// command with a positional argument, a flag, an option with a value, and hidden parts.
struct Tree {
  CLI::App app{"Tool: does things."};
  std::string addr, file, name, secret;
  bool follow = false;
  Tree() {
    app.name("tool");
    app.add_option("--addr", addr, "where the master is");
    CLI::App* job = app.add_subcommand("job", "manage jobs");
    CLI::App* create = job->add_subcommand("create", "create a job from a spec");
    create->add_option("-f,--file", file, "the spec file")->required();
    create->add_flag("--follow", follow, "follow its tasks");
    CLI::App* get = job->add_subcommand("get", "show one job");
    get->add_option("name", name, "the job's name or id");
    job->add_subcommand("debug", "internal")->group("");
    app.add_option("--secret", secret, "hidden")->group("");
  }
};

// What bash offers for `words` (the last one being completed) with `script` loaded.
std::string Complete(const std::string& script, const std::string& words) {
  char path[] = "/tmp/reference_test_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  {
    std::ofstream f(path);
    f << script << "\nCOMP_WORDS=(" << words << ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
      << "_tool\nprintf '%s\\n' \"${COMPREPLY[@]}\" | sort | tr '\\n' ' '\n";
  }
  std::string out;
  FILE* p = popen((std::string("bash ") + path).c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  unlink(path);
  return out;
}

TEST(BashCompletionTest, OffersTheCommandsAndOptionsOfEachLevel) {
  Tree t;
  const std::string script = BashCompletion(t.app);
  EXPECT_EQ(Complete(script, "tool ''"), "--addr --help job ");
  EXPECT_EQ(Complete(script, "tool job ''"), "--addr --help create get ");
  EXPECT_EQ(Complete(script, "tool --addr x job cr"), "create ");
  EXPECT_EQ(Complete(script, "tool job create --f"), "--file --follow ");
  EXPECT_EQ(Complete(script, "tool job create --file /dev/nu"), "/dev/null ");
  EXPECT_EQ(Complete(script, "tool job create --follow --f"), "--file --follow ");
  EXPECT_EQ(Complete(script, "tool nothing ''"), "--addr --help job ");
}

TEST(BashCompletionTest, LeavesHiddenPartsOut) {
  Tree t;
  const std::string script = BashCompletion(t.app);
  EXPECT_THAT(script, Not(HasSubstr("debug")));
  EXPECT_THAT(script, Not(HasSubstr("--secret")));
}

TEST(ManPagesTest, OnePagePerCommandWithEveryOption) {
  Tree t;
  std::map<std::string, std::string> pages = ManPages(t.app, "1.2.3");
  ASSERT_EQ(pages.size(), 2u);
  const std::string& top = pages["tool.1"];
  EXPECT_THAT(top, HasSubstr(".TH TOOL 1 \"\" \"paceline 1.2.3\""));
  EXPECT_THAT(top, HasSubstr("\\fB\\-\\-addr\\fR \\fITEXT\\fR"));
  EXPECT_THAT(top, HasSubstr("tool\\-job\\fR(1)"));
  const std::string& job = pages["tool-job.1"];
  EXPECT_THAT(job, HasSubstr(".SS \"tool job create\""));
  EXPECT_THAT(job, HasSubstr("\\fB\\-f\\fR, \\fB\\-\\-file\\fR \\fITEXT\\fR\nthe spec file"));
  EXPECT_THAT(job, HasSubstr("\\fB\\-\\-follow\\fR\nfollow its tasks"));
  EXPECT_THAT(job, HasSubstr(".TP\n\\fINAME\\fR\nthe job's name or id"));
  EXPECT_THAT(job, Not(HasSubstr("debug")));
  EXPECT_THAT(top, Not(HasSubstr("secret")));
}

TEST(ManPagesTest, TextCannotBecomeRoffRequests) {
  CLI::App app{".so /etc/passwd\n'x back\\slash \u2014 \u00b7"};
  app.name("t");
  std::map<std::string, std::string> pages = ManPages(app, "1");
  EXPECT_THAT(pages["t.1"],
              HasSubstr("\n\\&.so /etc/passwd\n\\&'x back\\eslash \\[u2014] \\[u00B7]\n"));
}

TEST(ManPagesTest, GroffRendersThemWithoutWarnings) {
  Tree t;
  for (const auto& [file, text] : ManPages(t.app, "1")) {
    char path[] = "/tmp/reference_man_XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
    const std::string cmd = std::string("groff -man -Tutf8 -ww -z ") + path + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << file;
    EXPECT_EQ(out, "") << file;
    unlink(path);
  }
}

}  // namespace
}  // namespace paceline::cli
