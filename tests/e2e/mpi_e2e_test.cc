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

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

  // The daemons were exec'd with the launcher's credential, and audited as the task.
  Json audit = c.CliJson({"audit", "list"})["entries"];
  int execs = 0;
  for (const Json& e : audit) {
    if (e["action"] == "TaskService.Exec" && e["outcome"] == "OK") {
      EXPECT_THAT(e["user"].get<std::string>(), HasSubstr(absl::StrCat("task:", job, "/0/")));
      ++execs;
    }
  }
  EXPECT_EQ(execs, 3) << audit.dump(1);
}

}  // namespace
}  // namespace paceline::e2e
