#include "common/endpoints.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "nlohmann/json.hpp"

namespace paceline {
namespace {

constexpr const char* kEndpointsFile = "master.json";

}  // namespace

std::string EndpointsPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / kEndpointsFile).string();
}

absl::Status WriteEndpointsFile(const std::string& data_dir, const MasterEndpoints& e) {
  std::string path = EndpointsPath(data_dir);
  std::string text = nlohmann::json{{"grpc", e.grpc},
                                    {"http", e.http},
                                    {"pid", e.pid},
                                    {"token_file", e.token_file},
                                    {"agent_token_file", e.agent_token_file},
                                    {"ca_file", e.ca_file},
                                    {"dns", e.dns},
                                    {"metrics", e.metrics}}
                         .dump() +
                     "\n";
  // Atomic for readers, not synced: the file describes a running process.
  return WriteFileAtomically(path, text,
                             {.mode = 0666,
                              .sync = AtomicWriteOptions::Sync::kNone,
                              .dir_sync = AtomicWriteOptions::DirSync::kNone,
                              .remove_temp_on_failure = false},
                             [&](int err, absl::string_view what) {
                               return absl::UnavailableError(absl::StrCat(
                                   "cannot write ", path, ": ", what, ": ", std::strerror(err)));
                             });
}

absl::StatusOr<MasterEndpoints> ReadEndpointsFile(const std::string& data_dir) {
  std::string path = EndpointsPath(data_dir);
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no master endpoints file at ", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("grpc") || !j["grpc"].is_string()) {
    return absl::DataLossError(absl::StrCat(path, " is not a master endpoints file"));
  }
  MasterEndpoints e;
  e.grpc = j["grpc"].get<std::string>();
  e.http = j.value("http", "");
  e.pid = j.value("pid", 0);
  e.token_file = j.value("token_file", "");
  e.agent_token_file = j.value("agent_token_file", "");
  e.ca_file = j.value("ca_file", "");
  e.dns = j.value("dns", "");
  e.metrics = j.value("metrics", "");
  return e;
}

}  // namespace paceline
