#include "tests/e2e/patroni_bed.h"

#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paceline::e2e {
namespace {

std::string Tail(const std::string& text, size_t lines) {
  std::vector<absl::string_view> all = absl::StrSplit(text, '\n');
  size_t from = all.size() > lines ? all.size() - lines : 0;
  return absl::StrJoin(all.begin() + from, all.end(), "\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<PatroniBed>> PatroniBed::Start(const std::string& dir,
                                                              PatroniBedOptions options) {
  Process script = Process::Start({PACELINE_PATRONI_SCRIPT, dir},
                                  {.log_dir = dir,
                                   .env = {absl::StrCat("NODES=", options.nodes),
                                           absl::StrCat("ADDRESSES=", options.addresses)},
                                   .program = "bash"});
  std::unique_ptr<PatroniBed> bed(new PatroniBed(dir, std::move(script)));
  const std::string json_path = dir + "/cluster.json";
  std::string text;
  WaitFor(
      [&] {
        text = ReadFile(json_path);
        return !text.empty() || !bed->script_.Running();
      },
      absl::Seconds(120));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("store")) {
    return absl::UnavailableError(absl::StrCat("scripts/patroni-up.sh did not start a cluster: ",
                                               Tail(bed->script_.Output(), 20)));
  }
  bed->store_ = j["store"].get<std::string>();
  for (const nlohmann::json& n : j["nodes"]) {
    const std::string data = n["data"].get<std::string>();
    bed->nodes_.push_back(
        {n["api"].get<std::string>(), data, data.substr(0, data.rfind('/')) + "/patroni.log"});
  }
  for (const nlohmann::json& e : j["etcd"]) bed->etcd_pids_.push_back(e["pid"].get<pid_t>());
  return bed;
}

PatroniBed::~PatroniBed() {
  script_.Signal(SIGTERM);
  script_.WaitExit(absl::Seconds(60));
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

int PatroniBed::Status(int node, const std::string& path) const {
  httplib::Client client(nodes_[node].api);
  client.set_connection_timeout(1);
  client.set_read_timeout(2);
  httplib::Result r = client.Get(path);
  return r ? r->status : 0;
}

int PatroniBed::Primary() const {
  for (int i = 0; i < nodes(); ++i) {
    if (Status(i, "/primary") == 200) return i;
  }
  return -1;
}

pid_t PatroniBed::PostmasterPid(int node) const {
  std::string text = ReadFile(nodes_[node].data + "/postmaster.pid");
  pid_t pid = -1;
  std::string first = text.substr(0, text.find('\n'));
  if (!absl::SimpleAtoi(first, &pid) || pid <= 0 || ::kill(pid, 0) != 0) return -1;
  return pid;
}

std::string PatroniBed::LogTails() const {
  std::string out;
  for (const Node& n : nodes_) {
    absl::StrAppend(&out, "--- ", n.log, "\n", Tail(ReadFile(n.log), 15), "\n");
  }
  return out;
}

}  // namespace paceline::e2e
