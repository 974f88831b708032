// End to end: tasks that run from OCI images (docs/containers.md). A real registry (Debian's
// docker-registry, over TLS with a CA of the test's own) holds a busybox image built in the
// test; a real master and agent pull it and run it with crun: exit codes, logs, the image's
// files, a read-only root, mounts, OOM, kill, a health-checked service, an agent kill -9 with
// a running container, and pulls that fail (a missing tag, a corrupted blob, a hung registry).
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "image/testing/image_builder.h"
#include "image/testing/registry_push.h"
#include "image/testing/registry_server.h"
#include "image/testing/tar_builder.h"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/container_fixture.h"
#include "tests/e2e/exec_steps.h"
#include "tls/certificates.h"

namespace paceline::e2e {
namespace {

// No regular file under `dir` (but those named `except`) holds `secret`.
void ExpectInNoFile(const std::string& dir, const std::string& secret,
                    const std::string& except = "") {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == except) continue;
    EXPECT_EQ(ReadFile(e.path()).find(secret), std::string::npos) << e.path();
  }
}

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(ContainerE2E, ATaskRunsInTheImageWithItsExitCodeAndLogs) {
  uint64_t ok = Job(
      "hello",
      R"(  command: "echo hello from $(cat /etc/hostname-in-image 2>/dev/null || ls /bin/busybox); id -u; pwd; test \"$PWD\" = \"$PACELINE_SANDBOX\" && echo same-sandbox; echo out > $PACELINE_SANDBOX/file"
  resources: {cpu: 0.2, memory: 64Mi}
  container: {image: "{IMAGE}"}
)");
  uint64_t failing = Job("three", R"(  command: "echo to-stderr >&2; exit 3"
  resources: {cpu: 0.2, memory: 64Mi}
  container: {image: "{IMAGE}"}
)");
  ASSERT_TRUE(WaitState(ok, "SUCCEEDED", absl::Seconds(60))) << Task(ok).dump();
  std::string out = Logs(ok);
  EXPECT_THAT(out, HasSubstr("hello from /bin/busybox"));
  EXPECT_THAT(out, HasSubstr("65534"));  // the agent's task user (nobody) in the image
  EXPECT_THAT(out, HasSubstr("same-sandbox"));
  ASSERT_TRUE(WaitState(failing, "FAILED", absl::Seconds(60))) << Task(failing).dump();
  EXPECT_EQ(Task(failing)["task"]["exit_code"], 3);
  EXPECT_THAT(Logs(failing, /*err=*/true), HasSubstr("to-stderr"));
  // The agent reports its image cache to the master: `host images HOST` lists it.
  std::string listed;
  for (int i = 0; i < 50 && listed.find(ref_) == std::string::npos; ++i) {
    listed = cluster_->Cli({"host", "images", cluster_->agent_name(0)}).out;
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_THAT(listed, HasSubstr(ref_));
  EXPECT_THAT(cluster_->Cli({"host", "images", "no-such-host"}).err, HasSubstr("not found"));
}

TEST_F(ContainerE2E, AReadOnlyRootRefusesWritesAndMountsAndSecretsWork) {
  std::string value_file = certs_dir_ + "/value";
  std::ofstream(value_file) << "s3cr3t-value";
  RunResult put = cluster_->Cli({"secret", "create", "/c/token", "--from-file", value_file});
  std::filesystem::remove(value_file);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  std::ofstream(certs_dir_ + "/shared.txt") << "from the host\n";
  // Readable by the container's user (the agent's task user, nobody).
  std::filesystem::permissions(
      certs_dir_, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
      std::filesystem::perm_options::add);
  std::filesystem::permissions(certs_dir_ + "/shared.txt", std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  uint64_t job = Job(
      "readonly",
      R"(  command: "touch /in-root && echo root-writable; touch /scratch/x && echo scratch-ok; cat /host/shared.txt; echo out > /out/result; cat $PACELINE_SECRETS/token; echo; echo var=$TOKEN_VAR"
  resources: {cpu: 0.2, memory: 64Mi}
  secrets: [{name: token, file: token}, {name: token, env: TOKEN_VAR}]
  container:
    image: "{IMAGE}"
    read_only_rootfs: true
    mounts:
      - {source: tmpfs, target: /scratch}
      - {source: sandbox/out, target: /out}
      - {source: )" +
          certs_dir_ + R"(, target: /host, read_only: true}
)");
  ASSERT_TRUE(WaitState(job, "SUCCEEDED", absl::Seconds(60))) << Task(job).dump();
  std::string out = Logs(job);
  EXPECT_THAT(out, Not(HasSubstr("root-writable")));
  EXPECT_THAT(Logs(job, true), HasSubstr("Read-only file system"));
  EXPECT_THAT(out, HasSubstr("scratch-ok"));
  EXPECT_THAT(out, HasSubstr("from the host"));
  EXPECT_THAT(out, HasSubstr("s3cr3t-value"));
  EXPECT_THAT(out, HasSubstr("var=s3cr3t-value"));
  // The sandbox's out/ got the file written to /out in the container.
  bool found = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cluster_->dir())) {
    found =
        found || (e.path().filename() == "result" && e.path().parent_path().filename() == "out");
  }
  EXPECT_TRUE(found);
  // The secret value is not in any file the agent wrote (its OCI config lived in the tmpfs).
  ExpectInNoFile(cluster_->dir(), "s3cr3t-value", /*except=*/"stdout");
}

TEST_F(ContainerE2E, MemoryBeyondTheLimitIsAnOomKillAndAKillStopsTheContainer) {
  uint64_t oom = Job("oom", R"(  command: "busybox dd if=/dev/zero of=/dev/null bs=256M count=1"
  resources: {cpu: 0.2, memory: 32Mi}
  container: {image: "{IMAGE}"}
)");
  uint64_t sleeper = Job("sleeper", R"(  command: "echo started; sleep 600"
  resources: {cpu: 0.2, memory: 32Mi}
  kill_grace: 5s
  container: {image: "{IMAGE}"}
)");
  ASSERT_TRUE(WaitState(oom, "FAILED", absl::Seconds(60))) << Task(oom).dump();
  EXPECT_EQ(Task(oom)["task"]["reason"], "OOM_KILLED") << Task(oom).dump();
  ASSERT_TRUE(WaitTaskState(sleeper, "RUNNING", absl::Seconds(60))) << Task(sleeper).dump();
  absl::Time start = absl::Now();
  RunResult kill = cluster_->Cli({"job", "kill", std::to_string(sleeper)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  ASSERT_TRUE(WaitState(sleeper, "KILLED", absl::Seconds(30))) << Task(sleeper).dump();
  // The shell as the container's init got SIGTERM forwarded by crun and ended at once.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(ContainerE2E, AHealthCheckedServiceSurvivesAnAgentKill9) {
  uint64_t job = Job("web", R"(  command: "echo up > $PACELINE_SANDBOX/ready; exec sleep 600"
  resources: {cpu: 0.2, memory: 32Mi}
  health: {command: "test -f $PACELINE_SANDBOX/ready && test -f /bin/busybox", interval: 1s, timeout: 5s}
  container: {image: "{IMAGE}"}
)",
                     "service");
  ASSERT_TRUE(WaitTaskState(job, "RUNNING", absl::Seconds(60))) << Task(job).dump();
  ASSERT_TRUE(WaitHealthy(job, absl::Seconds(30))) << Task(job).dump();
  int pid = Task(job)["task"].value("pid", 0);
  cluster_->agent(0).Signal(SIGKILL);
  cluster_->agent(0).WaitExit(absl::Seconds(10));
  cluster_->StartAgent(0);
  ASSERT_TRUE(cluster_->WaitForHosts(1));
  absl::SleepFor(absl::Seconds(3));
  Json t = Task(job);
  EXPECT_EQ(t["task"]["state"], "RUNNING") << t.dump();
  EXPECT_EQ(t["runs"].size(), 1u) << "the container was run twice: " << t.dump();
  EXPECT_EQ(t["task"].value("pid", 0), pid);
  RunResult kill = cluster_->Cli({"job", "kill", std::to_string(job)});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  ASSERT_TRUE(WaitState(job, "KILLED", absl::Seconds(30))) << Task(job).dump();
}

TEST_F(ContainerE2E, PullsThatFailSayWhyAndLeaveNothing) {
  // A tag the registry does not have.
  uint64_t missing = Job("missing", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: ")" + registry_->address() +
                                        R"(/e2e/busybox:nope"}
)");
  ASSERT_TRUE(WaitState(missing, "FAILED", absl::Seconds(60))) << Task(missing).dump();
  EXPECT_THAT(Message(missing), HasSubstr("MANIFEST_UNKNOWN")) << Task(missing).dump();

  // A corrupted layer blob in the registry's storage.
  auto other =
      image::testing::ImageBuilder()
          .Layer(image::testing::TarBuilder().File("data", std::string(4096, 'x')).Finish(false))
          .Build();
  image::testing::PushTarget to{
      .registry = registry_->address(), .repository = "e2e/corrupt", .ca_file = ca_};
  ASSERT_TRUE(image::testing::PushImage(to, other, "1").ok());
  {
    std::fstream f(registry_->BlobDataPath(other.layers[0].digest),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.write("garbage", 7);
  }
  uint64_t corrupt = Job("corrupt", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: ")" + registry_->address() +
                                        R"(/e2e/corrupt:1"}
)");
  ASSERT_TRUE(WaitState(corrupt, "FAILED", absl::Seconds(60))) << Task(corrupt).dump();
  EXPECT_THAT(Message(corrupt), HasSubstr("digest")) << Task(corrupt).dump();

  // A layer whose entries climb out of the root: refused, nothing written outside.
  auto escaping = image::testing::ImageBuilder()
                      .Layer(image::testing::TarBuilder()
                                 .Symlink("/", "up")
                                 .File("../escaped-by-layer", "x")
                                 .Finish(false))
                      .Build();
  to.repository = "e2e/escape";
  ASSERT_TRUE(image::testing::PushImage(to, escaping, "1").ok());
  uint64_t escape = Job("escape", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: ")" + registry_->address() +
                                      R"(/e2e/escape:1"}
)");
  ASSERT_TRUE(WaitState(escape, "FAILED", absl::Seconds(60))) << Task(escape).dump();
  EXPECT_THAT(Message(escape), HasSubstr("escaped-by-layer")) << Task(escape).dump();
  for (const auto& e : std::filesystem::recursive_directory_iterator(cluster_->dir())) {
    EXPECT_NE(e.path().filename(), "escaped-by-layer") << e.path();
  }

  // A registry that accepts connections and never answers.
  auto hung = RegistryServer::Start({.hung = true});
  ASSERT_TRUE(hung.ok()) << hung.status();
  uint64_t stalled = Job("stalled", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: ")" + (*hung)->address() +
                                        R"(/e2e/busybox:1"}
)");
  ASSERT_TRUE(WaitState(stalled, "FAILED", absl::Seconds(60))) << Task(stalled).dump();
  EXPECT_THAT(Message(stalled), HasSubstr("pull of image")) << Task(stalled).dump();

  // Nothing of the failed pulls is in the cache; the agent still runs the good image.
  std::string images = cluster_->dir() + "/" + cluster_->agent_name(0) + "/images";
  EXPECT_TRUE(std::filesystem::is_empty(images + "/tmp"));
  uint64_t ok = Job("after", R"(  command: "echo still-fine"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: "{IMAGE}"}
)");
  ASSERT_TRUE(WaitState(ok, "SUCCEEDED", absl::Seconds(60))) << Task(ok).dump();
  EXPECT_THAT(Logs(ok), HasSubstr("still-fine"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(images + "/rootfs"),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(ContainerE2E, AnImageLoadedFromAFileRunsWithoutARegistry) {
  // An air-gapped host: the image comes as an OCI layout tar, loaded into the agent's cache.
  std::string tar = certs_dir_ + "/busybox.tar";
  std::ofstream(tar, std::ios::binary) << image::testing::OciLayoutTar(image_, "1");
  std::string work_dir = cluster_->dir() + "/" + cluster_->agent_name(0);
  RunResult load = RunPaceline(
      {"image", "load", tar, "--work-dir", work_dir, "--tag", "offline.example.com/busybox:1"});
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_THAT(load.out, HasSubstr("loaded offline.example.com/busybox:1"));
  RunResult list = RunPaceline({"image", "list", "--work-dir", work_dir});
  EXPECT_THAT(list.out, HasSubstr("offline.example.com/busybox:1"));

  uint64_t job = Job("offline", R"(  command: "echo offline-ok"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: "offline.example.com/busybox:1", pull: never}
)");
  ASSERT_TRUE(WaitState(job, "SUCCEEDED", absl::Seconds(60))) << Task(job).dump();
  EXPECT_THAT(Logs(job), HasSubstr("offline-ok"));
  // pull: never with an image the host does not have fails saying so.
  uint64_t missing = Job("absent", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: "offline.example.com/other:1", pull: never}
)");
  ASSERT_TRUE(WaitState(missing, "FAILED", absl::Seconds(60))) << Task(missing).dump();
  EXPECT_THAT(Message(missing), HasSubstr("not in this host's image cache"));
  // A file that is not an image changes nothing.
  std::ofstream(certs_dir_ + "/junk.tar") << "junk";
  RunResult bad = RunPaceline({"image", "load", certs_dir_ + "/junk.tar", "--work-dir", work_dir,
                               "--tag", "offline.example.com/junk:1"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("junk.tar"));
}

TEST_F(ContainerE2E, RegistryCredentialsComeFromAPoolSecret) {
  if (!RegistryServer::HtpasswdAvailable()) GTEST_SKIP() << "needs htpasswd (apache2-utils)";
  // A second registry, with the same certificate (the agent trusts its CA), behind a login.
  auto certs = tls::EnsureMasterCertificates(certs_dir_, {"127.0.0.1"});
  ASSERT_TRUE(certs.ok()) << certs.status();
  auto locked = RegistryServer::Start({.cert_file = certs->cert,
                                       .key_file = certs->key,
                                       .username = "puller",
                                       .password = "pa55word"});
  ASSERT_TRUE(locked.ok()) << locked.status();
  ASSERT_TRUE(image::testing::PushImage({.registry = (*locked)->address(),
                                         .repository = "private/busybox",
                                         .ca_file = ca_,
                                         .username = "puller",
                                         .password = "pa55word"},
                                        image_, "1")
                  .ok());
  std::string image = (*locked)->address() + "/private/busybox:1";
  // A pull secret that does not exist is refused when the job is created.
  std::string spec = absl::StrCat("name: early\ninstances: 1\ntask:\n  command: \"true\"\n",
                                  "  resources: {cpu: 0.1, memory: 16Mi}\n",
                                  "  container: {image: \"", image, "\", pull_secret: nope}\n");
  RunResult refused = cluster_->Cli(
      {"job", "create", "-f", cluster_->WriteFile("early.yaml", spec), "--pool", "/c"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("task.container.pull_secret: no secret nope"));

  std::string value_file = certs_dir_ + "/login";
  std::ofstream(value_file) << "puller:pa55word";
  RunResult put =
      cluster_->Cli({"secret", "create", "/c/registry-login", "--from-file", value_file});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  uint64_t without = Job("without", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: ")" + image + R"("}
)");
  ASSERT_TRUE(WaitState(without, "FAILED", absl::Seconds(60))) << Task(without).dump();
  EXPECT_THAT(Message(without), HasSubstr("401")) << Task(without).dump();
  uint64_t with = Job("with", R"(  command: "echo pulled-with-login"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: ")" + image + R"(", pull_secret: registry-login}
)");
  ASSERT_TRUE(WaitState(with, "SUCCEEDED", absl::Seconds(60))) << Task(with).dump();
  EXPECT_THAT(Logs(with), HasSubstr("pulled-with-login"));
  // The password is in no file of the cluster.
  ExpectInNoFile(cluster_->dir(), "pa55word");
}

TEST_F(ContainerE2E, AFullDiskFailsThePullAndLeavesNothing) {
  // The agent's image cache on a tmpfs smaller than the image.
  std::string cache = certs_dir_ + "/small-cache";
  std::filesystem::create_directories(cache);
  ASSERT_EQ(::system(("mount -t tmpfs -o size=256k tmpfs " + cache).c_str()), 0);
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{cache};
  ASSERT_NO_FATAL_FAILURE(StartCluster({"--registry-ca", ca_, "--image-dir", cache}));
  uint64_t job = Job("full", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: "{IMAGE}"}
)");
  ASSERT_TRUE(WaitState(job, "FAILED", absl::Seconds(60))) << Task(job).dump();
  EXPECT_THAT(Message(job), AnyOf(HasSubstr("no space left"), HasSubstr("disk is full")))
      << Task(job).dump();
  EXPECT_TRUE(std::filesystem::is_empty(cache + "/tmp"));
  EXPECT_TRUE(std::filesystem::is_empty(cache + "/rootfs"));
  // The agent goes on: a plain task runs.
  uint64_t plain = Job("plain", R"(  command: "echo still-here"
  resources: {cpu: 0.1, memory: 16Mi}
)");
  ASSERT_TRUE(WaitState(plain, "SUCCEEDED", absl::Seconds(60))) << Task(plain).dump();
  cluster_.reset();
}

TEST_F(ContainerE2E, AServiceOnAPortPassesItsHttpHealthCheck) {
  uint64_t job = Job(
      "httpd",
      R"(  command: "echo ok > index.html; exec busybox httpd -f -p $PACELINE_PORT_HTTP -h $PACELINE_SANDBOX"
  resources: {cpu: 0.2, memory: 32Mi}
  ports: [http]
  health: {http: {port: http, path: /index.html}, interval: 1s, timeout: 5s}
  container: {image: "{IMAGE}"}
)",
      "service");
  EXPECT_TRUE(WaitHealthy(job, absl::Seconds(60))) << Task(job).dump();
  ASSERT_EQ(cluster_->Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(WaitState(job, "KILLED", absl::Seconds(30))) << Task(job).dump();
}

TEST_F(ContainerE2E, AStatefulContainerWritesItsVolumeAndNetworkNoneHasOnlyLoopback) {
  // The same stateful container, as `user` (empty: the image's).
  auto spec = [](const std::string& user) {
    return absl::StrCat(
        R"(  command: "echo kept > /data/f; ls /sys/class/net > $PACELINE_SANDBOX/net; exec sleep 600"
  resources: {cpu: 0.1, memory: 16Mi}
  volume: {size: 64Mi}
  container:
    image: "{IMAGE}"
    network: none
)",
        user.empty() ? "" : absl::StrCat("    user: \"", user, "\"\n"),
        "    mounts: [{source: volume, target: /data}]\n");
  };
  uint64_t job = Job("db", spec("0"), "stateful");
  // user 0 is refused: the agent does not allow root tasks (the instance crash-loops).
  auto first_message = [&] {
    Json t = Task(job);
    return t["runs"].empty() ? std::string() : t["runs"][0].value("message", std::string());
  };
  absl::Time refused_by = absl::Now() + absl::Seconds(60);
  while (absl::Now() < refused_by && first_message().empty()) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_THAT(first_message(), HasSubstr("would run as root")) << Task(job).dump();
  ASSERT_EQ(cluster_->Cli({"job", "kill", std::to_string(job)}).exit_code, 0);

  uint64_t db = Job("db2", spec(""), "stateful");
  ASSERT_TRUE(WaitTaskState(db, "RUNNING", absl::Seconds(60))) << Task(db).dump();
  std::string work_dir = cluster_->dir() + "/" + cluster_->agent_name(0);
  std::string volume_file = absl::StrCat(work_dir, "/volumes/", db, "/0/f");
  std::string net_file = absl::StrCat(work_dir, "/sandboxes/", db, "_0_1/net");
  // The shell creates each file before it writes it: wait for whole lines, not for the files.
  std::string kept, net;
  WaitFor(
      [&] {
        kept = ReadFile(volume_file);
        net = ReadFile(net_file);
        return absl::EndsWith(kept, "\n") && absl::EndsWith(net, "\n");
      },
      absl::Seconds(20));
  EXPECT_EQ(kept, "kept\n");
  EXPECT_EQ(net, "lo\n");
  ASSERT_EQ(cluster_->Cli({"job", "kill", std::to_string(db)}).exit_code, 0);
  ASSERT_TRUE(WaitState(db, "KILLED", absl::Seconds(30))) << Task(db).dump();
}

TEST_F(ContainerE2E, AHostWithoutARuntimeFailsContainerTasksSayingSoAndRunsPlainOnes) {
  ASSERT_NO_FATAL_FAILURE(StartCluster({"--container-runtime", "/nonexistent/crun"}));
  uint64_t job = Job("norun", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
  container: {image: "{IMAGE}"}
)");
  ASSERT_TRUE(WaitState(job, "FAILED", absl::Seconds(60))) << Task(job).dump();
  EXPECT_THAT(Message(job), HasSubstr("'/nonexistent/crun' is not installed")) << Task(job).dump();
  uint64_t plain = Job("plain", R"(  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
)");
  ASSERT_TRUE(WaitState(plain, "SUCCEEDED", absl::Seconds(60))) << Task(plain).dump();
}

TEST_F(ContainerE2E, PacelineUpRunsAContainerJob) {
  cluster_.reset();
  std::string dir = MakeTempDir("pl-up-containers");
  std::filesystem::permissions(dir, std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add);
  // Its own agent name: agents of one name on a host share their cgroups (docs/agent.md).
  Process up = Process::Start(
      {"up", "--data-dir", dir + "/data", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
       "--registry-ca", ca_, "--name", absl::StrCat("container-up-", ::getpid())},
      {.cwd = dir});
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline && !std::filesystem::exists(dir + "/data/master.json")) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(std::filesystem::exists(dir + "/data/master.json")) << up.Output();
  std::ofstream(dir + "/pool.yaml") << kPool;
  std::ofstream(dir + "/job.yaml") << absl::StrCat(
      "name: on-up\ninstances: 2\ntask:\n  command: \"echo from-up $PACELINE_INSTANCE_ID\"\n",
      "  resources: {cpu: 0.1, memory: 16Mi}\n  container: {image: \"", ref_, "\"}\n");
  RunResult pool = RunPaceline({"pool", "create", "/c", "-f", "pool.yaml"}, dir);
  ASSERT_EQ(pool.exit_code, 0) << pool.err << up.Output();
  RunResult created =
      RunPaceline({"job", "create", "-f", "job.yaml", "--pool", "/c", "-o", "json"}, dir);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  std::string id = Json::parse(created.out).value("job_id", "0");
  RunResult wait = RunPaceline({"job", "wait", id, "--timeout", "60s"}, dir);
  EXPECT_EQ(wait.exit_code, 0) << wait.err << up.Output();
  RunResult logs = RunPaceline({"task", "logs", id + "/1"}, dir);
  EXPECT_THAT(logs.out, HasSubstr("from-up 1"));
  up.Signal(SIGTERM);
  EXPECT_EQ(up.WaitExit(absl::Seconds(30)), 0) << up.Output();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// `task exec` into a container: the command runs in the container's namespaces (its root, its
// pid namespace: the same init as the task's), as the task's user with the task's variables,
// and returns its exit code; pipes and a terminal work as for a plain task (exec_steps.h).
TEST_F(ContainerE2E, ExecRunsInTheContainerWithPipesAndATerminal) {
  uint64_t job = Job(
      "exec-into",
      R"(  command: "id -u > $PACELINE_SANDBOX/me.uid; cat /proc/1/cmdline > $PACELINE_SANDBOX/me.init; exec sleep 600"
  resources: {cpu: 0.1, memory: 32Mi}
  env: {GREETING: hello-from-the-container}
  container: {image: "{IMAGE}"}
)",
      "service");
  ASSERT_TRUE(WaitTaskState(job, "RUNNING", absl::Seconds(60))) << Task(job).dump();
  const std::string task = absl::StrCat(job, "/0");
  RunResult seen;
  ASSERT_TRUE(WaitFor(
      [&] {
        seen = RunExec(*cluster_, task,
                       {"sh", "-c", "cat $PACELINE_SANDBOX/me.uid $PACELINE_SANDBOX/me.init"});
        return seen.exit_code == 0 && absl::StrContains(seen.out, "sleep");
      },
      absl::Seconds(20)))
      << seen.out << seen.err;
  RunResult r =
      RunExec(*cluster_, task,
              {"sh", "-c",
               "id -u; cat /proc/1/cmdline; echo; ls /bin/busybox; test -e /usr || echo no-usr; "
               "echo \"$GREETING $PACELINE_JOB_ID\"; exit 5"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  const std::string task_uid = seen.out.substr(0, seen.out.find('\n'));
  const std::string task_init = seen.out.substr(seen.out.find('\n') + 1);
  EXPECT_EQ(task_uid, "65534");  // the agent's task user (nobody), as the task itself ran
  EXPECT_EQ(r.out, absl::StrCat(task_uid, "\n", task_init, "\n/bin/busybox\nno-usr\n",
                                "hello-from-the-container ", job, "\n"));
  ASSERT_NO_FATAL_FAILURE(ExpectPipes(*cluster_, task, 1 << 20));
  ASSERT_NO_FATAL_FAILURE(ExpectTerminal(*cluster_, task, "busybox "));
  ASSERT_EQ(cluster_->Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  ASSERT_TRUE(WaitState(job, "KILLED", absl::Seconds(30))) << Task(job).dump();
}

}  // namespace
}  // namespace paceline::e2e
