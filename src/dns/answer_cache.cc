#include "dns/answer_cache.h"

#include <utility>

namespace paceline::dns {
namespace {

constexpr size_t kIdSize = 2;

}  // namespace

void AnswerCache::Clear() {
  answers_.clear();
  bytes_ = 0;
  ++stats_.clears;
}

std::optional<std::vector<uint8_t>> AnswerCache::Respond(const std::shared_ptr<const Zone>& zone,
                                                         absl::Span<const uint8_t> request,
                                                         Transport transport) {
  if (request.size() <= kIdSize || request.size() > kMaxCachedQuery) {
    return dns::Respond(*zone, request, transport);
  }
  if (zone != zone_) {
    if (!answers_.empty()) Clear();
    zone_ = zone;
  }
  key_.assign(1, static_cast<char>(transport));
  key_.append(reinterpret_cast<const char*>(request.data()) + kIdSize, request.size() - kIdSize);
  if (auto it = answers_.find(key_); it != answers_.end()) {
    ++stats_.hits;
    std::vector<uint8_t> reply = it->second;
    reply[0] = request[0];
    reply[1] = request[1];
    return reply;
  }
  ++stats_.misses;
  std::optional<std::vector<uint8_t>> reply = dns::Respond(*zone, request, transport);
  if (!reply.has_value() || reply->size() < kIdSize) return reply;
  const size_t cost = key_.size() + reply->size();
  if (answers_.size() >= options_.max_entries || bytes_ + cost > options_.max_bytes) Clear();
  if (cost <= options_.max_bytes) {
    answers_.emplace(key_, *reply);
    bytes_ += cost;
  }
  return reply;
}

}  // namespace paceline::dns
