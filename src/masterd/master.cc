#include "masterd/master.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "access/role.h"
#include "access/task_credential.h"
#include "api/access_control.h"
#include "api/access_interceptor.h"
#include "api/access_service.h"
#include "api/cluster_service.h"
#include "api/dns_server.h"
#include "api/host_service.h"
#include "api/http_routes.h"
#include "api/job_service_impl.h"
#include "api/json_gateway.h"
#include "api/pool_service.h"
#include "api/secret_service.h"
#include "api/task_service_impl.h"
#include "api/ui_routes.h"
#include "common/atomic_file.h"
#include "common/random_bytes.h"
#include "common/status.h"
#include "http/http_server.h"
#include "masterd/access_book.h"
#include "masterd/cluster.h"
#include "masterd/host_certificates.h"
#include "masterd/leadership.h"
#include "masterd/master_tls.h"
#include "masterd/retention_worker.h"
#include "masterd/secret_book.h"
#include "masterd/service_dns.h"
#include "masterd/task_credentials.h"
#include "masterd/usage_book.h"
#include "store/open_store.h"
#include "store/postgres/postgres_store.h"

namespace paceline::masterd {

namespace {

// The token in the file `path`; nullopt when there is no such file.
absl::StatusOr<std::optional<std::string>> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(s.str()));
  if (token.empty()) return absl::FailedPreconditionError(absl::StrCat(path, " is empty"));
  return token;
}

}  // namespace

absl::StatusOr<std::string> LoadOrCreateToken(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> existing, ReadToken(path));
  if (existing) return *std::move(existing);
  ASSIGN_OR_RETURN(std::string token, RandomHex(32));
  // Written whole under another name, then linked into place: a master or agent reading the
  // file at the same time sees all of it or none, and of two creators the first one wins; the
  // file is read back, so that every creator answers the winner's token.
  AtomicWriteOptions options;
  options.temp_suffix = absl::StrCat(".", ::getpid(), ".tmp");
  options.dir_sync = AtomicWriteOptions::DirSync::kNone;
  options.replace = false;
  RETURN_IF_ERROR(WriteFileAtomically(path, token + "\n", options, [&](int, absl::string_view) {
    return absl::UnavailableError(absl::StrCat("cannot write token file ", path));
  }));
  ASSIGN_OR_RETURN(existing, ReadToken(path));
  if (!existing) return absl::UnavailableError(absl::StrCat("cannot read token file ", path));
  return *std::move(existing);
}

namespace {

// Sockets: the HTTP server keeps up to http::HttpLimits::max_connections of them open, and the
// agents' and clients' gRPC streams more. The soft limit on open files goes up to the hard one.
void RaiseOpenFileLimit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &r);
  }
}

// Where the other masters send clients and agents: --advertise, or the bound gRPC address.
std::string AdvertisedAddress(const MasterConfig& config, int grpc_port) {
  if (!config.advertise.empty()) return config.advertise;
  return HostPort{config.grpc_listen.host, static_cast<uint16_t>(grpc_port)}.ToString();
}

// A master's data directory remembers the cluster its store holds: a master pointed at another
// cluster's database (a second cluster sharing it by mistake, a copied config) is refused rather
// than mixing two clusters' hosts and tasks.
absl::Status CheckClusterId(const std::string& data_dir, const store::Store& store) {
  std::string path = (std::filesystem::path(data_dir) / "cluster_id").string();
  std::ifstream in(path);
  std::string known;
  if (in >> known) {
    if (known == store.cluster_id()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "the store ", store.Describe(), " holds cluster ", store.cluster_id(),
        " but this master's data directory belongs to cluster ", known,
        ": give each cluster a database of its own, or, to move this master to that cluster, "
        "remove ",
        path));
  }
  std::ofstream out(path, std::ios::trunc);
  out << store.cluster_id() << "\n";
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

struct Master::Impl {
  MasterConfig config;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<TaskCredentials> task_credentials;
  std::unique_ptr<AccessBook> access_book;
  std::unique_ptr<SecretBook> secret_book;
  std::unique_ptr<UsageBook> usage_book;
  std::unique_ptr<api::AccessControl> access;
  std::unique_ptr<Leadership> leadership;      // with a PostgreSQL store
  std::unique_ptr<store::Store> stats_store;   // the retention worker's own connection
  std::unique_ptr<RetentionWorker> retention;  // (destroyed before the connection it uses)
  std::unique_ptr<archive::ArchiveReader> archive;
  std::unique_ptr<api::ClusterServiceImpl> cluster_service;
  std::unique_ptr<api::PoolServiceImpl> pool_service;
  std::unique_ptr<api::JobServiceImpl> job_service;
  std::unique_ptr<api::TaskServiceImpl> task_service;
  std::unique_ptr<api::HostServiceImpl> host_service;
  std::unique_ptr<api::AgentServiceImpl> agent_service;
  std::unique_ptr<api::AccessServiceImpl> access_service;
  std::unique_ptr<api::SecretServiceImpl> secret_service;
  std::unique_ptr<grpc::Server> grpc_server;
  http::HttpServer http_server;
  std::unique_ptr<http::HttpServer> metrics_server;  // --metrics-listen
  std::unique_ptr<api::DnsServer> dns_server;
  std::unique_ptr<ServiceDns> service_dns;  // (stopped before the server it publishes to)
  absl::Notification stop_trimmer;
  std::thread trimmer;  // TrimMemory() every 30 s
  bool stopped = false;
};

namespace {

// /metrics alone on config.metrics_listen: with TLS, mutual, for the named clients only.
absl::StatusOr<HostPort> StartMetricsServer(http::HttpServer& server, const MasterConfig& config,
                                            const MasterTls& tls, api::Backend* cluster,
                                            const api::MasterFacts& facts) {
  std::optional<http::HttpTls> mutual = tls.http;
  if (mutual) mutual->client_ca_file = tls.ca_file;
  server.Routes().SetGuard(
      [on = mutual.has_value(), clients = config.metrics_clients](
          const http::HttpRequest& req, absl::string_view, http::HttpResponse& res) {
        return !on || http::AllowClientName(req, clients, "--metrics-client", res);
      });
  api::AddMetricsRoutes(server, cluster, facts);
  absl::StatusOr<HostPort> bound = server.Start(config.metrics_listen, mutual);
  if (!bound.ok()) {
    return absl::Status(bound.status().code(),
                        absl::StrCat("--metrics-listen: ", bound.status().message()));
  }
  return bound;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Master>> Master::Start(const MasterConfig& config) {
  RaiseOpenFileLimit();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("--data-dir: cannot create ", config.data_dir, ": ", ec.message()));
  }
  ASSIGN_OR_RETURN(impl->store, store::OpenStore(config.store, config.data_dir));
  RETURN_IF_ERROR(CheckClusterId(config.data_dir, *impl->store));
  ASSIGN_OR_RETURN(MasterTls tls, SetUpTls(config));
  auto in_data_dir = [&](const std::string& flag, const char* name) {
    return flag.empty() ? (std::filesystem::path(config.data_dir) / name).string() : flag;
  };
  const std::string token_file = in_data_dir(config.token_file, "token");
  const std::string agent_token_file = in_data_dir(config.agent_token_file, "agent-token");
  ASSIGN_OR_RETURN(std::string token, LoadOrCreateToken(token_file));
  ASSIGN_OR_RETURN(std::string agent_token, LoadOrCreateToken(agent_token_file));
  if (token == agent_token) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--agent-token-file: ", agent_token_file, " holds the admin token of ", token_file,
        "; agents need a credential of their own (delete the file to have one made)"));
  }
  auto* postgres = dynamic_cast<store::PostgresStore*>(impl->store.get());

  scheduler::CoreConfig core_config;
  core_config.host_timeout = config.host_timeout;
  core_config.placement.profile = config.placement_profile;
  core_config.placement.max_candidates = config.placement_candidates;
  core_config.resmgr.backfill = config.backfill;
  core_config.history.period = config.history_period;
  core_config.history.keep =
      static_cast<size_t>(std::max<int64_t>(1, absl::Hours(1) / config.history_period));
  core_config.retain_terminal = config.retain_terminal;
  impl->cluster =
      std::make_unique<Cluster>(core_config, impl->store.get(),
                                ClusterOptions{config.cycle, config.heartbeat_interval,
                                               postgres != nullptr, config.standby_read_bound});
  impl->task_credentials = std::make_unique<TaskCredentials>(
      impl->cluster.get(), access::DeriveTaskKey(token), config.task_credential_ttl);
  impl->access_book = std::make_unique<AccessBook>(impl->cluster.get(), config.audit_retention,
                                                   impl->task_credentials.get());
  ASSIGN_OR_RETURN(
      impl->secret_book,
      SecretBook::Open(impl->cluster.get(), in_data_dir(config.secrets_key_file, "secrets.key")));
  impl->usage_book = std::make_unique<UsageBook>(impl->cluster.get(), config.audit_retention);
  impl->cluster->keeper().OnRecords(
      [access = impl->access_book.get(), secrets = impl->secret_book.get(),
       tasks = impl->task_credentials.get(),
       cluster = impl->cluster.get()](const store::StoreChanges& c, bool all) {
        access->Take(c.changed.tokens, all);
        secrets->Take(c.changed.secrets, c.deleted_secrets, all);
        // The core was just rebuilt from the store (on the loop): the runs with an identity
        // launched before it, by this master or an earlier one, are indexed again.
        if (all) tasks->Reindex(cluster->keeper().core());
      });
  impl->cluster->agents().OnLaunch(
      [secrets = impl->secret_book.get(), tasks = impl->task_credentials.get()](
          const scheduler::Launch& l, v1::LaunchTask& msg) {
        if (msg.task().secrets_size() > 0 || !msg.task().container().pull_secret().empty()) {
          secrets->FillLaunch(l.pool, msg);
        }
        tasks->FillLaunch(l, msg, absl::Now());
      });
  RETURN_IF_ERROR(WithContext(impl->cluster->Start(), "restoring the cluster from the store"));
  api::AccessOptions access_options;
  access_options.agents_need_certificates = tls.on;
  access_options.task_key = impl->task_credentials->key();
  access_options.certificate_revoked = RevokedCertificateCheck(impl->access_book.get());
  std::vector<api::BootstrapCredential> bootstrap = {
      {token, access::Principal{"admin", "", access::Role::kAdmin, "/", "bootstrap"}},
      {agent_token, access::Principal{"*", "", access::Role::kAgent, "*", "bootstrap-agent"}}};
  impl->access = std::make_unique<api::AccessControl>(
      std::move(bootstrap), impl->access_book.get(),
      api::Gate{[cluster = impl->cluster.get()](bool followed_read, int64_t at_least) {
                  return cluster->keeper().Admit(followed_read, at_least);
                },
                [cluster = impl->cluster.get()] { return cluster->CommittedRevision(); }},
      access_options);

  RetentionOptions retention;
  retention.archive_dir = in_data_dir(config.archive_dir, "archive");
  retention.period = config.retention_period;
  if (impl->store->Describe() != "memory") {
    ASSIGN_OR_RETURN(impl->stats_store, store::OpenStore(config.store, config.data_dir));
    retention.stats = [s = impl->stats_store.get()] { return s->Stats(); };
  }
  impl->retention = std::make_unique<RetentionWorker>(impl->cluster.get(), retention);
  impl->archive = std::make_unique<archive::ArchiveReader>(retention.archive_dir);
  api::MasterFacts facts{absl::Now(),
                         impl->store->Describe(),
                         impl->store->cluster_id(),
                         [impl = impl.get()] {
                           if (impl->leadership == nullptr) return api::MasterRole{};
                           LeadershipStatus s = impl->leadership->status();
                           return api::MasterRole{s.leader ? "leader" : "standby", s.term,
                                                  s.leader_address, s.lease_age,
                                                  impl->cluster->keeper().ReplicationLag()};
                         },
                         [worker = impl->retention.get()] { return worker->Facts(); },
                         [book = impl->usage_book.get()] { return book->Counters(); }};
  if (tls.on) facts.certificates = [tls] { return CertificateExpiries(tls); };
  api::AccessControl* auth = impl->access.get();
  Cluster* cluster = impl->cluster.get();
  impl->cluster_service = std::make_unique<api::ClusterServiceImpl>(facts, cluster, auth);
  const SecretBook* secrets = impl->secret_book.get();
  impl->pool_service =
      std::make_unique<api::PoolServiceImpl>(cluster, auth, secrets, impl->usage_book.get());
  // Where hosts' addresses come from, for every part that gives them out (the API, the DNS):
  // the connected agents' registry.
  api::HostAddressFn address_of = [cluster](const std::string& host) {
    return cluster->agents().AddressOf(host);
  };
  impl->job_service = std::make_unique<api::JobServiceImpl>(
      cluster, auth, secrets, impl->archive.get(),
      api::EndpointsSource{address_of, config.dns_listen.host.empty() ? "" : config.dns_domain});
  impl->task_service = std::make_unique<api::TaskServiceImpl>(cluster, auth, address_of);
  impl->host_service = std::make_unique<api::HostServiceImpl>(cluster, auth, address_of);
  impl->agent_service = std::make_unique<api::AgentServiceImpl>(cluster, auth);
  ASSIGN_OR_RETURN(api::HostCertificates host_certificates,
                   HostCertificatesOf(tls, config.host_cert_validity));
  impl->access_service =
      std::make_unique<api::AccessServiceImpl>(auth, std::move(host_certificates));
  impl->secret_service = std::make_unique<api::SecretServiceImpl>(impl->secret_book.get(), auth);

  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(config.grpc_listen.ToString(), tls.credentials, &grpc_port);
  // Agents ping every few seconds (keepalive) to notice a hung master: allow it.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  // Keep up to 32 idle handler threads instead of gRPC's 2: with many concurrent callers the
  // default starts and ends a thread for nearly every call (each exit also frees its malloc
  // arena), which cost more CPU than the calls themselves under load.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 32);
  builder.RegisterService(impl->cluster_service.get());
  builder.RegisterService(impl->pool_service.get());
  builder.RegisterService(impl->job_service.get());
  builder.RegisterService(impl->task_service.get());
  builder.RegisterService(impl->host_service.get());
  builder.RegisterService(impl->agent_service.get());
  builder.RegisterService(impl->access_service.get());
  builder.RegisterService(impl->secret_service.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(api::NewAccessInterceptorFactory(auth));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  impl->grpc_server = builder.BuildAndStart();
  if (impl->grpc_server == nullptr || grpc_port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve gRPC on ", config.grpc_listen.ToString(), " (address in use?)"));
  }

  impl->http_server.Routes().SetGuard(
      [auth](const http::HttpRequest& req, absl::string_view route, http::HttpResponse& res) {
        return auth->AllowHttp(req, route, res);
      });
  api::AddHealthRoutes(impl->http_server, facts);
  api::AddMetricsRoutes(impl->http_server, cluster, facts);
  api::AddJsonApiRoutes(impl->http_server, impl->grpc_server->InProcessChannel({}));
  api::AddUiRoutes(impl->http_server);
  absl::StatusOr<HostPort> http = impl->http_server.Start(config.http_listen, tls.http);
  if (!http.ok()) {
    impl->grpc_server->Shutdown();
    return http.status();
  }

  MasterEndpoints endpoints;
  if (!config.metrics_listen.host.empty()) {
    impl->metrics_server = std::make_unique<http::HttpServer>();
    absl::StatusOr<HostPort> metrics =
        StartMetricsServer(*impl->metrics_server, config, tls, cluster, facts);
    if (!metrics.ok()) {
      impl->http_server.Stop();
      impl->grpc_server->Shutdown();
      return metrics.status();
    }
    endpoints.metrics = metrics->ToString();
  }
  if (!config.dns_listen.host.empty()) {
    api::DnsLimits limits;
    limits.rate.rate = config.dns_rate_limit;
    limits.rate.burst = 2 * config.dns_rate_limit;
    impl->dns_server =
        std::make_unique<api::DnsServer>(config.dns_listen.host, config.dns_listen.port, limits);
    if (absl::Status s = impl->dns_server->Start(dns::ZoneOptions{.domain = config.dns_domain});
        !s.ok()) {
      if (impl->metrics_server) impl->metrics_server->Stop();
      impl->http_server.Stop();
      impl->grpc_server->Shutdown();
      return s;
    }
    endpoints.dns = HostPort{config.dns_listen.host, impl->dns_server->port()}.ToString();
    impl->service_dns = std::make_unique<ServiceDns>(
        impl->cluster.get(), address_of, impl->dns_server.get(),
        dns::ZoneOptions{.domain = config.dns_domain}, absl::Milliseconds(250));
  }
  endpoints.grpc = HostPort{config.grpc_listen.host, static_cast<uint16_t>(grpc_port)}.ToString();
  endpoints.http = http->ToString();
  endpoints.pid = static_cast<int>(::getpid());
  endpoints.token_file = token_file;
  endpoints.agent_token_file = agent_token_file;
  endpoints.ca_file = tls.ca_file;
  RETURN_IF_ERROR(WriteEndpointsFile(config.data_dir, endpoints));
  if (postgres != nullptr) {
    // Unique per process: a master that restarts is a new holder and waits for its old lease.
    std::string holder =
        absl::StrCat(endpoints.grpc, "/", endpoints.pid, "/", absl::ToUnixNanos(absl::Now()));
    impl->leadership = std::make_unique<Leadership>(
        std::make_unique<store::PgLease>(config.store, config.lease, absl::Seconds(2)), postgres,
        &impl->cluster->keeper(), holder, AdvertisedAddress(config, grpc_port));
    impl->leadership->Start();
  }

  impl->retention->Start();
  impl->task_credentials->Start();
  if (impl->service_dns) impl->service_dns->Start();
  impl->trimmer = std::thread([stop = &impl->stop_trimmer] {
    while (!stop->WaitForNotificationWithTimeout(absl::Seconds(30))) TrimMemory();
  });
  std::unique_ptr<Master> master(new Master(std::move(impl)));
  master->endpoints_ = endpoints;
  return master;
}

Master::Master(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Master::~Master() { Shutdown(); }

const std::string& Master::cluster_id() const { return impl_->store->cluster_id(); }
std::string Master::store_description() const { return impl_->store->Describe(); }

Cluster* Master::cluster() { return impl_->cluster.get(); }

absl::Duration Master::heartbeat_interval() const { return impl_->config.heartbeat_interval; }

void Master::TrimMemory() {
  // The binary runs on jemalloc (src/main/CMakeLists.txt): purge every arena's dirty pages.
  // Elsewhere (the tests, the sanitizer builds) glibc's malloc: trim its heaps.
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  static const auto mallctl = reinterpret_cast<Mallctl>(::dlsym(RTLD_DEFAULT, "mallctl"));
  if (mallctl != nullptr) {
    (void)mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: all arenas
  } else {
    ::malloc_trim(0);
  }
}

void Master::Shutdown() {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  impl_->stop_trimmer.Notify();
  if (impl_->trimmer.joinable()) impl_->trimmer.join();
  impl_->retention->Stop();
  impl_->task_credentials->Stop();
  if (impl_->service_dns) impl_->service_dns->Stop();
  if (impl_->dns_server) impl_->dns_server->Stop();
  if (impl_->leadership) impl_->leadership->Stop();  // hands the lease over at once
  // Watches end first: HTTP watches hold HTTP threads until their gRPC stream ends.
  impl_->cluster->events().CloseAll(absl::UnavailableError("the master is stopping"));
  impl_->http_server.Stop();
  if (impl_->metrics_server) impl_->metrics_server->Stop();
  // Agent streams never end on their own: cancel them after a short grace.
  impl_->grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->cluster->Stop();
  std::error_code ec;
  std::filesystem::remove(EndpointsPath(impl_->config.data_dir), ec);
}

}  // namespace paceline::masterd
