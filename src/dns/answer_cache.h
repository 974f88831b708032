#pragma once
// AnswerCache: the encoded answers of one published zone, so that a question asked again is
// answered by copying the bytes Respond (dns/message.h) gave the first time and patching in the
// query's id, instead of parsing the query and building the answer record by record with ldns.
//
// Respond's answer is a function of the zone, the transport and the query's bytes after its
// id (flags, question with its exact letter case, EDNS size and version): the cache's key is
// the transport and those bytes, so a hit is exactly the answer Respond would give. A zone is
// immutable once published (api/dns_server.h swaps in a new one): the entries belong to the
// zone they were made from, and asking with another zone first empties the cache.
//
// Bounded: at most `max_entries` answers and `max_bytes` of keys and answers; an answer that
// would go past either empties the cache first (a flood of distinct names costs what it would
// without the cache, and the hot names come back with their next query). Queries longer than
// kMaxCachedQuery, and messages Respond gives no answer to, are not kept.
//
// Thread-safety: not synchronized (one per serving thread).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "dns/message.h"
#include "dns/zone.h"

namespace paceline::dns {

struct AnswerCacheOptions {
  size_t max_entries = 4096;
  size_t max_bytes = size_t{8} << 20;
};

struct AnswerCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t clears = 0;  // a new zone, or full
};

class AnswerCache {
 public:
  static constexpr size_t kMaxCachedQuery = 512;

  explicit AnswerCache(AnswerCacheOptions options = {}) : options_(options) {}

  // What Respond(*zone, request, transport) returns.
  std::optional<std::vector<uint8_t>> Respond(const std::shared_ptr<const Zone>& zone,
                                              absl::Span<const uint8_t> request,
                                              Transport transport);

  size_t size() const { return answers_.size(); }
  const AnswerCacheStats& stats() const { return stats_; }

 private:
  void Clear();

  AnswerCacheOptions options_;
  std::shared_ptr<const Zone> zone_;  // the entries' zone (kept alive: no other can reuse it)
  absl::flat_hash_map<std::string, std::vector<uint8_t>> answers_;
  size_t bytes_ = 0;
  std::string key_;  // reused for look-ups
  AnswerCacheStats stats_;
};

}  // namespace paceline::dns
