#pragma once
// Zone: the answers of a DNS server for the cluster's services, made from the endpoints of
// service and stateful jobs. It knows nothing of the wire format (dns/message.h encodes) and is
// written by one thread and shared with readers only as an immutable copy (a snapshot
// published after a batch of changes).
//
// What it answers, for the names of dns/names.h:
//   - a service name: A (and AAAA) records of the distinct host addresses of its ready
//     instances; when several live jobs of one pool share a name, their ready instances
//     together (a blue/green switch);
//   - an SRV name: one SRV record per ready instance that has the port (priority 0, weight 1,
//     the port, the instance's name as target), with the targets' address records as
//     additional records;
//   - an instance name: its host's address while it is ready;
//   - a known name with nothing ready, another type, or a name that only has names below it
//     (a pool): no records and NOERROR (NODATA), with the zone's SOA for negative caching;
//   - an unknown name in the domain: NXDOMAIN with the SOA; a name outside it: REFUSED (it
//     does not recurse).
// Answers hold at most `max_records` records (the lowest instance numbers first), so that a
// service of thousands of instances cannot make answers of any size.
//
// Thread-safety: a value type; not synchronized.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::dns {

// One instance of a service job as its clients may see it.
struct InstanceEndpoint {
  uint32_t instance = 0;
  std::string address;                    // its host's IP address ("198.18.0.11", "fd00::7")
  std::map<std::string, uint16_t> ports;  // named ports: "http" -> 31002
  bool ready = false;                     // running, its readiness passing, not leaving
  friend bool operator==(const InstanceEndpoint&, const InstanceEndpoint&) = default;
};

// A service or stateful job's endpoints.
struct ServiceEndpoints {
  uint64_t job_id = 0;
  std::string pool;  // "/prod/web"
  std::string name;  // the job's name
  std::vector<InstanceEndpoint> instances;
  friend bool operator==(const ServiceEndpoints&, const ServiceEndpoints&) = default;
};

enum class RecordType : uint16_t { kA = 1, kNs = 2, kSoa = 6, kAaaa = 28, kSrv = 33, kAny = 255 };

enum class Rcode : uint8_t {
  kNoError = 0,
  kFormErr = 1,
  kServFail = 2,
  kNxDomain = 3,
  kNotImp = 4,
  kRefused = 5
};

struct Record {
  std::string name;  // lower case, no final dot
  RecordType type = RecordType::kA;
  uint32_t ttl = 0;
  std::string address;                          // kA, kAaaa: the address as text
  uint16_t priority = 0, weight = 0, port = 0;  // kSrv
  std::string target;   // kSrv; kSoa: the primary name server (the zone's own name)
  uint32_t serial = 0;  // kSoa (the mailbox is hostmaster.<zone>; the negative TTL `ttl`)
  friend bool operator==(const Record&, const Record&) = default;
};

struct Answer {
  Rcode rcode = Rcode::kNoError;
  bool authoritative = false;
  std::vector<Record> answers;
  std::vector<Record> additional;
  bool negative = false;  // NODATA or NXDOMAIN: the SOA goes in the authority section
};

struct ZoneOptions {
  std::string domain = "paceline";  // normalized (dns/names.h NormalizeDomain)
  uint32_t ttl_s = 1;               // of every record, and the SOA's negative TTL
  size_t max_records = 256;         // per answer section
};

class Zone {
 public:
  explicit Zone(ZoneOptions options);

  // Sets a job's endpoints (replacing what it had). A job without a DNS name (dns/names.h) is
  // kept out: the status says why, and the zone no longer holds the job.
  absl::Status Set(const ServiceEndpoints& endpoints);
  // Removes a job (a no-op for one it does not hold).
  void Remove(uint64_t job_id);

  // The answer to a question. `name` in any case, with or without the final dot.
  Answer Lookup(absl::string_view name, RecordType type) const;

  // The SOA record of the zone (its serial counts the changes).
  Record Soa() const;
  const ZoneOptions& options() const { return options_; }
  size_t jobs() const { return jobs_.size(); }
  std::vector<uint64_t> job_ids() const;

 private:
  struct Job {
    std::string service;
    ServiceEndpoints endpoints;
  };
  // The ready instances of a service's jobs, lowest instance first, at most max_records.
  std::vector<const InstanceEndpoint*> Ready(absl::string_view service,
                                             const uint32_t* instance) const;
  // Whether an instance of a known service's jobs, ready or not, satisfies `pred`.
  bool AnyInstance(absl::string_view service,
                   absl::FunctionRef<bool(const InstanceEndpoint&)> pred) const;
  void AddressRecords(absl::string_view name, const std::vector<const InstanceEndpoint*>& ready,
                      RecordType type, std::vector<Record>& out) const;
  void AddParents(absl::string_view service, int delta);

  ZoneOptions options_;
  uint32_t serial_ = 1;
  absl::flat_hash_map<uint64_t, Job> jobs_;
  absl::flat_hash_map<std::string, absl::flat_hash_set<uint64_t>> services_;
  // Names above services (pools), with how many services are below each.
  absl::flat_hash_map<std::string, int> parents_;
};

}  // namespace paceline::dns
