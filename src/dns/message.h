#pragma once
// DNS messages on the wire (RFC 1035, EDNS0 of RFC 6891), read and written with ldns: the
// query a client sent, and the answer a Zone gives it, encoded to fit the transport.
//
// Respond is the whole of what the server does with one message:
//   - a message too short for a header, or a response (QR set): nothing (no answer is sent);
//   - a header followed by what does not parse: FORMERR, with the query's id;
//   - an opcode other than QUERY: NOTIMP; not exactly one question: FORMERR;
//   - a class other than IN (or ANY), a zone transfer (AXFR, IXFR): REFUSED;
//   - EDNS of a version above 0: BADVERS;
//   - else the zone's answer (dns/zone.h), authoritative, without recursion (RA clear).
// A response with EDNS carries an OPT record offering kEdnsUdpSize. Over UDP an answer fits
// the client's size (512 bytes without EDNS; its EDNS size, at most kEdnsUdpSize, with it):
// the additional records are left out first, then the answers, with TC set so that the
// client asks again over TCP. Over TCP it fits 65,535 bytes.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "dns/zone.h"

namespace paceline::dns {

// The UDP size a response offers and the most a UDP answer may be (the DNS flag day's 1232).
inline constexpr uint16_t kEdnsUdpSize = 1232;
inline constexpr size_t kMaxUdpWithoutEdns = 512;
inline constexpr size_t kMaxTcp = 65535;

enum class Transport : uint8_t { kUdp, kTcp };

// The answer to `request`, or nullopt when none is due.
std::optional<std::vector<uint8_t>> Respond(const Zone& zone, absl::Span<const uint8_t> request,
                                            Transport transport);

// An empty answer with TC set (the client should ask again over TCP), for a query that is not
// answered over UDP (rate limited); nullopt when `request` is not a query that parses.
std::optional<std::vector<uint8_t>> TruncatedReply(absl::Span<const uint8_t> request);

}  // namespace paceline::dns
