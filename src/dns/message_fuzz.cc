// Fuzzes dns::Respond: any message from the network gets no answer, or one that parses, echoes
// the id and fits the transport.
#include "dns/ldns_cxx.h"

#include <cstdint>
#include <cstdlib>

#include "dns/message.h"

namespace {

const paceline::dns::Zone& FuzzZone() {
  static const paceline::dns::Zone* zone = [] {
    auto* z = new paceline::dns::Zone(paceline::dns::ZoneOptions{});
    paceline::dns::ServiceEndpoints web{.job_id = 1, .pool = "/prod", .name = "web"};
    for (uint32_t i = 0; i < 50; ++i) {
      web.instances.push_back({.instance = i,
                               .address = i % 2 ? "198.18.0." + std::to_string(i + 1) : "fd00::1",
                               .ports = {{"http", static_cast<uint16_t>(31000 + i)}},
                               .ready = i % 3 != 0});
    }
    (void)z->Set(web);
    return z;
  }();
  return *zone;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (auto transport : {paceline::dns::Transport::kUdp, paceline::dns::Transport::kTcp}) {
    auto reply = paceline::dns::Respond(FuzzZone(), absl::MakeConstSpan(data, size), transport);
    if (!reply.has_value()) continue;
    if (reply->size() < 12 || (*reply)[0] != data[0] || (*reply)[1] != data[1]) abort();
    if (transport == paceline::dns::Transport::kUdp &&
        reply->size() > paceline::dns::kEdnsUdpSize) {
      abort();
    }
    ldns_pkt* parsed = nullptr;
    if (ldns_wire2pkt(&parsed, reply->data(), reply->size()) != LDNS_STATUS_OK) abort();
    ldns_pkt_free(parsed);
  }
  return 0;
}
