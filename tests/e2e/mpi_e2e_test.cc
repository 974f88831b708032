// End to end on the multi-host bed (scripts/netns-cluster.sh): an Open MPI program across 4
// hosts, launched as the MPI Operator does with `kubectl exec`, here with `paceline task exec`
// (examples/frameworks/mpi/, docs/frameworks.md "MPI"). A gang of 4 with `rendezvous: mpi` gets
// its hostfile; instance 0 runs mpirun over it with paceline-rsh as its remote shell, which
// execs Open MPI's daemon into the gang member on each other host with the launcher's own task
// credential; an mpi4py allreduce gives the right sum, each rank ran inside its own member, and
// the job ends when the launcher ends (`completion: instance-0`); each exec is audited as the
// launcher's task.

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 4, limit: 8}
  memory: {reservation: 2Gi}
)";

// The example's files, where every host sees them and the tasks' user may read them.
std::string SharedDir(TestCluster& c) {
  namespace fs = std::filesystem;
  std::string dir = c.dir() + "/mpi";
  fs::create_directories(dir);
  for (const char* f : {"allreduce.py", "paceline-rsh"}) {
    fs::copy_file(absl::StrCat(PACELINE_EXAMPLES_DIR, "/frameworks/mpi/", f), dir + "/" + f,
                  fs::copy_options::overwrite_existing);
  }
  fs::permissions(dir, fs::perms::all);
  return dir;
}

std::string MpiJob(const std::string& dir) {
  return absl::StrCat(R"(name: mpi-allreduce
type: batch
instances: 4
sla:
  min_running_instances: 4
gang:
  rendezvous: mpi
  restart: gang
  max_restarts: 1
completion: instance-0
task:
  command: exec sleep 600
  resources: {cpu: 0.5, memory: 256Mi}
  constraints:
    - {max_per_host: 1}
  env:
    PACELINE: )",
                      PacelineBinary(), R"(
    HOME: /tmp
roles:
  - name: launcher
    instances: 1
    task:
      identity: true
      command: >-
        mpirun --hostfile "$PACELINE_MPI_HOSTFILE" -np 4
        --mca plm_rsh_agent )",
                      dir, R"(/paceline-rsh
        /usr/bin/python3 )",
                      dir, R"(/allreduce.py
  - name: worker
    instances: 3
)");
}

TEST(MpiE2E, AllreduceAcrossFourHostsThroughExec) {
  TestCluster c(ClusterOptions{.agents = 4, .netns = true});
  ASSERT_TRUE(c.WaitForHosts(4));
  RunResult pool = c.Cli({"pool", "create", "/mpi", "-f", c.WriteFile("pool.yaml", kPool)});
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  const uint64_t job = c.CreateJob("/mpi", MpiJob(SharedDir(c)));
  const bool done = c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED" || j["state"] == "FAILED"; },
      absl::Seconds(180));
  RunResult out = c.Cli({"task", "logs", absl::StrCat(job, "/0")});
  RunResult err = c.Cli({"task", "logs", "--stderr", absl::StrCat(job, "/0")});
  ASSERT_TRUE(done) << out.out << err.out;
  Json j = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(j["job"]["state"], "SUCCEEDED") << out.out << err.out;
  EXPECT_THAT(out.out, HasSubstr("allreduce: size 4 sum 10 expected 10")) << err.out;
  // Each rank ran inside its own gang member: mpirun's on the launcher, the others exec'd.
  EXPECT_THAT(out.out, HasSubstr("ranks in instances: 0,1,2,3")) << err.out;

  // The daemons were exec'd with the launcher's credential, and audited as the task: three by
  // the launcher's last run (an earlier run that failed, and made the gang restart, exec'd its
  // own).
  // The audit log is written in batches: wait for the last run's records.
  const std::string launcher = absl::StrCat("task:", job, "/0/");
  Json audit;
  std::map<int, int> execs_by_run;
  WaitFor(
      [&] {
        audit = c.CliJson({"audit", "list"})["entries"];
        execs_by_run.clear();
        for (const Json& e : audit) {
          // Allowed: an exec's outcome is how its stream ended, which for a daemon still
          // running when the job completes with its launcher is the stream's cancellation.
          const std::string outcome = e.value("outcome", "");
          if (e["action"] != "TaskService.Exec" || outcome == "PERMISSION_DENIED" ||
              outcome == "UNAUTHENTICATED") {
            continue;
          }
          const std::string user = e["user"].get<std::string>();
          int run = 0;
          if (absl::StartsWith(user, launcher) &&
              absl::SimpleAtoi(user.substr(launcher.size()), &run)) {
            ++execs_by_run[run];
          } else {
            ++execs_by_run[-1];  // someone else: fails below
          }
        }
        return !execs_by_run.empty() && execs_by_run.rbegin()->second >= 3;
      },
      absl::Seconds(20));
  ASSERT_FALSE(execs_by_run.empty()) << audit.dump(1);
  EXPECT_FALSE(execs_by_run.contains(-1)) << audit.dump(1);
  EXPECT_EQ(execs_by_run.rbegin()->second, 3) << audit.dump(1);
}

}  // namespace
}  // namespace paceline::e2e
