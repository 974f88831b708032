#include "dns/message.h"

#include "dns/ldns_cxx.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"

namespace paceline::dns {
namespace {

constexpr size_t kHeaderSize = 12;
constexpr uint8_t kBadVers = 16;  // extended: 1 in the OPT's upper bits, 0 in the header
constexpr uint16_t kTypeAxfr = 252, kTypeIxfr = 251;
// The SOA's refresh, retry and expire (no secondary servers exist; the values are nominal).
constexpr uint32_t kSoaRefresh = 3600, kSoaRetry = 600, kSoaExpire = 86400;

struct PktFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
using Pkt = std::unique_ptr<ldns_pkt, PktFree>;

// The question's name: lower case, labels joined by '.', no final dot. A byte that cannot be
// in a name of the zone ('.' inside a label, a control or non-ASCII byte) becomes '\x01', which
// no name of the zone holds, so that such a name is unknown rather than read as another.
std::string NameOf(const ldns_rdf* dname) {
  const uint8_t* data = ldns_rdf_data(dname);
  const size_t size = ldns_rdf_size(dname);
  std::string name;
  for (size_t i = 0; i < size && data[i] != 0;) {
    const size_t length = data[i];
    if (i + 1 + length > size) break;
    if (!name.empty()) name.push_back('.');
    for (size_t j = 0; j < length; ++j) {
      const unsigned char c = data[i + 1 + j];
      name.push_back(c == '.' || c <= 0x20 || c >= 0x7f ? '\x01' : absl::ascii_tolower(c));
    }
    i += 1 + length;
  }
  return name;
}

ldns_rdf* Dname(const std::string& name) { return ldns_dname_new_frm_str((name + ".").c_str()); }

ldns_rr* ToRr(const Record& r) {
  ldns_rr* rr = ldns_rr_new();
  ldns_rr_set_owner(rr, Dname(r.name));
  ldns_rr_set_class(rr, LDNS_RR_CLASS_IN);
  ldns_rr_set_ttl(rr, r.ttl);
  switch (r.type) {
    case RecordType::kA:
    case RecordType::kAaaa: {
      const bool v4 = r.type == RecordType::kA;
      ldns_rr_set_type(rr, v4 ? LDNS_RR_TYPE_A : LDNS_RR_TYPE_AAAA);
      ldns_rdf* address =
          ldns_rdf_new_frm_str(v4 ? LDNS_RDF_TYPE_A : LDNS_RDF_TYPE_AAAA, r.address.c_str());
      if (address == nullptr) {  // the zone checks addresses; never sent without its data
        ldns_rr_free(rr);
        return nullptr;
      }
      ldns_rr_push_rdf(rr, address);
      break;
    }
    case RecordType::kSrv:
      ldns_rr_set_type(rr, LDNS_RR_TYPE_SRV);
      ldns_rr_push_rdf(rr, ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, r.priority));
      ldns_rr_push_rdf(rr, ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, r.weight));
      ldns_rr_push_rdf(rr, ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, r.port));
      ldns_rr_push_rdf(rr, Dname(r.target));
      break;
    default:  // kSoa
      ldns_rr_set_type(rr, LDNS_RR_TYPE_SOA);
      ldns_rr_push_rdf(rr, Dname(r.target));
      ldns_rr_push_rdf(rr, Dname("hostmaster." + r.name));
      for (uint32_t v : {r.serial, kSoaRefresh, kSoaRetry, kSoaExpire, r.ttl}) {
        ldns_rr_push_rdf(rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_INT32, v));
      }
      break;
  }
  return rr;
}

// The response's header and question, copied from the query.
Pkt Reply(const ldns_pkt* query, uint8_t rcode) {
  Pkt reply(ldns_pkt_new());
  ldns_pkt_set_id(reply.get(), ldns_pkt_id(query));
  ldns_pkt_set_qr(reply.get(), true);
  ldns_pkt_set_opcode(reply.get(), ldns_pkt_get_opcode(query));
  ldns_pkt_set_rd(reply.get(), ldns_pkt_rd(query));
  ldns_pkt_set_rcode(reply.get(), rcode);
  const ldns_rr_list* questions = ldns_pkt_question(query);
  for (size_t i = 0; i < ldns_rr_list_rr_count(questions) && i < 1; ++i) {
    ldns_pkt_push_rr(reply.get(), LDNS_SECTION_QUESTION,
                     ldns_rr_clone(ldns_rr_list_rr(questions, i)));
  }
  if (ldns_pkt_edns(query)) ldns_pkt_set_edns_udp_size(reply.get(), kEdnsUdpSize);
  return reply;
}

std::optional<std::vector<uint8_t>> Wire(const ldns_pkt* pkt) {
  uint8_t* data = nullptr;
  size_t size = 0;
  if (ldns_pkt2wire(&data, pkt, &size) != LDNS_STATUS_OK) {
    free(data);
    return std::nullopt;
  }
  std::vector<uint8_t> out(data, data + size);
  free(data);
  return out;
}

// FORMERR for a message whose header is all that could be read: the id and RD echoed.
std::vector<uint8_t> HeaderOnlyError(absl::Span<const uint8_t> request, Rcode rcode) {
  std::vector<uint8_t> out(kHeaderSize, 0);
  out[0] = request[0];
  out[1] = request[1];
  out[2] = 0x80 | (request[2] & 0x79);  // QR, the opcode and RD as asked
  out[3] = static_cast<uint8_t>(rcode);
  return out;
}

size_t Limit(const ldns_pkt* query, Transport transport) {
  if (transport == Transport::kTcp) return kMaxTcp;
  if (!ldns_pkt_edns(query)) return kMaxUdpWithoutEdns;
  return std::clamp<size_t>(ldns_pkt_edns_udp_size(query), kMaxUdpWithoutEdns, kEdnsUdpSize);
}

}  // namespace

std::optional<std::vector<uint8_t>> Respond(const Zone& zone, absl::Span<const uint8_t> request,
                                            Transport transport) {
  if (request.size() < kHeaderSize || (request[2] & 0x80) != 0) return std::nullopt;
  ldns_pkt* parsed = nullptr;
  if (ldns_wire2pkt(&parsed, request.data(), request.size()) != LDNS_STATUS_OK) {
    ldns_pkt_free(parsed);
    return HeaderOnlyError(request, Rcode::kFormErr);
  }
  Pkt query(parsed);
  if (ldns_pkt_get_opcode(query.get()) != LDNS_PACKET_QUERY) {
    return Wire(Reply(query.get(), static_cast<uint8_t>(Rcode::kNotImp)).get());
  }
  if (ldns_pkt_qdcount(query.get()) != 1) {
    return Wire(Reply(query.get(), static_cast<uint8_t>(Rcode::kFormErr)).get());
  }
  if (ldns_pkt_edns(query.get()) && ldns_pkt_edns_version(query.get()) > 0) {
    Pkt reply = Reply(query.get(), kBadVers & 0x0f);
    ldns_pkt_set_edns_extended_rcode(reply.get(), kBadVers >> 4);
    return Wire(reply.get());
  }
  const ldns_rr* question = ldns_rr_list_rr(ldns_pkt_question(query.get()), 0);
  const uint16_t type = ldns_rr_get_type(question);
  const uint16_t klass = ldns_rr_get_class(question);
  if ((klass != LDNS_RR_CLASS_IN && klass != LDNS_RR_CLASS_ANY) || type == kTypeAxfr ||
      type == kTypeIxfr) {
    return Wire(Reply(query.get(), static_cast<uint8_t>(Rcode::kRefused)).get());
  }

  const Answer answer = zone.Lookup(NameOf(ldns_rr_owner(question)), RecordType{type});
  const size_t limit = Limit(query.get(), transport);
  // Everything, then without the additional records, then without the answers (TC).
  for (int attempt = 0; attempt < 3; ++attempt) {
    Pkt reply = Reply(query.get(), static_cast<uint8_t>(answer.rcode));
    ldns_pkt_set_aa(reply.get(), answer.authoritative);
    if (attempt < 2) {
      for (const Record& r : answer.answers) {
        if (ldns_rr* rr = ToRr(r)) ldns_pkt_push_rr(reply.get(), LDNS_SECTION_ANSWER, rr);
      }
    }
    if (attempt < 1) {
      for (const Record& r : answer.additional) {
        if (ldns_rr* rr = ToRr(r)) ldns_pkt_push_rr(reply.get(), LDNS_SECTION_ADDITIONAL, rr);
      }
    }
    if (answer.negative) {
      if (ldns_rr* soa = ToRr(zone.Soa())) {
        ldns_pkt_push_rr(reply.get(), LDNS_SECTION_AUTHORITY, soa);
      }
    }
    ldns_pkt_set_tc(reply.get(), attempt == 2);
    std::optional<std::vector<uint8_t>> wire = Wire(reply.get());
    if (!wire.has_value()) return std::nullopt;
    if (wire->size() <= limit || attempt == 2) return wire;
  }
  return std::nullopt;
}

std::optional<std::vector<uint8_t>> TruncatedReply(absl::Span<const uint8_t> request) {
  if (request.size() < kHeaderSize || (request[2] & 0x80) != 0) return std::nullopt;
  ldns_pkt* parsed = nullptr;
  if (ldns_wire2pkt(&parsed, request.data(), request.size()) != LDNS_STATUS_OK) {
    ldns_pkt_free(parsed);
    return std::nullopt;
  }
  Pkt query(parsed);
  Pkt reply = Reply(query.get(), static_cast<uint8_t>(Rcode::kNoError));
  ldns_pkt_set_tc(reply.get(), true);
  return Wire(reply.get());
}

}  // namespace paceline::dns
