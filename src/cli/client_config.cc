#include "cli/client_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/defaults.h"
#include "common/endpoints.h"

namespace paceline::cli {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

struct FileConfig {
  std::string addr;
  std::string token;
  std::string ca;
};

absl::StatusOr<FileConfig> ReadUserConfig() {
  std::string home = Env("HOME");
  if (home.empty()) return FileConfig{};
  std::string path = home + "/.paceline/config";
  if (!std::filesystem::exists(path)) return FileConfig{};
  FileConfig fc;
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root.IsNull()) return fc;
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": expected a map with addr, token, ca"));
    }
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      if (key == "addr") {
        fc.addr = kv.second.as<std::string>();
      } else if (key == "token") {
        fc.token = kv.second.as<std::string>();
      } else if (key == "ca") {
        fc.ca = kv.second.as<std::string>();
      } else {
        return absl::InvalidArgumentError(absl::StrCat(path, ":", kv.first.Mark().line + 1,
                                                       ": unknown key '", key,
                                                       "'; expected addr, token or ca"));
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  return fc;
}

std::string ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(s.str()));
}

// "a:1, b:2" -> {"a:1", "b:2"}; an empty entry names where it came from.
absl::StatusOr<std::vector<std::string>> SplitAddrs(const std::string& text,
                                                    const std::string& source) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": '", text, "' has an empty address; expected HOST:PORT[,HOST:PORT...]"));
    }
    out.emplace_back(part);
  }
  return out;
}

}  // namespace

absl::StatusOr<ResolvedClient> ResolveClient(const ClientFlags& flags) {
  absl::StatusOr<FileConfig> file = ReadUserConfig();
  if (!file.ok()) return file.status();
  ResolvedClient r;
  if (!flags.addr.empty()) {
    r.addr = flags.addr;
    r.addr_source = "--addr";
  } else if (std::string env = Env("PACELINE_ADDR"); !env.empty()) {
    r.addr = env;
    r.addr_source = "$PACELINE_ADDR";
  } else if (!file->addr.empty()) {
    r.addr = file->addr;
    r.addr_source = "~/.paceline/config";
  } else if (auto local = ReadEndpointsFile(defaults::kDataDir); local.ok()) {
    r.addr = local->grpc;
    r.addr_source = "./data/master.json";
  } else {
    r.addr = defaults::kMasterAddr;
    r.addr_source = "the default address";
  }
  absl::StatusOr<std::vector<std::string>> addrs = SplitAddrs(r.addr, r.addr_source);
  if (!addrs.ok()) return addrs.status();
  r.addrs = *std::move(addrs);
  r.addr = r.addrs.front();
  if (!flags.token.empty()) {
    r.token = flags.token;
  } else if (std::string env = Env("PACELINE_TOKEN"); !env.empty()) {
    r.token = env;
  } else if (std::string task = Env("PACELINE_TASK_TOKEN_FILE"); !task.empty()) {
    r.token = ReadTokenFile(task);  // inside a task with an identity: its credential
  } else if (!file->token.empty()) {
    r.token = file->token;
  } else {
    r.token = ReadTokenFile("data/token");
  }
  std::string ca_path;
  if (!flags.ca.empty()) {
    ca_path = flags.ca;
    r.ca_source = "--ca";
  } else if (std::string env = Env("PACELINE_CA"); !env.empty()) {
    ca_path = env;
    r.ca_source = "$PACELINE_CA";
  } else if (!file->ca.empty()) {
    ca_path = file->ca;
    r.ca_source = "~/.paceline/config";
  } else if (std::filesystem::exists("data/tls/ca.pem")) {
    ca_path = "data/tls/ca.pem";
    r.ca_source = "./data/tls/ca.pem";
  }
  if (!ca_path.empty()) {
    std::ifstream in(ca_path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().find("BEGIN CERTIFICATE") == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(r.ca_source, ": ", ca_path, " is not a readable PEM certificate"));
    }
    r.ca_pem = text.str();
  }
  return r;
}

}  // namespace paceline::cli
