#include "master/master.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/cluster_service.h"
#include "api/http_routes.h"
#include "api/http_server.h"
#include "common/status.h"
#include "store/sqlite/sqlite_store.h"

namespace paceline::master {
namespace {

constexpr const char* kEndpointsFile = "master.json";

std::string EndpointsPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / kEndpointsFile).string();
}

// Writes the file atomically (temp file + rename) so readers never see half of it.
absl::Status WriteEndpointsFile(const std::string& data_dir, const MasterEndpoints& e) {
  std::string path = EndpointsPath(data_dir);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << nlohmann::json{{"grpc", e.grpc}, {"http", e.http}, {"pid", e.pid}}.dump() << "\n";
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

struct Master::Impl {
  MasterConfig config;
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<api::ClusterServiceImpl> cluster_service;
  std::unique_ptr<grpc::Server> grpc_server;
  api::HttpServer http_server;
  bool stopped = false;
};

absl::StatusOr<std::unique_ptr<Master>> Master::Start(const MasterConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  ASSIGN_OR_RETURN(impl->store, store::SqliteStore::Open(config.data_dir));

  api::MasterFacts facts{absl::Now(), impl->store->Describe(), impl->store->cluster_id()};
  impl->cluster_service = std::make_unique<api::ClusterServiceImpl>(facts);

  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(config.grpc_listen.ToString(), grpc::InsecureServerCredentials(),
                           &grpc_port);
  builder.RegisterService(impl->cluster_service.get());
  impl->grpc_server = builder.BuildAndStart();
  if (impl->grpc_server == nullptr || grpc_port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve gRPC on ", config.grpc_listen.ToString(), " (address in use?)"));
  }

  api::AddHealthRoutes(impl->http_server, facts);
  absl::StatusOr<HostPort> http = impl->http_server.Start(config.http_listen);
  if (!http.ok()) {
    impl->grpc_server->Shutdown();
    return http.status();
  }

  MasterEndpoints endpoints;
  endpoints.grpc = HostPort{config.grpc_listen.host, static_cast<uint16_t>(grpc_port)}.ToString();
  endpoints.http = http->ToString();
  endpoints.pid = static_cast<int>(::getpid());
  RETURN_IF_ERROR(WriteEndpointsFile(config.data_dir, endpoints));

  std::unique_ptr<Master> master(new Master(std::move(impl)));
  master->endpoints_ = endpoints;
  return master;
}

Master::Master(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Master::~Master() { Shutdown(); }

void Master::Shutdown() {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  impl_->http_server.Stop();
  impl_->grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  std::error_code ec;
  std::filesystem::remove(EndpointsPath(impl_->config.data_dir), ec);
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
  return e;
}

}  // namespace paceline::master
