// The CPU of one answer: a query read, looked up and written (dns::Respond), for an A query of a
// 6-instance service, its SRV query, and a name that is not there; and the same questions
// answered from the answer cache the server keeps per zone (dns/answer_cache.h), a new id each
// time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "dns/answer_cache.h"
#include "dns/message.h"
#include "dns/testing/wire.h"

namespace paceline::dns {
namespace {

const Zone& BenchZone() {
  static const Zone* zone = [] {
    auto* z = new Zone(ZoneOptions{});
    for (uint64_t job = 1; job <= 1000; ++job) {
      ServiceEndpoints s{.job_id = job, .pool = "/prod", .name = "svc" + std::to_string(job)};
      for (uint32_t i = 0; i < 6; ++i) {
        s.instances.push_back(
            {.instance = i,
             .address = "198.18." + std::to_string(job % 250) + "." + std::to_string(10 + i),
             .ports = {{"http", static_cast<uint16_t>(31000 + i)}},
             .ready = true});
      }
      (void)z->Set(s);
    }
    return z;
  }();
  return *zone;
}

void Run(benchmark::State& state, const char* name, ldns_rr_type type) {
  const Zone& zone = BenchZone();
  const std::vector<uint8_t> q = testing::QueryWire(name, type);
  for (auto _ : state) {
    benchmark::DoNotOptimize(Respond(zone, q, Transport::kUdp));
  }
}

void BM_RespondA(benchmark::State& s) { Run(s, "svc500.prod.paceline.", LDNS_RR_TYPE_A); }
void BM_RespondSrv(benchmark::State& s) {
  Run(s, "_http._tcp.svc500.prod.paceline.", LDNS_RR_TYPE_SRV);
}
void BM_RespondNxDomain(benchmark::State& s) { Run(s, "nope.prod.paceline.", LDNS_RR_TYPE_A); }
BENCHMARK(BM_RespondA);
BENCHMARK(BM_RespondSrv);
BENCHMARK(BM_RespondNxDomain);

void RunCached(benchmark::State& state, const char* name, ldns_rr_type type) {
  const std::shared_ptr<const Zone> zone(&BenchZone(), [](const Zone*) {});
  AnswerCache cache;
  std::vector<uint8_t> q = testing::QueryWire(name, type);
  uint16_t id = 0;
  for (auto _ : state) {
    ++id;
    q[0] = static_cast<uint8_t>(id >> 8);
    q[1] = static_cast<uint8_t>(id & 0xff);
    benchmark::DoNotOptimize(cache.Respond(zone, q, Transport::kUdp));
  }
  state.counters["hit_ratio"] =
      static_cast<double>(cache.stats().hits) /
      static_cast<double>(std::max<uint64_t>(1, cache.stats().hits + cache.stats().misses));
}

void BM_CachedA(benchmark::State& s) { RunCached(s, "svc500.prod.paceline.", LDNS_RR_TYPE_A); }
void BM_CachedSrv(benchmark::State& s) {
  RunCached(s, "_http._tcp.svc500.prod.paceline.", LDNS_RR_TYPE_SRV);
}
BENCHMARK(BM_CachedA);
BENCHMARK(BM_CachedSrv);

}  // namespace
}  // namespace paceline::dns
