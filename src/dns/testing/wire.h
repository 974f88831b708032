#pragma once
// Test helpers: DNS messages made and read with ldns, for the tests and benchmarks of dns/, the
// DNS server and the end-to-end tests.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "dns/ldns_cxx.h"

namespace paceline::dns::testing {

struct PktFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
using Pkt = std::unique_ptr<ldns_pkt, PktFree>;

// `pkt` on the wire; empty if ldns cannot write it.
inline std::vector<uint8_t> ToWire(const ldns_pkt* pkt) {
  uint8_t* data = nullptr;
  size_t size = 0;
  std::vector<uint8_t> wire;
  if (ldns_pkt2wire(&data, pkt, &size) == LDNS_STATUS_OK) wire.assign(data, data + size);
  free(data);
  return wire;
}

// A query (recursion desired, as stub resolvers send) for `name` ("web.prod.paceline.").
inline Pkt NewQuery(const std::string& name, ldns_rr_type type, uint16_t id,
                    ldns_rr_class klass = LDNS_RR_CLASS_IN) {
  Pkt q(ldns_pkt_query_new(ldns_dname_new_frm_str(name.c_str()), type, klass, LDNS_RD));
  ldns_pkt_set_id(q.get(), id);
  return q;
}

inline std::vector<uint8_t> QueryWire(const std::string& name, ldns_rr_type type, uint16_t id = 0) {
  return ToWire(NewQuery(name, type, id).get());
}

// The message read back; null if it does not parse.
inline Pkt Parse(const uint8_t* data, size_t size) {
  ldns_pkt* p = nullptr;
  if (ldns_wire2pkt(&p, data, size) != LDNS_STATUS_OK) {
    ldns_pkt_free(p);
    return nullptr;
  }
  return Pkt(p);
}

}  // namespace paceline::dns::testing
