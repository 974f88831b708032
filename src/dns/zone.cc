#include "dns/zone.h"

#include <arpa/inet.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dns/names.h"

namespace paceline::dns {
namespace {

RecordType AddressType(absl::string_view address) {
  return absl::StrContains(address, ':') ? RecordType::kAaaa : RecordType::kA;
}

bool WantsAddress(RecordType asked, RecordType have) {
  return asked == have || asked == RecordType::kAny;
}

Answer NoData(bool exists) {
  Answer a;
  a.authoritative = true;
  a.negative = true;
  a.rcode = exists ? Rcode::kNoError : Rcode::kNxDomain;
  return a;
}

}  // namespace

Zone::Zone(ZoneOptions options) : options_(std::move(options)) {}

absl::Status Zone::Set(const ServiceEndpoints& endpoints) {
  for (const InstanceEndpoint& e : endpoints.instances) {
    unsigned char bytes[16];
    const int family = AddressType(e.address) == RecordType::kA ? AF_INET : AF_INET6;
    if (inet_pton(family, e.address.c_str(), bytes) != 1) {
      Remove(endpoints.job_id);
      return absl::InvalidArgumentError(absl::StrCat("instance ", e.instance, ": address '",
                                                     e.address, "' is not an IP address"));
    }
  }
  absl::StatusOr<std::string> service =
      ServiceNameOf(endpoints.pool, endpoints.name, options_.domain);
  auto it = jobs_.find(endpoints.job_id);
  if (it != jobs_.end() && service.ok() && it->second.service == *service) {
    if (it->second.endpoints == endpoints) return absl::OkStatus();
    it->second.endpoints = endpoints;
    ++serial_;
    return absl::OkStatus();
  }
  Remove(endpoints.job_id);
  if (!service.ok()) return service.status();
  Job& job = jobs_[endpoints.job_id];
  job.service = *service;
  job.endpoints = endpoints;
  if (services_[job.service].insert(endpoints.job_id).second &&
      services_[job.service].size() == 1) {
    AddParents(job.service, +1);
  }
  ++serial_;
  return absl::OkStatus();
}

void Zone::Remove(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  auto service = services_.find(it->second.service);
  service->second.erase(job_id);
  if (service->second.empty()) {
    AddParents(it->second.service, -1);
    services_.erase(service);
  }
  jobs_.erase(it);
  ++serial_;
}

void Zone::AddParents(absl::string_view service, int delta) {
  absl::string_view name = service;
  for (size_t dot = name.find('.'); dot != absl::string_view::npos; dot = name.find('.')) {
    name = name.substr(dot + 1);
    if (name == options_.domain) return;
    int& count = parents_[name];
    count += delta;
    if (count <= 0) parents_.erase(std::string(name));
  }
}

std::vector<const InstanceEndpoint*> Zone::Ready(absl::string_view service,
                                                 const uint32_t* instance) const {
  std::vector<const InstanceEndpoint*> ready;
  auto it = services_.find(service);
  if (it == services_.end()) return ready;
  for (uint64_t job_id : it->second) {
    for (const InstanceEndpoint& e : jobs_.at(job_id).endpoints.instances) {
      if (e.ready && (instance == nullptr || e.instance == *instance)) ready.push_back(&e);
    }
  }
  std::sort(ready.begin(), ready.end(), [](const InstanceEndpoint* a, const InstanceEndpoint* b) {
    return std::tie(a->instance, a->address) < std::tie(b->instance, b->address);
  });
  return ready;
}

bool Zone::AnyInstance(absl::string_view service,
                       absl::FunctionRef<bool(const InstanceEndpoint&)> pred) const {
  for (uint64_t job_id : services_.at(service)) {
    for (const InstanceEndpoint& e : jobs_.at(job_id).endpoints.instances) {
      if (pred(e)) return true;
    }
  }
  return false;
}

void Zone::AddressRecords(absl::string_view name, const std::vector<const InstanceEndpoint*>& ready,
                          RecordType type, std::vector<Record>& out) const {
  for (const InstanceEndpoint* e : ready) {
    if (out.size() >= options_.max_records) return;
    const RecordType have = AddressType(e->address);
    if (!WantsAddress(type, have)) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Record& r) {
      return r.name == name && r.address == e->address;
    });
    if (seen) continue;
    out.push_back(Record{
        .name = std::string(name), .type = have, .ttl = options_.ttl_s, .address = e->address});
  }
}

Answer Zone::Lookup(absl::string_view asked, RecordType type) const {
  std::string name = absl::AsciiStrToLower(asked);
  if (!name.empty() && name.back() == '.') name.pop_back();
  std::optional<QueryName> q = SplitQueryName(name, options_.domain);
  if (!q.has_value()) return Answer{.rcode = Rcode::kRefused};
  if (name == options_.domain) {
    if (type != RecordType::kSoa && type != RecordType::kAny) return NoData(true);
    Answer a{.authoritative = true};
    a.answers.push_back(Soa());
    return a;
  }
  const bool service_known = services_.contains(q->service);
  Answer a{.authoritative = true};
  switch (q->kind) {
    case QueryName::Kind::kService:
      if (!service_known) break;
      AddressRecords(name, Ready(q->service, nullptr), type, a.answers);
      a.negative = a.answers.empty();
      return a;
    case QueryName::Kind::kInstance: {
      if (!service_known) break;
      if (!AnyInstance(q->service,
                       [&](const InstanceEndpoint& e) { return e.instance == q->instance; })) {
        return NoData(false);
      }
      AddressRecords(name, Ready(q->service, &q->instance), type, a.answers);
      a.negative = a.answers.empty();
      return a;
    }
    case QueryName::Kind::kSrv: {
      if (!service_known) break;
      if (!AnyInstance(q->service,
                       [&](const InstanceEndpoint& e) { return e.ports.contains(q->port); })) {
        return NoData(false);
      }
      if (type != RecordType::kSrv && type != RecordType::kAny) return NoData(true);
      for (const InstanceEndpoint* e : Ready(q->service, nullptr)) {
        auto port = e->ports.find(q->port);
        if (port == e->ports.end() || a.answers.size() >= options_.max_records) continue;
        const std::string target = InstanceName(q->service, e->instance);
        const bool seen = std::any_of(a.answers.begin(), a.answers.end(), [&](const Record& r) {
          return r.target == target && r.port == port->second;
        });
        if (seen) continue;
        a.answers.push_back(Record{.name = name,
                                   .type = RecordType::kSrv,
                                   .ttl = options_.ttl_s,
                                   .priority = 0,
                                   .weight = 1,
                                   .port = port->second,
                                   .target = target});
        AddressRecords(target, {e}, RecordType::kAny, a.additional);
      }
      a.negative = a.answers.empty();
      return a;
    }
    case QueryName::Kind::kOther:
      break;
  }
  return NoData(parents_.contains(name));
}

std::vector<uint64_t> Zone::job_ids() const {
  std::vector<uint64_t> ids;
  ids.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) ids.push_back(id);
  return ids;
}

Record Zone::Soa() const {
  return Record{.name = options_.domain,
                .type = RecordType::kSoa,
                .ttl = options_.ttl_s,
                .target = options_.domain,
                .serial = serial_};
}

}  // namespace paceline::dns
