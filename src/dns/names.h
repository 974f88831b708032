#pragma once
// The DNS names of services (docs/services.md, "Finding a service by name"): how clients find
// a service job's ready instances by name.
//
// A service or stateful job named NAME in pool /A/B of a cluster whose domain is D has
//   NAME.B.A.D                    A/AAAA: its ready instances' host addresses
//   _PORT._tcp.NAME.B.A.D         SRV: one record per ready instance with that named port
//   INSTANCE.NAME.B.A.D           A/AAAA: one instance's host address, while it is ready
// (the pool's segments leaf first, as DNS reads). A job in the root pool is NAME.D.
//
// A job has a DNS name only if every part is a DNS label (RFC 1123: 1..63 characters from
// [a-z0-9-], not starting or ending with '-'; matched without regard to case), its name starts
// with a letter (so that instance numbers and job names never meet) and the whole name fits in
// 253 characters. Otherwise the job has none, and ServiceNameOf says why.
//
// Names are held in lower case without the final dot ("web.prod.paceline"); the domain is
// given as "paceline", "paceline.", "cluster.example.com" and is kept the same way.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::dns {

inline constexpr size_t kMaxLabel = 63;
inline constexpr size_t kMaxName = 253;

// Whether `label` is a DNS label as above (any case).
bool IsLabel(absl::string_view label);

// The cluster domain, normalized (lower case, no final dot). INVALID_ARGUMENT saying what is
// wrong (a label that is not a DNS label, an empty or too long name); the caller names its flag.
absl::StatusOr<std::string> NormalizeDomain(absl::string_view domain);

// The service name of job `job_name` in pool `pool` ("/prod/web"). INVALID_ARGUMENT saying
// which part is not a label (the job's name or a pool segment) or that it is too long.
absl::StatusOr<std::string> ServiceNameOf(absl::string_view pool, absl::string_view job_name,
                                          absl::string_view domain);

// The name of one instance of a service: "3.web.prod.paceline".
std::string InstanceName(absl::string_view service, uint32_t instance);

// The SRV name of a named port of a service: "_http._tcp.web.prod.paceline".
std::string SrvName(absl::string_view service, absl::string_view port);

// A query name split against the zone: which service it is about and how.
struct QueryName {
  enum class Kind : uint8_t { kService, kInstance, kSrv, kOther };
  Kind kind = Kind::kOther;
  std::string service;    // the service name (kService, kInstance, kSrv)
  uint32_t instance = 0;  // kInstance
  std::string port;       // kSrv: the named port
};

// `name` (lower case, no final dot) inside `domain` read as a service, instance or SRV name.
// nullopt when the name is not in the domain. A name that fits no form is kOther with the
// whole name as `service`.
std::optional<QueryName> SplitQueryName(absl::string_view name, absl::string_view domain);

}  // namespace paceline::dns
