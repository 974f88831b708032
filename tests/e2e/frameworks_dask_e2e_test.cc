// End to end on the multi-host bed (4 agents, each in a network namespace of its own): the Dask
// driver of examples/frameworks/dask (driver.py and job.yaml, as they ship, run with the Python
// client installed into a venv over Debian's python3-distributed). The driver, instance 0 and a
// controller, reaches the master over TLS at the bridge's address, runs the scheduler on its
// host's address and grows its own job's workers under load and shrinks them when idle through
// its task credential; the instance counts of the job show it, the computations' results are
// checked, and every worker registered with the scheduler from its host's address in
// 198.18.0.0/15 (never 127.0.0.1). A worker killed with SIGKILL in the middle does not stop the
// computation. The scale-up latency (request to registered) is measured.

#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kExample[] = PACELINE_SOURCE_DIR "/examples/frameworks/dask";

constexpr char kPool[] = R"(
description: frameworks
resources:
  cpu:    {reservation: 4, limit: 8}
  memory: {reservation: 6Gi}
)";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The pid of the process of job `job`'s instance `instance` whose command line holds `what`
// (from /proc: its PACELINE_JOB_ID and PACELINE_INSTANCE_ID); 0 when there is none.
pid_t FindTaskProcess(uint64_t job, uint32_t instance, const std::string& what) {
  const std::string want_job = absl::StrCat("PACELINE_JOB_ID=", job);
  const std::string want_instance = absl::StrCat("PACELINE_INSTANCE_ID=", instance);
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    int pid = 0;
    if (!absl::SimpleAtoi(e.path().filename().string(), &pid)) continue;
    std::string cmdline = ReadAll(e.path().string() + "/cmdline");
    if (cmdline.find(what) == std::string::npos) continue;
    bool job_ok = false, instance_ok = false;
    for (absl::string_view v : absl::StrSplit(ReadAll(e.path().string() + "/environ"), '\0')) {
      job_ok |= v == want_job;
      instance_ok |= v == want_instance;
    }
    if (job_ok && instance_ok) return pid;
  }
  return 0;
}

// The host of "tcp://HOST:PORT".
std::string HostOf(const std::string& address) {
  std::string rest =
      address.substr(address.find("://") == std::string::npos ? 0 : address.find("://") + 3);
  return rest.substr(0, rest.rfind(':'));
}

constexpr int kHosts = 4;

class DaskE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ClusterOptions o;
    o.agents = kHosts;
    // Room for two tasks of the test's size (0.5 cpu) per host: of the driver's three workers,
    // two at least run on other hosts than the driver's.
    o.agent_cpu = "1";
    o.agent_memory = "3Gi";
    o.netns = true;  // the driver and each worker on hosts of their own, with their own address
    cluster_ = std::make_unique<TestCluster>(o);
    TestCluster& c = *cluster_;
    ASSERT_TRUE(c.WaitForHosts(kHosts));
    RunResult r = c.Cli({"pool", "create", "/ml", "-f", c.WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The client, installed offline into a venv that sees Debian's dask and distributed, where
    // the task user can read it; the driver as the example ships it.
    shared_ = c.dir() + "/shared";
    std::filesystem::create_directories(shared_);
    std::filesystem::permissions(shared_, std::filesystem::perms::all);
    Process::Options py{.cwd = shared_, .program = "/usr/bin/python3"};
    RunResult venv = RunProgram({"-m", "venv", "--system-site-packages", shared_ + "/venv"}, py);
    ASSERT_EQ(venv.exit_code, 0) << venv.err;
    Process::Options pip{.cwd = shared_, .program = shared_ + "/venv/bin/pip"};
    RunResult install =
        RunProgram({"install", "--quiet", "--no-index", "--no-cache-dir",
                    "--disable-pip-version-check", PACELINE_SOURCE_DIR "/clients/python"},
                   pip, absl::Seconds(180));
    ASSERT_EQ(install.exit_code, 0) << install.err;
    std::filesystem::copy_file(std::string(kExample) + "/driver.py", shared_ + "/driver.py");
  }

  // examples/frameworks/dask/job.yaml with this test's interpreter, driver and sizes.
  std::string JobSpec(double task_seconds) {
    std::string spec = ReadAll(std::string(kExample) + "/job.yaml");
    const std::string python = shared_ + "/venv/bin/python";
    spec = absl::StrReplaceAll(
        spec, {{"python3 /opt/paceline/examples/dask/driver.py",
                absl::StrCat(python, " ", shared_, "/driver.py")},
               {"python3 -m paceline.dask", python + " -m paceline.dask"},
               {"resources: {cpu: 1, memory: 1Gi}", "resources: {cpu: 0.5, memory: 768Mi}"},
               {"resources: {cpu: 1, memory: 2Gi}", "resources: {cpu: 0.5, memory: 1Gi}"}});
    EXPECT_THAT(spec, HasSubstr(shared_ + "/driver.py"));
    absl::StrAppend(&spec, "    env: {DASK_MAX_WORKERS: \"3\", DASK_TASK_SECONDS: \"", task_seconds,
                    "\", DASK_IDLE_TIMEOUT: \"90\"}\n");
    return spec;
  }

  // Polls the job until it ends; every instance count seen, in order of change.
  std::vector<int> FollowInstances(uint64_t job, Json& final_job) {
    std::vector<int> counts;
    WaitFor(
        [&] {
          Json j = cluster_->CliJson({"job", "get", std::to_string(job)});
          const int n = j["job"]["instances"].get<int>();
          if (counts.empty() || counts.back() != n) counts.push_back(n);
          final_job = j;
          const std::string state = j["job"]["state"];
          return state == "SUCCEEDED" || state == "FAILED" || state == "KILLED";
        },
        absl::Seconds(300));
    return counts;
  }

  // The address of the host that instance `instance` of `job` runs on now.
  std::string HostAddressOf(uint64_t job, int instance) {
    Json tasks = cluster_->CliJson({"task", "list", std::to_string(job)});
    for (const Json& t : tasks["tasks"]) {
      if (t["instance"] != instance) continue;
      for (int i = 0; i < kHosts; ++i) {
        if (t.contains("host") && t["host"] == cluster_->agent_name(i)) {
          return cluster_->host_address(i);
        }
      }
    }
    return "";
  }

  std::unique_ptr<TestCluster> cluster_;
  std::string shared_;
};

TEST_F(DaskE2E, AnAdaptiveDriverGrowsItsWorkersUnderLoadShrinksThemIdleAndIsRight) {
  TestCluster& c = *cluster_;
  const uint64_t job = c.CreateJob("/ml", JobSpec(0.05));
  ASSERT_GT(job, 0u);
  std::string driver_host;
  ASSERT_TRUE(
      WaitFor([&] { return !(driver_host = HostAddressOf(job, 0)).empty(); }, absl::Seconds(60)));
  Json final_job;
  std::vector<int> counts = FollowInstances(job, final_job);
  RunResult out = c.Cli({"task", "logs", absl::StrCat(job, "/0")});
  RunResult err = c.Cli({"task", "logs", "--stderr", "--tail", "40", absl::StrCat(job, "/0")});
  ASSERT_EQ(final_job["job"]["state"], "SUCCEEDED") << out.out << err.out;
  // Up: the driver added workers (at most 3) while there was work; down: it retired them all.
  int most = 0;
  for (int n : counts) most = std::max(most, n);
  EXPECT_GE(most, 3) << "instance counts " << absl::StrJoin(counts, " ");
  EXPECT_LE(most, 4);
  EXPECT_EQ(counts.back(), 1) << "instance counts " << absl::StrJoin(counts, " ");
  // The sums of the squares of 0 .. n-1, as driver.py computes them (n = 2,000,000 keeps the
  // array's int64 sum from overflowing).
  const int64_t n = 2'000'000, m = 300'000;
  EXPECT_THAT(out.out, HasSubstr(absl::StrCat("array sum of squares: ",
                                              (n - 1) * n / 2 * (2 * n - 1) / 3, " (expected")));
  EXPECT_THAT(out.out, HasSubstr(absl::StrCat("bag sum of squares: ",
                                              (m - 1) * m / 2 * (2 * m - 1) / 3, " (expected")));
  EXPECT_THAT(out.out, HasSubstr("idle: 0 workers left"));
  EXPECT_THAT(out.out, HasSubstr("RESULT OK"));
  // Across hosts: the scheduler listens on the driver's host address, and each worker
  // registered with its own host's address, its connection coming from that address (as the
  // scheduler sees them), never from loopback.
  std::set<std::string> hosts;
  for (int i = 0; i < kHosts; ++i) hosts.insert(c.host_address(i));
  EXPECT_THAT(out.out, HasSubstr(absl::StrCat("scheduler at tcp://", driver_host, ":")));
  const std::regex line(
      R"(worker (\d+) at (tcp://[0-9.]+:\d+) connected from (tcp://[0-9.]+:\d+))");
  int workers = 0, elsewhere = 0;
  for (std::sregex_iterator m(out.out.begin(), out.out.end(), line), end; m != end; ++m) {
    ++workers;
    const std::string at = HostOf((*m)[2]), from = HostOf((*m)[3]);
    EXPECT_TRUE(hosts.contains(at)) << m->str() << " is on no host's address";
    EXPECT_NE(at, "127.0.0.1") << m->str();
    EXPECT_EQ(from, at) << m->str();
    if (at != driver_host) ++elsewhere;
  }
  EXPECT_GE(workers, 3) << out.out;
  EXPECT_GE(elsewhere, 1) << "no worker ran on another host than the driver's\n" << out.out;
  // The scaling went through the driver's own credential, audited as the task.
  RunResult audit = c.Cli({"audit", "list", "--user", absl::StrCat("task:", job, "/0/1")});
  EXPECT_THAT(audit.out, HasSubstr("JobService.UpdateJob"));
}

TEST_F(DaskE2E, AWorkerKilledMidComputationDoesNotStopIt) {
  TestCluster& c = *cluster_;
  const uint64_t job = c.CreateJob("/ml", JobSpec(0.2));
  ASSERT_GT(job, 0u);
  // Once worker 1 has registered and the computation is under way (two workers or more
  // registered; the driver prints counts as it sees them, so it may skip one), kill it outright.
  const std::regex two_or_more(R"(registered=([2-9]|\d\d))");
  pid_t pid = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string log = c.Cli({"task", "logs", absl::StrCat(job, "/0")}).out;
        if (!absl::StrContains(log, "worker 1 at ") || !std::regex_search(log, two_or_more)) {
          return false;
        }
        pid = FindTaskProcess(job, 1, "paceline.dask_worker");
        return pid != 0;
      },
      absl::Seconds(120)));
  ASSERT_EQ(::kill(pid, SIGKILL), 0) << "worker 1 (pid " << pid << ")";
  Json final_job;
  FollowInstances(job, final_job);
  RunResult out = c.Cli({"task", "logs", absl::StrCat(job, "/0")});
  EXPECT_EQ(final_job["job"]["state"], "SUCCEEDED") << out.out;
  EXPECT_THAT(out.out, HasSubstr("RESULT OK"));
}

// The figure of bench/results (dask-scaleup-*.md): from the driver's scale-up request to the
// worker's registration with the scheduler, ten times (examples/frameworks/dask/scaleup.py).
TEST_F(DaskE2E, AWorkerRegistersSoonAfterItsScaleUp) {
  TestCluster& c = *cluster_;
  std::filesystem::copy_file(std::string(kExample) + "/scaleup.py", shared_ + "/scaleup.py");
  std::string spec =
      absl::StrReplaceAll(JobSpec(0), {{shared_ + "/driver.py", shared_ + "/scaleup.py 10"}});
  const uint64_t job = c.CreateJob("/ml", spec);
  ASSERT_GT(job, 0u);
  Json final_job;
  FollowInstances(job, final_job);
  RunResult out = c.Cli({"task", "logs", absl::StrCat(job, "/0")});
  ASSERT_EQ(final_job["job"]["state"], "SUCCEEDED") << out.out;
  size_t at = out.out.find("scale-up to registered: p50 ");
  ASSERT_NE(at, std::string::npos) << out.out;
  std::cout << out.out.substr(out.out.find("run 1: worker registered")) << std::flush;
  double p50 = 0;
  ASSERT_TRUE(absl::SimpleAtod(
      absl::string_view(out.out).substr(at + 28, out.out.find('s', at + 28) - at - 28), &p50));
  // On the bed's addresses: the scheduler on the driver's host, each worker on its own.
  const std::string driver_host = HostAddressOf(job, 0);
  ASSERT_FALSE(driver_host.empty());
  EXPECT_THAT(out.out, HasSubstr(absl::StrCat("scheduler at tcp://", driver_host, ":")));
  std::set<std::string> hosts;
  for (int i = 0; i < kHosts; ++i) hosts.insert(c.host_address(i));
  const std::regex line(R"(run \d+: worker at (tcp://[0-9.]+:\d+))");
  int workers = 0;
  for (std::sregex_iterator m(out.out.begin(), out.out.end(), line), end; m != end; ++m) {
    ++workers;
    EXPECT_TRUE(hosts.contains(HostOf((*m)[1]))) << m->str() << " is on no host's address";
  }
  EXPECT_EQ(workers, 10) << out.out;
  // A loose bound (the goal is 2 s; a machine shared with builds is slower): a worker that
  // takes this long is broken, not slow.
  EXPECT_LT(p50, 10.0);
}

}  // namespace
}  // namespace paceline::e2e
